"""ASTER-TF: scene text recognition with TPS rectification and attentional decoding.

Importing the package sets TF_USE_LEGACY_KERAS=1 before TensorFlow can be imported by any of its
modules (the v1 RNN cells and tf.compat.v1.layers need the legacy Keras). TensorFlow itself is
imported through aster.tf_setup, never here, so that config tools start fast. It also sets
TF_CPP_MIN_LOG_LEVEL=1 (unless set), which hides TensorFlow's C++ INFO lines; the start-up lines
that ignore it are held back by aster.tf_setup (see aster/utils/cli_logging.py).

It also sets TF_ENABLE_ONEDNN_OPTS=1 (unless set): TensorFlow turns its oneDNN kernels on by
itself only on CPUs with AVX-512 VNNI/BF16, AVX-VNNI or AMX, and falls back to Eigen's
convolutions elsewhere. On a 2-core AMD EPYC with AVX2 only, the demo config's training step
takes 228 ms with oneDNN and 534 ms without (the convolution gradients are 3x faster):
docs/history, "oneDNN on CPUs without AVX-512". TF_ENABLE_ONEDNN_OPTS=0 turns it off.
"""

import os

os.environ.setdefault("TF_USE_LEGACY_KERAS", "1")
os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "1")
os.environ.setdefault("TF_ENABLE_ONEDNN_OPTS", "1")

__version__ = "0.1.0"
