"""Test setup shared by every test: legacy Keras before TensorFlow is imported anywhere."""

import os

os.environ.setdefault("TF_USE_LEGACY_KERAS", "1")
os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")


import pytest  # noqa: E402  (after the environment above)


@pytest.fixture
def read_records():
    """read_records(path_or_glob) -> list of example dicts (tfrecord_utils.example_to_dict)."""
    from aster.tools import tfrecord_utils

    def read(pattern):
        return [tfrecord_utils.example_to_dict(e) for e in tfrecord_utils.read_examples(pattern)]

    return read


@pytest.fixture(scope="session")
def machine_fonts():
    """The usable fonts aster-synth-words finds on this machine; skips the test where none."""
    from aster.synth import fonts

    try:
        return fonts.find_fonts()
    except fonts.NoFontsError:
        pytest.skip("no usable fonts on this machine")
