"""The character-set protocol (eval_config.protocol 1) and auto (0): non-Latin ground truths are
scored, Latin configs keep protocol 36, and aster-config validate and the evaluator accept the same
protocol values."""

import io
import math
import os

import numpy as np
import pytest
from PIL import Image, ImageDraw, ImageFont

from aster import evaluator
from aster.core import charsets
from aster.tools import tfrecord_utils
from aster.utils import config_util
from aster.utils import recognition_evaluation as re_eval

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
WORDS = ["λόγος", "άλφα", "βήτα", "γάμμα", "δέλτα", "ωμέγα", "νέος", "φως"]
GREEK = sorted(set("".join(WORDS)))


def _tiny_config(charset=None, protocol=None):
    config = config_util.load_pipeline_config(os.path.join(ROOT, "configs", "tiny.config"))
    if charset is not None:
        for predictor in config.model.multi_predictors_recognition_model.predictor:
            predictor.attention_predictor.label_map.character_set.text_string = " ".join(charset)
        for step in config.train_config.data_augmentation_options:  # the same characters
            if step.WhichOneof("preprocessing_step") == "string_filtering":
                step.string_filtering.include_charset.text_string = " ".join(charset)
    if protocol is not None:
        config.eval_config.protocol = protocol
    return config


# --------------------------------------------------------------------------- the filter


def test_ascii_protocols_empty_a_greek_groundtruth():
    for protocol in re_eval.ASCII_PROTOCOLS:
        assert re_eval.filter_text("λόγος", protocol) == ""


def test_charset_protocol_keeps_the_characters_of_the_set_and_drops_the_rest():
    text = "λόγος, x \ufffd!"
    assert re_eval.filter_text(text, re_eval.CHARSET, charset=GREEK) == "λόγος"
    assert re_eval.filter_text(text, re_eval.CHARSET, charset=GREEK + ["x", "!"]) == "λόγοςx!"


def test_charset_protocol_normalises_nfkc_on_both_sides():
    decomposed = "λο\u0301γος"  # omicron + combining acute, NFKC composes it to U+03CC
    result = re_eval.evaluate(["λόγος"], [decomposed], protocol=re_eval.CHARSET, charset=GREEK)
    assert result["num_scored"] == 1 and result["accuracy"] == 1.0
    # A compatibility form in the set (fullwidth digit) keeps its NFKC form in the text.
    assert re_eval.filter_text("a1", re_eval.CHARSET, charset=["\uff11"]) == "1"


def test_charset_protocol_folds_case_only_when_asked():
    preds, gts = ["λογος"], ["ΛΟΓΟΣ"]
    lower = list("λογοσς")
    assert re_eval.evaluate(preds, gts, protocol=1, charset=lower)["num_scored"] == 0
    folded = re_eval.evaluate(preds, gts, protocol=1, charset=lower, fold_case=True)
    # Case folding maps final sigma to sigma on both sides, so the word matches.
    assert folded["num_scored"] == 1 and folded["accuracy"] == 1.0


def test_charset_protocol_without_a_charset_raises():
    with pytest.raises(ValueError, match="needs the character set"):
        re_eval.RecognitionEvaluation(re_eval.CHARSET)


# --------------------------------------------------------------------------- auto


@pytest.mark.parametrize("name", sorted(charsets.BUILT_IN))
def test_auto_is_36_for_every_built_in_set(name):
    assert re_eval.resolve_protocol(re_eval.AUTO, list(charsets.BUILT_IN[name])) == 36


def test_auto_is_the_charset_protocol_for_a_non_ascii_set_and_explicit_values_stay():
    assert re_eval.resolve_protocol(re_eval.AUTO, GREEK) == re_eval.CHARSET
    assert re_eval.resolve_protocol(re_eval.AUTO, list("cafe") + ["é"]) == re_eval.CHARSET
    assert re_eval.resolve_protocol(62, GREEK) == 62
    assert re_eval.resolve_protocol(re_eval.AUTO, None) == 36
    with pytest.raises(ValueError, match="no decoded predictor with a label_map"):
        re_eval.resolve_protocol(re_eval.CHARSET, None)


def test_evaluator_resolves_auto_from_the_model_config(tmp_path):
    assert evaluator.Evaluator(_tiny_config(), str(tmp_path)).protocol == 36
    greek = _tiny_config(charset=GREEK)
    assert greek.eval_config.protocol == re_eval.AUTO  # the default
    assert evaluator.Evaluator(greek, str(tmp_path)).protocol == re_eval.CHARSET
    assert evaluator.Evaluator(_tiny_config(GREEK, protocol=94), str(tmp_path)).protocol == 94


