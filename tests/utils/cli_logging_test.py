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


# The start-up lines of TensorFlow's CPU and CUDA builds (GPU machines print the plugin
# re-registration and TensorRT lines), as they appear on stderr: each must be held back.
_START_UP_LINES = [
    "WARNING: All log messages before absl::InitializeLog() is called are written to STDERR",
    "E0000 00:00:1764590000.1 4242 cuda_executor.cc:1228] failed call to cuInit: INTERNAL: CUDA "
    "error: Failed call to cuInit: UNKNOWN ERROR (303)",
    "I0000 00:00:1764590000.2 4242 port.cc:153] oneDNN custom operations are on. You may see "
    "slightly different numerical results due to floating-point round-off errors.",
    "I0000 00:00:1764590000.3 4242 cpu_feature_guard.cc:210] This TensorFlow binary is optimized "
    "to use available CPU instructions in performance-critical operations.",
    "To enable the following instructions: AVX2 AVX512F AVX512_VNNI FMA, in other operations, "
    "rebuild TensorFlow with the appropriate compiler flags.",
    "E0000 00:00:1764590000.4 4242 cuda_dnn.cc:8310] Unable to register cuDNN factory: Attempting "
    "to register factory for plugin cuDNN when one has already been registered",
    "E0000 00:00:1764590000.5 4242 cuda_fft.cc:485] Unable to register cuFFT factory: Attempting "
    "to register factory for plugin cuFFT when one has already been registered",
    "E0000 00:00:1764590000.6 4242 cuda_blas.cc:1418] Unable to register cuBLAS factory: "
    "Attempting to register factory for plugin cuBLAS when one has already been registered",
    "W0000 00:00:1764590000.7 4242 computation_placer.cc:177] computation placer already "
    "registered. Please check linkage and avoid linking the same target more than once.",
    "2026-12-01 10:00:00.000000: W tensorflow/compiler/tf2tensorrt/utils/py_utils.cc:38] TF-TRT "
    "Warning: Could not find TensorRT",
]

# What a GPU machine may print that a user must see.
_REAL_PROBLEMS = [
    "W0000 00:00:1764590000.8 4242 gpu_device.cc:2344] Cannot dlopen some GPU libraries. Please "
    "make sure the missing libraries mentioned above are installed properly.",
    "E0000 00:00:1764590000.9 4242 cuda_driver.cc:1310] failed to allocate 80.00GiB from device: "
    "CUDA_ERROR_OUT_OF_MEMORY: out of memory",
    "E0000 00:00:1764590001.0 4242 cuda_dnn.cc:535] Could not create cudnn handle: "
    "CUDNN_STATUS_INTERNAL_ERROR",
    "To enable them in other operations, see the guide",  # not the start-up notice's wording
]


@pytest.mark.parametrize("line", _START_UP_LINES)
def test_each_start_up_line_of_cpu_and_cuda_builds_is_held_back(capfd, line):
    with _fresh_logging():
        with cli_logging.quiet_native_stderr():
            os.write(2, (line + "\n").encode())
        assert capfd.readouterr().err == ""
        cli_logging.configure(verbose=True)
        assert capfd.readouterr().err == line + "\n"


@pytest.mark.parametrize("line", _REAL_PROBLEMS)
def test_gpu_problems_are_written_back(capfd, line):
    with _fresh_logging():
        with cli_logging.quiet_native_stderr():
            os.write(2, (line + "\n").encode())
        assert capfd.readouterr().err == line + "\n"
