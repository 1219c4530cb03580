"""Speed options of the session ConfigProto: threads, bfloat16 mixed precision, XLA JIT."""

import logging
import os

import numpy as np
import pytest

from aster.core import session_options
from aster.tf_setup import slim, tf

BF16 = session_options.cpu_supports_bfloat16()


def test_configure_threads_default_to_cores():
    config = session_options.configure(tf.ConfigProto())
    assert config.intra_op_parallelism_threads == os.cpu_count()
    assert config.inter_op_parallelism_threads == os.cpu_count()
    config = session_options.configure(tf.ConfigProto(), intra_op_threads=3, inter_op_threads=1)
    assert (config.intra_op_parallelism_threads, config.inter_op_parallelism_threads) == (3, 1)


def test_configure_negative_threads_raise():
    with pytest.raises(ValueError, match="intra_op_threads"):
        session_options.configure(tf.ConfigProto(), intra_op_threads=-1)
    with pytest.raises(ValueError, match="inter_op_threads"):
        session_options.configure(tf.ConfigProto(), inter_op_threads=-2)


def test_bfloat16_on_only_with_cpu_support(caplog):
    config = session_options.configure(tf.ConfigProto(), bfloat16=True, flags={"avx512_bf16"})
    assert session_options.bfloat16_enabled(config)
    with caplog.at_level(logging.WARNING):
        config = session_options.configure(tf.ConfigProto(), bfloat16=True, flags={"avx2"})
    assert not session_options.bfloat16_enabled(config)
    assert "float32" in caplog.text
    assert not session_options.bfloat16_enabled(session_options.configure(tf.ConfigProto()))


def test_bfloat16_keeps_sigmoid_and_tanh_float32_once(monkeypatch):
    prefix = "TF_AUTO_MIXED_PRECISION_GRAPH_REWRITE_"
    monkeypatch.setenv(prefix + "DENYLIST_ADD", "Foo,Tanh")
    for name in ("ALLOWLIST", "INFERLIST", "CLEARLIST"):
        monkeypatch.delenv(f"{prefix}{name}_REMOVE", raising=False)
    for _ in range(2):
        session_options.configure(tf.ConfigProto(), bfloat16=True, flags={"avx512_bf16"})
    assert os.environ[prefix + "DENYLIST_ADD"] == "Foo,Tanh,Sigmoid,SigmoidGrad,TanhGrad"
    for name in ("ALLOWLIST", "INFERLIST", "CLEARLIST"):  # off whichever list they are on
        assert os.environ[f"{prefix}{name}_REMOVE"] == "Sigmoid,Tanh,SigmoidGrad,TanhGrad"


def _output_dtypes(fetches, config):
    """{op type: set of output dtypes} of one traced run of `fetches` (variables initialised)."""
    options = tf.RunOptions(trace_level=tf.RunOptions.FULL_TRACE)
    metadata = tf.RunMetadata()
    with tf.Session(config=config) as sess:
        sess.run(tf.global_variables_initializer())
        sess.run(fetches, options=options, run_metadata=metadata)
    dtypes = {}
    for device in metadata.step_stats.dev_stats:
        for node in device.node_stats:
            if node.output and " = " in node.timeline_label:
                op = node.timeline_label.split(" = ")[1].split("(")[0]
                dtypes.setdefault(op, set()).add(node.output[0].tensor_description.dtype)
    return dtypes


