"""tf.data input pipelines behind the BatchQueue interface, with counted record drops.

Per reader:  records (serialized Examples, or dicts of their features) -> enumerate
             -> parallel map(decode, preprocess, check) -> skip records whose op raised (corrupt
             Example, truncated image) -> scan (running drop counts) -> filter invalid
             -> padded_batch
Per clone:   zip(readers) -> concatenate the readers' batches -> prefetch.

A record is dropped, never fatal, when its image cannot be decoded or the record cannot be parsed
("undecodable"), its transcript is empty after preprocessing ("empty_label"), or longer than the
limit ("too_long"). Records whose ops raise are skipped by tf.data's ignore_errors, which logs each
one; their number is recovered exactly from the enumerate indices (records are mapped in order), so
every drop is counted. Each kept example carries the running counts of its reader, and a batch's
counts are their maximum. A reader that drops `stall_limit` records in a row fails with a message
instead of spinning silently.
"""

from aster.core import preprocessor_text
from aster.core.standard_fields import InputDataFields as F
from aster.tf_setup import tf

DROP_REASONS = ("undecodable", "empty_label", "too_long")
# Keys of the batch dicts handed to the model.
BATCH_KEYS = (F.image, F.groundtruth_text, F.filename, F.lexicon, F.groundtruth_keypoints)
_DROPS = "_drop_counts"
_REASON = "_drop_reason"
_INDEX = "_record_index"
_KEYS = frozenset(BATCH_KEYS) | {_REASON, _INDEX}


def _check_example(tensor_dict, max_label_length, truncate_long_labels):
    """Returns (tensor_dict, reason): reason 0 keeps, 1 + DROP_REASONS.index(r) drops."""
    valid = tensor_dict.pop(F.valid, tf.constant(True))
    text = tensor_dict[F.groundtruth_text]
    length = preprocessor_text.label_length(text)
    too_long = tf.constant(False)
    if max_label_length > 0:
        if truncate_long_labels:
            text = preprocessor_text.truncate_label(text, max_label_length)
            tensor_dict[F.groundtruth_text] = text
        else:
            too_long = length > max_label_length
    # The first failing check names the reason.
    reason = tf.where(
        tf.logical_not(valid), 1, tf.where(tf.equal(length, 0), 2, tf.where(too_long, 3, 0))
    )
    return tensor_dict, reason


def _count_drops(stall_limit, name):
    """The scan function: running drop counts, and the stall guard."""

    def count(state, element):
        seen, counts, last_kept = state
        index = element[_INDEX]
        # Records 0 .. index-1 that never reached the scan raised in the map.
        raised = index - seen
        reason = element[_REASON]
        counts = counts + tf.one_hot(reason - 1, len(DROP_REASONS), dtype=tf.int64)
        kept = tf.equal(reason, 0)
        last_kept = tf.where(kept, index, last_kept)
        reported = counts + tf.one_hot(0, len(DROP_REASONS), dtype=tf.int64) * raised
        checks = []
        if stall_limit:
            message = (
                f"input reader {name}: {stall_limit} records in a row were dropped; check the "
                f"input path, the image data, the character set and max_label_length. Drops so "
                f"far ({', '.join(DROP_REASONS)}):"
            )
            checks.append(tf.debugging.Assert(index - last_kept < stall_limit, [message, reported]))
        with tf.control_dependencies(checks):
            element = dict(element)
            element[_DROPS] = tf.identity(reported)
        return (seen + 1, counts, last_kept), element

    return count


