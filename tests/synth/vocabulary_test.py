"""Tests for aster/synth/vocabulary.py."""

import collections
import re

import numpy as np
import pytest

from aster.synth import vocabulary


@pytest.fixture(scope="module")
def words():
    return vocabulary.dictionary_words()


@pytest.fixture(scope="module")
def vocabularies():
    return vocabulary.build_all(max_length=16)


def test_dictionary_is_large_unique_lowercase_letters(words):
    assert len(words) >= 50000 and len(set(words)) == len(words)
    assert all(w.isascii() and w.isalpha() and w.islower() for w in words[:: 97])


def test_splits_are_disjoint_and_sized(vocabularies, words):
    seen = {split: {w for _, ws in v.by_length for w in ws if len(w) > 1}
            for split, v in vocabularies.items()}
    assert not seen["train"] & seen["val"] and not seen["train"] & seen["val_ood"]
    assert not seen["val"] & seen["val_ood"]
    for split in ("val", "val_ood"):
        assert 0.03 * len(words) < len(seen[split]) < 0.07 * len(words)
    assert vocabulary.text_split("Hello") == vocabulary.text_split("HELLO")


def test_every_split_has_every_single_letter(vocabularies):
    # Hashed like words, val would hold only "o" and val_ood only "b" and "k": letters training
    # never shows alone, each drawn dozens of times.
    for v in vocabularies.values():
        singles = dict(v.by_length)[1]
        assert sorted(singles) == list("abcdefghijklmnopqrstuvwxyz")
    rng = np.random.default_rng(0)
    drawn = {vocabulary.random_string(rng, 1) for _ in range(3000)}
    assert {"o", "6", "b", "k"} <= drawn  # a one-character string is in every split
    assert all(vocabulary.in_split(t, s) for t in drawn for s in vocabulary.SPLITS)
    assert sum(vocabulary.in_split("ab", s) for s in vocabulary.SPLITS) == 1


def test_every_split_draws_the_same_length_mix(vocabularies):
    # A one-character string is valid in every split; kept there every time, it would make a
    # fifth of the validation texts one character long (3-4% in training).
    shares = {}
    for split, v in vocabularies.items():
        rng = np.random.default_rng(3)
        lengths = np.array([len(v.draw(rng)) for _ in range(6000)])
        shares[split] = ((lengths == 1).mean(), (lengths <= 3).mean(), lengths.mean())
    for split in ("val", "val_ood"):
        assert shares[split][0] == pytest.approx(shares["train"][0], abs=0.015)
        assert shares[split][1] == pytest.approx(shares["train"][1], abs=0.02)
        assert shares[split][2] == pytest.approx(shares["train"][2], abs=0.3)


@pytest.mark.parametrize("split", vocabulary.SPLITS)
def test_drawn_texts_belong_to_their_split(vocabularies, split):
    rng = np.random.default_rng(0)
    texts = [vocabularies[split].draw(rng) for _ in range(2000)]
    assert all(vocabulary.in_split(t, split) for t in texts)
    assert all(vocabulary.text_split(t) == split for t in texts if len(t) > 1)
    assert all(1 <= len(t) <= 16 for t in texts)


def test_draw_mixes_case_lengths_and_generated_strings(vocabularies):
    rng = np.random.default_rng(1)
    texts = [vocabularies["train"].draw(rng) for _ in range(4000)]
    letters = [t for t in texts if t.isalpha()]
    assert any(t.isupper() and len(t) > 1 for t in letters)
    assert any(t[0].isupper() and t[1:].islower() for t in letters if len(t) > 1)
    assert any(t.islower() for t in letters)
    lengths = collections.Counter(len(t) for t in letters)
    # Long words are drawn often (about 1 in 8).
    assert sum(n for length, n in lengths.items() if length >= 12) > 0.08 * len(letters)
    assert sum(n for length, n in lengths.items() if length <= 3) > 0.03 * len(letters)
    assert any(re.fullmatch(r"\d\d[/.-]\d\d[/.-]\d+|\d{4}-\d\d-\d\d", t) for t in texts)
    assert any(re.fullmatch(r"\$?\d+(\.\d\d)?%?", t) and not t.isdigit() for t in texts)
    assert any(re.fullmatch(r"\d{3}-\d{3,4}(-\d{4})?", t) for t in texts)
    assert sum(not t.isalpha() for t in texts) > 0.1 * len(texts)


def test_draw_is_deterministic(vocabularies):
    first = [vocabularies["val"].draw(np.random.default_rng(5)) for _ in range(3)]
    again = [vocabularies["val"].draw(np.random.default_rng(5)) for _ in range(3)]
    assert first == again


def test_length_histogram_counts_words(vocabularies):
    histogram = vocabularies["train"].length_histogram()
    assert sum(histogram.values()) == vocabularies["train"].num_words
    assert max(histogram) <= 16 and min(histogram) >= 1
    described = vocabulary.describe(vocabularies)
    assert described["val"]["num_words"] == vocabularies["val"].num_words


def test_user_word_list_keeps_case(tmp_path):
    path = tmp_path / "words.txt"
    path.write_text("\n".join(f"Word{i}" for i in range(400)) + "\n\n")
    built = vocabulary.build_all(str(path), random_fraction=0.0)
    rng = np.random.default_rng(0)
    texts = {built["train"].draw(rng) for _ in range(200)}
    assert texts <= {f"Word{i}" for i in range(400)}


@pytest.mark.parametrize("content, message", [
    (None, "cannot read"), ("", "no word"), ("   \n\n", "no word"),
    ("x" * 40 + "\n", "no usable word"),
])
def test_bad_word_list_names_the_path(tmp_path, content, message):
    path = tmp_path / "words.txt"
    if content is not None:
        path.write_text(content)
    with pytest.raises(vocabulary.VocabularyError, match=message) as info:
        vocabulary.build_all(str(path))
    assert str(path) in str(info.value)


def test_can_draw_filters_words():
    split = vocabulary.text_split("ab$")
    kept = vocabulary.build(split, ["ab$", "xy"], random_fraction=0.0)
    assert "ab$" in {w for _, ws in kept.by_length for w in ws}
    built = vocabulary.build(split, ["ab$", "xy"], random_fraction=0.0,
                             can_draw=lambda t: "$" not in t)
    assert "ab$" not in {w for _, ws in built.by_length for w in ws}


@pytest.mark.parametrize("kwargs, message", [
    ({"split": "test"}, "split"), ({"random_fraction": 1.5}, "random_fraction"),
    ({"max_length": 0}, "max_length"),
])
def test_bad_arguments_raise(kwargs, message):
    args = {"split": "train", "words": ["abc"], **kwargs}
    with pytest.raises(ValueError, match=message):
        vocabulary.build(**args)
