"""aster/tools/style_ablation.py: one-factor variants of the validation styles, the eval override
that evaluates them, and the accuracy table against each variant's reference."""

import json
import os
import subprocess

import pytest

from aster.synth import generator, styles
from aster.tools import style_ablation as sa
from aster.utils import config_util

DEMO = os.path.join(os.path.dirname(__file__), "..", "..", "configs", "demo_cpu.config")


@pytest.fixture(scope="module")
def plans(machine_fonts):
    return generator.make_plans(machine_fonts, 0)[0]


def test_each_variant_changes_only_its_factor(plans):
    variants = sa.variant_plans(plans)
    ood, base = variants["ood"], plans["val_ood_straight"]
    assert ood == base
    assert variants["ood_train_backgrounds"].style == base.style.replace(
        backgrounds=styles.TRAIN_STYLE.backgrounds)
    assert variants["ood_train_backgrounds"].vocabulary is base.vocabulary
    assert variants["ood_val_fonts"].families == plans["val"].families
    assert variants["ood_val_fonts"].style == base.style
    assert variants["val_ood_fonts"].families == base.families
    assert variants["val"].style.curve_prob == 0.0
    for v in sa.VARIANTS:
        assert not v.reference or v.reference in variants, v


def test_renders_each_set_once(plans, tmp_path, read_records):
    chosen = [v for v in sa.VARIANTS if v.name in ("ood", "ood_train_backgrounds")]
    paths = sa.render_sets(str(tmp_path), 3, variants=chosen)
    assert sorted(paths) == ["ood", "ood_train_backgrounds"]
    first = read_records(paths["ood"])
    assert len(first) == 3
    # Same words and fonts, other backgrounds: the transcripts match, the images do not.
    other = read_records(paths["ood_train_backgrounds"])
    assert [r["transcript"] for r in first] == [r["transcript"] for r in other]
    assert [r["image"] for r in first] != [r["image"] for r in other]
    before = (tmp_path / "ood.tfrecord").stat().st_mtime_ns
    sa.render_sets(str(tmp_path), 3, variants=chosen)
    assert (tmp_path / "ood.tfrecord").stat().st_mtime_ns == before


def test_eval_override_names_every_set():
    paths = {"ood": "/sets/ood.tfrecord", "val": "/sets/val.tfrecord"}
    config = config_util.load_pipeline_config(DEMO)
    merged = config_util.merge_overrides(config, sa.eval_override(paths))
    assert list(merged.eval_config.dataset_name) == ["ood", "val"]
    assert [r.tf_record_input_reader.input_path for r in merged.eval_input_reader] == [
        "/sets/ood.tfrecord", "/sets/val.tfrecord"]
    assert not merged.eval_config.compare_identity_rectification


def _results(accuracies):
    return {"datasets": [{"name": n, "accuracy": a, "num_scored": 10}
                         for n, a in accuracies.items()]}


def test_table_gives_points_against_the_reference():
    text = sa.table(_results({"ood": 0.5, "ood_train_backgrounds": 0.75, "val": 0.8}))
    rows = {line.split(" | ")[0].lstrip("| "): line for line in text.splitlines()[2:]}
    assert sorted(rows) == ["ood", "ood_train_backgrounds", "val"]
    assert "75.00%" in rows["ood_train_backgrounds"]
    assert "+25.0 vs ood" in rows["ood_train_backgrounds"]


def test_main_evaluates_the_rendered_sets(tmp_path, monkeypatch, capsys):
    checkpoint = tmp_path / "model.ckpt-7"
    (tmp_path / "model.ckpt-7.index").write_text("")
    monkeypatch.setattr(sa, "render_sets",
                        lambda folder, images, seed, workers: {"ood": "a", "val": "b"})
    commands = []

    def fake_eval(command, check):
        commands.append(command)
        eval_dir = command[command.index("--eval_dir") + 1]
        (tmp_path / "out" / "eval").mkdir(parents=True)
        with open(f"{eval_dir}/results.json", "w") as f:
            json.dump(_results({"ood": 0.4, "val": 0.9}), f)
        return subprocess.CompletedProcess(command, 0)

    monkeypatch.setattr(sa.subprocess, "run", fake_eval)
    assert sa.main(["--pipeline_config_path", DEMO, "--checkpoint_path",
                    str(checkpoint), "--output_dir", str(tmp_path / "out")]) == 0
    assert commands[0][commands[0].index("--checkpoint_path") + 1] == str(checkpoint)
    out = capsys.readouterr().out
    assert "| ood | val_ood, straight | 10 | 40.00% |" in out


@pytest.mark.parametrize("argv, message", [
    (["--images", "0"], "--images"),
    ([], "no checkpoint at"),
])
def test_bad_arguments_are_named(tmp_path, capsys, argv, message):
    status = sa.main(["--pipeline_config_path", DEMO, "--checkpoint_path",
                      str(tmp_path / "missing"), "--output_dir", str(tmp_path), *argv])
    assert status == 1 and message in capsys.readouterr().err