@pytest.mark.skipif(not BF16, reason="this CPU has no native bfloat16")
def test_an_allow_list_op_added_to_float32_ops_stays_float32_and_the_rest_is_rewritten(
        monkeypatch):
    # MatMul is on the pass's allow list: kept float32 through FLOAT32_LIST_VARS, the pass still
    # rewrites the convolution (with MatMul on the deny list alone it rewrote nothing).
    for name in session_options.FLOAT32_LIST_VARS:
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setattr(session_options, "FLOAT32_OPS",
                        (*session_options.FLOAT32_OPS, "MatMul"))
    rng = np.random.default_rng(1)
    with tf.Graph().as_default():
        images = tf.constant(rng.normal(size=[4, 8, 8, 16]), tf.float32)
        net = tf.nn.conv2d(images, tf.Variable(rng.normal(size=[3, 3, 16, 16]), dtype=tf.float32),
                           1, "SAME")
        out = tf.matmul(tf.reshape(net, [4, -1]),
                        tf.Variable(rng.normal(size=[1024, 8]), dtype=tf.float32))
        config = session_options.configure(tf.ConfigProto(), bfloat16=True)
        dtypes = _output_dtypes(out, config)
    convs = [op for op in dtypes if "Conv2D" in op]
    matmuls = [op for op in dtypes if "MatMul" in op]
    assert convs and all(dtypes[op] == {tf.bfloat16.as_datatype_enum} for op in convs)
    assert matmuls and all(dtypes[op] == {tf.float32.as_datatype_enum} for op in matmuls)


@pytest.mark.skipif(not BF16, reason="this CPU has no native bfloat16")
def test_bfloat16_runs_matmul_in_bfloat16_and_lstm_state_in_float32():
    with tf.Graph().as_default():
        inputs = tf.constant(np.random.default_rng(0).normal(size=[8, 16]), tf.float32)
        cell = tf.nn.rnn_cell.LSTMCell(16)
        output, state = cell(inputs, cell.zero_state(8, tf.float32))
        config = session_options.configure(tf.ConfigProto(), bfloat16=True)
        dtypes = _output_dtypes([output, state], config)
    matmuls = [op for op in dtypes if "MatMul" in op]  # oneDNN fuses the bias add into it
    assert matmuls and all(dtypes[op] == {tf.bfloat16.as_datatype_enum} for op in matmuls)
    for op in ("Sigmoid", "Tanh", "Mul", "AddV2"):
        assert dtypes[op] == {tf.float32.as_datatype_enum}, op


def test_cpu_flags_reads_the_flags_line(tmp_path):
    path = tmp_path / "cpuinfo"
    path.write_text("model name\t: X\nflags\t\t: fpu avx512_bf16 sse\n")
    assert session_options.cpu_flags(str(path)) == {"fpu", "avx512_bf16", "sse"}
    assert session_options.cpu_flags(str(tmp_path / "missing")) == set()
    assert session_options.cpu_supports_bfloat16({"amx_bf16"})
    assert not session_options.cpu_supports_bfloat16({"avx2"})


def test_xla_jit_sets_the_jit_level_and_cpu_flag(monkeypatch):
    monkeypatch.setenv("TF_XLA_FLAGS", "--foo")
    config = session_options.configure(tf.ConfigProto(), xla_jit=True)
    assert config.graph_options.optimizer_options.global_jit_level == tf.OptimizerOptions.ON_1
    assert os.environ["TF_XLA_FLAGS"] == "--foo --tf_xla_cpu_global_jit"
    session_options.configure(tf.ConfigProto(), xla_jit=True)  # not added twice
    assert os.environ["TF_XLA_FLAGS"] == "--foo --tf_xla_cpu_global_jit"


def _tiny_net(images, labels):
    """conv + fused batch norm + fc, fixed initial weights; returns (logits, loss)."""
    rng = np.random.default_rng(0)
    conv_init = tf.constant_initializer(rng.normal(0, 0.2, [3, 3, 3, 8]).astype(np.float32))
    fc_init = tf.constant_initializer(rng.normal(0, 0.1, [8 * 16 * 8, 5]).astype(np.float32))
    net = slim.conv2d(images, 8, [3, 3], stride=2, weights_initializer=conv_init,
                      normalizer_fn=slim.batch_norm,
                      normalizer_params={"is_training": True, "fused": True,
                                         "updates_collections": [tf.GraphKeys.UPDATE_OPS]})
    logits = slim.fully_connected(slim.flatten(net), 5, activation_fn=None,
                                  weights_initializer=fc_init)
    loss = tf.reduce_mean(tf.nn.sparse_softmax_cross_entropy_with_logits(labels=labels,
                                                                         logits=logits))
    return logits, loss


