"""Tests for aster/tools/convert.py (the aster-convert CLI)."""

import pytest

from aster.tools import convert


def test_every_format_has_a_subcommand(capsys):
    parser = convert.build_parser()
    with pytest.raises(SystemExit) as exit_info:
        convert.main(["--help"])
    assert exit_info.value.code == 0 and "synthtext" in capsys.readouterr().out
    for name in ("folder", "lmdb", "synth90k", "synthtext", "iiit5k", "svt", "ic03", "ic13",
                 "ic15", "svtp", "cute80"):
        with pytest.raises(SystemExit) as exit_info:
            parser.parse_args([name, "--help"])
        assert exit_info.value.code == 0


def test_cli_folder_with_shards(tmp_path, write_image, read_records, capsys):
    for i in range(5):
        write_image(tmp_path / f"{i}.png")
    (tmp_path / "labels.txt").write_text("".join(f"{i}.png\tw{i}\n" for i in range(5)))
    code = convert.main(["folder", "--labels_file", str(tmp_path / "labels.txt"),
                         "--output", str(tmp_path / "out" / "d.tfrecord"), "--num_shards", "2",
                         "--progress_every", "2"])
    assert code == 0
    records = read_records(str(tmp_path / "out" / "d-0000?-of-00002.tfrecord"))
    assert sorted(r["transcript"] for r in records) == [f"w{i}" for i in range(5)]
    captured = capsys.readouterr()
    assert "wrote 5 records" in captured.out and "[folder] 4/5" in captured.err


def test_cli_cute80_uses_its_name(tmp_path, write_image, capsys):
    write_image(tmp_path / "a.png")
    (tmp_path / "imagelist.txt").write_text("a.png TEAM\n")
    assert convert.main(["cute80", "--list_file", str(tmp_path / "imagelist.txt"),
                         "--output", str(tmp_path / "o.tfrecord")]) == 0
    assert "[cute80] wrote 1 records" in capsys.readouterr().out


def test_cli_bad_input_returns_2_with_message(tmp_path, capsys):
    code = convert.main(["svt", "--xml_file", str(tmp_path / "none.xml"),
                         "--output", str(tmp_path / "o.tfrecord")])
    assert code == 2
    assert "aster-convert svt: error: cannot parse" in capsys.readouterr().err


def test_cli_zero_shards_returns_2(tmp_path, capsys):
    code = convert.main(["cute80", "--list_file", "x", "--output", "o", "--num_shards", "0"])
    assert code == 2 and "--num_shards" in capsys.readouterr().err


def test_cli_unknown_format_exits():
    with pytest.raises(SystemExit):
        convert.main(["nope", "--output", "o"])
