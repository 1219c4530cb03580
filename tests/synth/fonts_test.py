"""Tests for aster/synth/fonts.py, font_checks.py and font_families.py."""

import os
import re

import pytest

from aster.synth import font_checks, font_families, fonts
from aster.synth.font_checks import FontInfo


def _fake(family, count):
    return [FontInfo(f"/f/{family}{i}.ttf", family, str(i)) for i in range(count)]


def test_family_name_strips_width_and_weight_words():
    assert font_families.family_name("DejaVu Sans Condensed") == "DejaVu Sans"
    assert font_families.family_name("Liberation Sans Narrow Bold") == "Liberation Sans"
    assert font_families.family_name("Bold") == "Bold"


def test_found_fonts_render_required_characters(machine_fonts):
    assert machine_fonts == sorted(machine_fonts, key=lambda f: f.path)
    assert all(font_checks.inspect_font(f.path) == f for f in machine_fonts[:2])


def test_inspect_font_rejects_non_font_file(tmp_path):
    path = tmp_path / "fake.ttf"
    path.write_bytes(b"not a font")
    assert font_checks.inspect_font(str(path)) is None


def test_find_fonts_without_usable_font_raises(tmp_path, monkeypatch):
    path = tmp_path / "fake.ttf"
    path.write_bytes(b"not a font")
    monkeypatch.setattr(fonts, "candidate_files", lambda font_dirs=(): [str(path)])
    with pytest.raises(fonts.NoFontsError, match="no usable font.*1 rejected"):
        fonts.find_fonts()


def test_explicit_unreadable_font_file_raises_naming_it(tmp_path):
    path = tmp_path / "fake.ttf"
    path.write_bytes(b"not a font")
    with pytest.raises(fonts.FontPathError, match=re.escape(str(path)) + ".*not a readable") as err:
        fonts.find_fonts(font_files=[str(path)])
    assert isinstance(err.value, ValueError) and err.value.path == str(path.resolve())
    missing = str(tmp_path / "missing.ttf")
    with pytest.raises(fonts.FontPathError, match=re.escape(missing) + ".*does not exist"):
        fonts.find_fonts(font_files=[missing])


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


# ---- coverage from the cmap, duplicates, explicit folders, the all-caps filter


def _isolate(monkeypatch):
    """Makes the font search see only the folders a test passes."""
    monkeypatch.setattr(fonts, "SYSTEM_FONT_DIRS", ())
    monkeypatch.setattr(fonts, "PACKAGE_FONT_DIRS", ())
    monkeypatch.setattr(fonts.importlib.metadata, "distributions", lambda: [])


def _blank(path, char):
    font = font_checks.ImageFont.truetype(path, 32)
    return font_checks._render(font, char, (96, 96)).getbbox() is None


def test_chars_come_from_the_cmap(machine_fonts):
    font = machine_fonts[0]
    assert font.can_draw("Hello42") and font.can_draw("Hello 42")
    assert set(font_checks.REQUIRED_CHARS) <= font.chars
    lacking = next(c for c in ("\u4e2d", "\uac00", "\u0e01", "\U0001f600", "\U000e0001")
                   if c not in font.chars)
    assert not font.can_draw("Hello" + lacking)
    assert font.chars == font_checks.cmap_chars(font.path)
    hash(font)
    assert "chars" not in repr(font)


