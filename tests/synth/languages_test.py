"""Greek and Russian in the data engine (aster/synth/languages.py): the character set files, the
label folding in the graph and protocol 1 agree; words are cased as the script writes them; fonts
are chosen by what their cmap draws."""

import dataclasses
import os
import subprocess
import sys

import numpy as np
import pytest

from aster.builders import label_map_builder
from aster.core import charsets
from aster.core import preprocessor_text as text_ops
from aster.synth import font_checks, fonts, generator, languages, styles, vocabulary
from aster.tf_setup import tf
from aster.tools import tfrecord_utils
from aster.utils import config_util
from aster.utils import recognition_evaluation as re_eval

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
EL, RU = languages.LANGUAGES["el"], languages.LANGUAGES["ru"]
# Written as a Greek or Russian text would be: case, final sigma, tonos, dialytika, ё.
SAMPLES = {"el": ["ΟΔΟΣ", "οδός", "Σοφίας", "ΣΟΦΊΑΣ", "ς", "Σ", "σ", "ΐ", "ΰ", "Ϊ", "προϊόν",
                  "ΆΡΗΣ 42"],
           "ru": ["ЁЛКА", "ёлка", "Ёж", "ПРИВЕТ", "объём", "Щи 7"]}


def _graph_fold(texts, charset):
    with tf.Graph().as_default(), tf.Session() as sess:
        return [sess.run(text_ops.string_filtering(tf.constant(t), case_fold=True,
                                                   include_charset=charset)).decode("utf-8")
                for t in texts]


@pytest.mark.parametrize("code", sorted(languages.LANGUAGES))
def test_charset_file_is_the_language_charset_and_folds_to_itself(code):
    language = languages.LANGUAGES[code]
    path = os.path.join(ROOT, "configs", "charsets", f"{code}.txt")
    assert charsets.from_text_file(path) == list(language.charset)
    assert all(charsets.fold_case(c) == c for c in language.charset)
    # Every letter a font must draw for the script folds into the set (the final ς to σ).
    script = [c for c in language.font_chars if c not in font_checks.REQUIRED_CHARS]
    assert all(charsets.fold_case(c) in language.charset for c in script)


@pytest.mark.parametrize("code", sorted(languages.LANGUAGES))
def test_labels_label_map_and_protocol_one_agree_on_case_sigma_and_accents(code):
    language = languages.LANGUAGES[code]
    config = config_util.load_pipeline_config(
        os.path.join(ROOT, "configs", f"demo_cpu_{code}.config"))
    predictor = config.model.multi_predictors_recognition_model.predictor[0].attention_predictor
    label_map = label_map_builder.build(predictor.label_map)
    assert label_map.character_set == list(language.charset)
    assert config.eval_config.charset_fold_case and config.eval_config.protocol == re_eval.CHARSET
    texts = SAMPLES[code] + [language.upper(c) for c in language.letters] + list(language.letters)
    graph = _graph_fold(texts, language.charset)
    scored = [re_eval.filter_text(t, re_eval.CHARSET, language.charset, fold_case=True)
              for t in texts]
    assert graph == scored
    # The label map encodes every folded character (nothing dropped) and decodes it back.
    with tf.Graph().as_default(), tf.Session() as sess:
        labels, lengths = label_map.text_to_labels(tf.constant(graph))
        decoded = label_map.labels_to_text(labels)
        sess.run(tf.tables_initializer())
        back, lengths = sess.run([decoded, lengths])
    assert [b.decode("utf-8") for b in back] == graph
    assert list(lengths) == [len(g) for g in graph]


def test_greek_sigmas_fold_to_one_class_and_accents_stay():
    assert _graph_fold(["ΟΔΟΣ", "οδος", "ΆΡΗΣ", "προϊόν"], EL.charset) == [
        "οδοσ", "οδοσ", "άρησ", "προϊόν"]
    assert re_eval.filter_text("Σοφίας", re_eval.CHARSET, EL.charset, fold_case=True) == "σοφίασ"
    # Without folding the final ς is no character of the set: protocol 1 must fold for Greek.
    assert re_eval.filter_text("σοφίας", re_eval.CHARSET, EL.charset) == "σοφία"


def test_cyrillic_yo_is_its_own_letter():
    assert _graph_fold(["ЁЛКА", "елка"], RU.charset) == ["ёлка", "елка"]
    assert "ё" in RU.charset and "е" in RU.charset


def test_greek_words_are_written_with_final_sigma_and_capitals_without_tonos():
    assert [EL.cased("σοφίασ", case) for case in (0, 1, 2)] == ["σοφίας", "Σοφίας", "ΣΟΦΙΑΣ"]
    assert EL.cased("προϊόν", 2) == "ΠΡΟΪΟΝ"  # the dialytika stays
    assert EL.cased("σ", 0) == "σ"
    assert [RU.cased("ёлка", case) for case in (0, 1, 2)] == ["ёлка", "Ёлка", "ЁЛКА"]


def test_unknown_language_names_the_known_ones():
    with pytest.raises(languages.LanguageError, match=r"'xx'.*'el', 'ru'"):
        languages.get("xx")
    assert languages.get("en") is None and languages.get(None) is None


@pytest.mark.parametrize("code", sorted(languages.LANGUAGES))
def test_language_vocabulary_draws_the_script(code):
    language = languages.LANGUAGES[code]
    words = language.words()
    assert len(words) > 20000
    assert all(language.folds_into_charset(w) for w in words)
    vocab = vocabulary.build("train", words, random_fraction=0.3, language=language)
    rng = np.random.default_rng(0)
    drawn = [vocab.draw(rng) for _ in range(400)]
    letters = [c for text in drawn for c in text if c.isalpha()]
    assert letters and all(charsets.fold_case(c) in language.charset for c in letters)
    assert any(text.isupper() for text in drawn) and any(text.islower() for text in drawn)


