"""Every command's first line of output is its own: no TensorFlow start-up line before it.

Each command runs in a subprocess at TensorFlow's default C++ log level for aster (1), with --help
and with a config error; --verbose may add TensorFlow's lines but keeps the command's own.
"""

import importlib
import os
import re
import subprocess
import sys

import pytest
import trainer_helpers as helpers

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
TINY = os.path.join(ROOT, "configs", "tiny.config")
BAD_SET = ["--set", "train_config.num_steps=x"]
BAD_SET_ERROR = "config error: train_config.num_steps: expected an integer, got 'x'"
CHECKPOINT = ["--checkpoint_path", "{tmp}/model.ckpt-0", "--pipeline_config_path", TINY]

# program -> (module, arguments that fail on BAD_SET)
COMMANDS = {
    "aster-train": ("aster.train", ["--pipeline_config_path", TINY, "--train_dir", "{tmp}/t"]),
    "aster-eval": ("aster.eval", ["--pipeline_config_path", TINY, "--checkpoint_dir", "{tmp}",
                                  "--eval_dir", "{tmp}/eval", "--run_once"]),
    "aster-export": ("aster.export", [*CHECKPOINT, "--output_dir", "{tmp}/export"]),
    "aster-demo": ("aster.demo", [*CHECKPOINT, "x.png"]),
    "aster-config": ("aster.config_cli", ["validate", TINY]),
}
TOOLS = {"aster-convert": "aster.tools.convert", "aster-synth-words": "aster.synth.generator"}


def _run(module, args, tmp_path):
    env = {k: v for k, v in os.environ.items() if k != "TF_CPP_MIN_LOG_LEVEL"}
    args = [a.replace("{tmp}", str(tmp_path)) for a in args]
    return subprocess.run([sys.executable, "-m", module, *args], cwd=ROOT, env=env,
                          capture_output=True, text=True, timeout=180, check=False)


def _config_error_run(program, tmp_path, *extra):
    module, args = COMMANDS[program]
    for suffix in (".index", ".data-00000-of-00001"):  # export and demo look for it first
        (tmp_path / f"model.ckpt-0{suffix}").write_bytes(b"")
    return _run(module, [*args, *BAD_SET, *extra], tmp_path)


@pytest.mark.slow
@pytest.mark.parametrize("program", [*COMMANDS, *TOOLS])
def test_help_is_the_first_output(program, tmp_path):
    module = TOOLS.get(program) or COMMANDS[program][0]
    result = _run(module, ["--help"], tmp_path)
    assert result.returncode == 0, result.stderr[-2000:]
    assert result.stdout.startswith(f"usage: {program} ")
    assert result.stderr == ""


@pytest.mark.slow
@pytest.mark.parametrize("program", COMMANDS)
def test_a_config_error_is_the_first_line(program, tmp_path):
    result = _config_error_run(program, tmp_path)
    assert result.returncode == 2, result.stderr[-2000:]
    assert result.stderr.splitlines() == [f"{program}: {BAD_SET_ERROR}"]


@pytest.mark.slow
def test_verbose_keeps_the_command_line_and_may_add_tensorflow_lines(tmp_path):
    quiet = _config_error_run("aster-train", tmp_path)
    verbose = _config_error_run("aster-train", tmp_path, "--verbose")
    assert verbose.returncode == quiet.returncode == 2
    lines = verbose.stderr.splitlines()
    assert lines[-1] == f"aster-train: {BAD_SET_ERROR}"
    assert set(quiet.stderr.splitlines()) <= set(lines)


@pytest.mark.parametrize("module,args", [
    ("aster.train", ["--pipeline_config_path", "c", "--train_dir", "t"]),
    ("aster.eval", ["--pipeline_config_path", "c", "--eval_dir", "e"]),
    ("aster.export", ["--checkpoint_path", "c", "--output_dir", "o"]),
    ("aster.demo", ["--checkpoint_path", "c", "x.png"]),
    ("aster.config_cli", ["validate", "c"]),
    ("aster.tools.convert", ["folder", "--labels_file", "l", "--output", "o"]),
    ("aster.synth.generator", ["--output_dir", "o"]),
])
def test_every_command_takes_verbose(module, args):
    parser = importlib.import_module(module).build_parser()
    assert not parser.parse_args(args).verbose
    assert parser.parse_args([*args, "--verbose"]).verbose


# A line of TensorFlow's C++ logging (absl format): "W0000 00:00:1796493924.277578  25646 util.cc:163]"
_CXX_LOG_LINE = re.compile(r"^[IWEF]\d{4} [\d:.]+\s+\d+ [\w./-]+:\d+\]")


@pytest.mark.slow
def test_training_and_evaluation_print_no_tensorflow_cxx_warnings(tmp_path):
    """The rectifier's float64 layer once made every run print "Not handling type DT_DOUBLE"."""
    records = helpers.write_records(tmp_path / "words.tfrecord", count=16, size=(32, 64))
    data = ["--set", f"train_input_reader[0].tf_record_input_reader.input_path={records}",
            "--set", f"eval_input_reader[0].tf_record_input_reader.input_path={records}"]
    train = _run("aster.train", ["--pipeline_config_path", TINY, "--train_dir", "{tmp}/t",
                                 "--set", "train_config.num_steps=6", *data], tmp_path)
    assert train.returncode == 0, train.stderr[-2000:]
    evaluate = _run("aster.eval", ["--pipeline_config_path", TINY, "--checkpoint_dir", "{tmp}/t",
                                   "--eval_dir", "{tmp}/eval", "--run_once", *data], tmp_path)
    assert evaluate.returncode == 0, evaluate.stderr[-2000:]
    assert (tmp_path / "t" / "model.ckpt-6.index").exists()
    for result in (train, evaluate):
        cxx = [line for line in result.stderr.splitlines() if _CXX_LOG_LINE.match(line)]
        assert not cxx, cxx
