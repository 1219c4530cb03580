"""Tests for aster/synth/templates.py."""

import collections
import re
import string

import numpy as np
import pytest

from aster.synth import templates

WORDS = ("anna", "mail", "well", "known", "example", "shirt", "gruis", "a")
PRINTABLE = set(string.printable[:94])

SHAPES = {
    "punctuated": r"[A-Za-z]+(,|\.|!|\?|:|;|\.\.\.|!!|\?!)",
    "quoted": r"[\"'(\[{<`*_]?[A-Za-z]+[\"')\]}>`*_]?(,|\.|!|\?|:|;|\.\.\.|!!|\?!)?",
    "hyphenated": r"[A-Za-z0-9]+(-[A-Za-z]+)+",
    "contraction": r"[A-Za-z]*'[A-Za-z0-9]*('[A-Za-z]+)?",
    "abbreviation": r"([A-Za-z]+\.)+",
    "price": r"[-+]?\$?(\d{1,4}|\d{1,3},\d{3})(\.\d\d)?(/[a-z]+|[*+])?",
    "time": r"\d{1,2}(:\d\d){0,2}(am|pm|AM|PM|a\.m\.|p\.m\.)?|\d{1,2}h\d\d",
    "date": r"\d{4}-\d\d-\d\d|\d{1,2}([/.-])\d{1,2}\1(\d\d|\d{4})|\d\d-[A-Za-z]{3,4}-\d{4}"
            r"|[A-Za-z]{3,4}\.\d{1,2}",
    "percent": r"[-+~<>]?\d{1,3}(\.\d)?%(OFF|off)?",
    "tag": r"#\d{1,5}|#[A-Za-z]+|@[a-z]+([_.]?\d{1,3})?",
    "domain": r"(?i)(https?://|www\.)?[a-z]+(-?[a-z]+)?\d*\.[a-z]{2,4}(\.uk)?(/[a-z]+)?",
    "email": r"[a-z]+([._]?[a-z]+|[._]?\d{1,3})?@[a-z]+(-?[a-z]+)?\d*\.[a-z]{2,4}(\.uk)?",
    "symbols": r".*[&+^*=<>|\\~/_#-].*",
}


def _pick(rng, longest):
    fitting = [w for w in WORDS if len(w) <= longest]
    return fitting[int(rng.integers(len(fitting)))]


def _recase(rng, text):
    case = int(rng.integers(3))
    return text if case == 0 else text[:1].upper() + text[1:] if case == 1 else text.upper()


def test_shapes_cover_every_kind():
    assert sorted(SHAPES) == sorted(kind for kind, _ in templates.KINDS)
    assert sum(weight for _, weight in templates.KINDS) == pytest.approx(1.0)


@pytest.mark.parametrize("kind", sorted(SHAPES))
def test_each_kind_has_its_shape_in_printable_ascii(kind):
    rng = np.random.default_rng(0)
    texts = [templates.make(kind, rng, _pick, _recase) for _ in range(400)]
    for text in texts:
        assert set(text) <= PRINTABLE, text
        assert re.fullmatch(SHAPES[kind], text), (kind, text)
    assert len(set(texts)) > 40  # a template, not a fixed string


@pytest.mark.parametrize("kind", ["punctuated", "quoted", "hyphenated", "email", "domain"])
def test_words_come_from_pick(kind):
    def pick(rng, longest):
        return "gruis" if longest >= 5 else "anna"

    rng = np.random.default_rng(1)
    texts = [templates.make(kind, rng, pick, _recase) for _ in range(300)]
    # Hyphenated words also take fixed prefixes (re-, self-) and numbers (24-hour).
    share = 0.6 if kind == "hyphenated" else 1.0
    assert sum("gruis" in t.lower() or "anna" in t.lower() for t in texts) >= share * len(texts)


def test_words_are_cased_by_recase():
    rng = np.random.default_rng(2)
    texts = [templates.make("punctuated", rng, _pick, _recase) for _ in range(300)]
    cores = [t.rstrip(",.!?:;") for t in texts if len(t.rstrip(",.!?:;")) > 1]
    assert any(c.islower() for c in cores) and any(c.isupper() for c in cores)
    assert any(c[0].isupper() and c[1:].islower() for c in cores)


def test_draw_follows_the_kind_weights(monkeypatch):
    monkeypatch.setattr(templates, "_MAKERS", {kind: (lambda rng, pick, recase, kind=kind: kind)
                                               for kind, _ in templates.KINDS})
    rng = np.random.default_rng(3)
    counts = collections.Counter(templates.draw(rng, _pick, _recase) for _ in range(20000))
    for kind, weight in templates.KINDS:
        assert counts[kind] / 20000 == pytest.approx(weight, abs=0.01), kind


def test_every_printable_character_is_drawn():
    rng = np.random.default_rng(4)
    drawn = set("".join(templates.draw(rng, _pick, _recase) for _ in range(20000)))
    assert drawn - set(string.ascii_letters + string.digits) == PRINTABLE - set(
        string.ascii_letters + string.digits)


def test_unknown_kind_raises():
    with pytest.raises(ValueError, match="'emoji'"):
        templates.make("emoji", np.random.default_rng(0), _pick, _recase)
