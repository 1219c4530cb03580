"""aster/tools/prediction_breakdown.py: accuracy by length, kind and font family of a predictions
TSV as aster-eval writes it."""

import json

import pytest

from aster import eval_reports
from aster.tools import prediction_breakdown as pb


class _Example:
    def __init__(self, index, filename, groundtruth, prediction):
        self.index, self.filename = index, filename
        self.groundtruth, self.prediction = groundtruth, prediction
        self.score, self.correct = 0.5, groundtruth == prediction
        self.lexicon_prediction = None


@pytest.fixture
def predictions(tmp_path):
    examples = [_Example(0, "synth/val/00000000/Sans-Bold", "cat", "cat"),
                _Example(1, "synth/val/00000001/Sans-Bold", "elephants", "elephant"),
                _Example(2, "synth/val/00000002/Serif", "2024", "2024"),
                _Example(3, "synth/val/00000003/Serif", "a1b2c3d4e5f6g", "a1b2c3d4e5f6"),
                _Example(4, "crops/word_1.png", "dog", "dog")]
    return eval_reports.write_predictions(str(tmp_path / "predictions-val.tsv"), examples)


def test_groups_by_length_kind_and_family(predictions, tmp_path):
    rows = pb.read_predictions(predictions)
    assert [r[2] for r in rows] == [True, False, True, False, True]
    by_length = pb.breakdown(rows, lambda r: pb.length_bucket(r[0]), pb.LENGTH_LABELS)
    assert by_length == [("1-3", 2, 1.0, 0.0), ("4-6", 1, 1.0, 0.0), ("7-9", 1, 0.0, 0.5),
                         (">=13", 1, 0.0, 0.5)]
    by_kind = dict((g, (n, a)) for g, n, a, _ in pb.breakdown(rows, lambda r: pb.text_kind(r[0])))
    assert by_kind == {"letters": (3, 2 / 3), "digits": (1, 1.0), "letters+digits": (1, 0.0)}
    manifest = tmp_path / "manifest.json"
    manifest.write_text(json.dumps({"splits": {"val": {"fonts": {
        "Sans": ["/fonts/Sans-Bold.ttf"], "Serif": ["/fonts/Serif.otf"]}}}}))
    families = pb.families_by_font(str(manifest))
    by_family = {g: (n, a) for g, n, a, _ in pb.breakdown(rows, lambda r: pb.family_of(r[3],
                                                                                       families))}
    assert by_family == {"Sans": (2, 0.5), "Serif": (2, 0.5), pb.UNKNOWN: (1, 1.0)}


def test_main_prints_the_tables(predictions, capsys):
    assert pb.main([predictions]) == 0
    out = capsys.readouterr().out
    assert "5 images, word accuracy 60.00%" in out
    assert "| 7-9 | 1 | 0.0% | 50.0% |\n| >=13 | 1 | 0.0% | 50.0% |" in out
    assert out.index("| 4-6 |") < out.index("| 7-9 |")


def test_bad_files_name_the_path(tmp_path, capsys):
    other = tmp_path / "other.tsv"
    other.write_text("a\tb\n1\t2\n")
    assert pb.main([str(other)]) == 2
    assert f"{other}: not an aster-eval predictions file" in capsys.readouterr().err
    assert pb.main([str(tmp_path / "missing.tsv")]) == 2
    assert "missing.tsv" in capsys.readouterr().err
    manifest = tmp_path / "manifest.json"
    manifest.write_text("{}")
    with pytest.raises(ValueError, match="manifest.json: no fonts listed"):
        pb.families_by_font(str(manifest))
