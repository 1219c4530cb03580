import pytest
from google.protobuf import text_format

from aster.builders import label_map_builder
from aster.core import label_map
from aster.protos import label_map_pb2


def _build(text):
    return label_map_builder.build(text_format.Parse(text, label_map_pb2.LabelMap()))


def test_build_paper_label_map_has_96_classes():
    lm = _build("character_set { built_in_set: ALLCASES_SYMBOLS } label_offset: 2")
    assert isinstance(lm, label_map.LabelMap)
    assert lm.num_classes == 96 and lm.label_offset == 2
    assert lm.unknown_handling == label_map.DROP and lm.unk_label is None


def test_build_defaults_lowercase_offset_zero():
    lm = _build("")
    assert lm.num_classes == 36 and lm.label_offset == 0


def test_build_unknown_class():
    lm = _build("character_set { text_string: 'a b 中' } label_offset: 2 "
                "unknown_handling: UNKNOWN_CLASS")
    assert lm.character_set == ["a", "b", "中"]
    assert lm.unk_label == 5 and lm.num_classes == 6


def test_build_unknown_class_with_explicit_unk_label():
    lm = _build("character_set { text_string: 'a b' } label_offset: 2 unk_label: 4 "
                "unknown_handling: UNKNOWN_CLASS")
    assert lm.unk_label == 4


def test_build_bad_unk_label_raises_with_field_path():
    with pytest.raises(ValueError, match=r"label_map\.unk_label: is 1"):
        _build("label_offset: 2 unk_label: 1 unknown_handling: UNKNOWN_CLASS")


def test_build_wrong_message_raises():
    with pytest.raises(ValueError, match="expected a LabelMap"):
        label_map_builder.build(label_map_pb2.CharacterSet())


def test_build_text_file_utf8(tmp_path):
    path = tmp_path / "chars.txt"
    path.write_text("中\n文\n", encoding="utf-8")
    lm = _build(f"character_set {{ text_file: '{path}' }} label_offset: 2")
    assert lm.character_set == ["中", "文"] and lm.num_classes == 4
