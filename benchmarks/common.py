"""Shared by the benchmark scripts: the machine's description, where RESULTS.md is, the deployment
they train with, and the generated inputs (random-noise PNG images, alone or in a TFRecord of word
examples).

Scripts run as `python benchmarks/<name>.py`, so this module imports as `common`.
"""

import io
import os
import platform

import numpy as np

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
RESULTS = os.path.join(ROOT, "benchmarks", "RESULTS.md")


def cpu_model():
    """The CPU's model name from /proc/cpuinfo (or platform's guess)."""
    try:
        with open("/proc/cpuinfo", encoding="utf-8") as f:
            for line in f:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or "unknown CPU"


def machine():
    """Returns (description, one-minute load average). The description names the oneDNN setting
    (aster/__init__.py turns oneDNN on unless TF_ENABLE_ONEDNN_OPTS says otherwise)."""
    load = os.getloadavg()[0] if hasattr(os, "getloadavg") else float("nan")
    onednn = os.environ.get("TF_ENABLE_ONEDNN_OPTS", "1")
    return (f"{cpu_model()}, {os.cpu_count()} cores, Python {platform.python_version()}, "
            f"TF_ENABLE_ONEDNN_OPTS={onednn}"), load


def bfloat16_assignment(on):
    """The config assignment that trains in bfloat16 (on) or float32, whatever the config says
    (the demo config trains in bfloat16)."""
    return f"train_config.mixed_precision={'true' if on else 'false'}"


def deploy_config(num_clones=1):
    """The deployment the benchmarks train with: one clone on the machine's default device (GPU:0
    where it has a GPU), several as logical CPU devices."""
    from aster.utils import model_deploy

    return model_deploy.DeploymentConfig(num_clones=num_clones, clone_on_cpu=num_clones > 1)


def random_pngs(count, height, width, seed=0):
    """`count` PNG images (bytes) of uniform random RGB noise, height x width, drawn in order
    from one generator seeded with `seed` (the same images every run)."""
    from PIL import Image

    rng = np.random.default_rng(seed)
    images = []
    for _ in range(count):
        buffer = io.BytesIO()
        Image.fromarray(rng.integers(0, 255, (height, width, 3), dtype=np.uint8)).save(buffer,
                                                                                       "PNG")
        images.append(buffer.getvalue())
    return images


def write_random_records(path, transcripts, height, width, seed=0):
    """A TFRecord of random_pngs examples, one per transcript (filename "<i>.png"); returns path."""
    from aster.tools import tfrecord_utils

    images = random_pngs(len(transcripts), height, width, seed)
    examples = [tfrecord_utils.make_example(image, text, "png", filename=f"{i}.png")
                for i, (image, text) in enumerate(zip(images, transcripts, strict=True))]
    tfrecord_utils.write_tfrecords(examples, path)
    return path
