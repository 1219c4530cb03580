"""Bad input records: builders of each kind, and a runner through the real input pipeline.

    cases = bad_examples()           # [(name, serialized record bytes, kept?)]
    result = run_eval_pipeline(dir)  # Result: every good record kept, every bad one dropped+counted

Kinds: a record of garbage bytes, images of 1x1 and 10000x10 pixels, grayscale / RGBA / palette /
16-bit PNGs, a CMYK JPEG, a transcript that is not valid UTF-8, transcripts with control
characters or emoji, a decompression-bomb PNG (a few hundred bytes declaring 100000x100000
pixels), and a TFRecord file truncated in the middle of a record.
"""

import collections
import io
import struct
import zlib

import numpy as np
from PIL import Image

from aster.core.standard_fields import TfExampleFields as T
from aster.tf_setup import tf

Result = collections.namedtuple("Result", "case tried held figure failures")

Case = collections.namedtuple("Case", "name record kept")

# A decoded 12000x12000 bomb adds 0.4 GB as uint8 and 1.7 GB as float32 to the peak that the same
# pipelines reach without the bombs (0.6-1.1 GB, depending on the machine).
MAX_EXTRA_RSS_MB = 250


def extra_rss_mb(run):
    """What the runs with the bombs added to the peak RSS of the runs without them (MB)."""
    return run["max_rss_mb"] - run["baseline_rss_mb"]


def bombs_refused(run):
    """Whether the runs with the bombs stayed within MAX_EXTRA_RSS_MB of the runs without them."""
    return extra_rss_mb(run) < MAX_EXTRA_RSS_MB


def _encode(image, fmt, **kwargs):
    buffer = io.BytesIO()
    image.save(buffer, format=fmt, **kwargs)
    return buffer.getvalue()


def _rgb(width, height, seed=0):
    rng = np.random.default_rng(seed)
    return Image.fromarray(rng.integers(0, 256, size=(height, width, 3), dtype=np.uint8))


def _example(encoded, transcript, filename="x.png"):
    def b(value):
        return tf.train.Feature(bytes_list=tf.train.BytesList(value=[value]))

    text = transcript if isinstance(transcript, bytes) else transcript.encode("utf-8")
    feature = {T.image_encoded: b(encoded), T.image_format: b(b"png"),
               T.filename: b(filename.encode()), T.transcript: b(text)}
    return tf.train.Example(features=tf.train.Features(feature=feature)).SerializeToString()


def _png_chunk(kind, data):
    return (struct.pack(">I", len(data)) + kind + data +
            struct.pack(">I", zlib.crc32(kind + data) & 0xFFFFFFFF))


def bomb_png(width=100000, height=100000, complete=False):
    """A valid-looking PNG declaring width x height RGB pixels.

    Incomplete (default): a few hundred bytes whose IDAT holds the first rows of zeros; a decoder
    that trusts the header allocates width * height * 3 bytes before finding the data short.
    Complete: every row is there (all zeros, compressed about 1000:1), so it decodes for real.
    """
    header = _png_chunk(b"IHDR", struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0))
    compressor = zlib.compressobj(9)
    row = b"\0" * (3 * width + 1)
    # Compressed 256 rows at a time: the whole raw image (432 MB at 12000x12000) would otherwise
    # sit in this process's memory and hide whether the pipeline decoded the bomb (its peak RSS).
    left, parts = (height if complete else 4), []
    while left:
        block = min(left, 256)
        parts.append(compressor.compress(row * block))
        left -= block
    rows = b"".join(parts) + compressor.flush()
    return b"\x89PNG\r\n\x1a\n" + header + _png_chunk(b"IDAT", rows) + _png_chunk(b"IEND", b"")


_BOMB = []


def complete_bomb():
    """bomb_png(12000, 12000, complete=True), made once (about 0.4 MB)."""
    if not _BOMB:
        _BOMB.append(bomb_png(12000, 12000, complete=True))
    return _BOMB[0]


