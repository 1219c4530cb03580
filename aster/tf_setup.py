"""Prepares TensorFlow 2.21 for the project's TF1-style graph code. Import tf and slim from here.

    from aster.tf_setup import slim, tf

`tf` is `tensorflow.compat.v1` with eager execution disabled (the whole project builds graphs).
`slim` is tf-slim 1.1.0, which reaches for private TensorFlow symbols that moved after TF 2.15; this
module sets each one to its public equivalent once, before slim is used. It is the only place in
the project that touches private TensorFlow modules; tests/tf_setup_test.py fails if the bridge
stops working on a future TensorFlow.
"""

import os
import sys

from aster.utils import cli_logging  # imports no TensorFlow

# Must precede the first TensorFlow import anywhere in the process (aster/__init__ sets it too).
os.environ.setdefault("TF_USE_LEGACY_KERAS", "1")

# TensorFlow's C++ start-up lines (absl's notice, the CUDA probe) ignore TF_CPP_MIN_LOG_LEVEL:
# they are held back here and shown by the commands' --verbose (aster/utils/cli_logging.py). The
# GPU probe runs now, inside the block, because a failed cuInit is logged at the first one.
with cli_logging.quiet_native_stderr():
    import tensorflow as _tf2

    _tf2.config.list_physical_devices("GPU")

tf = _tf2.compat.v1
tf.disable_eager_execution()


def _variable(*args, **kwargs):
    """Stand-in for the removed private `variable_scope.variable` that tf-slim calls."""
    return tf.Variable(*args, **kwargs)


def _bridge_slim():
    """Sets the private TF symbols tf-slim 1.1.0 expects to their public equivalents."""
    from tensorflow.python.framework import ops
    from tensorflow.python.ops import array_ops, control_flow_ops, variable_scope

    fills = [
        (ops, "Tensor", _tf2.Tensor),
        (ops, "IndexedSlices", _tf2.IndexedSlices),
        (array_ops, "stack", _tf2.stack),
        (array_ops, "unstack", _tf2.unstack),
        (control_flow_ops, "cond", tf.cond),
        (control_flow_ops, "case", tf.case),
        (control_flow_ops, "while_loop", tf.while_loop),
        (control_flow_ops, "Assert", tf.Assert),
        (variable_scope, "variable", _variable),
    ]
    for module, name, value in fills:
        if not hasattr(module, name):
            setattr(module, name, value)
    # slim.batch_norm's Keras path lazy-loads tf_keras.legacy_tf_layers, which tf-keras 2.21 ships
    # as tf_keras.src.legacy_tf_layers.
    try:
        import tf_keras.src.legacy_tf_layers as legacy_layers
    except ImportError:  # pragma: no cover - depends on the installed tf-keras
        return
    sys.modules.setdefault("tf_keras.legacy_tf_layers", legacy_layers)
    for sub in ("normalization", "core", "convolutional", "pooling", "base"):
        full = f"tf_keras.src.legacy_tf_layers.{sub}"
        try:
            __import__(full)
        except ImportError:  # pragma: no cover
            continue
        sys.modules.setdefault(f"tf_keras.legacy_tf_layers.{sub}", sys.modules[full])


_bridge_slim()

import tf_slim as slim  # noqa: E402

__all__ = ["slim", "tf"]
