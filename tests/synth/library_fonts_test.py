"""Tests for aster/synth/fontsource.py, font_categories.py and the library side of fonts.py and
font_checks.py, on the small library in tests/data/fonts (no font of the machine needed)."""

import json
import os
import re
import shutil

import pytest

from aster.synth import font_categories, font_checks, fonts, fontsource, generator

LIBRARY = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "data",
                       "fonts")


def _families(found):
    return {f.family: f for f in found}


def test_library_faces_carry_family_category_license(library_fonts):
    families = _families(library_fonts)
    assert set(families) == {"Abel", "Prata", "Schoolbell", "VT323", "Bangers", "Titan One",
                             "Handlee", "Bebas Neue"}
    assert {f.category for f in library_fonts} == set(font_categories.CATEGORIES)
    assert families["Prata"].category == "serif" and families["VT323"].category == "monospace"
    assert families["Schoolbell"].license == "Apache-2.0"
    assert families["Abel"].license == "OFL-1.1" and all(f.library for f in library_fonts)
    assert families["Abel"].path.endswith(".woff2") and families["Abel"].can_draw("$12.99")


def test_caps_only_face_is_kept_and_draws_upper_case(library_fonts):
    families = _families(library_fonts)
    assert families["Bangers"].caps_only and families["Bebas Neue"].caps_only
    assert not any(families[f].caps_only for f in ("Abel", "Prata", "Schoolbell", "Handlee"))
    assert families["Bangers"].drawn_text("iPhone 4s") == "IPHONE 4S"
    assert families["Abel"].drawn_text("iPhone 4s") == "iPhone 4s"
    check = font_checks.check_font(families["Bangers"].path)
    assert not check.usable and check.reason == font_checks.ALL_CAPS
    assert "draw like their capitals" in check.detail and check.face.startswith("Bangers")


def test_check_font_result_type(library_fonts, tmp_path):
    check = font_checks.check_font(library_fonts[0].path)
    assert check.usable and check.reason is None and check.detail == ""
    assert check.info.path == library_fonts[0].path and check.info.chars == library_fonts[0].chars
    assert not check.info.library  # the library's metadata is applied by the font search
    missing = font_checks.check_font(str(tmp_path / "none.woff2"))
    assert not missing.usable and missing.reason == font_checks.UNREADABLE
    assert "FileNotFoundError" in missing.detail and missing.face == ""


def test_woff2_coverage_reads_the_glyph_table_without_rebuilding_it(library_fonts):
    font = _families(library_fonts)["Abel"]
    tt = font_checks.TTFont(font.path, lazy=True)
    cmap, glyf = tt.getBestCmap(), tt["glyf"]
    slow = {chr(c) for c, n in cmap.items() if chr(c).isspace() or glyf[n].numberOfContours}
    assert font.chars == slow and " " in font.chars and "A" in font.chars


def _write_family(root, font_id, metadata, faces=("400-normal",)):
    folder = root / font_id
    (folder / "files").mkdir(parents=True)
    (folder / "metadata.json").write_text(json.dumps(metadata))
    source = os.path.join(LIBRARY, "abel", "files", "abel-latin-400-normal.woff2")
    for face in faces:
        shutil.copy(source, folder / "files" / f"{font_id}-latin-{face}.woff2")
    return folder


def test_read_metadata_errors_name_file_and_field(tmp_path):
    good = {"family": "X", "category": "serif", "license": {"type": "OFL-1.1"}}
    path = _write_family(tmp_path, "x", good) / "metadata.json"
    assert fontsource.read_metadata(str(path)) == fontsource.FamilyMeta("x", "X", "serif",
                                                                        "OFL-1.1")
    old = {"fontName": "Old", "category": "display", "license": "https://example.org/ofl"}
    path.write_text(json.dumps(old))
    assert fontsource.read_metadata(str(path)).family == "Old"
    for bad, message in (({**good, "family": ""}, "field 'family' is ''"),
                         ({**good, "category": "icons"}, "category 'icons' is not one of"),
                         ({**good, "license": {}}, "field 'license' is {}")):
        path.write_text(json.dumps(bad))
        with pytest.raises(ValueError, match=f"{path}.*{message}"):
            fontsource.read_metadata(str(path))
    path.write_text("{not json")
    with pytest.raises(ValueError, match="not a readable metadata.json"):
        fontsource.read_metadata(str(path))


