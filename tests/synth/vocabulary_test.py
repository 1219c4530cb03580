"""Tests for aster/synth/vocabulary.py."""

import collections
import json
import re
import string

import numpy as np
import pytest

from aster.synth import generator, languages, templates, vocabulary

PRINTABLE = string.printable[:94]  # 0x21-0x7E

# Drawn from the vocabularies of aster-synth-words' default flags BEFORE --text existed (commit
# d4d6034): default_rng(2024), 20 draws per split, and 10 draws of image 7's seed as generator.py
# seeds it (SeedSequence([seed 0, train 0, 7])). make train's data must stay exactly this.
BEFORE = {
    "train": ["Gizz", "god", "ORAFMB", "weechelm", "S2Zn", "13/04/55", "103-261-2985",
              "Bicorporeal", "soi", "Rahul", "diplex", "nonshaft", "if", "advanced", "i", "a",
              "REI", "shrill", "Nan", "adw"],
    "val": ["Frig", "gif", "TM", "DVNL", "ENRAY", "j", "RTMWGD", "unlawyerlike", "Syrt", "Neon",
            "a", "17-07-1974", "QJVYJMI", "VTYCZ76QMY7", "Flagger", "XOTCGAIWZC", "gruis",
            "Uprouse", "DOZldrxG", "HETEROEROTIC"],
    "val_ood": ["Gapa", "how", "qv2", "kdwjau", "pjbib", "042-361-7120", "STOOD", "OFNPU", "X",
                "2", "3.83%", "Hui", "xi", "maul", "spiritous", "SUBSTANTIVELY", "duse",
                "pvgpnaqukgjw", "Nonaid", "anaesthetize"],
}
BEFORE_SEEDED = ["Bm5SyLQIbu", "uncriticised", "binational", "mesarteritic", "uitotan", "w",
                 "SARCENET", "Chore", "RNKBUW", "Hassel"]


@pytest.fixture(scope="module")
def words():
    return vocabulary.dictionary_words()


@pytest.fixture(scope="module")
def default_flags():
    return generator.build_parser().parse_args(["--output_dir", "unused"])


@pytest.fixture(scope="module")
def vocabularies(default_flags):
    """The vocabularies of aster-synth-words' default flags (make train's data)."""
    args = default_flags
    return vocabulary.build_all(args.word_list, args.random_fraction, args.max_length,
                                text=args.text)


@pytest.fixture(scope="module")
def ascii94():
    return vocabulary.build_all(text="ascii94")


@pytest.fixture(scope="module")
def ascii94_texts(ascii94):
    rng = np.random.default_rng(11)
    return [ascii94["train"].draw(rng) for _ in range(100000)]


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


# ------------------------------------------------------------------------- --text

def test_default_flags_draw_what_they_drew_before(vocabularies, default_flags):
    assert default_flags.text == "words" and vocabularies["train"].max_length == 16
    assert vocabularies["train"].template_fraction == 0.0
    for split, before in BEFORE.items():
        rng = np.random.default_rng(2024)
        assert [vocabularies[split].draw(rng) for _ in range(20)] == before, split
    rng = np.random.default_rng(np.random.SeedSequence([0, 0, 7]))
    assert [vocabularies["train"].draw(rng) for _ in range(10)] == BEFORE_SEEDED


def test_ascii94_draws_every_printable_character_and_nothing_else(ascii94_texts):
    assert set("".join(ascii94_texts)) == set(PRINTABLE)


def test_ascii94_draws_up_to_25_characters(ascii94_texts):
    lengths = collections.Counter(len(t) for t in ascii94_texts)
    assert min(lengths) == 1 and max(lengths) == 25
    assert sum(n for length, n in lengths.items() if length > 16) > 0.02 * len(ascii94_texts)


def test_ascii94_keeps_the_casing_mix(ascii94_texts, ascii94):
    train_words = {w for _, ws in ascii94["train"].by_length for w in ws if len(w) > 1}
    cases = collections.Counter()
    for text in ascii94_texts[:40000]:
        word = text.lower()
        written = (word, word.capitalize(), word.upper())
        if len(text) > 1 and word in train_words and text in written:  # not "aBc" generated
            cases[written.index(text)] += 1
    total = sum(cases.values())
    for case, weight in enumerate(vocabulary.CASE_WEIGHTS):
        assert cases[case] / total == pytest.approx(weight, abs=0.02), case


def test_ascii94_sources_have_their_shares(ascii94, monkeypatch):
    last = []
    real_string, real_template = vocabulary.random_string, templates.draw

    def generated(*args):
        last.append("generated strings")
        return real_string(*args)

    def template(*args):
        last.append("punctuation templates")
        return real_template(*args)

    monkeypatch.setattr(vocabulary, "random_string", generated)
    monkeypatch.setattr(templates, "draw", template)
    rng = np.random.default_rng(5)
    counts = collections.Counter()
    for _ in range(20000):
        last.clear()
        ascii94["train"].draw(rng)
        counts[last[-1] if last else "dictionary words"] += 1
    shares = ascii94["train"].sources()
    assert shares == {"dictionary words": 0.4, "generated strings": 0.3,
                      "punctuation templates": 0.3}
    for source, share in shares.items():
        assert counts[source] / 20000 == pytest.approx(share, abs=0.015), source


