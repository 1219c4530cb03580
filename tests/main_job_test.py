"""`make train`'s pipeline end to end, and the shipped demo/CRNN configs.

The slow test runs what `make train` runs, as a user would (console scripts as subprocesses:
`python -m aster.synth.generator`, `-m aster.train`, `-m aster.eval`), on configs/tiny.config and
a few hundred synthetic words, so CI covers the main job's wiring in a couple of minutes.
"""

import json
import os
import re
import subprocess
import sys

import pytest

from aster.tf_setup import tf
from aster.utils import config_util

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
CONFIGS = os.path.join(ROOT, "configs")
TINY = os.path.join(CONFIGS, "tiny.config")
DEMO = os.path.join(CONFIGS, "demo_cpu.config")
CRNN = os.path.join(CONFIGS, "crnn_ctc.config")
_PREDICTOR = "model.multi_predictors_recognition_model.predictor[{}].attention_predictor"


def _run(module, *args, timeout=300):
    """Runs `python -m module args` in a subprocess; returns the CompletedProcess (checked)."""
    environment = dict(os.environ, TF_CPP_MIN_LOG_LEVEL="2")
    result = subprocess.run([sys.executable, "-m", module, *map(str, args)], cwd=ROOT,
                            env=environment, capture_output=True, text=True, timeout=timeout,
                            check=False)
    assert result.returncode == 0, f"{module} failed:\n{result.stdout[-2000:]}\n" \
                                   f"{result.stderr[-4000:]}"
    return result


def _makefile_variable(name):
    with open(os.path.join(ROOT, "Makefile")) as f:
        match = re.search(rf"^{name}\s*:=\s*(.+)$", f.read(), re.MULTILINE)
    assert match, f"Makefile defines no {name}"
    return match.group(1).strip()


# --------------------------------------------------------------------------- configs


def test_demo_config_is_valid_and_reads_make_train_data():
    config = config_util.load_pipeline_config(DEMO)
    config_util.validate(config)
    synth_dir = _makefile_variable("SYNTH_DIR")
    paths = [config.train_input_reader[0].tf_record_input_reader.input_path] + [
        reader.tf_record_input_reader.input_path for reader in config.eval_input_reader]
    assert all(path.startswith(synth_dir + "/") for path in paths), paths
    # val, val_ood (both halves) and the curved half, named in the report.
    assert [os.path.basename(p) for p in paths[1:]] == [
        "val.tfrecord", "val_ood_*.tfrecord", "val_ood_curved.tfrecord"]
    assert list(config.eval_config.dataset_name) == ["val", "val_ood", "val_ood_curved"]
    assert config.eval_config.compare_identity_rectification
    model = config.model.multi_predictors_recognition_model
    assert model.HasField("spatial_transformer")
    predictors = [p.attention_predictor for p in model.predictor if not p.auxiliary]
    assert len(predictors) == 2 and {p.reverse for p in predictors} == {False, True}
    auxiliary = [p.WhichOneof("predictor_oneof") for p in model.predictor if p.auxiliary]
    assert auxiliary == ["ctc_predictor"], "joint CTC-attention training (benchmarks/RESULTS.md)"
    assert all(p.beam_width > 1 for p in predictors), "make train reports beam-search accuracy"


def test_crnn_config_is_valid_ctc_without_rectification():
    config = config_util.load_pipeline_config(CRNN)
    config_util.validate(config)
    model = config.model.multi_predictors_recognition_model
    assert not model.HasField("spatial_transformer")
    assert model.feature_extractor.convnet.WhichOneof("convnet_oneof") == "crnn_net"
    assert [p.WhichOneof("predictor_oneof") for p in model.predictor] == ["ctc_predictor"]


# --------------------------------------------------------------------------- end to end


@pytest.fixture(scope="module")
def synth_dir(tmp_path_factory):
    """A few hundred synthetic words, as `make train` generates them (small)."""
    output = tmp_path_factory.mktemp("synth")
    _run("aster.synth.generator", "--output_dir", output, "--num_train", 256, "--num_val", 48,
         "--num_val_ood", 0, "--num_shards", 2, "--num_workers", 1, "--seed", 0)
    return output


@pytest.mark.slow
def test_make_train_pipeline_end_to_end_on_tiny_config(tmp_path, synth_dir):
    train_dir, eval_dir = tmp_path / "train", tmp_path / "train" / "eval"
    data = [f"train_input_reader[0].tf_record_input_reader.input_path={synth_dir}/train-*",
            f"eval_input_reader[0].tf_record_input_reader.input_path={synth_dir}/val.tfrecord"]
    sets = [arg for assignment in data for arg in ("--set", assignment)]
    trained = _run("aster.train", "--pipeline_config_path", TINY, "--train_dir", train_dir, *sets,
                   "--set", "train_config.num_steps=4", "--set", "train_config.log_every_n_steps=2")
    assert re.search(r"step \d+/4, loss [\d.]+, [\d.]+ images/s, ETA", trained.stderr)
    assert tf.train.latest_checkpoint(str(train_dir)).endswith("model.ckpt-4")

    # Rerunning with more steps resumes from step 4 (make train's rerun).
    resumed = _run("aster.train", "--pipeline_config_path", TINY, "--train_dir", train_dir, *sets,
                   "--set", "train_config.num_steps=6", "--set", "train_config.log_every_n_steps=1")
    assert tf.train.latest_checkpoint(str(train_dir)).endswith("model.ckpt-6")
    assert "step 6/6" in resumed.stderr and not re.search(r"step [1-4]/6", resumed.stderr)
    written = config_util.load_pipeline_config(str(train_dir / "pipeline.config"))
    assert written.train_config.num_steps == 6

    beam = [arg for i in (0, 1) for arg in ("--set", f"{_PREDICTOR.format(i)}.beam_width=3")]
    evaluated = _run("aster.eval", "--pipeline_config_path", TINY, "--checkpoint_dir", train_dir,
                     "--eval_dir", eval_dir, "--run_once", *sets, *beam)
    assert "| dataset | size | accuracy | 1 - NED |" in evaluated.stdout
    report = json.loads((eval_dir / "results.json").read_text())
    assert report["step"] == 6 and report["checkpoint"].endswith("model.ckpt-6")
    assert "beam" in json.dumps(report["decoding"])
    (dataset,) = report["datasets"]
    assert dataset["size"] == 48
    assert 0.0 <= dataset["accuracy"] <= 1.0 and 0.0 <= dataset["one_minus_ned"] <= 1.0
    assert (eval_dir / "results.md").read_text().startswith("# Evaluation of model.ckpt-6")
    assert (eval_dir / "step-6" / "results.json").exists()
    sheets = list(eval_dir.glob("*/examples-6.png"))
    assert len(sheets) == 1 and sheets[0].stat().st_size > 0


@pytest.mark.slow
def test_crnn_config_trains_a_few_steps(tmp_path, synth_dir):
    train_dir = tmp_path / "crnn"
    _run("aster.train", "--pipeline_config_path", CRNN, "--train_dir", train_dir,
         "--set", f"train_input_reader[0].tf_record_input_reader.input_path={synth_dir}/train-*",
         "--set", "train_config.batch_size=[8]", "--set", "train_config.num_steps=2",
         "--set", "train_config.log_every_n_steps=1")
    assert tf.train.latest_checkpoint(str(train_dir)).endswith("model.ckpt-2")
