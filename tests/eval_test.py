"""Tests for aster/eval.py (aster-eval) with the stand-in model patched in."""

import json
import os

import pytest
import shipped_stand_in
from stand_in_model import StandInModel, stand_in_batches, write_checkpoint

from aster import eval as eval_cli
from aster import evaluator, inference
from aster.utils import config_util

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
OVERRIDE = """
eval_config { batch_size: 4 num_examples: 0 max_evals: 1 }
eval_input_reader { tf_record_input_reader { input_path: "data/bench_a.tfrecord" } }
"""


@pytest.fixture
def stand_in(monkeypatch):
    monkeypatch.setattr(inference, "default_model_fn", lambda model_config: StandInModel())
    monkeypatch.setattr(evaluator, "_default_batches_fn", stand_in_batches())


@pytest.fixture
def config_path(tmp_path):
    config = config_util.load_pipeline_config(os.path.join(ROOT, "configs", "tiny.config"))
    config = config_util.merge_overrides(config, OVERRIDE)
    return config_util.save_pipeline_config(config, str(tmp_path / "pipeline.config"))


def test_run_once_prints_report_and_writes_results(stand_in, config_path, tmp_path, capsys):
    train = str(tmp_path / "train")
    for step in (5, 9):
        write_checkpoint(train, step, 7.0)
    eval_dir = str(tmp_path / "eval")
    rc = eval_cli.main(["--pipeline_config_path", config_path, "--checkpoint_dir", train,
                        "--eval_dir", eval_dir, "--run_once",
                        "--set", "eval_config.protocol=62"])
    assert rc == 0
    out = capsys.readouterr().out
    assert "- step: 9" in out and "- protocol: 62" in out and "| bench_a | 6 |" in out
    with open(os.path.join(eval_dir, "results.json")) as f:
        results = json.load(f)
    assert results["step"] == 9 and results["protocol"] == 62


def test_checkpoint_path_and_config_override(stand_in, config_path, tmp_path):
    train = str(tmp_path / "train")
    first = write_checkpoint(train, 1, 7.0)
    write_checkpoint(train, 2, 7.0)
    eval_dir = str(tmp_path / "eval")
    rc = eval_cli.main(["--pipeline_config_path", config_path, "--checkpoint_path", first,
                        "--eval_dir", eval_dir,
                        "--config_override", 'eval_config { dataset_name: "renamed" }'])
    assert rc == 0
    with open(os.path.join(eval_dir, "results.json")) as f:
        results = json.load(f)
    assert results["step"] == 1 and results["datasets"][0]["name"] == "renamed"


def test_loop_honours_max_evals(stand_in, config_path, tmp_path):
    train = str(tmp_path / "train")
    for step in (1, 2):
        write_checkpoint(train, step, 7.0)
    eval_dir = str(tmp_path / "eval")
    rc = eval_cli.main(["--pipeline_config_path", config_path, "--checkpoint_dir", train,
                        "--eval_dir", eval_dir])
    assert rc == 0
    assert os.path.isdir(os.path.join(eval_dir, "step-1"))
    assert not os.path.exists(os.path.join(eval_dir, "step-2"))


def test_missing_checkpoint_exits_1_with_message(stand_in, config_path, tmp_path, capsys):
    rc = eval_cli.main(["--pipeline_config_path", config_path, "--checkpoint_dir",
                        str(tmp_path), "--eval_dir", str(tmp_path / "eval"), "--run_once"])
    assert rc == 1
    assert "no complete checkpoint found" in capsys.readouterr().err


def _config():
    config = config_util.load_pipeline_config(os.path.join(ROOT, "configs", "tiny.config"))
    return config_util.merge_overrides(config, OVERRIDE)


@pytest.mark.parametrize("argv", [["--checkpoint_path", "aster_base"], []])
def test_a_shipped_model_by_its_name_or_by_default_with_its_own_config(argv, stand_in, tmp_path,
                                                                       monkeypatch):
    shipped = shipped_stand_in.install(tmp_path, monkeypatch, _config(), step=3, value=7.0)
    eval_dir = str(tmp_path / "eval")
    assert eval_cli.main([*argv, "--eval_dir", eval_dir]) == 0
    with open(os.path.join(eval_dir, "results.json")) as f:
        results = json.load(f)
    assert results["step"] == 3 and results["checkpoint"] == shipped
    assert results["datasets"][0]["accuracy"] == pytest.approx(4 / 5)  # "7" four times of five


