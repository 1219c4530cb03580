import pytest
from google.protobuf import text_format

from aster.builders import character_set_builder
from aster.protos import label_map_pb2


def _build(text):
    return character_set_builder.build(text_format.Parse(text, label_map_pb2.CharacterSet()))


@pytest.mark.parametrize(
    "name,size", [("LOWERCASE", 36), ("ALLCASES", 62), ("ALLCASES_SYMBOLS", 94)]
)
def test_built_in_sets_have_published_sizes(name, size):
    chars = _build(f"built_in_set: {name}")
    assert len(chars) == size and len(set(chars)) == size and " " not in chars


def test_unset_source_defaults_to_lowercase():
    assert "".join(_build("")) == "0123456789abcdefghijklmnopqrstuvwxyz"


def test_text_string_splits_on_whitespace_and_keeps_utf8():
    assert _build('text_string: "a b 中 é"') == ["a", "b", "中", "é"]


def test_text_file_one_char_per_line(tmp_path):
    path = tmp_path / "chars.txt"
    path.write_text("a\n中\n\né\n", encoding="utf-8")
    assert _build(f'text_file: "{path}"') == ["a", "中", "é"]


def test_duplicate_character_raises_with_field_path():
    with pytest.raises(ValueError, match=r"text_string.*'a' appears more than once"):
        _build('text_string: "a b a"')


def test_multi_character_entry_raises():
    with pytest.raises(ValueError, match="not a single character"):
        _build('text_string: "ab c"')


def test_missing_file_raises_naming_file(tmp_path):
    with pytest.raises(ValueError, match="nope.txt"):
        _build(f'text_file: "{tmp_path}/nope.txt"')


def test_empty_set_raises():
    with pytest.raises(ValueError, match="empty"):
        _build('text_string: "  "')


def test_wrong_message_type_raises():
    with pytest.raises(ValueError, match="expected a CharacterSet"):
        character_set_builder.build(label_map_pb2.LabelMap())
