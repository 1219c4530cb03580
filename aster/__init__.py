"""ASTER-TF: scene text recognition with TPS rectification and attentional decoding.

Importing the package sets TF_USE_LEGACY_KERAS=1 before TensorFlow can be imported by any of its
modules (the v1 RNN cells and tf.compat.v1.layers need the legacy Keras). TensorFlow itself is
imported through aster.tf_setup, never here, so that config tools start fast. It also sets
TF_CPP_MIN_LOG_LEVEL=1 (unless set), which hides TensorFlow's C++ INFO lines; the start-up lines
that ignore it are held back by aster.tf_setup (see aster/utils/cli_logging.py).
"""

import os

os.environ.setdefault("TF_USE_LEGACY_KERAS", "1")
os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "1")

__version__ = "0.1.0"