def test_checkpoint_path_folder_evaluates_its_newest_when_the_state_file_lags(stand_in, tmp_path):
    twenty = shipped_stand_in.lagging_run(tmp_path / "train", _config())
    eval_dir = str(tmp_path / "eval")
    assert eval_cli.main(["--checkpoint_path", str(tmp_path / "train"), "--eval_dir",
                          eval_dir]) == 0
    with open(os.path.join(eval_dir, "results.json")) as f:
        results = json.load(f)
    assert results["step"] == 20 and results["checkpoint"] == twenty


def test_an_unknown_model_name_exits_1_listing_the_shipped_ones(stand_in, tmp_path, monkeypatch,
                                                                capsys):
    shipped_stand_in.install(tmp_path, monkeypatch, _config())
    monkeypatch.chdir(tmp_path)
    assert eval_cli.main(["--checkpoint_path", "astr_base", "--eval_dir", "eval"]) == 1
    err = capsys.readouterr().err
    assert "aster-eval: --checkpoint_path 'astr_base': no checkpoint, folder or shipped" in err
    assert "shipped models: aster_base)" in err


def test_a_checkpoint_without_a_config_beside_it_exits_1(stand_in, tmp_path, capsys):
    first = write_checkpoint(str(tmp_path / "train"), 1, 7.0)
    assert eval_cli.main(["--checkpoint_path", first, "--eval_dir", str(tmp_path / "e")]) == 1
    assert "--pipeline_config_path is required: no pipeline.config beside" in (
        capsys.readouterr().err)


def test_bad_config_exits_2_naming_the_field(config_path, tmp_path, capsys):
    rc = eval_cli.main(["--pipeline_config_path", config_path, "--checkpoint_dir",
                        str(tmp_path), "--eval_dir", str(tmp_path / "eval"),
                        "--set", "eval_config.protcol=62"])
    assert rc == 2
    assert "protcol" in capsys.readouterr().err


def test_missing_required_flag_is_usage_error():
    with pytest.raises(SystemExit) as e:
        eval_cli.main(["--checkpoint_dir", "x"])
    assert e.value.code == 2


def test_labels_file_evaluates_a_folder_of_crops(monkeypatch, config_path, tmp_path, capsys):
    from PIL import Image

    monkeypatch.setattr(inference, "default_model_fn", lambda model_config: StandInModel())
    crops = tmp_path / "my_crops"
    (crops / "img").mkdir(parents=True)
    lines = []
    for i, word in enumerate(["shop", "exit", "cafe"]):
        Image.new("RGB", (40 + 10 * i, 16), (200, 200, 200)).save(crops / "img" / f"{i}.png")
        lines.append(f"img/{i}.png\t{word}")
    (crops / "labels.txt").write_text("\n".join(lines) + "\n")
    train = str(tmp_path / "train")
    write_checkpoint(train, 3, 7.0)
    eval_dir = tmp_path / "eval"
    rc = eval_cli.main(["--pipeline_config_path", config_path, "--checkpoint_dir", train,
                        "--eval_dir", str(eval_dir), "--run_once",
                        "--labels_file", str(crops / "labels.txt")])
    assert rc == 0
    assert "| my_crops | 3 |" in capsys.readouterr().out
    (dataset,) = json.loads((eval_dir / "results.json").read_text())["datasets"]
    assert dataset["input_path"] == str(eval_dir / "my_crops.tfrecord")


def test_labels_file_missing_or_empty_exits_1(config_path, tmp_path, capsys):
    missing = tmp_path / "nothing.txt"
    args = ["--pipeline_config_path", config_path, "--checkpoint_dir", str(tmp_path),
            "--eval_dir", str(tmp_path / "eval"), "--run_once"]
    assert eval_cli.main([*args, "--labels_file", str(missing)]) == 1
    assert str(missing) in capsys.readouterr().err
    broken = tmp_path / "broken.txt"
    broken.write_text("no_such.png\tword\n")
    assert eval_cli.main([*args, "--labels_file", str(broken)]) == 1
    assert "no image could be read" in capsys.readouterr().err
