"""Builds an aster.core.label_map.LabelMap from a LabelMap message."""

from aster.builders import character_set_builder
from aster.core import label_map
from aster.protos import label_map_pb2
from aster.utils import config_checks

_UNKNOWN_HANDLING = {
    label_map_pb2.LabelMap.DROP: label_map.DROP,
    label_map_pb2.LabelMap.UNKNOWN_CLASS: label_map.UNKNOWN_CLASS,
}


def build(config, field_path="label_map"):
    """Returns a LabelMap.

    Args:
      config: label_map_pb2.LabelMap.
      field_path: the message's path in the pipeline config, for error messages.

    Raises:
      ValueError: not a LabelMap message, or an invalid character set / offset / unk_label.
    """
    if not isinstance(config, label_map_pb2.LabelMap):
        raise ValueError(f"{field_path}: expected a LabelMap message, got {type(config).__name__}")
    config_checks.check(config, field_path)
    chars = character_set_builder.build(config.character_set, f"{field_path}.character_set")
    unk = config.unk_label if config.HasField("unk_label") else None
    return label_map.LabelMap(chars, label_offset=config.label_offset,
                              unknown_handling=_UNKNOWN_HANDLING[config.unknown_handling],
                              unk_label=unk)
