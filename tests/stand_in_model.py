"""Stand-in model, in-memory eval data and checkpoint writer for the eval tests.

The stand-in model predicts, for every image, the text of its variable `StandIn/value` rounded to
an integer, so which checkpoint (and which weights: raw or moving average) was restored shows in
the predictions.
"""

import os

import numpy as np
from google.protobuf import text_format

from aster.core import model as model_lib
from aster.core.standard_fields import InputDataFields as Fields
from aster.core.standard_fields import PredictionFields
from aster.protos import pipeline_pb2
from aster.tf_setup import tf

GROUNDTRUTH = ["7", "7", "8", "7", "!!", "7"]  # "!!" is empty under every alphanumeric protocol


class StandInModel(model_lib.RecognitionModel):
    """Predicts str(round(StandIn/value)) for every image."""

    def __init__(self):
        super().__init__(is_training=False)

    def preprocess(self, images):
        return images / 127.5 - 1.0

    def predict(self, preprocessed_images, scope=None):
        with tf.variable_scope("StandIn"):
            value = tf.get_variable("value", [], initializer=tf.zeros_initializer())
        return {"images": preprocessed_images, "value": value}

    def loss(self, predictions_dict, scope=None):
        return {}

    def postprocess(self, predictions_dict, scope=None):
        images = predictions_dict["images"]
        batch = tf.shape(images)[0]
        text = tf.strings.as_string(tf.cast(tf.round(predictions_dict["value"]), tf.int32))
        points = tf.constant([[0.0, 0.0], [1.0, 0.0], [0.0, 1.0], [1.0, 1.0]])
        return {
            PredictionFields.text: tf.fill([batch], text),
            PredictionFields.scores: tf.fill([batch], -predictions_dict["value"]),
            PredictionFields.control_points: tf.tile(points[None], [batch, 1, 1]),
            PredictionFields.rectified_images: tf.image.resize(images, [8, 16]),
        }


def stand_in_batches(groundtruth=GROUNDTRUTH, lexicons=None, dropped=0):
    """A batches_fn over in-memory examples: 16x32 images, filenames all "same.png"."""

    def batches_fn(reader_config, eval_config, batch_size):
        n = len(groundtruth)
        data = {
            Fields.image: np.full((n, 16, 32, 3), 100.0, np.float32),
            Fields.groundtruth_text: np.array(groundtruth, dtype=object),
            Fields.filename: np.array(["same.png"] * n, dtype=object),
            Fields.lexicon: np.array(lexicons or [""] * n, dtype=object),
        }
        dataset = tf.data.Dataset.from_tensor_slices(data).batch(batch_size)
        batch = tf.data.make_one_shot_iterator(dataset).get_next()
        return batch, {"undecodable": tf.constant(dropped, tf.int64),
                       "empty_label": tf.constant(0, tf.int64)}

    return batches_fn


def write_checkpoint(directory, step, value, ema_value=None):
    """Writes model.ckpt-<step> holding StandIn/value (and its moving average)."""
    with tf.Graph().as_default():
        with tf.variable_scope("StandIn"):
            var = tf.get_variable("value", [], initializer=tf.constant_initializer(value))
        var_list = {"StandIn/value": var}
        if ema_value is not None:
            var_list["StandIn/value/ExponentialMovingAverage"] = tf.Variable(ema_value)
        saver = tf.train.Saver(var_list)
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            return saver.save(sess, os.path.join(directory, "model.ckpt"), global_step=step,
                              write_meta_graph=False)


def make_config(extra=""):
    config = pipeline_pb2.TrainEvalPipelineConfig()
    text_format.Merge(
        """
        eval_config { batch_size: 4 num_examples: 0 num_visualizations: 3 }
        eval_input_reader { tf_record_input_reader { input_path: "data/bench_a.tfrecord" } }
        """ + extra, config)
    return config
