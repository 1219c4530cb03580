"""The rules of a pipeline config: every check that needs no graph, written once.

    problems = config_checks.find_problems(config)        # aster-config validate, validate()
    config_checks.check(config.model, "model")              # what every builder calls first

find_problems() returns every problem of a whole TrainEvalPipelineConfig, each starting with the
field path; check() raises the first problem of one message (and everything under it) as a
ConfigError. Every builder calls check() on its message before building, so `aster-config
validate` and the builders accept and reject the same configs with the same message.

Where a rule lives:
- aster/utils/config_field_rules.py: one field's range, or two fields' order, by message type;
  applied to the effective value (set or default) wherever the message appears.
- aster/utils/config_type_rules.py: rules of one message type that need more than one field
  (required sub-messages, oneofs, cross-field conditions), registered with
  @_rules_for("TypeName").
- batch_size_problems(): the batch sizes against the readers and clones (the input builder calls
  it with the real clone count).
The core classes keep their own argument checks for Python callers; a config that passes these
rules never reaches them (tests/utils/config_agreement_test.py mutates the shipped configs to show
it).
"""

import glob
import os

from aster.core import charsets
from aster.utils import (
    config_field_rules,
    config_type_rules,
    recognition_evaluation,
    retired_fields,
)


class ConfigError(ValueError):
    """A pipeline config problem, naming the field path and the bad value."""


EVAL_TEXT_STEP = ("evaluation scores the transcript as written (eval_config.protocol filters "
                  "it); delete the step")


class _Problems(list):
    """Collects problems; helpers return whether the check passed."""

    def require(self, ok, path, message):
        if not ok:
            self.append(f"{path}: {message}")
        return ok

    def oneof(self, message, oneof, path):
        return self.require(message.WhichOneof(oneof) is not None, path, f"{oneof} is not set")

    def present(self, message, field, path):
        return self.require(message.HasField(field), f"{path}.{field}", "is not set")


def find_problems(config, check_files=False):
    """Returns the list of problems in a TrainEvalPipelineConfig (empty when valid).

    Args:
      config: pipeline_pb2.TrainEvalPipelineConfig.
      check_files: True: every reader's input paths must match files; "train": only the
        train_input_readers' (training needs no eval files); False: none.
    """
    problems = _Problems()
    problems.require(config.HasField("model"), "model", "is not set")
    if config.train_input_reader or config.HasField("train_config"):
        problems.present(config, "train_config", "")
        problems.extend(batch_size_problems(config.train_config.batch_size,
                                            len(config.train_input_reader)))
    _walk(config, "", problems)
    if check_files:
        for i, reader in enumerate(config.train_input_reader):
            _check_files(reader, f"train_input_reader[{i}]", problems)
    if check_files is True:
        for i, reader in enumerate(config.eval_input_reader):
            _check_files(reader, f"eval_input_reader[{i}]", problems)
    _check_eval(config, problems)
    _check_agreement(config, problems)
    return [p[1:] if p.startswith(".") else p for p in problems]


def check(message, path):
    """Raises ConfigError with the first problem of `message` and its sub-messages.

    Args:
      message: any config message (a Model, a Hyperparams, an InputReader, ...).
      path: its field path in the pipeline config, which starts every message.
    """
    problems = _Problems()
    _walk(message, path, problems)
    if problems:
        raise ConfigError(problems[0])


def batch_size_problems(batch_sizes, num_readers, num_clones=1):
    """Problems of train_config.batch_size: one entry per reader, each a multiple of the clones."""
    sizes = list(batch_sizes)
    problems = _Problems()
    n = len(sizes)
    problems.require(
        n == num_readers, "train_config.batch_size",
        f"has {n} entr{'y' if n == 1 else 'ies'} but there {'is' if num_readers == 1 else 'are'} "
        f"{num_readers} train_input_reader{'' if num_readers == 1 else 's'}")
    for i, size in enumerate(sizes):
        problems.require(size > 0 and size % num_clones == 0, f"train_config.batch_size[{i}]",
                         "must be > 0" + (f" and a multiple of num_clones ({num_clones})"
                                           if num_clones > 1 else "") + f", got {size}")
    return list(problems)


def _walk(message, path, problems):
    """Applies the type rules and field rules to `message` and every set sub-message."""
    # A retired field (what an old config loads without: config_migrations), a field's own range,
    # then the rules that combine fields.
    for field, value in message.ListFields():
        retired = retired_fields.lookup(message.DESCRIPTOR.name, field.name)
        if retired is not None:
            problems.append(f"{retired_fields.message(path, field.name, retired)} (got "
                            f"{retired_fields.show(field, value)}); remove it")
    config_field_rules.check_fields(message, path, problems)
    rule = config_type_rules.TYPE_RULES.get(message.DESCRIPTOR.name)
    if rule is not None:
        rule(message, path, problems)
    for field, value in message.ListFields():
        if field.message_type is None:
            continue
        f_path = f"{path}.{field.name}" if path else field.name
        if field.is_repeated:
            for i, item in enumerate(value):
                _walk(item, f"{f_path}[{i}]", problems)
        else:
            _walk(value, f_path, problems)





# --------------------------------------------------------------------------- facts stated twice


def check_agreement(config):
    """Raises ConfigError with the first disagreement between messages (what trainer.train
    checks before it builds anything; find_problems reports the same)."""
    problems = _Problems()
    _check_agreement(config, problems)
    if problems:
        raise ConfigError(problems[0])