def _run_tiny(bfloat16, steps=3):
    rng = np.random.default_rng(1)
    images = rng.uniform(-1, 1, [16, 16, 32, 3]).astype(np.float32)
    labels = rng.integers(0, 5, [16]).astype(np.int32)
    with tf.Graph().as_default():
        logits, loss = _tiny_net(tf.constant(images), tf.constant(labels))
        with tf.control_dependencies(tf.get_collection(tf.GraphKeys.UPDATE_OPS)):
            train_op = tf.train.GradientDescentOptimizer(0.1).minimize(loss)
        config = session_options.configure(tf.ConfigProto(), bfloat16=bfloat16)
        options = tf.RunOptions(output_partition_graphs=True)
        metadata = tf.RunMetadata()
        with tf.Session(config=config) as sess:
            sess.run(tf.global_variables_initializer())
            first_logits = sess.run(logits, options=options, run_metadata=metadata)
            losses = [sess.run([train_op, loss])[1] for _ in range(steps)]
            variable_dtypes = {v.dtype.base_dtype for v in tf.global_variables()}
    bf16_nodes = [n.name for g in metadata.partition_graphs for n in g.node
                  if any(a.type == tf.bfloat16.as_datatype_enum for a in n.attr.values())]
    return first_logits, losses, loss.dtype, variable_dtypes, bf16_nodes


@pytest.mark.skipif(not BF16, reason="this CPU has no native bfloat16")
def test_bfloat16_step_runs_float32_loss_close_to_float32():
    logits32, losses32, _, _, nodes32 = _run_tiny(bfloat16=False)
    logits16, losses16, loss_dtype, variable_dtypes, nodes16 = _run_tiny(bfloat16=True)
    assert not nodes32
    assert nodes16, "the bfloat16 rewrite changed nothing"
    assert loss_dtype == tf.float32 and variable_dtypes == {tf.float32}
    assert all(np.isfinite(losses16)) and all(isinstance(v, np.float32) for v in losses16)
    # bfloat16 keeps 8 bits of mantissa: forward results agree to about 1e-2 relative.
    scale = np.abs(logits32).max()
    np.testing.assert_allclose(logits16, logits32, atol=0.03 * scale)
    np.testing.assert_allclose(losses16, losses32, rtol=0.05)
    assert losses16[-1] < losses16[0]


def test_xla_jit_session_computes_the_same_values(monkeypatch):
    monkeypatch.setenv("TF_XLA_FLAGS", os.environ.get("TF_XLA_FLAGS", ""))
    rng = np.random.default_rng(2)
    a, b = rng.normal(size=[8, 16]).astype(np.float32), rng.normal(size=[16, 4]).astype(np.float32)
    with tf.Graph().as_default():
        out = tf.nn.relu(tf.matmul(tf.constant(a), tf.Variable(b)))
        config = session_options.configure(tf.ConfigProto(), xla_jit=True)
        with tf.Session(config=config) as sess:
            sess.run(tf.global_variables_initializer())
            np.testing.assert_allclose(sess.run(out), np.maximum(a @ b, 0), rtol=1e-5, atol=1e-5)


def test_gpu_mixed_precision_selects_the_float16_pass_with_the_float32_list(caplog, monkeypatch):
    prefix = "TF_AUTO_MIXED_PRECISION_GRAPH_REWRITE_"
    monkeypatch.delenv(prefix + "DENYLIST_ADD", raising=False)
    monkeypatch.delenv(prefix + "INFERLIST_REMOVE", raising=False)
    with caplog.at_level(logging.WARNING):
        config = session_options.configure(tf.ConfigProto(), bfloat16=True, flags={"avx2"},
                                           gpu=True)
    # No CPU-flag check on GPUs, and the CPU pass stays off.
    assert session_options.gpu_float16_enabled(config)
    assert not session_options.bfloat16_enabled(config)
    assert "running in float32" not in caplog.text
    assert "Sigmoid" in os.environ[prefix + "DENYLIST_ADD"].split(",")
    assert not session_options.gpu_float16_enabled(
        session_options.configure(tf.ConfigProto(), gpu=True))
    assert not session_options.gpu_float16_enabled(
        session_options.configure(tf.ConfigProto(), bfloat16=True, flags={"avx512_bf16"}))
