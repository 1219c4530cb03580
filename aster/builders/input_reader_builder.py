"""Builds the training BatchQueue and the evaluation batches from InputReader messages.

    batch_queue = build_batch_queue(pipeline.train_input_reader, pipeline.train_config, num_clones)
    batch = batch_queue.dequeue()           # once per clone
    batch_queue.drop_counts                 # {"undecodable", "empty_label", "too_long"} int64

    batch, drop_counts = build_eval_batches(pipeline.eval_input_reader[0], pipeline.eval_config, 32)

Field mapping (per reader): tf_record_input_reader.input_path / lmdb_input_reader.path -> files or
databases (comma-separated, glob patterns); num_readers -> TFRecord files read interleaved, or
parallel LMDB reads; shuffle -> TFRecord: the file order and a record shuffle buffer of
queue_capacity records; LMDB: a permutation of all records each epoch (no buffer needed);
num_epochs -> passes (0 = forever; evaluation always reads one); max_label_length and
long_label_handling -> the label limit; length_curriculum (training only) -> a shorter limit for
the first steps (batcher.short_labels_first); shuffle_seed -> the seed of the shuffles (a run
resumed at step S > 0 uses resume_seed(shuffle_seed, S): see resumed_readers).
From train_config: batch_size[i] / num_clones -> reader i's rows in each clone's batch;
num_batch_queue_threads -> parallel decode/augment calls per reader; batch_queue_capacity ->
decoded examples buffered per reader ahead of batching; prefetch_queue_capacity -> batches
prepared ahead.
"""

import logging

import numpy as np

from aster.builders import preprocessor_builder
from aster.core import batcher, preprocessor
from aster.data_decoders.tf_example_decoder import TfExampleDecoder
from aster.protos import input_reader_pb2
from aster.readers import lmdb_dataset, paths, tfrecord_reader
from aster.tf_setup import tf
from aster.utils import config_checks

# Consecutive drops after which a repeating training reader fails instead of spinning.
STALL_LIMIT = 10000
_LOG = logging.getLogger("aster.input_reader_builder")


def _build_tf_record_input_reader(config, field_path, shuffle, num_epochs, seed):
    reader = config.tf_record_input_reader
    files = paths.expand_paths(
        reader.input_path, f"{field_path}.tf_record_input_reader.input_path"
    )
    records = tfrecord_reader.interleaved_records(
        files, config.num_readers, shuffle=shuffle, num_epochs=num_epochs, seed=seed
    )
    if shuffle and config.queue_capacity > 1:
        records = records.shuffle(config.queue_capacity, seed=seed)
    return records


def _build_lmdb_input_reader(config, field_path, shuffle, num_epochs, seed):
    databases = paths.expand_paths(
        config.lmdb_input_reader.path, f"{field_path}.lmdb_input_reader.path", "LMDB database",
        directories=True,
    )
    try:
        return lmdb_dataset.lmdb_records(
            databases, config.num_readers, shuffle=shuffle, num_epochs=num_epochs, seed=seed
        )
    except ValueError as e:
        raise ValueError(f"{field_path}.lmdb_input_reader.path: {e}") from e


_BUILDERS = {
    "tf_record_input_reader": _build_tf_record_input_reader,
    "lmdb_input_reader": _build_lmdb_input_reader,
}


def resume_seed(shuffle_seed, global_step):
    """The shuffle seed of a run starting at global_step: shuffle_seed itself at step 0.

    The tf.data iterator's position is not saved with the checkpoints, so a seeded run restarted
    at step S > 0 would replay its first batches; it shuffles with a seed mixed from shuffle_seed
    and S instead: a fresh order, the same for every restart of that seed at S. 0 (no seed) stays 0.

    Args:
      shuffle_seed: InputReader.shuffle_seed (uint32; 0: a random order every run).
      global_step: the step the run restores (0: a fresh run).

    Returns:
      int in [0, 2**32): 0 only when shuffle_seed is 0.
    """
    if not shuffle_seed or not global_step:
        return int(shuffle_seed)
    mixed = np.random.SeedSequence([int(shuffle_seed), int(global_step)]).generate_state(1)[0]
    return int(mixed) or 1


def resumed_readers(input_reader_configs, global_step):
    """Copies of the InputReaders as a run starting at global_step reads them.

    Each seeded one shuffles with resume_seed(its shuffle_seed, global_step), and a
    length_curriculum keeps only the steps still ahead (steps - global_step, at least 0). The
    trainer builds its input from these (the saved pipeline.config keeps the original values).
    """
    readers = []
    for config in input_reader_configs:
        copy = input_reader_pb2.InputReader()
        copy.CopyFrom(config)
        if config.shuffle_seed:
            copy.shuffle_seed = resume_seed(config.shuffle_seed, global_step)
        if config.length_curriculum.steps:
            copy.length_curriculum.steps = max(0, config.length_curriculum.steps - global_step)
        readers.append(copy)
    return readers


def build_records(config, field_path="input_reader", shuffle=None, num_epochs=None):
    """A dataset of the records of one InputReader, for TfExampleDecoder.decode.

    Records are serialized tf.train.Examples (TFRecord) or dicts of their features (LMDB).

    Args:
      config: input_reader_pb2.InputReader.
      field_path: the reader's path in the pipeline config, for error messages.
      shuffle, num_epochs: override the config's values when not None.

    Raises:
      ValueError: the input_reader oneof is unset or external, a path matches nothing, or an LMDB
        database cannot be read (the message names the field and the database).
    """
    if not isinstance(config, input_reader_pb2.InputReader):
        raise ValueError(f"{field_path}: expected an InputReader message, got {type(config)}")
    config_checks.check(config, field_path)
    name = config.WhichOneof("input_reader")
    shuffle = config.shuffle if shuffle is None else shuffle
    num_epochs = config.num_epochs if num_epochs is None else num_epochs
    seed = config.shuffle_seed or None
    return _BUILDERS[name](config, field_path, shuffle, num_epochs, seed)


