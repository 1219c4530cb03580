"""configs/tiny.config and a randomly initialised checkpoint of its model, for the export, demo
and benchmark tests."""

import os
import random

from aster.utils import config_util

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def tiny_config():
    """configs/tiny.config as a TrainEvalPipelineConfig."""
    return config_util.load_pipeline_config(os.path.join(ROOT, "configs", "tiny.config"))


def random_tiny_checkpoint(directory):
    """Builds the tiny config's model with random weights and saves it as model.ckpt-1.

    Returns:
      (config, checkpoint path).
    """
    from aster.builders import model_builder
    from aster.tf_setup import tf

    config = tiny_config()
    # tf-keras draws the seeds of unseeded initializers from Python's `random`: without this the
    # "random" model differed in every process, and with it which near ties the parity checks
    # met (the beam-search check failed about one run in eight).
    random.seed(3)
    with tf.Graph().as_default():
        tf.random.set_random_seed(3)
        model = model_builder.build(config.model, is_training=False)
        images = tf.zeros([1, 32, 64, 3])
        model.postprocess(model.predict(model.preprocess(images)))
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            path = tf.train.Saver().save(sess, os.path.join(directory, "model.ckpt"),
                                         global_step=1, write_meta_graph=False)
    return config, path
