"""Tests for aster/synth/font_plans.py and aster/synth/reserved_fonts.py."""

import collections
import dataclasses

import numpy as np
import pytest

from aster.synth import font_categories, font_families, font_plans, reserved_fonts
from aster.synth.font_checks import FontInfo


def _machine(names):
    return [FontInfo(f"/m/{n}.ttf", n, "Regular", category="serif") for n in names]


def _families(splits):
    return {k: {f.family for f in v} for k, v in splits.items()}


def test_reserved_list_is_the_issues(library_fonts):
    assert len(reserved_fonts.RESERVED_FAMILIES) == 48
    assert len(set(reserved_fonts.RESERVED_FAMILIES)) == 48
    assert reserved_fonts.is_reserved("lobster") and reserved_fonts.is_reserved("Oxygen Sans")
    assert reserved_fonts.is_reserved("Playfair")  # a machine font's "Playfair Display"
    assert not reserved_fonts.is_reserved("Lobster Two") and not reserved_fonts.is_reserved("Abel")
    for families in font_categories.VAL_OOD_FAMILIES.values():
        assert not reserved_fonts.reserved_among(families)
    with pytest.raises(ValueError, match=r"card x: training font families \['Lato', 'Lobster'\]"):
        reserved_fonts.check_training_families(["Abel", "Lobster", "Lato"], "card x")
    reserved_fonts.check_training_families(["Abel"], "card x")


def test_library_split_holds_out_categories_and_never_trains_reserved(library_fonts):
    machine = _machine(f"Machine{i}" for i in range(10))
    splits, note = font_plans.split_for_run(machine + library_fonts)
    families = _families(splits)
    assert families["train"] >= {"Abel", "Prata", "Schoolbell", "VT323", "Bangers"}
    assert families["val_ood_display"] == {"Titan One"}
    assert families["val_ood_handwriting"] == {"Handlee"}
    assert not any("Bebas Neue" in fs for fs in families.values())
    assert not any(reserved_fonts.reserved_among(fs) for fs in families.values())
    # val and val_ood are chosen among the machine's fonts, as without the library
    alone = _families(font_families.split_families(machine)[0])
    assert families["val"] == alone["val"] and families["val_ood"] == alone["val_ood"]
    assert "val_ood_serif" not in splits and "Bebas Neue" not in note


def test_reserved_machine_family_stays_out_of_training_whatever_the_flags():
    found = _machine(["Lato", "Alpha", "Beta", "Gamma"])
    for disjoint in (True, False):
        splits, note = font_plans.split_for_run(found, {"val": ["Alpha"]}, disjoint=disjoint)
        assert "Lato" not in _families(splits)["train"]
    splits, note = font_plans.split_for_run(found, {"val": ["Alpha"], "val_ood": ["Beta"]})
    assert _families(splits)["train"] == {"Gamma"} and "left out of training: ['Lato']" in note
    with pytest.raises(ValueError, match=r"training families \['Lato'\] are reserved"):
        font_plans.split_for_run(_machine(["Lato"]), disjoint=False)
    with pytest.raises(ValueError, match="all reserved"):
        font_plans.split_for_run([dataclasses.replace(f, library=True)
                                  for f in _machine(["Lobster"])])


def test_category_sampling_follows_the_weights(library_fonts):
    splits, _ = font_plans.split_for_run(_machine(["M1", "M2", "M3", "M4"]) + library_fonts)
    families = tuple((f, tuple(fs)) for f, fs in
                     font_families.group_by_family(splits["train"]).items())
    table = font_plans.category_table(families)
    weights = {c: w for c, w, _ in table}
    assert weights == font_categories.split_weights(font_categories.CATEGORIES)
    rng = np.random.default_rng(0)
    drawn = collections.Counter(font_plans.draw_family(families, table, rng)[0].category
                                for _ in range(4000))
    for category, weight in weights.items():
        assert abs(drawn[category] / 4000 - weight) < 0.03, (category, drawn)
    # --category_weights: the named categories' weights replaced, then renormalised.
    chosen = font_categories.parse_weights("display=0.6,handwriting=0.4,serif=0,"
                                           "sans-serif=0,monospace=0")
    table = font_plans.category_table(families, chosen)
    assert {c: w for c, w, _ in table if w} == {"display": 0.6, "handwriting": 0.4}
    drawn = collections.Counter(font_plans.draw_family(families, table, rng)[0].category
                                for _ in range(2000))
    assert set(drawn) == {"display", "handwriting"} and abs(drawn["display"] / 2000 - 0.6) < 0.04
    machine = tuple((f.family, (f,)) for f in _machine(["A", "B"]))
    assert font_plans.category_table(machine) == ()
    uniform = collections.Counter(font_plans.draw_family(machine, (), rng)[0].family
                                  for _ in range(1000))
    assert abs(uniform["A"] - 500) < 60
