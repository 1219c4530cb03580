"""Tests for aster/eval_reports.py: results.json, results.md and the Markdown report."""

import json
import os

from aster import eval_reports


def _results(step=7):
    return {
        "checkpoint": "/t/model.ckpt-7", "step": step, "protocol": 36,
        "use_moving_averages": False, "evaluated_at": "2025-01-01T00:00:00",
        "decoding": [{"predictor": "Forward", "type": "attention_predictor", "beam_width": 5,
                      "max_num_steps": 30}],
        "datasets": [{
            "name": "iiit5k", "size": 3000, "accuracy": 0.934, "one_minus_ned": 0.97,
            "lexicon_accuracy": None, "num_with_lexicon": 0, "num_empty_groundtruth": 2,
            "dropped": {"undecodable": 1, "empty_label": 0}, "images_per_sec": 123.4,
            "protocols": {p: {"accuracy": 0.9, "one_minus_ned": 0.95, "lexicon_accuracy": None}
                          for p in ("36", "62", "94")},
        }],
    }


def test_write_reports_per_step_and_newest(tmp_path):
    step_dir = eval_reports.write_reports(_results(), str(tmp_path))
    assert step_dir == os.path.join(str(tmp_path), "step-7")
    for folder in (step_dir, str(tmp_path)):
        with open(os.path.join(folder, "results.json")) as f:
            assert json.load(f)["datasets"][0]["accuracy"] == 0.934
        md = open(os.path.join(folder, "results.md")).read()
        assert "| iiit5k | 3000 | 93.40% | 97.00% | n/a | 2 | 1 (undecodable 1) | 123.4 |" in md
        assert "- step: 7" in md and "- protocol: 36" in md and "beam_width 5" in md


def test_format_markdown_shows_rectifier_columns_and_dashes_where_absent():
    results = _results()
    plain = dict(results["datasets"][0], name="svt", size=647)
    results["datasets"][0].update(
        rectifier={"mean_displacement": 0.01, "mean_displacement_px": 1.234,
                   "max_displacement": 0.02, "max_displacement_px": 2.5,
                   "num_control_points": 20},
        identity_rectification={"accuracy": 0.9, "one_minus_ned": 0.95, "num_correct": 2700},
        rectification_gain=0.034)
    results["datasets"].append(plain)
    md = eval_reports.format_markdown(results)
    assert ("| dataset | size | accuracy | 1 - NED | lexicon accuracy | identity-rect. accuracy "
            "| rectification gain | control-point displacement (px) | empty ground truth "
            "| dropped/corrupt | images/s |") in md
    assert "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|" in md
    assert ("| iiit5k | 3000 | 93.40% | 97.00% | n/a | 90.00% | +3.40 pp | 1.23 (max 2.50) "
            "| 2 | 1 (undecodable 1) | 123.4 |") in md
    assert "| svt | 647 | 93.40% | 97.00% | n/a | - | - | - | 2 | 1 (undecodable 1) | 123.4 |" in md
    assert "forced to the identity" in md and "initial ones in pixels" in md


def test_format_markdown_displacement_column_alone_and_missing_gain():
    results = _results()
    results["datasets"][0]["rectifier"] = {"mean_displacement_px": 0.0,
                                           "max_displacement_px": 0.0}
    md = eval_reports.format_markdown(results)
    assert "identity-rect." not in md
    assert "| n/a | 0.00 (max 0.00) | 2 |" in md
    results["datasets"][0].update(identity_rectification={"accuracy": None},
                                  rectification_gain=None)
    md = eval_reports.format_markdown(results)
    assert "| n/a | n/a | n/a | 0.00 (max 0.00) | 2 |" in md