def test_max_length_limits_templates(words):
    vocab = vocabulary.build("train", words, max_length=8, template_fraction=0.5)
    rng = np.random.default_rng(6)
    texts = [vocab.draw(rng) for _ in range(3000)]
    assert max(len(t) for t in texts) == 8
    assert sum("@" in t or "$" in t or "'" in t for t in texts) > 0.05 * len(texts)


@pytest.mark.parametrize("split", vocabulary.SPLITS)
def test_ascii94_templates_and_their_words_belong_to_their_split(ascii94, split):
    rng = np.random.default_rng(7)
    texts = [ascii94[split].draw(rng) for _ in range(2500)]
    assert all(vocabulary.in_split(t, split) for t in texts)
    split_words = {w for _, ws in ascii94[split].by_length for w in ws}
    # A quoted, bracketed or punctuated word: the word inside is one of the split's words.
    cores = [m.group(1) for t in texts
             if (m := re.fullmatch(r"[\"(\[{<`*_]([A-Za-z]{3,})[\")\]}>`*_]?[,.!?:;]*", t)
                 or re.fullmatch(r"([A-Za-z]{3,})[,!?:;]+", t))]
    assert len(cores) > 30
    assert all(core.lower() in split_words for core in cores)


def test_text_mix_states_the_shares(vocabularies, ascii94):
    default = vocabulary.text_mix(vocabularies["train"])
    assert default["sources"] == {"dictionary words": 0.7, "generated strings": 0.3,
                                  "punctuation templates": 0.0}
    assert default["case"] == {"lower": 0.5, "Capitalised": 0.3, "UPPER": 0.2}
    assert default["template_kinds"] == {}
    described = vocabulary.describe(ascii94)["val"]["text_mix"]
    assert described["template_kinds"] == dict(templates.KINDS)
    assert sum(described["sources"].values()) == pytest.approx(1.0)
    only_strings = vocabulary.build("val", ["ab"], template_fraction=0.3)  # "ab" is not in val
    assert only_strings.sources()["generated strings"] == 1.0


def test_ascii94_with_a_user_list_keeps_its_words_as_written(tmp_path):
    path = tmp_path / "words.txt"
    path.write_text("\n".join(f"Shop{i}" for i in range(400)))
    built = vocabulary.build_all(str(path), random_fraction=0.0, text="ascii94")
    assert vocabulary.text_mix(built["train"])["case"] == "as written"
    rng = np.random.default_rng(8)
    texts = [built["train"].draw(rng) for _ in range(500)]
    assert any(re.fullmatch(r"\(Shop\d+\)", t) for t in texts)
    assert not any("SHOP" in t or "shop" in t for t in texts)


@pytest.mark.parametrize("kwargs, message", [
    ({"text": "emoji"}, "'emoji'"),
    ({"text": "ascii94", "random_fraction": 0.8}, "random_fraction 0.8 \\+ template_fraction"),
    ({"text": "ascii94", "language": languages.LANGUAGES["el"]}, "language 'el'"),
])
def test_bad_text_settings_raise(kwargs, message):
    with pytest.raises(ValueError, match=message):
        vocabulary.build_all(**kwargs)


@pytest.mark.parametrize("kwargs, message", [
    ({"template_fraction": -0.1}, "template_fraction -0.1"),
    ({"template_fraction": 0.3, "language": languages.LANGUAGES["ru"]}, "language 'ru'"),
])
def test_bad_template_settings_raise_in_build(kwargs, message):
    with pytest.raises(ValueError, match=message):
        vocabulary.build("train", ["abc"], **kwargs)


def test_generator_text_flag_writes_the_mix_to_the_manifest(machine_fonts, tmp_path,
                                                             read_records):
    # aster-synth-words' --text (generator.py's flag and manifest lines; tested here with the
    # vocabulary they configure).
    code = generator.main(["--output_dir", str(tmp_path), "--split", "val", "--num_val", "6",
                           "--num_workers", "1", "--text", "ascii94", "--fonts",
                           machine_fonts[0].path, "--val_disjoint", "words"])
    assert code == 0
    manifest = json.loads((tmp_path / "val_manifest.json").read_text())
    assert manifest["text"] == "ascii94" and manifest["max_length"] == 25
    assert manifest["text_mix"]["sources"]["punctuation templates"] == 0.3
    assert all(len(r["transcript"]) <= 25 for r in read_records(str(tmp_path / "val.tfrecord")))


def test_generator_text_flag_refuses_another_alphabet(machine_fonts, tmp_path, capsys):
    charset, word_list = tmp_path / "chars.txt", tmp_path / "words.txt"
    charset.write_text("\n".join(string.digits + string.ascii_lowercase) + "\n")
    word_list.write_text("shop\nstore\n")
    code = generator.main(["--output_dir", str(tmp_path / "out"), "--text", "ascii94",
                           "--charset", str(charset), "--word_list", str(word_list)])
    assert code == 2
    assert f"not language 'custom' ({charset})" in capsys.readouterr().err
    assert not (tmp_path / "out").exists()
