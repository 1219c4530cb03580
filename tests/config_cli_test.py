import os
import subprocess
import sys

import pytest

from aster import config_cli
from aster.utils import config_util

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
PAPER = os.path.join(ROOT, "configs", "aster_paper.config")
TINY = os.path.join(ROOT, "configs", "tiny.config")
DEMO = os.path.join(ROOT, "configs", "demo_cpu.config")


def test_show_applies_set(capsys):
    assert config_cli.main(["show", PAPER, "--set", "train_config.num_steps=5"]) == 0
    out = capsys.readouterr().out
    assert "num_steps: 5\n" in out
    assert config_util.parse_pipeline_config(out).train_config.num_steps == 5


def test_validate_misspelled_field_exits_2_with_suggestion(tmp_path, capsys):
    bad = tmp_path / "bad.config"
    bad.write_text(open(TINY).read().replace("num_steps: 20", "num_step: 20"))
    assert config_cli.main(["validate", str(bad)]) == 2
    err = capsys.readouterr().err
    assert "'num_step'" in err and "did you mean 'num_steps'" in err


def test_validate_good_config_exits_0(capsys):
    assert config_cli.main(["validate", TINY]) == 0
    assert "valid" in capsys.readouterr().out


def test_set_writes_output_and_diff_shows_change(tmp_path, capsys):
    out = tmp_path / "new.config"
    assert config_cli.main(["set", TINY, "--set", "train_config.num_steps=3", "-o", str(out)]) == 0
    capsys.readouterr()
    assert config_cli.main(["diff", TINY, str(out)]) == 0
    assert capsys.readouterr().out.strip() == "train_config.num_steps: 20 -> 3"


def test_set_refuses_invalid_result(tmp_path, capsys):
    out = tmp_path / "new.config"
    code = config_cli.main(["set", TINY, "--set", "train_config.batch_size=0", "-o", str(out)])
    assert code == 2 and not out.exists()
    assert "batch_size[0]" in capsys.readouterr().err


def test_console_script_runs_as_a_user_would():
    result = subprocess.run(
        [sys.executable, "-m", "aster.config_cli", "validate", TINY, "--set", "train_config.num_steps=x"],
        capture_output=True, text=True, check=False,
    )
    assert result.returncode == 2
    assert "train_config.num_steps: expected an integer, got 'x'" in result.stderr
    assert "Traceback" not in result.stderr


# The issue's own example: validate said "valid" and aster-train died with a traceback.
_ONE_STEP = ("model.multi_predictors_recognition_model.predictor[0].attention_predictor"
             ".max_num_steps=1")


@pytest.mark.slow
@pytest.mark.parametrize("command", [
    ["aster.config_cli", "validate", DEMO],
    ["aster.train", "--pipeline_config_path", DEMO, "--train_dir", "{tmp}/train"],
    ["aster.eval", "--pipeline_config_path", DEMO, "--checkpoint_dir", "{tmp}",
     "--eval_dir", "{tmp}/eval", "--run_once"],
    ["aster.export", "--checkpoint_path", "{tmp}/model.ckpt-0", "--pipeline_config_path", DEMO,
     "--output_dir", "{tmp}/export"],
    ["aster.demo", "--checkpoint_path", "{tmp}/model.ckpt-0", "--pipeline_config_path", DEMO,
     "x.png"],
])
def test_a_config_error_is_one_line_and_exit_2_in_every_command(command, tmp_path):
    args = [a.replace("{tmp}", str(tmp_path)) for a in command] + ["--set", _ONE_STEP]
    if command[0] in ("aster.export", "aster.demo"):  # they look for the checkpoint first
        for suffix in (".index", ".data-00000-of-00001"):
            (tmp_path / f"model.ckpt-0{suffix}").write_bytes(b"")
    result = subprocess.run([sys.executable, "-m", *args], capture_output=True, text=True,
                            check=False, timeout=120)
    lines = [line for line in result.stderr.splitlines() if "config error" in line]
    assert result.returncode == 2, result.stderr[-2000:]
    assert "Traceback" not in result.stderr
    assert len(lines) == 1 and "max_num_steps: must be >= 2, got 1" in lines[0]


def test_show_prints_the_config_merged_onto_its_base(capsys):
    assert config_cli.main(["show", os.path.join(ROOT, "configs", "demo_cpu.config")]) == 0
    text = capsys.readouterr().out
    assert "multi_predictors_recognition_model {" in text and "\nbase:" not in text