def sixteen_bit_png():
    pixels = (np.arange(8 * 30, dtype=np.uint16).reshape(8, 30) * 250).astype(np.uint16)
    image = Image.fromarray(pixels)
    assert image.mode.startswith("I;16"), image.mode
    return _encode(image, "PNG")


def cmyk_jpeg():
    return _encode(_rgb(30, 10).convert("CMYK"), "JPEG")


def bad_examples():
    """The per-record cases: (name, serialized record, whether the pipeline should keep it)."""
    good = _encode(_rgb(24, 8), "PNG")
    return [
        Case("garbage record bytes", bytes(range(256)) * 3, False),
        Case("garbage image bytes", _example(b"\x13\x37" * 100, "word"), False),
        Case("truncated PNG", _example(good[: len(good) // 2], "word"), False),
        Case("1x1 image", _example(_encode(_rgb(1, 1), "PNG"), "tiny"), True),
        Case("10000x10 image", _example(_encode(_rgb(10000, 10), "PNG"), "wide"), True),
        Case("grayscale PNG", _example(_encode(_rgb(30, 10).convert("L"), "PNG"), "gray"), True),
        Case("RGBA PNG", _example(_encode(_rgb(30, 10).convert("RGBA"), "PNG"), "rgba"), True),
        Case("palette PNG", _example(_encode(_rgb(30, 10).convert("P"), "PNG"), "palette"), True),
        Case("16-bit PNG", _example(sixteen_bit_png(), "deep"), True),
        Case("CMYK JPEG", _example(cmyk_jpeg(), "cmyk"), True),
        Case("transcript not UTF-8", _example(good, b"ab\xff\xfecd"), False),
        Case("transcript with control characters", _example(good, "a\x00b\x07c\n"), True),
        Case("transcript with emoji", _example(good, "caf\u00e9\U0001F600"), True),
        Case("empty transcript", _example(good, ""), False),
        Case("decompression bomb PNG (100000x100000)", _example(bomb_png(), "boom"), False),
        Case("decompression bomb PNG (20000x20000, header only)",
             _example(bomb_png(20000, 20000), "boom"), False),
        Case("decompression bomb PNG (12000x12000, complete, 432 MB decoded)",
             _example(complete_bomb(), "boom"), False),
    ]


def good_records(count, prefix="good"):
    return [_example(_encode(_rgb(24, 8, seed=i), "PNG"), f"{prefix}{i}") for i in range(count)]


def write_records(path, records, truncate_last=False):
    """Writes serialized records to one TFRecord file; optionally cuts the last record in half."""
    with tf.io.TFRecordWriter(str(path)) as writer:
        for record in records:
            writer.write(record)
    if truncate_last:
        data = open(path, "rb").read()
        last = 16 + len(records[-1])
        with open(path, "wb") as f:
            f.write(data[: len(data) - last // 2])
    return str(path)


# --------------------------------------------------------------------------- running the pipeline


def _config(paths, training):
    from google.protobuf import text_format

    from aster.protos import eval_pb2, input_reader_pb2, train_pb2

    reader = text_format.Merge(
        f'shuffle: false num_readers: 1 tf_record_input_reader {{ input_path: "{",".join(paths)}" }}',
        input_reader_pb2.InputReader())
    steps = "resize_image { target_height: 16 target_width: 48 }"
    if training:
        train = text_format.Merge(
            f"batch_size: 4 num_batch_queue_threads: 2 batch_queue_capacity: 8 "
            f"prefetch_queue_capacity: 2 data_augmentation_options {{ {steps} }}",
            train_pb2.TrainConfig())
        return reader, train
    return reader, text_format.Merge(f"data_preprocessing_steps {{ {steps} }}",
                                     eval_pb2.EvalConfig())


def write_dataset(directory, num_good=6, bombs=True):
    """Writes the bad cases between good records, and a file truncated mid-record.

    bombs=False leaves the decompression bombs out (the baseline of the peak-memory test).

    Returns:
      (paths, expected kept transcripts (bytes), expected number of drops).
    """
    cases = [case for case in bad_examples() if bombs or "bomb" not in case.name]
    records, kept, dropped = [], [], 0
    goods = good_records(num_good * len(cases))
    for i, case in enumerate(cases):
        records.extend(goods[i * num_good: (i + 1) * num_good])
        records.append(case.record)
        if case.kept:
            kept.append(tf.train.Example.FromString(case.record).features.feature[
                T.transcript].bytes_list.value[0])
        else:
            dropped += 1
    kept.extend(f"good{i}".encode() for i in range(len(goods)))
    main = write_records(f"{directory}/bad_cases.tfrecord", records)
    tail = good_records(4, prefix="tail")
    truncated = write_records(f"{directory}/truncated.tfrecord", tail, truncate_last=True)
    kept.extend(f"tail{i}".encode() for i in range(3))
    return [main, truncated], sorted(kept), dropped + 1


def run_eval_pipeline(directory, bombs=True):
    """One epoch through build_eval_batches; returns (kept transcripts, drop counts)."""
    from aster.builders import input_reader_builder

    paths, _, _ = write_dataset(directory, bombs=bombs)
    reader, eval_config = _config(paths, training=False)
    texts, counts = [], None
    with tf.Graph().as_default():
        batch, drops = input_reader_builder.build_eval_batches(reader, eval_config, 8)
        with tf.Session() as session:
            while True:
                try:
                    values, counts = session.run([batch, drops])
                except tf.errors.OutOfRangeError:
                    break
                texts.extend(values["groundtruth_text"].tolist())
    return sorted(texts), counts


def run_training_pipeline(directory, steps=40, bombs=True):
    """`steps` batches of the training BatchQueue over the bad data; returns (batches, counts)."""
    from aster.builders import input_reader_builder

    paths, _, _ = write_dataset(directory, bombs=bombs)
    reader, train_config = _config(paths, training=True)
    with tf.Graph().as_default():
        queue = input_reader_builder.build_batch_queue([reader], train_config, 1)
        batch = queue.dequeue()
        init = tf.local_variables_initializer()
        with tf.Session() as session:
            session.run(init)
            for _ in range(steps):
                values = session.run(batch)
                assert values["image"].shape == (4, 16, 48, 3)
            counts = session.run(queue.drop_counts)
    return steps, counts


def _peak_rss_mb():
    import resource

    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


if __name__ == "__main__":  # run in a subprocess by the tests: prints JSON with the peak RSS
    import json
    import sys
    import tempfile

    # The same pipelines without the bombs first: their peak is what TensorFlow, the graphs and
    # the queues take on this machine; the runs with the bombs may only add noise to it.
    with tempfile.TemporaryDirectory() as scratch:
        run_eval_pipeline(scratch, bombs=False)
        run_training_pipeline(scratch, bombs=False)
    baseline_rss_mb = _peak_rss_mb()
    with tempfile.TemporaryDirectory() as scratch:
        expected_texts, expected_drops = write_dataset(scratch)[1:]
        texts, eval_counts = run_eval_pipeline(scratch)
        steps, train_counts = run_training_pipeline(scratch)
    print(json.dumps({
        "expected_texts": [t.decode("utf-8", "replace") for t in expected_texts],
        "texts": [t.decode("utf-8", "replace") for t in texts],
        "expected_drops": expected_drops,
        "eval_drops": {k: int(v) for k, v in eval_counts.items()},
        "train_steps": steps,
        "train_drops": {k: int(v) for k, v in train_counts.items()},
        "baseline_rss_mb": baseline_rss_mb,
        "max_rss_mb": _peak_rss_mb(),
    }))
    sys.exit(0)
