"""Tests for aster/tools/converters/ic03.py."""

import pytest

from aster.tools.converters import ic03

_WORDS = ["Tiredness", "kills", "A", "Take", "BREAK", "Yes!", "ROUTE", "ANAS", "MILK", "TEA"]


def _fixture(tmp_path, write_image):
    lines = ['<?xml version="1.0" encoding="utf-8"?>', "<tagset>"]
    for i, word in enumerate(_WORDS, 1):
        write_image(tmp_path / "word" / "1" / f"{i}.jpg", image_format="JPEG")
        lines.append(f'<image file="word/1/{i}.jpg" tag="{word}" />')
    lines.append("<image><imageName>word/1/1.jpg</imageName><tag>Nested</tag></image>")
    (tmp_path / "words.xml").write_text("\n".join(lines + ["</tagset>"]))
    return str(tmp_path / "words.xml")


def test_ic03_full_lexicon_and_standard_subset(tmp_path, write_image, read_records):
    xml = _fixture(tmp_path, write_image)
    ic03.convert(xml, str(tmp_path / "o.tfrecord"), lexicon="full", standard_subset=True,
                 progress_every=0)
    records = read_records(str(tmp_path / "o.tfrecord"))
    kept = [w for w in _WORDS + ["Nested"] if len(w) >= 3 and w.isalnum()]
    assert [r["transcript"] for r in records] == kept
    assert all(r["lexicon"] == sorted(kept) for r in records)
    assert records[0]["filename"] == "word/1/1.jpg"


def test_ic03_generated_lexicon50_contains_word(tmp_path, write_image, read_records):
    xml = _fixture(tmp_path, write_image)
    ic03.convert(xml, str(tmp_path / "o.tfrecord"), lexicon="50", progress_every=0)
    records = read_records(str(tmp_path / "o.tfrecord"))
    assert len(records) == len(_WORDS) + 1
    for record in records:
        assert record["transcript"] in record["lexicon"]
        assert len(record["lexicon"]) == min(50, len(set(_WORDS + ["Nested"])))
    again = list(ic03.read_samples(xml, lexicon="50"))
    assert [s.lexicon for s in again] == [tuple(r["lexicon"]) for r in records]


def test_ic03_lexicon50_file(tmp_path, write_image, read_records):
    xml = _fixture(tmp_path, write_image)
    (tmp_path / "lex50.txt").write_text("word/1/2.jpg\tkills,bills, pills\n")
    ic03.convert(xml, str(tmp_path / "o.tfrecord"), lexicon="50",
                 lexicon50_file=str(tmp_path / "lex50.txt"), progress_every=0)
    records = read_records(str(tmp_path / "o.tfrecord"))
    assert records[1]["lexicon"] == ["kills", "bills", "pills"]
    assert records[0]["lexicon"] == []


def test_ic03_lexicon50_file_without_tab_raises(tmp_path, write_image):
    xml = _fixture(tmp_path, write_image)
    (tmp_path / "lex50.txt").write_text("word/1/2.jpg kills\n")
    with pytest.raises(ValueError, match="lex50.txt:1"):
        list(ic03.read_samples(xml, lexicon="50", lexicon50_file=str(tmp_path / "lex50.txt")))


def test_ic03_unknown_lexicon_raises(tmp_path, write_image):
    with pytest.raises(ValueError, match="lexicon 'huge'"):
        list(ic03.read_samples(_fixture(tmp_path, write_image), lexicon="huge"))
