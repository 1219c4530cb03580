"""Builds a list of characters from a CharacterSet message."""

from aster.core import charsets
from aster.protos import label_map_pb2


def build(config, field_path="character_set"):
    """Returns the characters of a CharacterSet message as a list of str.

    Args:
      config: label_map_pb2.CharacterSet.
      field_path: the message's path in the pipeline config, for error messages.

    Raises:
      ValueError: unreadable file, duplicate characters or an empty set.
    """
    if not isinstance(config, label_map_pb2.CharacterSet):
        raise ValueError(f"{field_path}: expected a CharacterSet message, got {type(config)}")
    return charsets.from_config(config, field_path)
