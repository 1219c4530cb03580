import pytest

from aster.readers import paths


def _touch(directory, *names):
    for name in names:
        (directory / name).write_bytes(b"")
    return [str(directory / n) for n in names]


def test_expand_paths_glob_comma_list_and_shards(tmp_path):
    shards = _touch(tmp_path, "a-00000-of-00002", "a-00001-of-00002", "b.tfrecord", "c.txt")
    value = f"{tmp_path}/a-?????-of-00002, {tmp_path}/b.tfrecord,{tmp_path}/a-*"
    assert paths.expand_paths(value, "input_path") == sorted(shards[:3])


def test_expand_paths_skips_directories(tmp_path):
    (tmp_path / "dir.tfrecord").mkdir()
    files = _touch(tmp_path, "x.tfrecord")
    assert paths.expand_paths(f"{tmp_path}/*.tfrecord", "input_path") == files


def test_expand_paths_keeps_directories_when_asked(tmp_path):
    (tmp_path / "db_a").mkdir()
    (tmp_path / "db_b").mkdir()
    found = paths.expand_paths(f"{tmp_path}/db_*", "path", "LMDB database", directories=True)
    assert found == [str(tmp_path / "db_a"), str(tmp_path / "db_b")]


def test_expand_paths_pattern_matching_nothing_names_field_and_pattern(tmp_path):
    _touch(tmp_path, "a.tfrecord")
    with pytest.raises(ValueError, match=r"reader\[1\]\.input_path: pattern '.*/nope\*' matches"):
        paths.expand_paths(
            f"{tmp_path}/a.tfrecord,{tmp_path}/nope*", "reader[1].input_path"
        )


def test_expand_paths_empty_raises():
    with pytest.raises(ValueError, match="input_path is empty"):
        paths.expand_paths(" , ", "input_path")


def test_lmdb_expand_paths_no_match_raises(tmp_path):
    with pytest.raises(ValueError, match=r"lmdb_input_reader.path: pattern .* matches no LMDB"):
        paths.expand_paths(f"{tmp_path}/none*", "lmdb_input_reader.path", "LMDB database",
                           directories=True)
    with pytest.raises(ValueError, match="is empty"):
        paths.expand_paths("", "lmdb_input_reader.path", "LMDB database", directories=True)
