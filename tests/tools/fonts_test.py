"""Tests for aster/tools/fonts.py."""

import pytest

from aster.tools import fonts
from aster.tools.fonts import FontInfo


@pytest.fixture(scope="module")
def machine_fonts():
    try:
        return fonts.find_fonts()
    except fonts.NoFontsError:
        pytest.skip("no usable fonts on this machine")


def _fake(family, count):
    return [FontInfo(f"/f/{family}{i}.ttf", family, str(i)) for i in range(count)]


def test_family_name_strips_width_and_weight_words():
    assert fonts.family_name("DejaVu Sans Condensed") == "DejaVu Sans"
    assert fonts.family_name("Liberation Sans Narrow Bold") == "Liberation Sans"
    assert fonts.family_name("Bold") == "Bold"


def test_found_fonts_render_required_characters(machine_fonts):
    assert machine_fonts == sorted(machine_fonts, key=lambda f: f.path)
    assert all(fonts.inspect_font(f.path) == f for f in machine_fonts[:2])


def test_inspect_font_rejects_non_font_file(tmp_path):
    path = tmp_path / "fake.ttf"
    path.write_bytes(b"not a font")
    assert fonts.inspect_font(str(path)) is None


def test_find_fonts_without_usable_font_raises(tmp_path):
    path = tmp_path / "fake.ttf"
    path.write_bytes(b"not a font")
    with pytest.raises(fonts.NoFontsError, match="no usable font"):
        fonts.find_fonts(font_files=[str(path)])


def test_split_fonts_holds_out_smallest_families():
    found = _fake("A", 3) + _fake("B", 1) + _fake("C", 2) + _fake("D", 4) + _fake("E", 5)
    train, val, note = fonts.split_fonts(found)
    assert {f.family for f in val} == {"B"}
    assert {f.family for f in train} == {"A", "C", "D", "E"}
    assert "B" in note


def test_split_fonts_named_families():
    found = _fake("A", 2) + _fake("B", 2) + _fake("C", 2)
    train, val, _ = fonts.split_fonts(found, heldout_families=("A", "C"))
    assert {f.family for f in val} == {"A", "C"} and {f.family for f in train} == {"B"}


def test_split_fonts_unknown_family_raises():
    with pytest.raises(ValueError, match="'Z'.*not found"):
        fonts.split_fonts(_fake("A", 2) + _fake("B", 1), heldout_families=("Z",))


def test_split_fonts_holding_out_every_family_raises():
    with pytest.raises(ValueError, match="leaves no font family"):
        fonts.split_fonts(_fake("A", 2) + _fake("B", 1), heldout_families=("A", "B"))


def test_split_fonts_single_family_holds_out_files():
    found = _fake("A", 8)
    train, val, note = fonts.split_fonts(found)
    assert len(val) == 2 and not set(val) & set(train) and len(train) == 6
    assert "only one font family" in note


def test_split_fonts_single_file_is_shared():
    train, val, note = fonts.split_fonts(_fake("A", 1))
    assert train == val and "share it" in note


class _FakeDistribution:
    """Stands in for an importlib.metadata.Distribution installed under `root`."""

    def __init__(self, name, root, files):
        self.metadata = {"Name": name}
        self.files = files
        self._root = root

    def locate_file(self, file):
        return self._root / file


def test_candidate_files_include_font_distributions(tmp_path, monkeypatch):
    (tmp_path / "font_x" / "files").mkdir(parents=True)
    (tmp_path / "font_x" / "files" / "X-Regular.ttf").write_bytes(b"")
    (tmp_path / "other").mkdir()
    (tmp_path / "other" / "Y.ttf").write_bytes(b"")
    distributions = [
        _FakeDistribution("font_x", tmp_path, ["font_x/__init__.py", "font_x/files/X-Regular.ttf",
                                               "font_x/files/Missing.otf"]),
        _FakeDistribution("other-package", tmp_path, ["other/Y.ttf"]),
    ]
    monkeypatch.setattr(fonts.importlib.metadata, "distributions", lambda: distributions)
    monkeypatch.setattr(fonts, "SYSTEM_FONT_DIRS", ())
    monkeypatch.setattr(fonts, "PACKAGE_FONT_DIRS", ())
    found = fonts.candidate_files()
    assert found == [str((tmp_path / "font_x" / "files" / "X-Regular.ttf").resolve())]
