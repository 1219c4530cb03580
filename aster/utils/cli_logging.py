"""Log set-up shared by the command-line programs (aster-train, aster-eval, aster-export, ...).

Every command's first line of output is its own: TensorFlow's start-up noise is held back unless
the command runs with --verbose. The noise comes from three places:
  - C++, while TensorFlow loads and probes CUDA ("All log messages before absl::InitializeLog()",
    "Could not find cuda drivers", "failed call to cuInit"): it is written to file descriptor 2
    before Python logging exists, and ignores TF_CPP_MIN_LOG_LEVEL, so aster.tf_setup imports
    TensorFlow inside quiet_native_stderr(), which holds back the lines of NOISE and writes every
    other line back. TF_CPP_MIN_LOG_LEVEL (1 unless set: aster/__init__.py) filters the rest of
    TensorFlow's C++ logging, INFO lines such as oneDNN's notice included;
  - the "tensorflow" Python logger: "... is deprecated ... Instructions for updating:" records;
  - Python warnings: "`tf.nn.rnn_cell.LSTMCell` is deprecated and will be removed ...".
Errors are never hidden: only the lines matched here are. This module imports no TensorFlow.
"""

import contextlib
import logging
import os
import re
import sys
import tempfile
import warnings

FORMAT = "%(asctime)s %(levelname)s %(name)s: %(message)s"

# TensorFlow's C++ start-up lines: the absl notice, the CUDA probe on a machine without a GPU, the
# CPU-feature and oneDNN notices, and the plugin re-registration lines of the CUDA builds.
NOISE = re.compile("|".join((
    r"All log messages before absl::InitializeLog\(\) is called are written to STDERR",
    r"Could not find cuda drivers on your machine",
    r"failed call to cuInit",
    r"oneDNN custom operations are on",
    r"This TensorFlow binary is optimized to use available CPU instructions",
    r"^To enable the following instructions: .* rebuild TensorFlow",
    r"Unable to register cu(DNN|FFT|BLAS) factory",
    r"computation placer already registered",
    r"TF-TRT Warning: Could not find TensorRT",
)))

_DEPRECATED_WARNING = r".*is deprecated and will be removed"

_held_back = []  # NOISE lines caught by quiet_native_stderr, shown by configure(verbose=True)


def _is_not_deprecation(record):
    """Logging filter: False for TensorFlow's deprecation notices."""
    return "Instructions for updating" not in record.getMessage()


def _write_back(text):
    kept = []
    for line in text.splitlines(keepends=True):
        (_held_back if NOISE.search(line) else kept).append(line)
    if kept:
        os.write(2, "".join(kept).encode())


@contextlib.contextmanager
def quiet_native_stderr():
    """Holds back the NOISE lines written to file descriptor 2 while the block runs.

    The rest of what was written there is written back when the block ends (an error included).
    """
    try:
        saved = os.dup(2)
    except OSError:  # no stderr to redirect
        yield
        return
    if sys.stderr is not None:
        sys.stderr.flush()
    with tempfile.TemporaryFile() as capture:
        os.dup2(capture.fileno(), 2)
        try:
            yield
        finally:
            if sys.stderr is not None:
                sys.stderr.flush()
            os.dup2(saved, 2)
            os.close(saved)
            capture.seek(0)
            _write_back(capture.read().decode(errors="replace"))


def _show_held_back():
    if _held_back:
        sys.stderr.write("".join(_held_back))
        sys.stderr.flush()
        del _held_back[:]


def configure(level=logging.INFO, fmt=FORMAT, verbose=False):
    """Sets up logging for a command; TensorFlow's start-up noise shows only when `verbose`.

    Every log record, TensorFlow's included, goes once through the root logger's format:
    TensorFlow's "tensorflow" logger has a handler of its own and also propagates to the root
    logger, so without this each of its lines is printed twice in two formats. `verbose` also
    lowers `level` to INFO.
    """
    logging.basicConfig(level=min(level, logging.INFO) if verbose else level, format=fmt)
    tf_logger = logging.getLogger("tensorflow")
    for handler in list(tf_logger.handlers):
        tf_logger.removeHandler(handler)
    tf_logger.propagate = True
    if verbose:
        tf_logger.removeFilter(_is_not_deprecation)
        _show_held_back()
    else:
        tf_logger.addFilter(_is_not_deprecation)
        warnings.filterwarnings("ignore", message=_DEPRECATED_WARNING, category=UserWarning)
