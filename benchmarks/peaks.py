"""This machine's matmul peaks per precision, and a training step's fraction of its peak.

    peaks = measure_peaks()               # {"float32": GFLOP/s, "bfloat16": GFLOP/s or None}
    print(describe(peaks))                # "matmul peak (TF, 2048x2048, CPU): float32 104 ..."
    fraction = fraction_of_peak(images_per_sec, forward_flops, peaks, precision(config))

The peak is the median rate of a chain of size x size matmuls in TensorFlow on the CPU (one
session, every core); a run whose clone is on a GPU has no peak to compare with (None). bfloat16
is measured only where the CPU computes it natively (AVX-512 BF16 or AMX): the emulated rate
elsewhere is no peak anything runs at, and the trainer runs float32 there. Training FLOPs per
image are taken as TRAIN_FLOPS_PER_FORWARD x the forward FLOPs (forward + two backward
passes), the usual estimate.
"""

import statistics
import time

import common

TRAIN_FLOPS_PER_FORWARD = 3.0
SIZE = 2048


def matmul_peak(dtype="float32", size=SIZE, runs=5, iterations=10):
    """Median GFLOP/s of a size x size matmul chain of `dtype` in TensorFlow on this machine's
    CPU."""
    from aster.tf_setup import tf

    with tf.Graph().as_default(), tf.device("/cpu:0"):  # the CPU's peak, on a GPU machine too
        a = tf.Variable(tf.random.normal([size, size], stddev=0.01))
        b = tf.Variable(tf.random.normal([size, size], stddev=0.01))
        a, b = tf.cast(a, dtype), tf.cast(b, dtype)
        product = a
        for _ in range(iterations):
            product = tf.matmul(product, b)
        result = tf.reduce_sum(tf.cast(product, tf.float32))
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            sess.run(result)
            rates = []
            for _ in range(runs):
                start = time.perf_counter()
                sess.run(result)
                rates.append(2.0 * size**3 * iterations / (time.perf_counter() - start) / 1e9)
    return statistics.median(rates)


def measure_peaks():
    """{"float32": GFLOP/s, "bfloat16": GFLOP/s, or None where the CPU has no native bfloat16}."""
    from aster.core import session_options

    native = session_options.cpu_supports_bfloat16()
    return {"float32": matmul_peak("float32"),
            "bfloat16": matmul_peak("bfloat16") if native else None}


def describe(peaks):
    """One line naming each peak (the line benchmarks/record.py keeps)."""
    bf16 = (f"{peaks['bfloat16']:,.0f} GFLOP/s" if peaks.get("bfloat16") is not None
            else "not measured (no native bfloat16 on this CPU)")
    return (f"matmul peak (TF, {SIZE}x{SIZE}, CPU): float32 {peaks['float32']:,.0f} GFLOP/s, "
            f"bfloat16 {bf16}")


def precision(config, num_clones=1):
    """The precision the trainer runs `config` at here with the benchmarks' deployment
    (common.deploy_config): on the CPU "bfloat16" (train_config.mixed_precision on a CPU with native
    bfloat16) or "float32"; with the clone on a GPU "float16 (GPU)" (the same field selects the
    GPU mixed-precision pass) or "float32 (GPU)", which have no peak here (the peaks are the
    CPU's)."""
    from aster.utils import train_session

    deploy = common.deploy_config(num_clones)
    if train_session.clones_on_gpus(deploy):
        return ("float16" if config.train_config.mixed_precision else "float32") + " (GPU)"
    return "bfloat16" if train_session.cpu_bfloat16(deploy, config.train_config) else "float32"


def config_stats(config):
    """The model's parameters and forward FLOPs for one image (aster.utils.model_stats: TF
    profiler count, multiply and add counted separately)."""
    import functools

    from aster import inference
    from aster.builders import model_builder
    from aster.utils import model_stats

    height, width = inference.model_input_size(config.model)
    return model_stats.model_stats(functools.partial(model_builder.build, config.model),
                                   height, width)


def achieved_gflops(images_per_sec, flops_per_image):
    """Training GFLOP/s of a step rate, at TRAIN_FLOPS_PER_FORWARD x the forward FLOPs."""
    return images_per_sec * TRAIN_FLOPS_PER_FORWARD * flops_per_image / 1e9


def fraction_of_peak(images_per_sec, flops_per_image, peaks, run_precision):
    """Achieved training GFLOP/s over the peak of the run's precision (None if not measured)."""
    peak = peaks.get(run_precision)
    return achieved_gflops(images_per_sec, flops_per_image) / peak if peak else None
