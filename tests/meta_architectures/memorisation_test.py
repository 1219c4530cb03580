"""End-to-end learning checks: a model memorises a fixed batch of 16 rendered words on CPU.

Training runs the is_training=True model; accuracy is read from an is_training=False copy that
shares the weights (batch norm on its moving averages), as the evaluator would.
"""

import os

import numpy as np
import pytest
from google.protobuf import text_format
from PIL import Image, ImageDraw, ImageFont

from aster.builders import model_builder
from aster.core import standard_fields as fields
from aster.protos import model_pb2
from aster.tf_setup import tf
from aster.utils import config_util

FONT = "/usr/share/fonts/truetype/dejavu/DejaVuSans.ttf"
CONFIGS = os.path.join(os.path.dirname(__file__), "..", "..", "configs")
WORDS = ["cat", "house", "tree", "apple", "go", "zebra", "road", "k9",
         "night", "sun", "river", "blue", "42", "moon", "fox", "door"]
MAX_STEPS = 600
EVAL_EVERY = 25

CTC_MODEL = """
multi_predictors_recognition_model {
  input_height: 32 input_width: 100
  feature_extractor {
    convnet { resnet { net_depth: RESNET_30 block_depths: [8, 16, 32, 32, 32]
                       conv_hyperparams { op: CONV initializer { variance_scaling_initializer { } }
                                          batch_norm { decay: 0.9 } } } }
    bidirectional_rnn { fw_bw_rnn_cell { lstm_cell { num_units: 32 } } num_output_units: 32
                        fc_hyperparams { op: FC initializer { variance_scaling_initializer { } } } }
  }
  predictor { name: "Ctc" ctc_predictor { label_map { character_set { built_in_set: LOWERCASE } }
                                         fc_hyperparams { op: FC activation: NONE } } }
}
"""


def _render(word, width=100, height=32):
    font = ImageFont.truetype(FONT, 22)
    image = Image.new("RGB", (width, height), (255, 255, 255))
    draw = ImageDraw.Draw(image)
    left, top, right, bottom = draw.textbbox((0, 0), word, font=font)
    draw.text(((width - (right - left)) / 2 - left, (height - (bottom - top)) / 2 - top), word,
              fill=(0, 0, 0), font=font)
    return np.asarray(image, np.float32)


def _steps_to_memorise(model_config, learning_rate=0.003):
    """Trains on the fixed batch; returns the step at which word accuracy reached 100% (or None)
    and the first and last losses."""
    images = tf.constant(np.stack([_render(w) for w in WORDS]))
    tf.set_random_seed(0)
    model = model_builder.build(model_config, is_training=True)
    preds = model.predict(model.preprocess(images))
    model.provide_groundtruth(tf.constant(WORDS))
    total_loss = tf.add_n(list(model.loss(preds).values()))
    with tf.control_dependencies(tf.get_collection(tf.GraphKeys.UPDATE_OPS)):
        train_op = tf.train.AdamOptimizer(learning_rate).minimize(total_loss)
    with tf.variable_scope(tf.get_variable_scope(), reuse=True):
        eval_model = model_builder.build(model_config, is_training=False)
        text = eval_model.postprocess(eval_model.predict(eval_model.preprocess(images)))[
            fields.PredictionFields.text]
    losses = []
    with tf.Session() as sess:
        sess.run([tf.global_variables_initializer(), tf.tables_initializer()])
        for step in range(1, MAX_STEPS + 1):
            losses.append(sess.run([total_loss, train_op])[0])
            if step % EVAL_EVERY == 0:
                predicted = [t.decode("utf-8") for t in sess.run(text)]
                if predicted == WORDS:
                    return step, losses
    return None, losses


@pytest.mark.slow
def test_tiny_config_attention_model_memorises_16_words():
    with tf.Graph().as_default():
        config = config_util.load_pipeline_config(os.path.join(CONFIGS, "tiny.config")).model
        step, losses = _steps_to_memorise(config)
    assert step is not None, f"not memorised in {MAX_STEPS} steps; losses {losses[::50]}"
    assert losses[-1] < 0.2 * losses[0]


@pytest.mark.slow
def test_ctc_model_memorises_16_words():
    with tf.Graph().as_default():
        step, losses = _steps_to_memorise(text_format.Parse(CTC_MODEL, model_pb2.Model()))
    assert step is not None, f"not memorised in {MAX_STEPS} steps; losses {losses[::50]}"
    assert losses[-1] < 0.2 * losses[0]
