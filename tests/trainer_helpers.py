"""Shared pieces of the trainer tests: a tiny stand-in RecognitionModel, data and configs.

Also used as a runner by the multi-process tests:
    python tests/trainer_helpers.py [aster-train flags]   (aster.train.main with the stand-in)
"""

import functools
import io
import os
import signal
import sys

import numpy as np
from google.protobuf import text_format
from PIL import Image

from aster import trainer
from aster.core.model import RecognitionModel
from aster.protos import pipeline_pb2
from aster.tf_setup import slim, tf
from aster.tools import tfrecord_utils
from aster.utils import config_util

KILL_ENV = "ASTER_TEST_KILL_AT_STEP"


def _kill_at(kill_step, global_step):
    if global_step >= kill_step:
        os.kill(os.getpid(), signal.SIGKILL)
    return global_step


class StandInModel(RecognitionModel):
    """A conv + batch norm + fc model regressing the word length; two named losses.

    `head_size` changes the shape of the head (fine-tune tests); predict() also returns constant
    control points and the input as the rectified image, so the image summaries are exercised.
    """

    def __init__(self, is_training, head_size=4):
        super().__init__(is_training)
        self._head_size = head_size

    def preprocess(self, images):
        return tf.image.resize(images, [8, 16]) / 127.5 - 1.0

    def predict(self, preprocessed_images, scope=None):
        with tf.variable_scope(scope or "StandIn"):
            with slim.arg_scope([slim.conv2d, slim.fully_connected],
                                weights_regularizer=slim.l2_regularizer(1e-4)):
                net = slim.conv2d(preprocessed_images, 4, 3, stride=2, scope="conv",
                                  normalizer_fn=slim.batch_norm,
                                  normalizer_params={"is_training": self.is_training,
                                                     "updates_collections":
                                                         [tf.GraphKeys.UPDATE_OPS]})
                # Scaled so that the loss's curvature is O(1): unscaled, the 128 normalised
                # features put momentum SGD at lr 0.005 at the edge of stability, and async
                # ps/worker runs (stale gradients) sometimes diverged to NaN in CI.
                net = slim.flatten(net)
                net = net / np.sqrt(float(net.shape[-1]))
                logits = slim.fully_connected(net, self._head_size, activation_fn=None,
                                              scope="head")
        batch = tf.shape(preprocessed_images)[0]
        points = tf.tile(tf.constant([[[0.1, 0.1], [0.9, 0.1], [0.1, 0.9], [0.9, 0.9]]]),
                         [batch, 1, 1])
        return {"logits": logits, "control_points": points,
                "rectified_images": preprocessed_images}

    def loss(self, predictions_dict, scope=None):
        length = tf.cast(tf.strings.length(self.groundtruth()["text"]), tf.float32) / 5.0
        prediction = tf.reduce_sum(predictions_dict["logits"], axis=1)
        kill_step = os.environ.get(KILL_ENV)
        if kill_step:  # the resume test: SIGKILL this process once the global step reaches it
            kill = tf.py_func(functools.partial(_kill_at, int(kill_step)),
                              [tf.train.get_global_step().read_value()], tf.int64)
            with tf.control_dependencies([kill]):
                prediction = tf.identity(prediction)
        return {"StandIn/length_loss": tf.reduce_mean(tf.square(prediction - length)),
                "StandIn/l1_loss": 0.1 * tf.reduce_mean(tf.abs(prediction - length))}

    def postprocess(self, predictions_dict, scope=None):
        raise NotImplementedError


def build_standin(model_config, is_training, head_size=4):
    del model_config
    return StandInModel(is_training, head_size=head_size)


STAND_IN = trainer.Seams(build_model=build_standin)  # trainer.train(..., seams=STAND_IN)


TINY_CONFIG = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))),
                           "configs", "tiny.config")

WORDS = ["cat", "house", "go", "street", "a", "ninety", "tree", "boats"]


def write_records(path, count=32, size=(16, 40), seed=0, learnable=False):
    """Writes `count` coloured-noise PNG word records; returns the path.

    With `learnable`, the image's brightness encodes the word's length (plus a little noise), so
    the stand-in model can fit its length target and its loss falls close to zero.
    """
    rng = np.random.RandomState(seed)
    examples = []
    for i in range(count):
        pixels = rng.randint(0, 255, size=(size[0], size[1], 3), dtype=np.uint8)
        if learnable:
            level = 30 * len(WORDS[i % len(WORDS)])
            pixels = np.clip(level + pixels // 16, 0, 255).astype(np.uint8)
        buffer = io.BytesIO()
        Image.fromarray(pixels).save(buffer, format="PNG")
        examples.append(tfrecord_utils.make_example(buffer.getvalue(), WORDS[i % len(WORDS)],
                                                    filename=f"{i}.png"))
    tfrecord_utils.write_tfrecords(examples, str(path))
    return str(path)


def pipeline_config(record_path, extra_train="", optimizer=None):
    """A pipeline config for the stand-in model reading record_path."""
    optimizer = optimizer or (
        "momentum_optimizer { learning_rate { constant_learning_rate { learning_rate: 0.01 } } "
        "momentum_optimizer_value: 0.9 } use_moving_average: false")
    text = f"""
    train_config {{
      batch_size: 4
      # The tiny model's input size (config_checks: a resize step agrees with the model).
      data_augmentation_options {{ resize_image {{ target_height: 32 target_width: 64 }} }}
      optimizer {{ {optimizer} }}
      num_steps: 4
      num_batch_queue_threads: 1
      batch_queue_capacity: 16
      prefetch_queue_capacity: 2
      save_checkpoint_secs: 0
      save_summaries_steps: 2
      log_every_n_steps: 2
      {extra_train}
    }}
    train_input_reader {{
      # The tiny model's decoders read 9 characters (config_checks: facts stated twice agree).
      max_label_length: 9 long_label_handling: TRUNCATE
      tf_record_input_reader {{ input_path: "{record_path}" }}
    }}
    """
    config = text_format.Merge(text, pipeline_pb2.TrainEvalPipelineConfig())
    # A valid model section (aster-train validates it) that the stand-in ignores.
    config.model.CopyFrom(config_util.load_pipeline_config(TINY_CONFIG).model)
    return config


def write_config(path, config):
    with open(path, "w", encoding="utf-8") as f:
        f.write(text_format.MessageToString(config))
    return str(path)


if __name__ == "__main__":
    from aster import train

    sys.exit(train.main(sys.argv[1:], build_model=build_standin))
