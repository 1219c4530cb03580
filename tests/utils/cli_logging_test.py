import contextlib
import logging
import os
import warnings

import pytest

from aster.tf_setup import tf
from aster.utils import cli_logging

_NOISE_LINE = ("I0000 00:00:1.0 1 cudart_stub.cc:31] Could not find cuda drivers on your machine, "
               "GPU will not be used.\n")


@contextlib.contextmanager
def _fresh_logging():
    """An unconfigured root logger and no held-back lines; both restored afterwards.

    Entered in the test body: pytest adds its log handlers to the root logger after the fixtures.
    """
    root, tf_logger = logging.getLogger(), logging.getLogger("tensorflow")
    saved, saved_filters = list(root.handlers), list(tf_logger.filters)
    held_back = list(cli_logging._held_back)
    for handler in saved:
        root.removeHandler(handler)
    del cli_logging._held_back[:]
    try:
        yield
    finally:
        for handler in list(root.handlers):
            root.removeHandler(handler)
        for handler in saved:
            root.addHandler(handler)
        tf_logger.filters[:] = saved_filters
        cli_logging._held_back[:] = held_back


def test_tensorflow_records_are_printed_once(capsys):
    with _fresh_logging():
        cli_logging.configure()
        tf.get_logger().info("one line please")
        err = capsys.readouterr().err
    assert err.count("one line please") == 1
    assert "INFO tensorflow: one line please" in err


def test_native_start_up_lines_are_held_back_and_others_written_back(capfd):
    with _fresh_logging():
        with cli_logging.quiet_native_stderr():
            os.write(2, _NOISE_LINE.encode())
            os.write(2, b"E0000 real_error.cc:1] disk full\n")
        assert capfd.readouterr().err == "E0000 real_error.cc:1] disk full\n"
        cli_logging.configure()
        assert capfd.readouterr().err == ""
        cli_logging.configure(verbose=True)
        assert capfd.readouterr().err == _NOISE_LINE


def test_lines_written_before_an_error_in_the_block_are_written_back(capfd):
    with _fresh_logging(), pytest.raises(ImportError), cli_logging.quiet_native_stderr():
        os.write(2, b"loading failed\n")
        raise ImportError("no such library")
    assert capfd.readouterr().err == "loading failed\n"


def _deprecation_notices():
    tf.get_logger().warning("From x.py:1: f (from y) is deprecated and will be removed in a "
                            "future version.\nInstructions for updating:\nUse g")
    tf.get_logger().warning("a real warning")
    warnings.warn("`f` is deprecated and will be removed in a future version.", UserWarning,
                  stacklevel=1)


@pytest.mark.parametrize("verbose", [False, True])
def test_deprecation_notices_show_only_when_verbose(capsys, verbose):
    with _fresh_logging(), warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("default")  # what a command starts with
        cli_logging.configure(verbose=verbose)
        _deprecation_notices()
        err = capsys.readouterr().err
    assert "a real warning" in err
    assert ("Instructions for updating" in err) == verbose
    assert any("`f` is deprecated" in str(w.message) for w in caught) == verbose