@pytest.mark.parametrize("protocol", [0, 1, 2, 35, 36, 37, 62, 94, 95, 1000])
def test_validate_and_evaluator_accept_the_same_protocols(protocol, tmp_path):
    config = _tiny_config(charset=GREEK, protocol=protocol)
    try:
        config_util.validate(config)
        validated = None
    except config_util.ConfigError as e:
        validated = str(e)
    try:
        evaluator.Evaluator(config, str(tmp_path))
        evaluated = None
    except ValueError as e:
        evaluated = str(e)
    assert (validated is None) == (evaluated is None) == (protocol in re_eval.SETTINGS)
    if validated is not None:
        assert validated.startswith("eval_config.protocol") and "eval_config.protocol" in evaluated
        assert re_eval.expected() in validated and re_eval.expected() in evaluated


# --------------------------------------------------------------------------- end to end


def _greek_font(size=20):
    from aster.synth import font_checks, fonts

    paths = sorted(fonts.candidate_files(), key=lambda p: "DejaVuSans" not in p)
    for path in paths[:40]:
        try:
            if set(GREEK) <= font_checks.cmap_chars(path):
                return ImageFont.truetype(path, size)
        except Exception:  # noqa: BLE001 - an unreadable font is just not a candidate
            continue
    return None


def _word_image(word, font, seed):
    if font is None:  # no Greek font on this machine: the images need not be legible
        pixels = np.random.default_rng(seed).integers(0, 256, (24, 80, 3), dtype=np.uint8)
        image = Image.fromarray(pixels)
    else:
        image = Image.new("RGB", (96, 32), (235, 235, 235))
        ImageDraw.Draw(image).text((4, 4), word, fill=(20, 20, 20), font=font)
    buffer = io.BytesIO()
    image.save(buffer, "PNG")
    return buffer.getvalue()


def _write_greek_records(path):
    font = _greek_font()
    examples = [tfrecord_utils.make_example(_word_image(w, font, i), w, "png", filename=f"{i}.png")
                for i, w in enumerate(WORDS)]
    tfrecord_utils.write_tfrecords(examples, path)
    return path


def _strip_string_filtering(steps):
    kept = [s for s in steps if s.WhichOneof("preprocessing_step") != "string_filtering"]
    del steps[:]
    steps.extend(kept)


@pytest.mark.slow
def test_greek_tiny_dataset_trains_and_evaluates_with_a_numeric_accuracy(tmp_path):
    from aster import trainer

    record = _write_greek_records(str(tmp_path / "greek.tfrecord"))
    config = _tiny_config(charset=GREEK)
    # tiny.config filters transcripts to LOWERCASE; this model's set is Greek.
    _strip_string_filtering(config.train_config.data_augmentation_options)
    _strip_string_filtering(config.eval_config.data_preprocessing_steps)
    config.train_input_reader[0].tf_record_input_reader.input_path = record
    config.eval_input_reader[0].tf_record_input_reader.input_path = record
    config.train_config.num_steps = 3
    config.train_config.batch_size[:] = [4]
    config.eval_config.batch_size = 4
    config_util.validate(config, check_files=True)

    train_dir = str(tmp_path / "train")
    trainer.train(config, train_dir)
    (results,) = evaluator.run(config, str(tmp_path / "eval"), checkpoint_dir=train_dir,
                               run_once=True)

    assert results["protocol"] == re_eval.CHARSET and results["step"] == 3
    (dataset,) = results["datasets"]
    assert dataset["name"] == "greek" and dataset["size"] == len(WORDS)
    assert dataset["num_scored"] == len(WORDS) and dataset["num_empty_groundtruth"] == 0
    assert isinstance(dataset["accuracy"], float) and not math.isnan(dataset["accuracy"])
    assert 0.0 <= dataset["accuracy"] <= 1.0 and 0.0 <= dataset["one_minus_ned"] <= 1.0
    # The ASCII protocols, still reported, cannot score a single one of these words.
    assert dataset["protocols"]["36"]["accuracy"] is None
    assert dataset["protocols"]["1"]["accuracy"] == dataset["accuracy"]
    rows = (tmp_path / "eval" / "step-3" / "predictions-greek.tsv").read_text("utf-8")
    assert all(w in rows for w in WORDS)
    md = (tmp_path / "eval" / "results.md").read_text("utf-8")
    assert "- protocol: 1 (the model's character set, NFKC)" in md
