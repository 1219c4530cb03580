import numpy as np
import pytest

from aster.tf_setup import slim, tf
from aster.utils import model_deploy


def _data(n=8, d=5, seed=0):
    rng = np.random.RandomState(seed)
    return rng.randn(n, d).astype(np.float32), rng.randn(n, 1).astype(np.float32)


def _mlp_fn(batches, with_bn=False):
    """model_fn taking the next batch from `batches` (one per clone)."""

    def model_fn():
        x, y = next(batches)
        with slim.arg_scope([slim.fully_connected],
                            weights_initializer=tf.constant_initializer(0.1),
                            weights_regularizer=slim.l2_regularizer(0.01)):
            h = slim.fully_connected(tf.constant(x), 4, activation_fn=tf.tanh, scope="fc1")
            if with_bn:
                h = slim.batch_norm(h, is_training=True, scope="bn",
                                    updates_collections=[tf.GraphKeys.UPDATE_OPS])
            out = slim.fully_connected(h, 1, activation_fn=None, scope="fc2")
        loss = tf.reduce_mean(tf.square(out - y))
        return {model_deploy.LOSSES_KEY: {"mse": loss}}

    return model_fn


def _first_step(num_clones):
    """Gradients and variables after one SGD step with the 8 examples split over clones."""
    x, y = _data()
    per = len(x) // num_clones
    batches = iter([(x[i * per:(i + 1) * per], y[i * per:(i + 1) * per])
                    for i in range(num_clones)])
    deploy = model_deploy.DeploymentConfig(num_clones=num_clones, clone_on_cpu=True)
    with tf.Graph().as_default():
        clones = model_deploy.create_clones(deploy, _mlp_fn(batches))
        optimizer = tf.train.GradientDescentOptimizer(0.5)
        total_loss, grads_and_vars = model_deploy.optimize_clones(clones, optimizer)
        train_op = optimizer.apply_gradients(grads_and_vars)
        with tf.Session(config=deploy.session_config()) as sess:
            sess.run(tf.global_variables_initializer())
            grads, loss = sess.run([[g for g, _ in grads_and_vars], total_loss])
            sess.run(train_op)
            values = sess.run([v for _, v in grads_and_vars])
        names = [v.op.name for _, v in grads_and_vars]
    return dict(zip(names, grads, strict=True)), dict(zip(names, values, strict=True)), loss


