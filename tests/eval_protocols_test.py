"""End to end through the evaluation pipeline: a TFRecord whose transcripts keep case and
punctuation, read with a shipped config's evaluation settings, is scored by each protocol against
the transcript as written (never after the model's own filtering)."""

import io
import os

import numpy as np
import pytest
from PIL import Image

from aster import evaluator
from aster.core import model as model_lib
from aster.core.standard_fields import PredictionFields
from aster.tf_setup import tf
from aster.tools import tfrecord_utils
from aster.utils import config_util

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
# (transcript as written, what a 36-class lower-case model reads)
RECORDS = [("Hello", "hello"), ("U.S.A.", "usa"), ("$12.99", "1299"), ("iPhone", "iphone"),
           ("e-mail", "email"), ("10:45", "1045"), ("word", "word"), ("WORD", "word")]


class GrayLevelReader(model_lib.RecognitionModel):
    """Reads image i (gray level 20 * i) as RECORDS[i][1]; one variable so a checkpoint loads."""

    def __init__(self):
        super().__init__(is_training=False)

    def preprocess(self, images):
        return images

    def predict(self, preprocessed_images, scope=None):
        with tf.variable_scope("StandIn"):
            tf.get_variable("value", [], initializer=tf.zeros_initializer())
        return {"images": preprocessed_images}

    def loss(self, predictions_dict, scope=None):
        return {}

    def postprocess(self, predictions_dict, scope=None):
        images = predictions_dict["images"]
        batch = tf.shape(images)[0]
        index = tf.cast(tf.round(tf.reduce_mean(images, axis=[1, 2, 3]) / 20.0), tf.int32)
        texts = tf.gather(tf.constant([read for _, read in RECORDS]), index)
        points = tf.constant([[0.0, 0.0], [1.0, 0.0], [0.0, 1.0], [1.0, 1.0]])
        return {
            PredictionFields.text: texts,
            PredictionFields.scores: tf.zeros([batch]),
            PredictionFields.control_points: tf.tile(points[None], [batch, 1, 1]),
            PredictionFields.rectified_images: images,
        }


def _checkpoint(directory):
    with tf.Graph().as_default():
        with tf.variable_scope("StandIn"):
            tf.get_variable("value", [], initializer=tf.zeros_initializer())
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            return tf.train.Saver().save(sess, os.path.join(directory, "model.ckpt"),
                                         global_step=1, write_meta_graph=False)


def _png(level):
    buffer = io.BytesIO()
    Image.fromarray(np.full((32, 100, 3), level, np.uint8)).save(buffer, format="PNG")
    return buffer.getvalue()


def test_protocols_score_the_transcript_as_written(tmp_path):
    examples = [tfrecord_utils.make_example(_png(20 * i), text, filename=f"{i}.png")
                for i, (text, _) in enumerate(RECORDS)]
    record = str(tmp_path / "mixed.tfrecord")
    tfrecord_utils.write_tfrecords(examples, record)
    # demo_cpu's evaluation settings as shipped (36 lower-case classes), on this one set.
    config = config_util.load_pipeline_config(os.path.join(ROOT, "configs", "demo_cpu.config"))
    config = config_util.merge_overrides(config, assignments=[
        f"eval_input_reader[0].tf_record_input_reader.input_path={record}",
        "eval_config.compare_identity_rectification=false", "eval_config.batch_size=3"])
    del config.eval_input_reader[1:]
    del config.eval_config.dataset_name[1:]
    (results,) = evaluator.run(config, str(tmp_path / "eval"),
                               checkpoint_path=_checkpoint(str(tmp_path / "train")),
                               model_fn=GrayLevelReader)
    (dataset,) = results["datasets"]
    assert results["protocol"] == 36 and dataset["size"] == len(RECORDS)
    accuracy = {p: dataset["protocols"][p]["accuracy"] for p in ("36", "62", "94")}
    # 36: case-insensitive digits and letters: every reading is right.
    assert accuracy["36"] == pytest.approx(1.0)
    # 62: case kept: Hello, U.S.A., iPhone and WORD are wrong; $12.99, e-mail, 10:45, word right.
    assert accuracy["62"] == pytest.approx(4 / 8)
    # 94: punctuation kept too: only "word" is read as written.
    assert accuracy["94"] == pytest.approx(1 / 8)
    report = (tmp_path / "eval" / "results.md").read_text()
    assert "| dataset | protocol 36 (headline) | protocol 62 | protocol 94 |" in report
    assert "| val | 100.00% (100.00%) | 50.00% (70.42%) | 12.50% (61.67%) |\n" in report
