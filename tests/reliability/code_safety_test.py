"""Reliability: nothing in the project evaluates or unpickles data from configs, datasets or
checkpoints (see faults_code.py for what is scanned)."""

import faults_code


def test_no_source_file_evaluates_or_unpickles_data():
    result = faults_code.run()
    assert result.tried > 50
    assert result.failures == [], "\n".join(result.failures)


def test_the_scan_finds_each_pattern(tmp_path):
    bad = tmp_path / "bad.py"
    bad.write_text("import pickle\nimport yaml\nimport numpy as np\neval('1')\n"
                   "yaml.load(open('x'))\nnp.load('x', allow_pickle=True)\n")
    found = faults_code._problems(str(bad))
    assert len(found) == 4, found
