"""Reliability: bad records are dropped and counted, training and evaluation keep going, and a
decompression bomb is refused from its header. Cases: faults_data.py."""

import io
import json
import os
import subprocess
import sys

import faults_data
import numpy as np
import pytest
from PIL import Image

from aster import inference
from aster.data_decoders import tf_example_decoder
from aster.tf_setup import tf

HERE = os.path.dirname(os.path.abspath(__file__))


@pytest.fixture(scope="module")
def pipeline_run():
    result = subprocess.run([sys.executable, os.path.join(HERE, "faults_data.py")],
                            capture_output=True, text=True, timeout=300, check=False,
                            env=dict(os.environ, TF_CPP_MIN_LOG_LEVEL="2"))
    assert result.returncode == 0, result.stderr[-3000:]
    return json.loads(result.stdout.strip().splitlines()[-1])


def test_eval_keeps_every_good_record_and_counts_every_bad_one(pipeline_run):
    assert pipeline_run["texts"] == pipeline_run["expected_texts"]
    assert sum(pipeline_run["eval_drops"].values()) == pipeline_run["expected_drops"]


def test_training_keeps_going_over_bad_records(pipeline_run):
    assert pipeline_run["train_steps"] == 40
    # 40 batches of 4 cover the file at least once: every bad record was met and counted.
    assert sum(pipeline_run["train_drops"].values()) >= pipeline_run["expected_drops"]


def test_bomb_is_refused_without_the_memory_it_declares(pipeline_run):
    assert faults_data.bombs_refused(pipeline_run), pipeline_run


def _run(tensor):
    with tf.Session() as session:
        return session.run(tensor)


def _encoded(fmt, size=(30, 10), mode="RGB"):
    buffer = io.BytesIO()
    Image.new(mode, size).save(buffer, format=fmt)
    return buffer.getvalue()


@pytest.mark.parametrize("fmt", ["PNG", "JPEG", "GIF", "BMP"])
def test_declared_pixels_reads_the_header_of_each_format(fmt):
    with tf.Graph().as_default():
        assert _run(tf_example_decoder.declared_pixels(_encoded(fmt, (37, 11)))) == 37 * 11


def test_declared_pixels_of_a_bomb_and_of_garbage():
    with tf.Graph().as_default():
        assert _run(tf_example_decoder.declared_pixels(faults_data.bomb_png())) == 10**10
        assert _run(tf_example_decoder.declared_pixels(b"not an image")) == 0
        assert _run(tf_example_decoder.declared_pixels(b"")) == 0


def test_decoder_marks_a_bomb_invalid_without_decoding_it():
    with tf.Graph().as_default():
        image, valid = tf_example_decoder.decode_image_or_placeholder(faults_data.complete_bomb())
        image, valid = _run([image, valid])
    assert not valid and image.shape == (1, 1, 3)


@pytest.mark.parametrize("text,ok", [(b"abc", True), ("caf\u00e9\U0001F600".encode(), True),
                                     (b"a\x00b", True), (b"ab\xff", False), (b"\xc3", False),
                                     ("\ufffd".encode(), True)])
def test_is_utf8(text, ok):
    with tf.Graph().as_default():
        assert bool(_run(tf_example_decoder.is_utf8(tf.constant(text)))) == ok


def test_export_decode_refuses_a_bomb_with_a_message():
    with tf.Graph().as_default():
        images = inference.decode_and_resize(tf.constant([faults_data.bomb_png()]), 8, 16)
        with pytest.raises(tf.errors.InvalidArgumentError, match="pixels; refused"):
            _run(images)
        ok = inference.decode_and_resize(tf.constant([_encoded("PNG")]), 8, 16)
        assert _run(ok).shape == (1, 8, 16, 3)


def test_demo_refuses_a_bomb_file(tmp_path):
    bomb = tmp_path / "bomb.png"
    bomb.write_bytes(faults_data.complete_bomb())
    good = tmp_path / "good.png"
    Image.fromarray(np.zeros((10, 30, 3), np.uint8)).save(good)
    images, errors = inference.read_image_files([str(bomb), str(good)])
    assert [p for p, _ in images] == [str(good)]
    assert len(errors) == 1 and "bomb.png" in errors[0] and "more than" in errors[0]