def test_chars_leave_out_blank_glyphs(machine_fonts):
    checked = set()
    for font in machine_fonts:  # one TrueType and one CFF font where the machine has them
        kind = "cff" if "CFF " in font_checks.TTFont(font.path, lazy=True) else "glyf"
        if kind in checked:
            continue
        checked.add(kind)
        cmap = font_checks.TTFont(font.path, fontNumber=0, lazy=True).getBestCmap()
        mapped = [chr(c) for c in sorted(cmap) if not chr(c).isspace()]
        left_out = [c for c in mapped if c not in font.chars]
        kept = [c for c in mapped if c in font.chars]
        assert all(_blank(font.path, c) for c in left_out[:20])
        assert not any(_blank(font.path, c) for c in kept[::max(1, len(kept) // 20)])
    assert checked


def test_hand_made_font_info_can_draw_required_chars():
    info = FontInfo("/f/x.ttf", "X", "Regular")
    assert info.chars == frozenset() and info.can_draw("Hello 42") and not info.can_draw("é")


def test_identical_files_are_used_once(machine_fonts, tmp_path, monkeypatch):
    _isolate(monkeypatch)
    data = open(machine_fonts[0].path, "rb").read()
    (tmp_path / "b.ttf").write_bytes(data)
    (tmp_path / "a.ttf").write_bytes(data)
    report = fonts.font_report(font_dirs=[str(tmp_path)])
    kept, dropped = str((tmp_path / "a.ttf").resolve()), str((tmp_path / "b.ttf").resolve())
    assert [f.path for f in report.fonts] == [kept]
    assert report.duplicates == {dropped: kept} and not report.rejected
    assert report.summary() == ("2 candidate font files, 1 duplicates (1 identical files, 0 same "
                                "family and style), 0 rejected, 1 usable in 1 families")
    assert fonts.find_fonts(font_files=[dropped, kept]) == report.fonts


def test_same_face_in_different_files_is_used_once(machine_fonts, tmp_path, monkeypatch):
    _isolate(monkeypatch)
    data = open(machine_fonts[0].path, "rb").read()
    (tmp_path / "a.ttf").write_bytes(data)
    (tmp_path / "b.ttf").write_bytes(data + b"\0\0\0\0")  # other bytes, same font
    report = fonts.font_report(font_dirs=[str(tmp_path)])
    assert len(report.fonts) == 1 and not report.duplicates
    assert report.same_face == {str((tmp_path / "b.ttf").resolve()): report.fonts[0].path}


def test_explicit_font_dir_missing_or_empty_raises_naming_it(tmp_path, monkeypatch):
    _isolate(monkeypatch)
    missing = tmp_path / "nowhere"
    with pytest.raises(fonts.FontPathError, match=re.escape(str(missing)) + ".*does not") as err:
        fonts.find_fonts(font_dirs=[str(missing)])
    assert err.value.path == str(missing)
    empty = tmp_path / "empty"
    empty.mkdir()
    (empty / "readme.txt").write_text("no fonts here")
    with pytest.raises(fonts.FontPathError, match=re.escape(str(empty)) + ".*holds no"):
        fonts.find_fonts(font_dirs=[str(empty)])


def test_caps_like_count_on_synthetic_small_caps(machine_fonts):
    big = font_checks.ImageFont.truetype(machine_fonts[0].path, 32)
    small = font_checks.ImageFont.truetype(machine_fonts[0].path, 22)
    upper = [font_checks._render(big, c.upper()) for c in font_checks._CAPS_LETTERS]
    small_caps = [font_checks._render(small, c.upper()) for c in font_checks._CAPS_LETTERS]
    lower = [font_checks._render(big, c) for c in font_checks._CAPS_LETTERS]
    assert font_checks.caps_like_count(small_caps, upper) == len(font_checks._CAPS_LETTERS)
    assert font_checks.caps_like_count(lower, upper) < font_checks._CAPS_MAJORITY


def test_small_caps_font_is_rejected():
    names = ("Go-Smallcaps.ttf", "IrianisADFStyleStd-Regular.otf")
    paths = [p for d in fonts.SYSTEM_FONT_DIRS for p in fonts._glob_fonts(os.path.expanduser(d))
             if os.path.basename(p) in names]
    if not paths:
        pytest.skip("no small-caps font on this machine (Debian fonts-go or fonts-adf-irianis)")
    for path in paths:
        check = font_checks.check_font(path)
        assert not check.usable and check.reason == font_checks.ALL_CAPS
        assert font_checks.check_font(path, keep_caps_only=True).info.caps_only


def test_a_face_drawing_its_lower_case_as_capitals_by_hand_is_caps_only():
    path = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "data",
                        "hand_caps", "rock-salt-latin-400-normal.woff2")
    check = font_checks.check_font(path)
    assert not check.usable and check.reason == font_checks.ALL_CAPS
    assert "b, d, h no taller than a, e, n, r" in check.detail
    info = font_checks.check_font(path, keep_caps_only=True).info
    assert info.caps_only and info.drawn_text("dodgy") == "DODGY"


def test_text_faces_have_ascenders(machine_fonts):
    for font in machine_fonts[:20]:
        face = font_checks.ImageFont.truetype(font.path, 32)
        images = {c: font_checks._render(face, c) for c in "aenrbdh"}
        assert font_checks.ascender_ratio(images) >= font_checks._MIN_ASCENDER_RATIO, font.path


# ---- split_families


def _families(n, files=2):
    return [f for i in range(n) for f in _fake(f"Family{i:02d}", files)]


def _split_families(splits):
    return {k: {f.family for f in v} for k, v in splits.items()}


def test_split_families_is_disjoint_deterministic_and_sized():
    found = _families(40)
    splits, note = font_families.split_families(found)
    families = _split_families(splits)
    assert len(families["val"]) == 4 and len(families["val_ood"]) == 6
    assert len(families["train"]) == 30
    assert not (families["train"] & families["val"] or families["train"] & families["val_ood"]
                or families["val"] & families["val_ood"])
    assert families["train"] | families["val"] | families["val_ood"] == {f.family for f in found}
    assert all(len(splits[k]) == 2 * len(families[k]) for k in font_families.SPLITS)  # whole families
    shuffled = found[::-1][1::2] + found[::-1][::2]
    assert _split_families(font_families.split_families(shuffled)[0]) == families
    for k in font_families.SPLITS:
        assert all(name in note for name in families[k])


def test_split_families_moves_few_families_when_one_is_added():
    before = _split_families(font_families.split_families(_families(40))[0])
    after = _split_families(font_families.split_families(_families(41))[0])
    moved = {f for k in font_families.SPLITS for f in before[k] ^ after[k]} - {"Family40"}
    assert len(moved) <= 2


def test_split_families_named():
    found = _families(10)
    splits, note = font_families.split_families(
        found, heldout={"val": ["Family01"], "val_ood": ["Family02", "Family03"]})
    families = _split_families(splits)
    assert families["val"] == {"Family01"} and families["val_ood"] == {"Family02", "Family03"}
    assert len(families["train"]) == 7 and "named" in note
    splits, _ = font_families.split_families(found, heldout={"val_ood": ["Family05"]})
    families = _split_families(splits)
    assert families["val_ood"] == {"Family05"} and len(families["val"]) == 1
    assert "Family05" not in families["val"] | families["train"]


def test_split_families_errors():
    found = _families(4)
    with pytest.raises(ValueError, match=r"\['Nope'\] not found; families found: \['Family00'"):
        font_families.split_families(found, heldout={"val": ["Nope"]})
    with pytest.raises(ValueError, match="both val and val_ood"):
        font_families.split_families(found, heldout={"val": ["Family00"], "val_ood": ["Family00"]})
    with pytest.raises(ValueError, match="leaves no font family"):
        font_families.split_families(found, heldout={"val": ["Family00", "Family01"],
                                             "val_ood": ["Family02", "Family03"]})
    with pytest.raises(ValueError, match="fractions"):
        font_families.split_families(found, fractions={"val": 0.6, "val_ood": 0.5})
    with pytest.raises(ValueError, match="heldout keys"):
        font_families.split_families(found, heldout={"test": ["Family00"]})
    with pytest.raises(ValueError, match="no fonts"):
        font_families.split_families([])


def test_split_families_small_counts():
    families = _split_families(font_families.split_families(_families(3))[0])
    assert all(len(families[k]) == 1 for k in font_families.SPLITS)
    assert len(families["train"] | families["val"] | families["val_ood"]) == 3
    splits, note = font_families.split_families(_families(2))
    families = _split_families(splits)
    assert len(families["train"]) == 1 and families["val"] == families["val_ood"]
    assert families["val"] != families["train"] and "shares" in note
    splits, note = font_families.split_families(_fake("A", 8))
    assert len(splits["val"]) == 2 and len(splits["train"]) == 6
    assert splits["val_ood"] == splits["val"] and note.startswith("WARNING: only one font family")