def build_examples(config, steps, field_path="input_reader", training=True, num_parallel_calls=1):
    """Decoded, preprocessed, checked examples of one reader (see batcher.example_dataset)."""
    records = build_records(
        config,
        field_path,
        shuffle=None if training else False,
        num_epochs=None if training else 1,
    )
    decoder = TfExampleDecoder()
    handling = input_reader_pb2.InputReader
    return batcher.example_dataset(
        records,
        decoder.decode,
        lambda tensor_dict: preprocessor.preprocess(tensor_dict, steps),
        max_label_length=config.max_label_length,
        truncate_long_labels=config.long_label_handling == handling.TRUNCATE,
        num_parallel_calls=num_parallel_calls,
        stall_limit=STALL_LIMIT if training and config.num_epochs == 0 else 0,
        name=field_path,
        uint8_images=preprocessor.keeps_pixel_range(steps),
        report_tail_drops=not training,
    )


def per_clone_batch_sizes(batch_sizes, num_readers, num_clones):
    """Splits train_config.batch_size across clones.

    Raises:
      ValueError: count mismatch with the readers, a size not positive or not divisible.
    """
    if num_clones < 1:
        raise ValueError(f"num_clones must be at least 1, got {num_clones}")
    problems = config_checks.batch_size_problems(batch_sizes, num_readers, num_clones)
    if problems:
        raise config_checks.ConfigError(problems[0])
    return [size // num_clones for size in batch_sizes]


def _short_labels_first(examples, config, rows_per_step, path):
    """Applies the reader's length_curriculum (its steps counted from this run's first step)."""
    curriculum = config.length_curriculum
    if not curriculum.steps:
        return examples
    _LOG.info("%s: only transcripts of at most %d characters for the next %d steps",
              path, curriculum.max_label_length, curriculum.steps)
    return batcher.short_labels_first(
        examples, curriculum.steps * rows_per_step, curriculum.max_label_length,
        stall_limit=STALL_LIMIT, name=f"{path}.length_curriculum",
    )


def build_batch_queue(input_reader_configs, train_config, num_clones=1):
    """The training BatchQueue mixing every train_input_reader.

    Args:
      input_reader_configs: repeated InputReader (pipeline.train_input_reader).
      train_config: train_pb2.TrainConfig (batch_size, data_augmentation_options, queue sizes).
      num_clones: model clones; each dequeue() gives one clone's batch.

    Returns:
      batcher.BatchQueue.

    Raises:
      ValueError: no readers, batch sizes that do not match the readers or clones, a bad reader
        or preprocessing step.
    """
    configs = list(input_reader_configs)
    if not configs:
        # Validation accepts an eval-only config; training needs a reader.
        raise config_checks.ConfigError(
            "train_input_reader: there is none; add one per training dataset")
    sizes = per_clone_batch_sizes(train_config.batch_size, len(configs), num_clones)
    steps = preprocessor_builder.build_steps(train_config.data_augmentation_options)
    threads = max(1, train_config.num_batch_queue_threads)
    readers = []
    for i, config in enumerate(configs):
        path = f"train_input_reader[{i}]"
        examples = build_examples(config, steps, path, training=True, num_parallel_calls=threads)
        examples = _short_labels_first(examples, config, sizes[i] * num_clones, path)
        if train_config.batch_queue_capacity > 0:
            examples = examples.prefetch(train_config.batch_queue_capacity)
        readers.append(examples)
    return batcher.BatchQueue(
        readers, sizes, prefetch_batches=train_config.prefetch_queue_capacity, drop_remainder=True,
        num_clones=num_clones,
    )


def build_eval_batches(
    input_reader_config, eval_config, batch_size, field_path="eval_input_reader"
):
    """One pass over an evaluation reader in record order, in batches.

    Args:
      input_reader_config: input_reader_pb2.InputReader (shuffle and num_epochs are ignored).
      eval_config: eval_pb2.EvalConfig (data_preprocessing_steps).
      batch_size: examples per batch; the last batch may be smaller.
      field_path: the reader's path in the config, for error messages.

    Returns:
      (batch dict with batcher.BATCH_KEYS, {reason: int64 scalar} drop counts up to and including
      this batch; fetch them in the same session.run as the batch). The end of the data raises
      tf.errors.OutOfRangeError.

    Raises:
      ValueError: a bad reader, step or batch size.
    """
    steps = preprocessor_builder.build_steps(eval_config.data_preprocessing_steps,
                                             "eval_config.data_preprocessing_steps")
    examples = build_examples(
        input_reader_config,
        steps,
        field_path,
        training=False,
        num_parallel_calls=tf.data.experimental.AUTOTUNE,
    )
    dataset = batcher.batched(examples, batch_size, drop_remainder=False).prefetch(2)
    with tf.device("/device:CPU:0"):
        batch = tf.data.make_one_shot_iterator(dataset).get_next()
        counts = batcher.batch_drop_counts(batch)
    out = batcher.float_images({k: batch[k] for k in batcher.BATCH_KEYS})
    return out, {r: counts[i] for i, r in enumerate(batcher.DROP_REASONS)}
