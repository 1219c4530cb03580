"""Speed settings of a session's ConfigProto: thread pools, bfloat16 mixed precision, XLA JIT.

    config = session_options.configure(tf.ConfigProto(), intra_op_threads=0, inter_op_threads=0,
                                       bfloat16=True, xla_jit=False)

None of them changes the model's math beyond rounding:
* Thread pools: intra-op (threads inside one op, e.g. a convolution) and inter-op (ops run at the
  same time); 0 means one thread per core present (os.cpu_count()). The first session of a process
  fixes them for the whole process.
* bfloat16: Grappler's oneDNN auto mixed precision pass rewrites the graph so that matmuls,
  convolutions (forward and backward), batch norm and the element-wise ops between them run in
  bfloat16; variables, their updates and numerically sensitive ops (softmax cross-entropy, log,
  exp, reductions of the loss) stay float32, and every tensor fetched keeps its float32 dtype.
  Sigmoid and tanh (and their gradients) are added to the pass's float32 list, which it extends
  to the element-wise ops after them up to the next matmul: the LSTM cell state, the gates' products
  and the attention energies keep float32 precision over the time steps. On this CPU that costs
  nothing (bfloat16 element-wise ops convert every element; a traced paper-config step took 1644
  ms of op time with them in bfloat16 and 1484 ms in float32). The lists are the process
  environment variables TF_AUTO_MIXED_PRECISION_GRAPH_REWRITE_{ALLOWLIST,INFERLIST,CLEARLIST}_REMOVE
  and ..._DENYLIST_ADD (FLOAT32_LIST_VARS), which `configure` extends; the pass reads them
  whenever it rewrites a graph. benchmarks/bf16_gradient_error.py measures what keeping more op
  types in float32 does to the training gradients.
  The TPS sampling is kept out of the pass by computing it in float64 (spatial_transformer).
  Two more pieces serve this pass, in the graph the model builds: the LSTM products are kept
  apart from their bias add (decoder_cells.split_lstm_step: fused, oneDNN runs them on AVX-512
  instead of AMX), and the trainer gives few-tap convolutions filter gradients computed as matrix
  products (conv_gradients).
  Worth it only on CPUs with native bfloat16 (AVX-512 BF16 or AMX); elsewhere it is skipped with a
  warning (emulated bfloat16 is slower than float32).
  On GPU clones (gpu=True) the same option turns on Grappler's CUDA auto mixed precision pass
  instead: float16 (TensorFlow has no bfloat16 graph rewrite for GPUs), with the same float32 list,
  and the trainer scales the loss (dynamic loss scaling, see aster/utils/train_session.py) so that
  small float16 gradients do not underflow. No CPU-flag check applies there.
* XLA JIT: auto-clustering of the whole graph (global_jit_level ON_1). On CPUs TensorFlow only
  clusters when TF_XLA_FLAGS contains --tf_xla_cpu_global_jit, which `configure` adds to the
  environment (read when the first session is created).
"""

import logging
import os

from aster.tf_setup import tf

_LOG = logging.getLogger("aster.session_options")
BFLOAT16_CPU_FLAGS = ("avx512_bf16", "amx_bf16")
_XLA_CPU_FLAG = "--tf_xla_cpu_global_jit"
_LIST_PREFIX = "TF_AUTO_MIXED_PRECISION_GRAPH_REWRITE_"
FLOAT32_LIST_VARS = (*(f"{_LIST_PREFIX}{name}_REMOVE" for name in ("ALLOWLIST", "INFERLIST",
                                                                   "CLEARLIST")),
                     f"{_LIST_PREFIX}DENYLIST_ADD")
"""The pass's environment lists that keep an op in float32: it comes off whichever list it is on
(an op may be on one list only: an allow-list op such as MatMul put on the deny list alone makes
the pass fail with "Op lists have conflicting entries", and then it rewrites nothing, the whole
graph staying float32, as seen on TF 2.21) and goes on the deny list. Removing an op from a list
it is not on is harmless."""
FLOAT32_OPS = ("Sigmoid", "Tanh", "SigmoidGrad", "TanhGrad")
"""Ops the bfloat16 pass keeps in float32 on top of its own list (see the module docstring)."""


def cpu_flags(path="/proc/cpuinfo"):
    """The CPU feature flags of the first processor in /proc/cpuinfo (empty set if unreadable)."""
    try:
        with open(path, encoding="utf-8") as f:
            for line in f:
                if line.startswith("flags"):
                    return set(line.split(":", 1)[1].split())
    except OSError:
        pass
    return set()


