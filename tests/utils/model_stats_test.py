import functools
import os

import pytest

from aster.builders import model_builder
from aster.tf_setup import tf
from aster.utils import config_util, model_stats

CONFIGS = os.path.join(os.path.dirname(__file__), "..", "..", "configs")


def test_parameter_count():
    with tf.Graph().as_default():
        tf.get_variable("w", [3, 4])
        tf.get_variable("b", [4])
        tf.get_variable("s", [5], trainable=False)
        assert model_stats.parameter_count() == 16


@pytest.mark.slow
def test_paper_config_forward_flops_per_image():
    """Forward FLOPs (multiply and add counted separately) of one 64x256 image: rectifier and
    encoder, plus each decoder unrolled over all 30 steps (one hypothesis; a beam of 5 costs about
    five times the decoder share)."""
    config = config_util.load_pipeline_config(os.path.join(CONFIGS, "aster_paper.config")).model
    stats = model_stats.model_stats(functools.partial(model_builder.build, config), 64, 256)
    print(f"aster_paper.config forward FLOPs per image: {stats['forward_flops'] / 1e9:.3f} G "
          f"(rectifier + encoder ~{stats['encoder_flops'] / 1e9:.3f} G, two 30-step decoders "
          f"~{stats['decoder_flops'] / 1e9:.3f} G)")
    assert 1e9 < stats["encoder_flops"] < 3e9 and stats["decoder_flops"] > 1e6
    assert stats["parameters"] == 22086216


def test_a_keypoint_supervised_model_is_counted_too():
    """demo_cpu.config supervises the control points: its loss needs keypoints (make bench's
    flops.py died on it)."""
    config = config_util.load_pipeline_config(os.path.join(CONFIGS, "demo_cpu.config")).model
    assert config.multi_predictors_recognition_model.keypoint_supervision
    stats = model_stats.model_stats(functools.partial(model_builder.build, config), 64, 256)
    assert stats["decoder_flops"] > 0 and stats["parameters"] > 0
