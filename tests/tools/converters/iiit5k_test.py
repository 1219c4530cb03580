"""Tests for aster/tools/converters/iiit5k.py (fixtures written with scipy.io.savemat)."""

import numpy as np
import pytest
import scipy.io

from aster.tools.converters import iiit5k


def _cell(words):
    cell = np.empty((1, len(words)), dtype=object)
    for i, word in enumerate(words):
        cell[0, i] = np.array([word])
    return cell


def _fixture(tmp_path, write_image, key="testdata"):
    rows = [("test/1002_1.png", "PRIVATE"), ("test/1009_2.png", "Sharp"),
            ("test/broken.png", "x")]
    dtype = [("ImgName", object), ("GroundTruth", object), ("smallLexi", object),
             ("mediumLexi", object)]
    data = np.empty((1, len(rows)), dtype=dtype)
    for i, (name, text) in enumerate(rows):
        if "broken" not in name:
            write_image(tmp_path / name)
        small = [text] + [f"s{i}_{k}" for k in range(49)]
        data[0, i] = (np.array([name]), np.array([text]), _cell(small),
                      _cell(small + [f"m{k}" for k in range(950)]))
    scipy.io.savemat(str(tmp_path / f"{key}.mat"), {key: data})
    return str(tmp_path / f"{key}.mat")


@pytest.mark.parametrize("lexicon, size", [("small", 50), ("medium", 1000), ("none", 0)])
def test_iiit5k_lexicon_choice(tmp_path, write_image, read_records, lexicon, size):
    mat = _fixture(tmp_path, write_image)
    stats = iiit5k.convert(mat, str(tmp_path / "o.tfrecord"), lexicon=lexicon, progress_every=0)
    records = read_records(str(tmp_path / "o.tfrecord"))
    assert [r["transcript"] for r in records] == ["PRIVATE", "Sharp"]
    assert records[0]["filename"] == "test/1002_1.png"
    assert all(len(r["lexicon"]) == size for r in records)
    if size:
        assert records[1]["lexicon"][0] == "Sharp"
    assert stats.skipped == {"unreadable image": 1}


def test_iiit5k_traindata_key(tmp_path, write_image, read_records):
    mat = _fixture(tmp_path, write_image, key="traindata")
    iiit5k.convert(mat, str(tmp_path / "o.tfrecord"), progress_every=0)
    assert len(read_records(str(tmp_path / "o.tfrecord"))) == 2


def test_iiit5k_bad_lexicon_raises(tmp_path, write_image):
    with pytest.raises(ValueError, match="lexicon 'big'"):
        list(iiit5k.read_samples(_fixture(tmp_path, write_image), lexicon="big"))


def test_iiit5k_not_a_struct_raises(tmp_path):
    scipy.io.savemat(str(tmp_path / "t.mat"), {"testdata": np.zeros((2, 2))})
    with pytest.raises(ValueError, match="not a struct array"):
        list(iiit5k.read_samples(str(tmp_path / "t.mat")))


def test_iiit5k_missing_file_raises(tmp_path):
    with pytest.raises(ValueError, match="cannot read MATLAB file"):
        list(iiit5k.read_samples(str(tmp_path / "none.mat")))
