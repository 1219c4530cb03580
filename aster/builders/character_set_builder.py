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
    source = config.WhichOneof("source_oneof")
    if source == "text_file":
        return charsets.from_text_file(config.text_file)
    if source == "text_string":
        return charsets.from_text_string(config.text_string, f"{field_path}.text_string")
    # Unset oneof falls back to the field default, LOWERCASE, as in the original.
    name = label_map_pb2.CharacterSet.BuiltInSet.Name(config.built_in_set)
    return list(charsets.BUILT_IN[name])
