"""Tests for aster/tools/converters/svt.py."""

import pytest

from aster.tools.converters import svt

_XML = """<?xml version="1.0" encoding="utf-8"?>
<tagset>
  <image>
    <imageName>img/14_03.jpg</imageName>
    <address>341 Southwest 10th Avenue Portland OR</address>
    <lex>LIVING,ROOM,THEATERS,KENNY,ZUKE</lex>
    <Resolution x="60" y="40"/>
    <taggedRectangles>
      <taggedRectangle height="10" width="20" x="5" y="4"><tag>LIVING</tag></taggedRectangle>
      <taggedRectangle height="12" width="30" x="-3" y="30"><tag>ROOM</tag></taggedRectangle>
      <taggedRectangle height="x" width="30" x="1" y="1"><tag>BAD</tag></taggedRectangle>
    </taggedRectangles>
  </image>
  <image>
    <imageName>img/15_01.jpg</imageName>
    <lex>DELI,MARKET</lex>
    <taggedRectangles>
      <taggedRectangle height="5" width="5" x="1" y="1"><tag>DELI</tag></taggedRectangle>
    </taggedRectangles>
  </image>
</tagset>
"""


def test_svt_one_record_per_rectangle(tmp_path, write_image, read_records):
    write_image(tmp_path / "img" / "14_03.jpg", size=(60, 40), image_format="JPEG")
    write_image(tmp_path / "img" / "15_01.jpg", size=(20, 20), image_format="JPEG")
    (tmp_path / "test.xml").write_text(_XML)
    stats = svt.convert(str(tmp_path / "test.xml"), str(tmp_path / "o.tfrecord"),
                        progress_every=0)
    records = read_records(str(tmp_path / "o.tfrecord"))
    assert [r["transcript"] for r in records] == ["LIVING", "ROOM", "DELI"]
    names = [r["filename"] for r in records]
    assert names == ["img/14_03.jpg#0", "img/14_03.jpg#1", "img/15_01.jpg#0"]
    assert len(set(names)) == len(names)
    assert (records[0]["width"], records[0]["height"]) == (20, 10)
    assert (records[1]["width"], records[1]["height"]) == (27, 10)  # clamped to the image
    assert records[0]["lexicon"] == ["LIVING", "ROOM", "THEATERS", "KENNY", "ZUKE"]
    assert records[2]["lexicon"] == ["DELI", "MARKET"]
    assert stats.skipped == {"malformed entry (rectangle without x/y/width/height)": 1}


def test_svt_bad_xml_raises(tmp_path):
    (tmp_path / "test.xml").write_text("<tagset><image>")
    with pytest.raises(ValueError, match="cannot parse"):
        svt.convert(str(tmp_path / "test.xml"), str(tmp_path / "o.tfrecord"))
