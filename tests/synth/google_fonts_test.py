"""Tests for aster/synth/google_fonts.py (`make fonts-google`): with a stand-in for npm, and one
real fetch of a small package (skipped without npm or network)."""

import json
import os
import shutil
import stat
import subprocess
import sys
import textwrap

import pytest

from aster.synth import fontsource, google_fonts
from aster.synth.google_fonts import Package

LIBRARY = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "data",
                       "fonts")

# Packs tests/data/fonts/<id> as `npm pack` would (package/...), plus files the fetch drops;
# "missing" answers as the registry does for an unknown package, "offline" as without network.
_FAKE_NPM = '''#!{python}
import io, os, sys, tarfile
spec, dest = sys.argv[2], sys.argv[sys.argv.index("--pack-destination") + 1]
font_id = spec.split("/")[1].split("@")[0]
with open(os.path.join(dest, "..", "calls.log"), "a") as log:
    log.write(font_id + "\\n")
if font_id == "missing":
    sys.exit("npm error code E404\\nnpm error 404 Not Found - GET " + spec)
if font_id == "offline":
    sys.exit("npm error code ENOTFOUND\\nnpm error network request failed")
source = os.path.join({library!r}, "abel")
with tarfile.open(os.path.join(dest, "fontsource-" + font_id + "-5.0.0.tgz"), "w:gz") as tar:
    names = ("metadata.json", "LICENSE", "files/abel-latin-400-normal.woff2")
    for name in names[:2] if font_id == "nolatin" else names:
        tar.add(os.path.join(source, name), "package/" + name.replace("abel", font_id))
    for name, data in (("index.css", b"css"), ("files/x-latin-ext-400-normal.woff2", b"x")):
        info = tarfile.TarInfo("package/" + name.replace("x", font_id))
        info.size = len(data)
        tar.addfile(info, io.BytesIO(data))
'''


@pytest.fixture
def fake_npm(tmp_path):
    path = tmp_path / "npm"
    path.write_text(_FAKE_NPM.format(python=sys.executable, library=LIBRARY))
    path.chmod(path.stat().st_mode | stat.S_IEXEC)
    return str(path)


def _calls(out):
    log = os.path.join(out, "calls.log")
    return open(log).read().split() if os.path.exists(log) else []


def test_package_list_is_pinned_and_large_enough():
    packages = google_fonts.read_package_list()
    assert len(packages) >= 500 and len({p.name for p in packages}) == len(packages)
    assert all(p.version[0].isdigit() for p in packages)
    assert Package("@fontsource/abel", "5.3.0").font_id == "abel"


def test_bad_package_list_line_raises_naming_it(tmp_path):
    path = tmp_path / "list.txt"
    path.write_text("# comment\n@fontsource/abel 5.3.0\nlobster\n")
    with pytest.raises(ValueError, match=f"{path}:3: expected .*got 'lobster'"):
        google_fonts.read_package_list(str(path))


def test_wanted_members_are_metadata_license_and_latin_woff2():
    keep = google_fonts.wanted_member
    assert keep("abel", "package/metadata.json") == "metadata.json"
    assert keep("abel", "package/LICENSE") == "LICENSE"
    assert keep("abel", "package/files/abel-latin-700-italic.woff2") == \
        "files/abel-latin-700-italic.woff2"
    for dropped in ("package/files/abel-latin-ext-400-normal.woff2", "package/index.css",
                    "package/files/abel-latin-400-normal.woff", "package/README.md",
                    "package/files/abel-latin-wght-normal.woff2"):
        assert keep("abel", dropped) is None


def test_fetch_keeps_what_the_engine_reads_and_a_rerun_fetches_nothing(tmp_path, fake_npm):
    out = str(tmp_path / "lib")
    packages = [Package("@fontsource/alpha", "5.0.0"), Package("@fontsource/missing", "1.0.0"),
                Package("@fontsource/beta", "5.0.0")]
    lines = []
    entries = google_fonts.fetch_all(packages, out, npm=fake_npm, jobs=2, log=lines.append)
    assert entries["@fontsource/alpha"]["status"] == google_fonts.OK
    assert entries["@fontsource/alpha"]["files"] == [
        "LICENSE", "files/alpha-latin-400-normal.woff2", "metadata.json"]
    assert entries["@fontsource/missing"]["status"] == google_fonts.MISSING
    assert [ln for ln in lines if "missing" in ln] == [
        "[2/3] @fontsource/missing@1.0.0: missing (npm pack exit 1: npm error code E404)"]
    assert sorted(os.listdir(out)) == ["alpha", "beta", "calls.log", "manifest.json"]
    manifest = json.load(open(os.path.join(out, "manifest.json")))
    assert manifest["counts"] == {"ok": 2, "missing": 1}
    faces, _ = fontsource.library_faces(out)
    assert len(faces) == 2
    google_fonts.fetch_all(packages, out, npm=fake_npm, log=lines.append)
    assert sorted(_calls(out)) == ["alpha", "beta", "missing", "missing"]  # only the missing one
    nolatin = [Package("@fontsource/nolatin", "5.0.0")]
    assert google_fonts.fetch_all(nolatin, out, npm=fake_npm)["@fontsource/nolatin"] == {
        "version": "5.0.0", "files": [], "status": google_fonts.NO_LATIN}
    google_fonts.fetch_all(nolatin, out, npm=fake_npm)
    assert _calls(out).count("nolatin") == 1 and not os.path.exists(os.path.join(out, "nolatin"))
    assert google_fonts.prune(packages[:1], out, log=lines.append) == [
        "@fontsource/beta", "@fontsource/missing", "@fontsource/nolatin"]
    assert not os.path.exists(os.path.join(out, "beta"))


