"""benchmarks/input_pipeline.py: the same records as TFRecord and LMDB, timed in turns."""

import glob

import bench_scripts
import pytest

from aster.readers import lmdb_reader
from aster.tf_setup import tf


@pytest.fixture
def input_pipeline(monkeypatch):
    yield bench_scripts.load("input_pipeline", monkeypatch)
    bench_scripts.forget_siblings()


def test_both_formats_hold_the_same_records(input_pipeline, tmp_path):
    paths = input_pipeline.write_data(str(tmp_path), 8, num_shards=2)
    assert len(paths["TFRecord"]) == len(paths["LMDB"]) == 2
    for pattern, database in zip(paths["TFRecord"], paths["LMDB"], strict=True):
        examples = [tf.train.Example.FromString(r) for f in sorted(glob.glob(pattern))
                    for r in tf.io.tf_record_iterator(f)]
        tfrecord = sorted((e.features.feature["image/encoded"].bytes_list.value[0],
                           e.features.feature["image/transcript"].bytes_list.value[0].decode())
                          for e in examples)
        assert tfrecord == sorted((image, label) for _, image, label in
                                  lmdb_reader.LmdbSamples(database))
        assert len(tfrecord) == 4


def test_main_times_both_formats_and_reports_lmdb_against_tfrecord(input_pipeline, capsys,
                                                                   monkeypatch):
    record = bench_scripts.load("record", monkeypatch)
    medians = input_pipeline.main(["--images", "128", "--runs", "2", "--steps", "2",
                                   "--warmup", "1"])
    assert set(medians) == {"TFRecord", "LMDB"} and min(medians.values()) > 0
    lines = capsys.readouterr().out.splitlines()
    figures = record.figures("input_pipeline", lines)
    assert figures[0].startswith("batch (64, 64, 256, 3) (readers [32, 32], num_readers [4, 4])")
    assert len([f for f in figures if f.startswith("|")]) == 2 + 2  # header, separator, 2 runs
    percent = round(100 * medians["LMDB"] / medians["TFRecord"])
    assert figures[-1].endswith(f": LMDB at {percent}% of TFRecord (target >= 80%)")
