"""A Greek model end to end on a tiny config: aster-synth-words --language el writes the data and
its character set, the model trains on it with folded labels, exports to ONNX, and the exported
recognizer (no TensorFlow, no aster) returns the checkpoint's Greek texts."""

import json
import os

import export_parity
import numpy as np
import pytest

from aster import export, inference, trainer
from aster.core import charsets
from aster.exporters import lite_runtime
from aster.synth import generator, languages
from aster.tools import package_model
from aster.utils import config_util

pytest.importorskip("tf2onnx", reason="the onnx extra (tf2onnx) is not installed")
pytest.importorskip("onnxruntime", reason="the onnx extra (onnxruntime) is not installed")
pytest.importorskip("wordfreq", reason="the languages extra (wordfreq) is not installed")

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
GREEK = languages.LANGUAGES["el"]


def _greek_tiny_config(data_dir):
    """configs/tiny.config with the Greek character set, case-folded labels and data_dir's data."""
    config = config_util.load_pipeline_config(os.path.join(ROOT, "configs", "tiny.config"))
    charset_file = os.path.join(data_dir, "charset.txt")
    for predictor in config.model.multi_predictors_recognition_model.predictor:
        predictor.attention_predictor.label_map.character_set.text_file = charset_file
    steps = (list(config.train_config.data_augmentation_options)
             + list(config.eval_config.data_preprocessing_steps))
    for step in steps:
        if step.WhichOneof("preprocessing_step") == "string_filtering":
            step.string_filtering.lower_case = False
            step.string_filtering.case_fold = True
            step.string_filtering.include_charset.text_file = charset_file
    config.eval_config.charset_fold_case = True
    config.train_input_reader[0].tf_record_input_reader.input_path = os.path.join(
        data_dir, "train.tfrecord")
    config.eval_input_reader[0].tf_record_input_reader.input_path = os.path.join(
        data_dir, "val.tfrecord")
    config.train_config.num_steps = 3
    return config


def _never_ending(checkpoint, prefix):
    """`checkpoint`'s weights with the reserved labels (GO, EOS) out of reach of every decoder
    output, written at `prefix`: a model trained for 3 steps often reads EOS first, and texts cut
    to nothing show no Greek; this one reads every step's most likely letter."""
    values = package_model.weights(checkpoint, use_moving_average=False)
    biases = [name for name in values if name.endswith("output/bias")]
    assert biases, sorted(values)
    for name in biases:
        values[name][:2] = -1e4
    package_model.write_weights(values, prefix)
    return prefix


@pytest.mark.slow
def test_greek_synth_data_trains_exports_to_onnx_and_reads_back_greek(tmp_path):
    data_dir = str(tmp_path / "synth_el")
    assert generator.main(["--output_dir", data_dir, "--language", "el", "--num_train", "64",
                             "--num_val", "16", "--num_val_ood", "0", "--num_shards", "1",
                             "--num_workers", "1"]) == 0
    assert charsets.from_text_file(os.path.join(data_dir, "charset.txt")) == list(GREEK.charset)
    with open(os.path.join(data_dir, "manifest.json"), encoding="utf-8") as f:
        manifest = json.load(f)["splits"]["train"]
    assert manifest["language"] == "el" and manifest["words"].startswith("wordfreq==")

    config = _greek_tiny_config(data_dir)
    config_util.validate(config, check_files=True)
    train_dir = str(tmp_path / "train")
    trainer.train(config, train_dir)
    checkpoint = _never_ending(os.path.join(train_dir, "model.ckpt-3"),
                              str(tmp_path / "never_ending" / "model.ckpt-3"))
    out_dir = str(tmp_path / "onnx")
    config_path = str(tmp_path / "pipeline.config")
    config_util.save_pipeline_config(config, config_path)
    assert export.main(["--checkpoint_path", checkpoint, "--pipeline_config_path", config_path,
                        "--output_dir", out_dir, "--format", "onnx"]) == 0
    metadata = lite_runtime.load_metadata(out_dir)
    assert metadata["labels"]["characters"] == list(GREEK.charset)

    pixels, encoded = export_parity.images(12)
    got = export_parity.run_without_tensorflow(out_dir, pixels, tmp_path)
    texts = [t for t in got["text"] if t]
    assert texts, "the model read nothing at all"
    assert all(c in GREEK.charset for t in texts for c in t)
    assert any(c in GREEK.letters for t in texts for c in t)
    # The checkpoint's texts and scores on the same images at the model's input size (images of
    # another size go through two resizers, whose pixel differences can flip this barely
    # trained model's near ties: onnx_export_test checks that path on a random model).
    with inference.CheckpointPredictor(config, checkpoint) as predictor:
        expected = predictor.predict(encoded)
    assert got["text"] == [t.decode("utf-8") for t in expected["text"]]
    np.testing.assert_allclose(got["scores"], expected["scores"],
                               atol=export_parity.SCORE_ATOL, rtol=0)