def test_no_network_is_one_line_and_keeps_what_there_is(tmp_path, fake_npm):
    out = str(tmp_path / "lib")
    google_fonts.fetch_all([Package("@fontsource/alpha", "5.0.0")], out, npm=fake_npm)
    lines = []
    packages = [Package("@fontsource/alpha", "5.0.0")] + [
        Package("@fontsource/offline", "5.0.0") for _ in range(6)]
    entries = google_fonts.fetch_all(packages, out, npm=fake_npm, jobs=1, log=lines.append)
    assert sum("cannot reach the registry" in ln for ln in lines) == 1
    assert len(_calls(out)) < 7 and entries["@fontsource/alpha"]["status"] == google_fonts.OK
    assert "@fontsource/offline" not in entries


def test_main_without_npm_or_with_unknown_ids(tmp_path, capsys):
    out = str(tmp_path / "lib")
    assert google_fonts.main(["--out_dir", out, "--npm", "no-such-npm-here"]) == 0
    assert "not found on PATH" in capsys.readouterr().out and not os.path.exists(out)
    with pytest.raises(SystemExit):
        google_fonts.main(["--out_dir", out, "--only", "no-such-family"])
    assert "--only: ['no-such-family'] not in" in capsys.readouterr().err


def test_real_fetch_of_two_small_packages(tmp_path):
    """Runs `python -m aster.synth.google_fonts` for two small packages with the real npm."""
    if shutil.which("npm") is None:
        pytest.skip("npm is not installed")
    out = str(tmp_path / "lib")
    try:
        result = subprocess.run(
            [sys.executable, "-m", "aster.synth.google_fonts", "--out_dir", out, "--only", "abel",
             "titan-one"], capture_output=True, text=True, timeout=120, check=False)
    except subprocess.TimeoutExpired:
        pytest.skip("npm pack took over 120 s (no network?)")
    entries = google_fonts.read_manifest(out) if os.path.isdir(out) else {}
    if result.returncode != 0 or any(e["status"] != google_fonts.OK for e in entries.values()) \
            or len(entries) != 2:
        pytest.skip(f"the fetch failed (no network?): {textwrap.shorten(result.stdout, 200)}")
    faces, skipped = fontsource.library_faces(out)
    assert not skipped and {m.category for m in faces.values()} == {"sans-serif", "display"}
    assert "2 of 2 families" in result.stdout and not os.path.exists(os.path.join(out,
                                                                                 ".npm-cache"))


def test_truetype_twins_are_written_once_and_draw_what_the_woff2_draws(tmp_path):
    import numpy as np
    from PIL import Image

    from aster.synth import render

    library = str(tmp_path / "library")
    shutil.copytree(LIBRARY, library)
    faces, _ = fontsource.library_faces(library)
    assert google_fonts.write_truetype_twins(library, jobs=1, log=lambda line: None) == len(faces)
    assert google_fonts.write_truetype_twins(library, jobs=1, log=lambda line: None) == 0
    face = next(iter(faces))
    twin = render.truetype_twin(face)
    assert os.path.exists(twin) and render._font_source(face) == twin
    drawn = []
    for path in (twin, face):  # the twin as the renderer opens it, then the .woff2 itself
        image = Image.new("L", (200, 60))
        font = render.ImageFont.truetype(path, 36, layout_engine=render.ImageFont.Layout.BASIC)
        render.ImageDraw.Draw(image).text((4, 4), "Quartz 42", font=font, fill=255)
        drawn.append(np.asarray(image))
    assert drawn[0].any() and np.array_equal(drawn[0], drawn[1])


def test_the_font_cache_keeps_the_most_recently_used(monkeypatch):
    from aster.synth import render

    monkeypatch.setattr(render, "_FONT_CACHE", render.collections.OrderedDict())
    monkeypatch.setattr(render, "_FONT_CACHE_SIZE", 2)
    face = fontsource.library_faces(LIBRARY)[0]
    path = next(iter(face))
    first = render._font(path, 20)
    render._font(path, 21)
    assert render._font(path, 20) is first  # a hit moves it to the end
    render._font(path, 22)  # evicts size 21, the least recently used
    assert list(render._FONT_CACHE) == [(path, 20), (path, 22)]