def _check_agreement(config, problems):
    """Fields of different messages that state one fact must agree (each problem names both)."""
    which = config.model.WhichOneof("model_oneof")
    if which is None:
        return
    model, model_path = getattr(config.model, which), f"model.{which}"
    if not hasattr(model, "predictor"):
        return
    _check_input_size(config, problems)
    maps = config_type_rules.label_map_characters(model, model_path)
    if maps and config.HasField("train_config"):
        _check_train_filter(config.train_config, maps[0], problems)
    steps = [(f"{model_path}.predictor[{i}].attention_predictor.max_num_steps",
              p.attention_predictor.max_num_steps)
             for i, p in enumerate(model.predictor)
             if p.WhichOneof("predictor_oneof") == "attention_predictor"
             # a value its own field rule refuses is reported there, not here
             and p.attention_predictor.max_num_steps >= config_field_rules.MIN_DECODE_STEPS]
    if steps:
        field, fewest = min(steps, key=lambda s: s[1])
        for i, reader in enumerate(config.train_input_reader):
            limit = reader.max_label_length
            problems.require(
                0 < limit <= fewest - 1, f"train_input_reader[{i}].max_label_length",
                f"is {limit}{' (no limit)' if limit == 0 else ''} but {field} is {fewest}: a "
                f"decoder reads at most {fewest - 1} characters and its EOS, so set it to "
                f"{fewest - 1} or less (longer labels are dropped and counted, or cut with "
                "long_label_handling: TRUNCATE), or raise max_num_steps")


_RESIZE_STEPS = ("resize_image", "resize_image_random_method")


def _check_input_size(config, problems, train=True):
    """A fixed resize step of training (train=True) or evaluation makes the images the model's
    input size.

    A step to any other size leaves the model's preprocess() to resample them a second time (a
    32x160 model trained on images resized to 32x100 learns from upsampled ones).
    """
    which = config.model.WhichOneof("model_oneof")
    model = getattr(config.model, which) if which else None
    if not hasattr(model, "input_width"):
        return
    model_path = f"model.{which}"
    own = _Problems()  # a size its own rules refuse is reported there, not here
    _walk(model, model_path, own)
    if own:
        return
    size = (model.input_height, model.input_width)
    lists = []
    if train and config.HasField("train_config"):
        lists.append(("train_config.data_augmentation_options",
                      config.train_config.data_augmentation_options))
    if config.HasField("eval_config"):
        lists.append(("eval_config.data_preprocessing_steps",
                      config.eval_config.data_preprocessing_steps))
    for list_path, steps in lists:
        for i, step in enumerate(steps):
            kind = step.WhichOneof("preprocessing_step")
            if kind not in _RESIZE_STEPS:
                continue
            own = _Problems()
            _walk(step, "", own)
            if own:
                continue
            body = getattr(step, kind)
            target = (body.target_height, body.target_width)
            problems.require(
                target == size, f"{list_path}[{i}].{kind}",
                f"resizes to {target[0]}x{target[1]} but {model_path}.input_height x input_width "
                f"is {size[0]}x{size[1]}: the model would resample every image a second time; "
                f"make them the same size")


def _check_train_filter(train_config, label_map, problems):
    """The training string filter keeps exactly the characters the label maps read."""
    map_field, map_chars = label_map
    for i, step in enumerate(train_config.data_augmentation_options):
        if step.WhichOneof("preprocessing_step") != "string_filtering":
            continue
        field = f"train_config.data_augmentation_options[{i}].string_filtering.include_charset"
        if not step.string_filtering.HasField("include_charset"):
            continue
        try:
            chars = set(charsets.from_config(step.string_filtering.include_charset, field))
        except ValueError:
            continue  # the step's own rule reports it
        problems.require(chars == map_chars, field,
                         f"keeps other characters than {map_field} reads "
                         f"({config_type_rules.describe_difference(chars, map_chars)}): labels "
                         "would train on characters the model cannot output, or lose ones it "
                         "can; use the same character set")


def _check_files(reader, path, problems):
    kind = reader.WhichOneof("input_reader")
    body = getattr(reader, kind) if kind else None
    for name in config_type_rules.READER_PATHS:
        if body is None or not hasattr(body, name):
            continue
        for pattern in (p.strip() for p in getattr(body, name).split(",") if p.strip()):
            problems.require(bool(glob.glob(pattern)) or os.path.exists(pattern),
                             f"{path}.{kind}.{name}", f"{pattern!r} matches no file")



# --------------------------------------------------------------------------- evaluation

_PROTOCOLS = recognition_evaluation.SETTINGS  # what the evaluator accepts


def check_eval(config):
    """Raises ConfigError with the first problem of the evaluation settings (the evaluator's)."""
    problems = _Problems()
    _check_eval(config, problems)
    _check_input_size(config, problems, train=False)
    _walk(config.eval_config, "eval_config", problems)
    if problems:
        raise ConfigError(problems[0])


def _check_eval(config, problems):
    """What aster-eval would refuse, caught before training starts (eval_config is optional)."""
    for i, reader in enumerate(config.eval_input_reader):
        problems.require(not reader.HasField("length_curriculum"),
                         f"eval_input_reader[{i}].length_curriculum",
                         "applies to training readers only; remove it")
    if not config.HasField("eval_config"):
        return
    eval_config = config.eval_config
    for i, step in enumerate(eval_config.data_preprocessing_steps):
        problems.require(step.WhichOneof("preprocessing_step") != "string_filtering",
                         f"eval_config.data_preprocessing_steps[{i}].string_filtering",
                         EVAL_TEXT_STEP)
    problems.require(eval_config.protocol in _PROTOCOLS, "eval_config.protocol",
                     f"{eval_config.protocol} is not accepted; "
                     f"{recognition_evaluation.expected(_PROTOCOLS)}")
    names, readers = len(eval_config.dataset_name), len(config.eval_input_reader)
    problems.require(names <= readers, "eval_config.dataset_name",
                     f"has {names} entries but there are only {readers} eval_input_readers")