def example_dataset(
    records,
    decode_fn,
    preprocess_fn,
    max_label_length=0,
    truncate_long_labels=False,
    num_parallel_calls=1,
    stall_limit=0,
    name="0",
    uint8_images=False,
    report_tail_drops=False,
):
    """Decodes, preprocesses and checks records; drops invalid ones and counts the drops.

    Args:
      records: tf.data.Dataset of records (serialized Examples, or dicts of their features).
      decode_fn: record -> tensor dict (may include InputDataFields.valid).
      preprocess_fn: tensor dict -> tensor dict (augmentations, string filtering).
      max_label_length: longest transcript kept (characters); 0 means no limit.
      truncate_long_labels: cut long transcripts instead of dropping them.
      num_parallel_calls: parallel decode/preprocess calls.
      stall_limit: fail after this many consecutive drops (0: never; use it on repeating input).
      name: the reader's name in error messages.
      uint8_images: carry images as uint8 (rounded) to the batcher, which turns them back into
        float32: a quarter of the memory traffic. Only for images that stay in [0, 255]; the
        rounding moves a value by at most 0.5 of 255.
      report_tail_drops: for finite input: each example's counts include the drops up to the
        next kept example, so the last example's counts include drops at the very end of the
        data (otherwise they would never be reported).

    Returns:
      tf.data.Dataset of example dicts; each also holds _DROPS, [3] int64 running counts of this
      reader's drops (DROP_REASONS order) up to that example (see report_tail_drops).
    """

    def process(index, record):
        if report_tail_drops:
            record, is_end = record
        tensor_dict = preprocess_fn(decode_fn(record))
        tensor_dict, reason = _check_example(tensor_dict, max_label_length, truncate_long_labels)
        if report_tail_drops:
            reason = tf.where(is_end, -1, reason)
        tensor_dict[_REASON] = reason
        tensor_dict[_INDEX] = index
        if uint8_images:
            image = tf.clip_by_value(tf.round(tensor_dict[F.image]), 0.0, 255.0)
            tensor_dict[F.image] = tf.cast(image, tf.uint8)
        return {k: v for k, v in tensor_dict.items() if k in _KEYS}

    if report_tail_drops:
        # An empty record flagged as the end follows the data; it is decoded but never kept.
        end = tf.nest.map_structure(_empty, records.element_spec)
        records = records.map(lambda record: (record, False)).concatenate(
            tf.data.Dataset.from_tensors((end, True)))
    dataset = records.enumerate().map(
        process, num_parallel_calls=num_parallel_calls, deterministic=True
    )
    dataset = dataset.ignore_errors(log_warning=True)
    initial = (
        tf.constant(0, tf.int64),
        tf.zeros([len(DROP_REASONS)], tf.int64),
        tf.constant(-1, tf.int64),
    )
    dataset = dataset.scan(initial, _count_drops(stall_limit, name))
    if report_tail_drops:
        return _counts_from_next(dataset.filter(lambda d: d[_REASON] <= 0))
    return dataset.filter(lambda d: tf.equal(d[_REASON], 0))


def short_labels_first(examples, num_examples, max_label_length, stall_limit=0, name="0"):
    """Keeps only transcripts of at most max_label_length characters among the first examples.

    The first num_examples examples out are short ones (longer ones are skipped, not counted as
    drops: the running drop counts of later examples still cover every drop); after them every
    example passes. InputReader.length_curriculum on a training reader.

    Args:
      examples: a dataset from example_dataset.
      num_examples: examples to restrict (a reader's rows per step times the curriculum's steps);
        0 or less returns `examples` as it is.
      max_label_length: the limit in characters during the curriculum (at least 1).
      stall_limit: fail after this many consecutive skips (0: never).
      name: the reader's name in error messages.
    """
    if num_examples <= 0:
        return examples
    if max_label_length < 1:
        raise ValueError(f"max_label_length must be at least 1, got {max_label_length}")

    def step(state, example):
        taken, skipped = state
        length = tf.cast(preprocessor_text.label_length(example[F.groundtruth_text]), tf.int64)
        keep = tf.logical_or(taken >= num_examples, length <= max_label_length)
        skipped = tf.where(keep, tf.constant(0, tf.int64), skipped + 1)
        checks = []
        if stall_limit:
            message = (
                f"input reader {name}: {stall_limit} records in a row were longer than the "
                f"length curriculum's max_label_length ({max_label_length} characters)"
            )
            checks.append(tf.debugging.Assert(skipped < stall_limit, [message]))
        with tf.control_dependencies(checks):
            keep = tf.identity(keep)
        return (taken + tf.cast(keep, tf.int64), skipped), (example, keep)

    initial = (tf.constant(0, tf.int64), tf.constant(0, tf.int64))
    dataset = examples.scan(initial, step).filter(lambda example, keep: keep)
    return dataset.map(lambda example, keep: example)


def _empty(spec):
    """Zeros ("" for strings) of a tf.TensorSpec, unknown dimensions as 0."""
    return tf.zeros([d if d is not None else 0 for d in spec.shape.as_list()], spec.dtype)


def _counts_from_next(dataset):
    """Gives each kept example the counts of the next element (kept, or the end marker)."""
    spec = dataset.element_spec
    placeholder = {k: _empty(s) for k, s in spec.items()}

    def look_ahead(state, current):
        previous, has_previous = state
        out = dict(previous)
        out[_DROPS] = current[_DROPS]
        return (current, tf.constant(True)), (out, has_previous)

    dataset = dataset.scan((placeholder, tf.constant(False)), look_ahead)
    dataset = dataset.filter(lambda example, emit: emit)
    return dataset.map(
        lambda example, emit: {k: tf.ensure_shape(v, spec[k].shape) for k, v in example.items()}
    )


def batched(examples, batch_size, drop_remainder):
    """padded_batch of example dicts (images and keypoints padded with zeros to the batch max)."""
    if batch_size <= 0:
        raise ValueError(f"batch size must be positive, got {batch_size}")
    return examples.padded_batch(batch_size, drop_remainder=drop_remainder)


