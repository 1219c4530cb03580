"""Reading, overriding, validating and saving pipeline configs.

    config = load_pipeline_config("configs/tiny.config")
    config = merge_overrides(config, "train_config { num_steps: 10 }",
                             ["train_input_reader[0].tf_record_input_reader.input_path=a.tfrecord"])
    validate(config)
    save_pipeline_config(config, train_dir)   # writes train_dir/pipeline.config

A config may name base configs (`base: "base/cpu_model_36.config"`, relative to the file): they
are loaded and merged first (the override rule below), then the file's own fields; the result has
no `base` left. Each file is migrated while it loads (aster/utils/config_migrations.py: retired
fields, an evaluation text step).

Every problem raises ConfigError (a ValueError) whose message names the field path and the bad
value, with a "did you mean" suggestion for misspelled field and enum names; never a raw protobuf
traceback.

Override forms:
- a text-proto snippet, merged field by field: a scalar replaces, a message merges recursively,
  and a repeated field named in the snippet replaces the whole list (not appended);
- dotted assignments `a.b.c=value`: `name[i]` indexes a repeated field (i == its length appends a
  new element), enums go by name, bools are true/false, a repeated scalar without an index takes a
  comma-separated list (`batch_size=16,16`), and a message field takes a text-proto body
  (`train_config.optimizer={adam_optimizer {}}`) that replaces it.
"""

import os
import tempfile

from google.protobuf import descriptor, text_format

from aster.protos import pipeline_pb2
from aster.utils import config_checks, config_migrations, config_text
from aster.utils.config_overrides import merge_messages, merge_overrides, set_field

__all__ = ["ConfigError", "PIPELINE_FILENAME", "config_to_text", "diff", "flatten",
           "load_pipeline_config", "merge_overrides", "parse_pipeline_config",
           "save_pipeline_config", "set_field", "validate"]

FD = descriptor.FieldDescriptor
PIPELINE_FILENAME = "pipeline.config"


# A pipeline config problem, naming the field path and the bad value (the builders raise it too).
ConfigError = config_checks.ConfigError


# --------------------------------------------------------------------------- reading and writing


def load_pipeline_config(path):
    """Reads a text-format TrainEvalPipelineConfig file, merged onto its `base` configs.

    Args:
      path: the config file.

    Returns:
      pipeline_pb2.TrainEvalPipelineConfig, with no `base` left (see pipeline.proto).

    Raises:
      ConfigError: the file or one of its bases is missing, unreadable or does not parse, or
        the bases form a cycle.
    """
    return _load(path, ())


def parse_pipeline_config(text, source="<config>", base_dir=None):
    """Parses text-format pipeline config text; see load_pipeline_config.

    Args:
      text: the config text.
      source: where it came from, for error messages.
      base_dir: the folder its `base` paths are relative to (default: the current directory).
    """
    return _with_bases(_parse(text, source), source, base_dir or os.getcwd(), ())


def _parse(text, source):
    config = pipeline_pb2.TrainEvalPipelineConfig()
    config_text.parse_text(text, config, source)
    config_migrations.migrate(config, source)
    return config


def _load(path, chain):
    real = os.path.realpath(path)
    if real in chain:
        cycle = " -> ".join([*chain[chain.index(real):], real])
        raise ConfigError(f"pipeline config {path!r}: its bases form a cycle: {cycle}")
    try:
        with open(path, encoding="utf-8") as f:
            text = f.read()
    except OSError as e:
        raise ConfigError(f"pipeline config {path!r} cannot be read: {e.strerror}") from e
    except UnicodeDecodeError as e:
        raise ConfigError(f"pipeline config {path!r} is not valid UTF-8: {e}") from e
    return _with_bases(_parse(text, path), path, os.path.dirname(real), (*chain, real))


def _with_bases(config, source, base_dir, chain):
    """`config` merged onto its bases (each loaded with its own), without `base`."""
    if not config.base:
        return config
    merged = pipeline_pb2.TrainEvalPipelineConfig()
    for base in config.base:
        base_path = os.path.join(base_dir, base)
        if not os.path.isfile(base_path):
            raise ConfigError(f"{source}: base {base!r} is not a file (looked for {base_path})")
        merge_messages(merged, _load(base_path, chain))
    config.ClearField("base")
    merge_messages(merged, config)
    return merged


def config_to_text(config):
    """Text format of a config; parse_pipeline_config(config_to_text(c)) == c."""
    return text_format.MessageToString(config, as_utf8=True)


def save_pipeline_config(config, path):
    """Writes a config atomically (temp file + rename), so a reader never sees half a file.

    Args:
      config: pipeline_pb2.TrainEvalPipelineConfig.
      path: a directory (the file is `<dir>/pipeline.config`) or a file path.

    Returns:
      The path written.
    """
    if os.path.isdir(path):
        path = os.path.join(path, PIPELINE_FILENAME)
    directory = os.path.dirname(os.path.abspath(path))
    os.makedirs(directory, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=directory, prefix=".pipeline-", suffix=".tmp")
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            f.write(config_to_text(config))
        os.replace(tmp, path)
    except BaseException:
        if os.path.exists(tmp):
            os.remove(tmp)
        raise
    return path


# --------------------------------------------------------------------------- validation and diff


def validate(config, check_files=False):
    """Checks a pipeline config before any graph is built.

    Args:
      config: pipeline_pb2.TrainEvalPipelineConfig.
      check_files: also require every input path / glob to match an existing file (True), or
        only those of the train_input_readers ("train").

    Raises:
      ConfigError: the first problem found, naming its field path and value.
    """
    problems = config_checks.find_problems(config, check_files=check_files)
    if problems:
        raise ConfigError(problems[0])


def flatten(message, prefix=""):
    """Maps every set leaf field of `message` to its value: {"train_config.num_steps": 10, ...}."""
    leaves = {}
    for field, value in message.ListFields():
        path = f"{prefix}.{field.name}" if prefix else field.name
        items = value if field.is_repeated else [value]
        for i, item in enumerate(items):
            item_path = f"{path}[{i}]" if field.is_repeated else path
            if field.type == FD.TYPE_MESSAGE:
                sub = flatten(item, item_path)
                leaves.update(sub if sub else {item_path: "{}"})
            elif field.type == FD.TYPE_ENUM:
                leaves[item_path] = field.enum_type.values_by_number[item].name
            else:
                leaves[item_path] = item
    return leaves


def diff(a, b):
    """Lists the leaf differences between two configs as (path, value_in_a, value_in_b).

    A value missing on one side is None there.
    """
    left, right = flatten(a), flatten(b)
    return [
        (path, left.get(path), right.get(path))
        for path in sorted(set(left) | set(right))
        if left.get(path) != right.get(path)
    ]
