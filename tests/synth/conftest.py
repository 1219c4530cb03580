"""Fixtures of the data engine's tests: the small font library shipped in tests/data/fonts."""

import glob
import os

import pytest

LIBRARY = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "data",
                       "fonts")


@pytest.fixture(scope="session")
def library_fonts():
    """The FontInfo of tests/data/fonts (fontsource folders, one family per category plus a
    caps-only face and a reserved family), found without searching the machine."""
    from aster.synth import fonts

    faces = sorted(glob.glob(os.path.join(LIBRARY, "*", "files", "*.woff2")))
    return fonts.find_fonts(font_files=faces, library_dirs=[LIBRARY], keep_caps_only=True)