def cpu_supports_bfloat16(flags=None):
    """Whether the CPU computes bfloat16 natively (AVX-512 BF16 or AMX BF16)."""
    flags = cpu_flags() if flags is None else flags
    return any(flag in flags for flag in BFLOAT16_CPU_FLAGS)


def configure(config, intra_op_threads=0, inter_op_threads=0, bfloat16=False, xla_jit=False,
              flags=None, gpu=False):
    """Sets the speed options on a ConfigProto in place and returns it.

    Args:
      config: tf.ConfigProto.
      intra_op_threads: int >= 0, threads inside one op; 0: os.cpu_count().
      inter_op_threads: int >= 0, ops run concurrently; 0: os.cpu_count().
      bfloat16: bool, turn on oneDNN bfloat16 auto mixed precision (if the CPU supports it).
      xla_jit: bool, XLA auto-clustering of the graph.
      flags: CPU flags to decide bfloat16 support (default: read /proc/cpuinfo); for tests.
      gpu: the model runs on GPUs: `bfloat16` selects the GPU float16 pass instead.

    Returns:
      config.

    Raises:
      ValueError: a negative thread count.
    """
    for name, value in (("intra_op_threads", intra_op_threads),
                        ("inter_op_threads", inter_op_threads)):
        if value < 0:
            raise ValueError(f"{name}: must be >= 0 (0 = one per core), got {value}")
    cores = os.cpu_count() or 1
    config.intra_op_parallelism_threads = intra_op_threads or cores
    config.inter_op_parallelism_threads = inter_op_threads or cores
    rewrite = config.graph_options.rewrite_options
    if bfloat16 and gpu:
        rewrite.auto_mixed_precision = type(rewrite).ON
    elif bfloat16 and not cpu_supports_bfloat16(flags):
        _LOG.warning("bfloat16 mixed precision requested but this CPU has none of %s; "
                     "running in float32", ", ".join(BFLOAT16_CPU_FLAGS))
        bfloat16 = False
    if bfloat16 and not gpu:
        rewrite.auto_mixed_precision_onednn_bfloat16 = type(rewrite).ON
    if xla_jit:
        config.graph_options.optimizer_options.global_jit_level = tf.OptimizerOptions.ON_1
    _set_process_environment(bfloat16, xla_jit)
    return config


def _set_process_environment(bfloat16, xla_jit):
    """The halves of the bfloat16 and XLA options that TensorFlow reads from os.environ.

    Why configure() writes the environment itself rather than leaving it to a set-up function of
    the command-line programs: these settings have no ConfigProto field (TensorFlow reads the
    bfloat16 pass's lists whenever Grappler rewrites a graph, and TF_XLA_FLAGS when the process
    creates its first session), and each completes an option configure() sets on the ConfigProto.
    Set apart, a caller (the trainer, a benchmark, a test) could get the bfloat16 pass without its
    float32 list, running the LSTM state in bfloat16, or XLA auto-clustering without the CPU flag,
    which does nothing. The writes only add missing entries, so calling configure() again is
    harmless.
    """
    if bfloat16:
        for name in FLOAT32_LIST_VARS:
            _add_to_env_list(name, FLOAT32_OPS)
    xla_flags = os.environ.get("TF_XLA_FLAGS", "")
    if xla_jit and _XLA_CPU_FLAG not in xla_flags:
        os.environ["TF_XLA_FLAGS"] = f"{xla_flags} {_XLA_CPU_FLAG}".strip()


def _add_to_env_list(name, items):
    """Appends the missing `items` to the comma-separated environment variable `name`."""
    present = [item for item in os.environ.get(name, "").split(",") if item]
    os.environ[name] = ",".join(present + [item for item in items if item not in present])


def bfloat16_enabled(config):
    """Whether `config` has the (CPU) bfloat16 auto mixed precision pass on."""
    rewrite = config.graph_options.rewrite_options
    return rewrite.auto_mixed_precision_onednn_bfloat16 == type(rewrite).ON


def gpu_float16_enabled(config):
    """Whether `config` has the GPU (CUDA) float16 auto mixed precision pass on."""
    rewrite = config.graph_options.rewrite_options
    return rewrite.auto_mixed_precision == type(rewrite).ON
