"""train_session: which precision a deployment trains in, and dynamic loss scaling."""

import numpy as np
import pytest
from google.protobuf import text_format

from aster.core import session_options
from aster.protos import train_pb2
from aster.tf_setup import tf
from aster.utils import model_deploy, train_session


def _train_config(text):
    return text_format.Parse(text, train_pb2.TrainConfig())


@pytest.mark.parametrize("bfloat16, clone_on_cpu, num_gpus, expected", [
    (True, False, 1, True),     # GPU clones on a GPU machine: float16 + loss scaling
    (True, True, 1, False),     # CPU clones: the CPU bfloat16 path
    (True, False, 0, False),    # GPU clones soft-placed on a CPU-only machine: CPU path
    (False, False, 2, False),   # float32
])
def test_gpu_mixed_precision_only_for_gpu_clones_on_gpus(monkeypatch, bfloat16, clone_on_cpu,
                                                         num_gpus, expected):
    monkeypatch.setattr(train_session, "_num_gpus", lambda: num_gpus)
    deploy = model_deploy.DeploymentConfig(clone_on_cpu=clone_on_cpu)
    train_config = _train_config(f"mixed_precision: {str(bfloat16).lower()}")
    assert train_session.gpu_mixed_precision(deploy, train_config) is expected
    session = train_session.session_config(deploy, train_config)
    assert session_options.gpu_float16_enabled(session) is expected
    if expected:
        assert not session_options.bfloat16_enabled(session)


def test_loss_scaling_applies_true_gradients_and_skips_overflowing_steps():
    with tf.Graph().as_default():
        step = tf.train.get_or_create_global_step()
        weight = tf.get_variable("w", initializer=1.0)
        x = tf.placeholder(tf.float32, [])
        optimizer = train_session.loss_scaled(tf.train.GradientDescentOptimizer(0.1))
        grads_and_vars = optimizer.compute_gradients(weight * x, var_list=[weight])
        train_op = optimizer.apply_gradients(grads_and_vars, global_step=step)
        scale = optimizer._loss_scale()
        with tf.Session() as session:
            session.run(tf.global_variables_initializer())
            assert session.run(scale) == 2.0 ** 15
            # The hooks see the true gradient (x), not x times the scale.
            assert session.run(grads_and_vars[0][0], {x: 2.0}) == pytest.approx(2.0)
            session.run(train_op, {x: 2.0})
            np.testing.assert_allclose(session.run([weight, step]), [0.8, 1], rtol=1e-6)
            session.run(train_op, {x: np.inf})
            # Skipped: weight and step unchanged, scale halved.
            np.testing.assert_allclose(session.run([weight, step, scale]), [0.8, 1, 2.0 ** 14],
                                       rtol=1e-6)
            session.run(train_op, {x: 1.0})
            np.testing.assert_allclose(session.run([weight, step]), [0.7, 2], rtol=1e-6)


@pytest.mark.parametrize("bfloat16, num_gpus, cpu_has_it, expected", [
    (True, 0, True, True),
    (True, 0, False, False),    # float32 on a CPU without native bfloat16 (configure warns)
    (True, 1, True, False),     # GPU clones on a GPU machine: the float16 path
    (False, 0, True, False),
])
def test_cpu_bfloat16(monkeypatch, bfloat16, num_gpus, cpu_has_it, expected):
    monkeypatch.setattr(train_session, "_num_gpus", lambda: num_gpus)
    monkeypatch.setattr(session_options, "cpu_supports_bfloat16", lambda flags=None: cpu_has_it)
    train_config = _train_config(f"mixed_precision: {str(bfloat16).lower()}")
    assert train_session.cpu_bfloat16(model_deploy.DeploymentConfig(), train_config) is expected