def test_two_clones_equal_one_clone_with_same_examples():
    grads1, values1, loss1 = _first_step(1)
    grads2, values2, loss2 = _first_step(2)
    assert sorted(grads1) == sorted(grads2) == ["fc1/biases", "fc1/weights", "fc2/biases",
                                                "fc2/weights"]
    for name in grads1:
        np.testing.assert_allclose(grads1[name], grads2[name], rtol=1e-5, atol=1e-6)
        np.testing.assert_allclose(values1[name], values2[name], rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(loss1, loss2, rtol=1e-5)


def test_create_clones_shares_variables_and_scopes_clones():
    x, y = _data()
    batches = iter([(x[:4], y[:4]), (x[4:], y[4:])])
    deploy = model_deploy.DeploymentConfig(num_clones=2, clone_on_cpu=True)
    with tf.Graph().as_default():
        clones = model_deploy.create_clones(deploy, _mlp_fn(batches, with_bn=True))
        assert [c.scope for c in clones] == ["clone_0/", "clone_1/"]
        assert [c.device for c in clones] == ["/device:CPU:0", "/device:CPU:1"]
        assert len(tf.trainable_variables()) == 5  # fc1 w,b; bn beta; fc2 w,b: shared
        assert all(v.device.endswith("CPU:0") for v in tf.global_variables())
        loss_op = clones[1].outputs[model_deploy.LOSSES_KEY]["mse"]
        assert loss_op.op.name.startswith("clone_1/") and loss_op.device == "/device:CPU:1"
        update_ops = model_deploy.first_clone_update_ops(clones)
        assert update_ops and all(op.name.startswith("clone_0/") for op in update_ops)
        assert len(tf.get_collection(tf.GraphKeys.UPDATE_OPS)) == 2 * len(update_ops)


def test_regularization_added_once():
    x, y = _data()
    batches = iter([(x[:4], y[:4]), (x[4:], y[4:])])
    deploy = model_deploy.DeploymentConfig(num_clones=2, clone_on_cpu=True)
    with tf.Graph().as_default():
        clones = model_deploy.create_clones(deploy, _mlp_fn(batches))
        reg = tf.add_n(tf.get_collection(tf.GraphKeys.REGULARIZATION_LOSSES))
        total, _ = model_deploy.optimize_clones(clones, tf.train.GradientDescentOptimizer(0.1))
        mean_loss = tf.add_n([c.outputs["losses"]["mse"] for c in clones]) / 2.0
        with tf.Session(config=deploy.session_config()) as sess:
            sess.run(tf.global_variables_initializer())
            total_v, reg_v, mean_v = sess.run([total, reg, mean_loss])
    assert reg_v > 0
    np.testing.assert_allclose(total_v, mean_v + reg_v, rtol=1e-5)


def test_optimize_clones_without_losses_raises():
    deploy = model_deploy.DeploymentConfig()
    with tf.Graph().as_default():
        clones = model_deploy.create_clones(deploy, lambda: {model_deploy.LOSSES_KEY: []})
        with pytest.raises(ValueError, match="no losses"):
            model_deploy.optimize_clones(clones, tf.train.GradientDescentOptimizer(0.1),
                                         regularization_losses=[])


def test_sparse_gradients_are_summed_over_clones():
    deploy = model_deploy.DeploymentConfig(num_clones=2, clone_on_cpu=True)
    ids = iter([[0, 1], [1, 2]])

    def model_fn():
        table = tf.get_variable("emb", [3, 2], initializer=tf.ones_initializer())
        return {"losses": [tf.reduce_sum(tf.gather(table, next(ids)))]}

    with tf.Graph().as_default():
        clones = model_deploy.create_clones(deploy, model_fn)
        _, grads_and_vars = model_deploy.optimize_clones(
            clones, tf.train.GradientDescentOptimizer(0.1))
        (grad, _), = grads_and_vars
        assert isinstance(grad, tf.IndexedSlices)
        with tf.Session(config=deploy.session_config()) as sess:
            dense = sess.run(tf.convert_to_tensor(grad))
    np.testing.assert_allclose(dense, [[0.5, 0.5], [1.0, 1.0], [0.5, 0.5]])


def test_device_strings_single_machine():
    deploy = model_deploy.DeploymentConfig(num_clones=2)
    assert deploy.clone_device(1) == "/device:GPU:1"
    assert deploy.clone_scope(0) == "clone_0"
    assert deploy.variables_device() == "/device:CPU:0"
    assert deploy.optimizer_device() == deploy.inputs_device() == "/device:CPU:0"
    one = model_deploy.DeploymentConfig(clone_on_cpu=True)
    assert one.clone_scope(0) == "" and one.clone_device(0) == "/device:CPU:0"
    assert one.num_cpu_devices() == 1


def test_device_strings_with_ps_place_variables_round_robin():
    deploy = model_deploy.DeploymentConfig(num_clones=1, replica_id=1, num_replicas=2,
                                           num_ps_tasks=2)
    assert deploy.clone_device(0) == "/job:worker/task:1/device:GPU:0"
    assert deploy.inputs_device() == "/job:worker/task:1/device:CPU:0"
    with tf.Graph().as_default():
        with tf.device(deploy.variables_device()):
            a = tf.get_variable("a", [1])
            b = tf.get_variable("b", [1])
            c = tf.constant(1.0)
    assert a.device == "/job:ps/task:0" and b.device == "/job:ps/task:1"
    assert c.device == "/job:worker/task:1"


@pytest.mark.parametrize("kwargs,match", [
    ({"num_clones": 0}, "num_clones"),
    ({"num_replicas": 0}, "num_replicas"),
    ({"replica_id": 2, "num_replicas": 2, "num_ps_tasks": 1}, "replica_id"),
    ({"replica_id": -1}, "replica_id"),
    ({"num_ps_tasks": -1}, "num_ps_tasks"),
    ({"num_replicas": 2}, "needs num_ps_tasks"),
    ({"num_ps_tasks": 1, "worker_job_name": ""}, "worker_job_name"),
    ({"num_ps_tasks": 1, "ps_job_name": ""}, "ps_job_name"),
])
def test_deployment_config_rejects_bad_values(kwargs, match):
    with pytest.raises(ValueError, match=match):
        model_deploy.DeploymentConfig(**kwargs)


def test_clone_index_out_of_range_raises():
    deploy = model_deploy.DeploymentConfig(num_clones=2)
    with pytest.raises(ValueError, match="clone_index"):
        deploy.clone_device(2)
    with pytest.raises(ValueError, match="clone_index"):
        deploy.clone_scope(-1)


def test_worker_task_index_overrides_replica_id_in_devices():
    deploy = model_deploy.DeploymentConfig(replica_id=2, num_replicas=3, num_ps_tasks=1,
                                           worker_task_index=1)
    assert deploy.worker_device == "/job:worker/task:1"
    assert deploy.clone_device(0) == "/job:worker/task:1/device:GPU:0"
