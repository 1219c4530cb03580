"""benchmarks/synth_speed.py: CPU time per image of each preset, with the legibility check off."""

import bench_scripts
import pytest

from aster.synth import fonts


@pytest.fixture
def synth_speed(monkeypatch):
    try:
        fonts.find_fonts()
    except fonts.NoFontsError:
        pytest.skip("no usable fonts on this machine")
    yield bench_scripts.load("synth_speed", monkeypatch)
    bench_scripts.forget_siblings()


def test_rows_with_and_without_the_legibility_check(synth_speed, capsys):
    assert synth_speed.main(["--images", "3", "--runs", "2", "--without_legibility_check"]) == 0
    out = capsys.readouterr().out
    assert "--without_legibility_check`" in out
    rows = [line.split(" | ")[0].lstrip("| ") for line in out.splitlines()
            if line.startswith("| ") and "ms" not in line]
    assert rows == ["train", "train, no legibility check", "ood", "ood, no legibility check",
                    "ood straight", "ood straight, no legibility check"]
