"""benchmarks/bf16_gradient_error.py: the pass's lists per variant, the error measures, and the
gradients of a real (tiny) model restored from a checkpoint."""

import argparse
import os

import bench_scripts
import numpy as np
import pytest
import trainer_helpers

from aster import trainer
from aster.core import session_options
from aster.tf_setup import tf
from aster.utils import model_deploy, train_session


@pytest.fixture
def probe(monkeypatch):
    yield bench_scripts.load("bf16_gradient_error", monkeypatch)
    bench_scripts.forget_siblings()


def test_parse_variant(probe):
    assert probe.parse_variant("bn=FusedBatchNormV3,FusedBatchNormGradV3") == (
        "bn", ["FusedBatchNormV3", "FusedBatchNormGradV3"])
    assert probe.parse_variant("same=") == ("same", [])
    for text in ("bn", "=MatMul"):
        with pytest.raises(argparse.ArgumentTypeError, match="expected NAME=OP,OP"):
            probe.parse_variant(text)


def test_variant_ops_replace_the_lists_of_the_variant_before(probe, monkeypatch):
    for name in session_options.FLOAT32_LIST_VARS:
        monkeypatch.setenv(name, "Foo")
    probe.set_float32_ops(["MatMul", "Tanh"])
    probe.set_float32_ops(["BatchMatMulV2"])
    expected = ",".join([*session_options.FLOAT32_OPS, "BatchMatMulV2"])
    assert {os.environ[name] for name in session_options.FLOAT32_LIST_VARS} == {expected}
    probe.set_float32_ops([])  # the `bf16` variant: the trainer's own lists
    assert os.environ[session_options.FLOAT32_LIST_VARS[-1]] == ",".join(
        session_options.FLOAT32_OPS)


def test_error_measures(probe):
    reference = [np.array([3.0, 0.0]), np.array([4.0])]  # norm 5
    grads = [np.array([3.0, 1.0]), np.array([4.0])]
    assert probe.relative_error(grads, reference) == pytest.approx(0.2)
    assert probe.relative_error(reference, reference) == 0.0
    names = ["FeatureExtractor/ResNet/conv1/weights", "Forward/fc/weights"]
    assert probe.errors_by_scope(names, [grads, reference], [reference, reference]) == {
        "FeatureExtractor/ResNet": pytest.approx(np.sqrt(1 / 18)), "Forward/fc": 0.0}
    shifted = [np.array([3.0, -1.0]), np.array([4.0])]
    assert probe.error_cosines([grads, grads, shifted], [reference] * 3) == pytest.approx(
        [1.0, -1.0, -1.0])


def test_error_to_noise_ranks_variables(probe):
    reference = [[np.array([1.0]), np.array([0.0, 0.0])], [np.array([3.0]), np.array([2.0, 0.0])]]
    runs = [[np.array([1.2]), np.array([0.0, 0.0])], [np.array([3.0]), np.array([2.0, 1.0])]]
    # Noise: |2| / sqrt 2 for both; errors: RMS of (0.2, 0) and of (0, 1).
    ratios = probe.error_to_noise(["a", "b"], runs, reference)
    assert [name for _, name in ratios] == ["b", "a"]
    assert [ratio for ratio, _ in ratios] == pytest.approx([0.5, 0.1])


def test_report_names_noise_error_parts_and_ops(probe):
    reference = [(1.0, [np.array([1.0, 0.0])]), (2.0, [np.array([0.0, 1.0])])]
    results = [(1.5, [np.array([1.0, 0.1])]), (2.0, [np.array([0.0, 1.0])])]
    lines = []
    probe.report(["Forward/w"], reference, {"bf16": (results, probe.collections.Counter(
        {"_MklMatMul": 3}))}, write=lines.append)
    assert lines[0].startswith("minibatch noise (float32, batch i+1 against i): median 1.414")
    assert lines[1].startswith("bf16: gradient error median 0.0500 (0.1000, 0.0000); "
                               "loss difference +0.5000, +0.0000")
    assert lines[2] == "  by part (error, median error cosine): Forward 0.0707 (+0.00)"
    # Error (0.1 on batch 0, 0 on batch 1) against the noise |[-1, 1]| / sqrt 2 = 1.
    assert lines[3] == ("  error / minibatch noise per variable: median 0.071, 90th percentile "
                        "0.071, largest Forward/w 0.071")
    assert lines[-1] == "  bfloat16 ops (3): _MklMatMul 3"


def test_gradients_of_a_restored_checkpoint_on_real_batches(probe, tmp_path):
    record = trainer_helpers.write_records(tmp_path / "train.tfrecord", count=16)
    config = trainer_helpers.pipeline_config(record)
    batches = probe.real_batches(config, 2)
    assert len(batches) == 2 and len(batches[0]["image"]) == 4
    # A checkpoint of the trainer's freshly initialised variables, and its losses on the batches.
    checkpoint = str(tmp_path / "model.ckpt-0")
    fixed = probe.FixedBatches(batches[0])
    with tf.Graph().as_default():
        deploy = model_deploy.DeploymentConfig()
        built = trainer.build_graph(config, str(tmp_path), deploy,
                                    trainer.Seams(build_batch_queue=lambda *args: fixed))
        with tf.Session(config=train_session.session_config(deploy, config.train_config)) as session:
            session.run([tf.global_variables_initializer(), tf.tables_initializer()])
            built.saver.save(session, checkpoint)
            losses = [session.run(built.total_loss, fixed.feed(batch)) for batch in batches]
    names, results, _ = probe.gradients(config, checkpoint, batches, bfloat16=False)
    assert any(name.startswith("FeatureExtractor/") for name in names)
    assert [loss for loss, _ in results] == pytest.approx(losses, rel=1e-5)  # restored, fed
    for _, grads in results:
        assert len(grads) == len(names) and all(np.isfinite(g).all() for g in grads)
    assert probe.relative_error(results[1][1], results[0][1]) > 1e-3  # two batches differ


def test_main_stops_without_native_bfloat16_or_checkpoint(probe, monkeypatch, tmp_path):
    monkeypatch.setattr(session_options, "cpu_supports_bfloat16", lambda flags=None: False)
    with pytest.raises(SystemExit, match="this CPU has none of avx512_bf16, amx_bf16"):
        probe.main(["--checkpoint", "x"])
    monkeypatch.setattr(session_options, "cpu_supports_bfloat16", lambda flags=None: True)
    missing = os.path.join(tmp_path, "model.ckpt-7")
    with pytest.raises(SystemExit, match=f"--checkpoint: {missing}.index not found"):
        probe.main(["--checkpoint", missing])