def test_chosen_faces_keeps_at_most_five():
    names = [f"f/x-latin-{w}-{s}.woff2" for w in range(100, 1000, 100)
             for s in ("normal", "italic")]
    chosen = [os.path.basename(p) for p in fontsource.chosen_faces(sorted(names))]
    assert chosen == ["x-latin-100-normal.woff2", "x-latin-400-italic.woff2",
                      "x-latin-400-normal.woff2", "x-latin-700-normal.woff2",
                      "x-latin-900-normal.woff2"]
    assert fontsource.chosen_faces(["f/x-latin-300-italic.woff2", "f/odd.woff2"]) == [
        "f/odd.woff2", "f/x-latin-300-italic.woff2"]


def test_library_faces_skips_bad_metadata_and_raises_when_empty(tmp_path):
    with pytest.raises(ValueError, match="not a folder"):
        fontsource.library_faces(str(tmp_path / "missing"))
    _write_family(tmp_path, "icons", {"family": "Icons", "category": "icons",
                                      "license": {"type": "Apache-2.0"}})
    with pytest.raises(ValueError, match="no <family>/metadata.json with files.*icons"):
        fontsource.library_faces(str(tmp_path))
    _write_family(tmp_path, "x", {"family": "X Sans", "category": "sans-serif",
                                  "license": {"type": "OFL-1.1"}}, ("400-normal", "500-normal"))
    faces, skipped = fontsource.library_faces(str(tmp_path))
    assert [m.family for m in faces.values()] == ["X Sans", "X Sans"]
    assert list(skipped) == [str(tmp_path / "icons" / "metadata.json")]
    monkeypatched = fonts.font_report(font_files=list(faces), library_dirs=[str(tmp_path)])
    assert monkeypatched.rejected[str(tmp_path / "icons" / "metadata.json")][0] == \
        fonts.BAD_METADATA
    assert [f.family for f in monkeypatched.fonts] == ["X Sans"]  # the same face once
    assert monkeypatched.category_counts() == {"sans-serif": 1}


class _Panose:
    def __init__(self, family=2, serif=0, proportion=0):
        self.bFamilyType, self.bSerifStyle, self.bProportion = family, serif, proportion


class _Table:
    def __init__(self, **fields):
        self.__dict__.update(fields)


@pytest.mark.parametrize("tables, category", [
    ({"post": _Table(isFixedPitch=1)}, "monospace"),
    ({"OS/2": _Table(panose=_Panose(proportion=9))}, "monospace"),
    ({"OS/2": _Table(panose=_Panose(family=3))}, "handwriting"),
    ({"OS/2": _Table(panose=_Panose(family=4))}, "display"),
    ({"OS/2": _Table(panose=_Panose(serif=5))}, "serif"),
    ({"OS/2": _Table(panose=_Panose(serif=11))}, "sans-serif"),
    ({}, "sans-serif"),
])
def test_classify_by_panose_and_fixed_pitch(tables, category):
    assert font_categories.classify(tables) == category


def test_category_weights_and_held_out_families():
    assert abs(sum(font_categories.CATEGORY_WEIGHTS.values()) - 1) < 1e-9
    assert min(font_categories.CATEGORY_WEIGHTS["display"],
               font_categories.CATEGORY_WEIGHTS["handwriting"]) >= 0.2
    assert font_categories.split_weights(["serif", "display", "serif"]) == {"serif": 0.5,
                                                                           "display": 0.5}
    assert set(font_categories.VAL_OOD_FAMILIES) == set(font_categories.CATEGORIES)
    assert font_categories.parse_weights("") == font_categories.CATEGORY_WEIGHTS
    assert font_categories.parse_weights(" handwriting = 0.5 ,")["handwriting"] == 0.5
    assert font_categories.split_weights(["serif", "display"], {"serif": 0, "display": 0}) == {
        "serif": 0.5, "display": 0.5}


@pytest.mark.parametrize("text, message", [
    ("script=0.3", "'script=0.3': expected <category>=<weight> with a category of serif"),
    ("display", "'display': expected <category>=<weight>"),
    ("display=-1", "'display=-1': the weight must be a number >= 0"),
    ("display=x", "'display=x': the weight must be a number >= 0"),
    ("display=inf", "the weight must be a number >= 0"),
    ("serif=0,sans-serif=0,display=0,handwriting=0,monospace=0", "every weight is 0"),
])
def test_bad_category_weights_are_named(text, message, capsys):
    with pytest.raises(ValueError, match=re.escape(message)):
        font_categories.parse_weights(text)
    # aster-synth-words refuses them before it searches the fonts.
    assert generator.main(["--output_dir", "/nonexistent", "--category_weights", text]) == 2
    assert message in capsys.readouterr().err
    with pytest.raises(ValueError, match="meta.json field 'category': category 'script'"):
        font_categories.check_category("script", "meta.json field 'category'")