def float_images(batch):
    """The batch dict with its image as float32 (undoes example_dataset's uint8_images)."""
    out = dict(batch)
    out[F.image] = tf.cast(batch[F.image], tf.float32)
    return out


def batch_drop_counts(batch):
    """[3] int64 running drop counts of a batch from `batched` (the max over its examples)."""
    return tf.reduce_max(batch[_DROPS], axis=0)


def _pad_to(tensor, shape):
    """Zero-pads (empty-string pads) every axis but the first of tensor to `shape`."""
    rank = tensor.shape.rank
    if rank <= 1:
        return tensor
    pads = tf.stack([tf.zeros([rank], tf.int32), shape - tf.shape(tensor)], axis=1)
    pads = tf.tensor_scatter_nd_update(pads, [[0, 1]], [0])
    return tf.pad(tensor, pads)


def concat_batches(batches):
    """Concatenates the readers' batch dicts along the batch axis, padding other axes to the max.

    Returns:
      (batch dict with BATCH_KEYS, [3] int64 drop counts summed over the readers).
    """
    out = {}
    for key in BATCH_KEYS:
        parts = [b[key] for b in batches]
        if len(parts) > 1 and parts[0].shape.rank > 1:
            shapes = tf.stack([tf.shape(p) for p in parts])
            largest = tf.reduce_max(shapes, axis=0)
            padded = [_pad_to(p, largest) for p in parts]
            # Keep static sizes where every reader agrees (e.g. the resized image size).
            static = [
                dims[0] if len(set(dims)) == 1 else None
                for dims in zip(*[p.shape.as_list()[1:] for p in parts], strict=True)
            ]
            for p in padded:
                p.set_shape([None, *static])
            parts = padded
        out[key] = tf.concat(parts, axis=0) if len(parts) > 1 else parts[0]
    out = float_images(out)
    drops = tf.add_n([batch_drop_counts(b) for b in batches])
    return out, drops


class BatchQueue:
    """Serves training batches that mix several readers, one batch per dequeue() call.

    Each dequeue() gives one clone's batch: image [b, H, W, 3] float32 in [0, 255],
    groundtruth_text / filename / lexicon [b] string, groundtruth_keypoints [b, N] float32 (zero
    padded), with b the sum of the readers' per-clone batch sizes; reader i fills rows
    offset_i .. offset_i + b_i - 1. A training step dequeues once per clone: images_per_step.
    """

    def __init__(self, reader_examples, batch_sizes, prefetch_batches=10, drop_remainder=True,
                 num_clones=1):
        """Batches each reader, concatenates per step and prefetches.

        Args:
          reader_examples: list of datasets from example_dataset, one per reader.
          batch_sizes: list of per-clone batch sizes, one per reader.
          prefetch_batches: concatenated batches prepared ahead.
          drop_remainder: drop a reader's last partial batch (static batch size).
          num_clones: dequeue() calls per training step (one per model clone).

        Raises:
          ValueError: the lists differ in length or are empty, or a batch size is not positive.
        """
        if not reader_examples or len(reader_examples) != len(batch_sizes):
            raise ValueError(
                f"BatchQueue needs one batch size per reader; got {len(batch_sizes)} batch sizes "
                f"and {len(reader_examples)} readers"
            )
        self.batch_sizes = list(batch_sizes)
        self._num_clones = num_clones
        batches = [
            batched(ds, b, drop_remainder)
            for ds, b in zip(reader_examples, batch_sizes, strict=True)
        ]
        dataset = tf.data.Dataset.zip(tuple(batches)).map(lambda *bs: concat_batches(list(bs)))
        dataset = dataset.prefetch(max(1, int(prefetch_batches)))
        with tf.device("/device:CPU:0"):
            self._iterator = tf.data.make_one_shot_iterator(dataset)
            self._counts = tf.Variable(
                tf.zeros([len(DROP_REASONS)], tf.int64),
                trainable=False,
                collections=[tf.GraphKeys.LOCAL_VARIABLES],
                name="input_drop_counts",
                use_resource=True,
            )
        self.drop_counts = {r: self._counts[i] for i, r in enumerate(DROP_REASONS)}
        for reason, value in self.drop_counts.items():
            tf.summary.scalar(f"input/dropped_{reason}", value)

    @property
    def images_per_step(self):
        """Images one training step takes: one batch of sum(batch_sizes) per clone."""
        return sum(self.batch_sizes) * self._num_clones

    def dequeue(self):
        """Returns the next batch dict (call once per clone; each call is a different batch)."""
        with tf.device("/device:CPU:0"):
            batch, drops = self._iterator.get_next()
            update = self._counts.assign(tf.maximum(self._counts, drops))
            with tf.control_dependencies([update]):
                return {k: tf.identity(v) for k, v in batch.items()}