def test_a_font_that_lacks_the_script_is_rejected_for_it(machine_fonts):
    latin_only = [f for f in machine_fonts if "α" not in f.chars]
    if not latin_only:
        pytest.skip("every font on this machine draws Greek")
    check = font_checks.check_font(latin_only[0].path, EL.font_chars)
    assert check.info is None and check.reason == font_checks.MISSING_CHARS
    assert "α" in check.detail


@pytest.mark.parametrize("code", sorted(languages.LANGUAGES))
def test_words_of_the_script_render_only_with_fonts_that_draw_them(code, machine_fonts):
    """A font without the script's glyphs is never drawn with (it is skipped and counted)."""
    language = languages.LANGUAGES[code]
    able = [f for f in machine_fonts if set(language.font_chars) <= f.chars]
    unable = [f for f in machine_fonts if not set(language.letters) & f.chars]
    if not able or not unable:
        pytest.skip(f"needs fonts with and without {language.name} on this machine")
    words = language.words()[:3000]
    vocab = vocabulary.build("train", words, random_fraction=0.0, language=language)
    families = (("able", (able[0],)), ("unable", (unable[0],)))
    plan = generator.SplitPlan("train", 0, 0, vocab, families,
                               styles.TRAIN_STYLE)
    skips = 0
    for index in range(24):
        rendered, text, name, skipped, _ = generator.render_one(plan, index)
        skips += skipped
        assert able[0].can_draw(text) and rendered.png
        assert os.path.splitext(os.path.basename(able[0].path))[0] in name
    assert skips > 0


def test_fonts_whose_greek_capitals_draw_latin_glyphs_are_not_taken_for_symbol_fonts(
        machine_fonts):
    """Α and A (Ο and O, ...) share one glyph in most fonts: every font that draws a-z, A-Z, 0-9
    and whose cmap covers the Greek letters is usable for Greek."""
    covering = sorted(f.path for f in machine_fonts if set(EL.font_chars) <= f.chars)
    if not covering:
        pytest.skip("no font on this machine draws Greek")
    greek = fonts.font_report(required=EL.font_chars)
    assert sorted(f.path for f in greek.fonts) == covering


def test_make_train_takes_a_script_and_refuses_an_unknown_one():
    dry = subprocess.run(["make", "-n", "-o", "install", "-o", "protos", "train", "SCRIPT=el"],
                         cwd=ROOT, capture_output=True, text=True, timeout=60)
    assert "configs/demo_cpu_el.config --train_dir runs/demo_cpu_el" in dry.stdout, dry.stderr
    bad = subprocess.run(["make", "-n", "train", "SCRIPT=xx"], cwd=ROOT, capture_output=True,
                         text=True, timeout=60)
    assert bad.returncode != 0 and "SCRIPT=xx: expected el (Greek) or ru (Russian)" in bad.stderr


def _synth(tmp_path, *flags):
    out = tmp_path / "out"
    code = generator.main(["--output_dir", str(out), "--num_train", "24", "--num_val", "8",
                             "--num_val_ood", "0", "--num_workers", "1", *flags])
    return code, out


def test_a_charset_file_and_word_list_draw_a_users_alphabet(tmp_path, capsys):
    charset = tmp_path / "charset.txt"
    charset.write_text("\n".join("0123456789абвгдежзийклмнопрстуфхцчшщьюяєіїґ'") + "\n", "utf-8")
    words = tmp_path / "words.txt"
    words.write_text("\n".join(["привіт", "їжак", "ґанок", "Київ", "hello", "слово", "м'ята",
                                "ёлка"] * 3), "utf-8")
    code, out = _synth(tmp_path, "--charset", str(charset), "--word_list", str(words))
    if code == 2 and "no usable font" in capsys.readouterr().err:
        pytest.skip("no font on this machine draws Ukrainian")
    assert code == 0
    assert charsets.from_text_file(str(out / "charset.txt")) == charsets.from_text_file(
        str(charset))
    records = [tfrecord_utils.example_to_dict(e)
               for e in tfrecord_utils.read_examples(str(out / "train-*.tfrecord"))]
    keep = set(charsets.from_text_file(str(charset)))
    for record in records:
        text = record["transcript"]
        assert text not in ("hello", "ёлка")  # words outside the set are never drawn
        assert all(charsets.fold_case(c) in keep for c in text if c.isalpha()), text


@pytest.mark.parametrize("flags, message", [
    (["--charset", "CHARSET"], "--charset needs --word_list"),
    (["--charset", "UPPER", "--word_list", "CHARSET"], "'Ж' case-folds to 'ж'"),
    (["--language", "el", "--charset", "CHARSET", "--word_list", "NONE"], "NONE"),
])
def test_charset_errors_name_the_flag(tmp_path, capsys, flags, message):
    (tmp_path / "CHARSET").write_text("а\nб\n", "utf-8")
    (tmp_path / "UPPER").write_text("а\nЖ\n", "utf-8")
    flags = [str(tmp_path / f) if f in ("CHARSET", "UPPER", "NONE") else f for f in flags]
    code, _ = _synth(tmp_path, *flags)
    assert code == 2 and message in capsys.readouterr().err


def test_without_wordfreq_the_error_names_the_extra(monkeypatch):
    monkeypatch.setitem(sys.modules, "wordfreq", None)
    uncached = dataclasses.replace(EL, name="Greek, not read before")
    with pytest.raises(languages.LanguageError, match=r"pip install -e '\.\[languages\]'"):
        uncached.words()
