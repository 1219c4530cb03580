"""Checks of a pipeline config that need no graph: required pieces, ranges, cross-field rules.

find_problems() returns human-readable problems, each starting with the field path; config_util
.validate() raises the first one as a ConfigError. Builders still check what only they can see.
"""

import glob
import os
import re

from aster.core import charsets

_TPS_PATTERNS = ("identity", "slope", "sine")
_TPS_ACTIVATIONS = ("none", "sigmoid")


class _Problems(list):
    """Collects problems; helpers return whether the check passed."""

    def require(self, ok, path, message):
        if not ok:
            self.append(f"{path}: {message}")
        return ok

    def oneof(self, message, oneof, path):
        return self.require(message.WhichOneof(oneof) is not None, path, f"{oneof} is not set")

    def positive(self, value, path):
        return self.require(value > 0, path, f"must be > 0, got {value}")

    def in_range(self, value, low, high, path):
        return self.require(low <= value <= high, path, f"must be in [{low}, {high}], got {value}")


def find_problems(config, check_files=False):
    """Returns the list of problems in a TrainEvalPipelineConfig (empty when valid).

    Args:
      config: pipeline_pb2.TrainEvalPipelineConfig.
      check_files: True: every reader's input paths must match files; "train": only the
        train_input_readers' (training needs no eval files); False: none.
    """
    problems = _Problems()
    if config.HasField("model"):
        _check_model(config.model, "model", problems)
    else:
        problems.append("model: is not set")
    if config.HasField("train_config") or config.train_input_reader:
        _check_train(config, problems)
    for i, reader in enumerate(config.train_input_reader):
        _check_reader(reader, f"train_input_reader[{i}]", problems, bool(check_files))
    for i, reader in enumerate(config.eval_input_reader):
        _check_reader(reader, f"eval_input_reader[{i}]", problems, check_files is True)
    for i, step in enumerate(config.eval_config.data_preprocessing_steps):
        _check_step(step, f"eval_config.data_preprocessing_steps[{i}]", problems)
    _check_eval(config, problems)
    _check_fields(config, "", problems)
    return list(problems)


# --------------------------------------------------------------------------- model


def _check_model(model, path, problems):
    if not problems.oneof(model, "model_oneof", path):
        return
    name = model.WhichOneof("model_oneof")
    recognition = getattr(model, name)
    path = f"{path}.{name}"
    problems.positive(recognition.input_height, f"{path}.input_height")
    problems.positive(recognition.input_width, f"{path}.input_width")
    if recognition.HasField("spatial_transformer"):
        _check_stn(recognition.spatial_transformer, f"{path}.spatial_transformer", problems)
    if problems.require(recognition.HasField("feature_extractor"), f"{path}.feature_extractor",
                        "is not set"):
        _check_feature_extractor(recognition.feature_extractor, f"{path}.feature_extractor",
                                 problems)
    problems.require(len(recognition.predictor) > 0, f"{path}.predictor", "needs at least one")
    names = [p.name for p in recognition.predictor]
    for i, predictor in enumerate(recognition.predictor):
        p_path = f"{path}.predictor[{i}]"
        problems.require(names.count(predictor.name) == 1, f"{p_path}.name",
                         f"{predictor.name!r} is used by more than one predictor")
        _check_predictor(predictor, p_path, problems)
    if recognition.predictor:
        problems.require(not all(p.auxiliary for p in recognition.predictor),
                         f"{path}.predictor", "every predictor is auxiliary; at least one must "
                         "be decoded")
    if recognition.keypoint_supervision:
        problems.require(recognition.HasField("spatial_transformer"),
                         f"{path}.keypoint_supervision",
                         "needs a spatial_transformer whose control points it supervises")
        problems.require(recognition.HasField("regression_loss"), f"{path}.regression_loss",
                         "is required when keypoint_supervision is true")


def _check_stn(stn, path, problems):
    if problems.require(stn.HasField("convnet"), f"{path}.convnet", "is not set"):
        problems.oneof(stn.convnet, "convnet_oneof", f"{path}.convnet")
    for name in ("localization_h", "localization_w", "output_h", "output_w"):
        problems.positive(getattr(stn, name), f"{path}.{name}")
    k = stn.num_control_points
    problems.require(k >= 6 and k % 2 == 0, f"{path}.num_control_points",
                     f"must be an even number >= 6, got {k}")
    problems.in_range(stn.margin_x, 0.0, 0.49, f"{path}.margin_x")
    problems.in_range(stn.margin_y, 0.0, 0.49, f"{path}.margin_y")
    problems.require(stn.init_bias_pattern in _TPS_PATTERNS, f"{path}.init_bias_pattern",
                     f"{stn.init_bias_pattern!r} is not one of {list(_TPS_PATTERNS)}")
    problems.require(stn.activation in _TPS_ACTIVATIONS, f"{path}.activation",
                     f"{stn.activation!r} is not one of {list(_TPS_ACTIVATIONS)}")


def _check_feature_extractor(extractor, path, problems):
    if problems.require(extractor.HasField("convnet"), f"{path}.convnet", "is not set"):
        problems.oneof(extractor.convnet, "convnet_oneof", f"{path}.convnet")
    for i, rnn in enumerate(extractor.bidirectional_rnn):
        r_path = f"{path}.bidirectional_rnn[{i}]"
        _check_rnn_cell(rnn.fw_bw_rnn_cell, f"{r_path}.fw_bw_rnn_cell", problems)
        problems.require(rnn.num_output_units >= 0, f"{r_path}.num_output_units",
                         f"must be >= 0, got {rnn.num_output_units}")
        if rnn.num_output_units > 0:
            problems.require(rnn.HasField("fc_hyperparams"), f"{r_path}.fc_hyperparams",
                             "is required when num_output_units > 0")


def _check_rnn_cell(cell, path, problems):
    if problems.oneof(cell, "rnn_cell_oneof", path):
        kind = cell.WhichOneof("rnn_cell_oneof")
        problems.positive(getattr(cell, kind).num_units, f"{path}.{kind}.num_units")


def _check_predictor(predictor, path, problems):
    if not problems.oneof(predictor, "predictor_oneof", path):
        return
    kind = predictor.WhichOneof("predictor_oneof")
    body = getattr(predictor, kind)
    path = f"{path}.{kind}"
    problems.positive(body.beam_width, f"{path}.beam_width")
    if problems.require(body.HasField("label_map"), f"{path}.label_map", "is not set"):
        _check_label_map(body.label_map, f"{path}.label_map", problems)
    if kind != "attention_predictor":
        return
    _check_rnn_cell(body.rnn_cell, f"{path}.rnn_cell", problems)
    problems.positive(body.num_attention_units, f"{path}.num_attention_units")
    problems.positive(body.max_num_steps, f"{path}.max_num_steps")
    problems.require(body.length_penalty >= 0, f"{path}.length_penalty",
                     f"must be >= 0, got {body.length_penalty}")
    problems.require(body.label_map.label_offset >= 2, f"{path}.label_map.label_offset",
                     "must be >= 2: labels 0 and 1 are GO and EOS for attention decoders")
    if problems.require(body.HasField("loss"), f"{path}.loss", "is not set"):
        problems.oneof(body.loss, "loss_oneof", f"{path}.loss")


def _check_label_map(label_map, path, problems):
    problems.require(label_map.label_offset >= 0, f"{path}.label_offset",
                     f"must be >= 0, got {label_map.label_offset}")
    _check_charset(label_map.character_set, f"{path}.character_set", problems)


def _check_charset(charset, path, problems):
    source = charset.WhichOneof("source_oneof")
    try:
        if source == "text_string":
            charsets.from_text_string(charset.text_string, f"{path}.text_string")
        elif source == "text_file":  # part of the model's definition: needed to build it
            charsets.from_text_file(charset.text_file)
    except ValueError as e:
        message = str(e)
        problems.append(message if message.startswith(path) else f"{path}.{source}: {message}")


# --------------------------------------------------------------------------- training and data


def _check_train(config, problems):
    train = config.train_config
    readers = len(config.train_input_reader)
    problems.require(
        len(train.batch_size) == readers, "train_config.batch_size",
        f"has {len(train.batch_size)} entr{'y' if len(train.batch_size) == 1 else 'ies'} "
        f"but there {'is' if readers == 1 else 'are'} {readers} train_input_reader"
        f"{'' if readers == 1 else 's'}",
    )
    for i, size in enumerate(train.batch_size):
        problems.positive(size, f"train_config.batch_size[{i}]")
    for name in ("batch_queue_capacity", "num_batch_queue_threads", "prefetch_queue_capacity"):
        problems.positive(getattr(train, name), f"train_config.{name}")
    problems.require(train.save_checkpoint_secs >= 0, "train_config.save_checkpoint_secs",
                     f"must be >= 0, got {train.save_checkpoint_secs}")
    problems.require(train.gradient_clipping_by_norm >= 0, "train_config.gradient_clipping_by_norm",
                     f"must be >= 0, got {train.gradient_clipping_by_norm}")
    problems.positive(train.replicas_to_aggregate, "train_config.replicas_to_aggregate")
    for i, step in enumerate(train.data_augmentation_options):
        _check_step(step, f"train_config.data_augmentation_options[{i}]", problems)
    if problems.require(train.HasField("optimizer"), "train_config.optimizer", "is not set"):
        _check_optimizer(train.optimizer, "train_config.optimizer", problems)


def _check_optimizer(optimizer, path, problems):
    if not problems.oneof(optimizer, "optimizer", path):
        return
    kind = optimizer.WhichOneof("optimizer")
    body = getattr(optimizer, kind)
    problems.in_range(optimizer.moving_average_decay, 0.0, 1.0, f"{path}.moving_average_decay")
    lr_path = f"{path}.{kind}.learning_rate"
    if not problems.require(body.HasField("learning_rate"), lr_path, "is not set"):
        return
    if not problems.oneof(body.learning_rate, "learning_rate", lr_path):
        return
    schedule = body.learning_rate.WhichOneof("learning_rate")
    if schedule == "manual_step_learning_rate":
        steps = [s.step for s in body.learning_rate.manual_step_learning_rate.schedule]
        problems.require(all(a < b for a, b in zip(steps, steps[1:], strict=False)),
                         f"{lr_path}.manual_step_learning_rate.schedule",
                         f"steps must be strictly increasing, got {steps}")


def _check_step(step, path, problems):
    if not problems.oneof(step, "preprocessing_step", path):
        return
    kind = step.WhichOneof("preprocessing_step")
    body = getattr(step, kind)
    path = f"{path}.{kind}"
    for name in ("target_height", "target_width"):
        if hasattr(body, name):
            problems.positive(getattr(body, name), f"{path}.{name}")
    if hasattr(body, "probability"):
        problems.in_range(body.probability, 0.0, 1.0, f"{path}.probability")
    for low, high in (("minval", "maxval"), ("min_delta", "max_delta")):
        if hasattr(body, low) and hasattr(body, high):
            problems.require(getattr(body, low) <= getattr(body, high), f"{path}.{low}",
                             f"{getattr(body, low)} is greater than {high} {getattr(body, high)}")
    if kind == "string_filtering":
        _check_charset(body.include_charset, f"{path}.include_charset", problems)


def _check_reader(reader, path, problems, check_files):
    if not problems.oneof(reader, "input_reader", path):
        return
    kind = reader.WhichOneof("input_reader")
    body = getattr(reader, kind)
    for name in ("input_path", "path"):
        if not hasattr(body, name):
            continue
        value = getattr(body, name)
        field = f"{path}.{kind}.{name}"
        if problems.require(bool(value.strip()), field, "is empty") and check_files:
            for pattern in (p.strip() for p in value.split(",") if p.strip()):
                problems.require(bool(glob.glob(pattern)) or os.path.exists(pattern), field,
                                 f"{pattern!r} matches no file")


# --------------------------------------------------------------------------- generic field rules

# (message type, field) -> (predicate, message). Applied wherever the message appears in the
# config tree, so a rule covers e.g. every BatchNorm of every hyperparams. Only values that a
# builder or TensorFlow would reject, or that make training meaningless (a negative interval),
# are listed: zero is allowed where it means "off" or "no limit".
def _ge(low):
    return (lambda v: v >= low), f"must be >= {low}"


def _gt(low):
    return (lambda v: v > low), f"must be > {low}"


def _within(low, high):
    return (lambda v: low <= v <= high), f"must be in [{low}, {high}]"


_FIELD_RULES = {
    ("BatchNorm", "decay"): _within(0.0, 1.0),
    ("BatchNorm", "epsilon"): _gt(0.0),
    ("L1Regularizer", "weight"): _ge(0.0),
    ("L2Regularizer", "weight"): _ge(0.0),
    ("TruncatedNormalInitializer", "stddev"): _gt(0.0),
    ("VarianceScalingInitializer", "factor"): _gt(0.0),
    ("OrthogonalInitializer", "gain"): _gt(0.0),
    ("SequenceCrossEntropyLoss", "weight"): _ge(0.0),
    ("SequenceCrossEntropyLoss", "label_smoothing"): _within(0.0, 0.999),
    ("L2RegressionLoss", "weight"): _ge(0.0),
    ("CtcPredictor", "loss_weight"): _ge(0.0),
    ("ConstantLearningRate", "learning_rate"): _gt(0.0),
    ("ExponentialDecayLearningRate", "initial_learning_rate"): _gt(0.0),
    ("ExponentialDecayLearningRate", "decay_steps"): _gt(0),
    ("ExponentialDecayLearningRate", "decay_factor"): _gt(0.0),
    ("ManualStepLearningRate", "initial_learning_rate"): _gt(0.0),
    ("LearningRateSchedule", "learning_rate"): _gt(0.0),
    ("CosineDecayLearningRate", "learning_rate_base"): _gt(0.0),
    ("CosineDecayLearningRate", "total_steps"): _gt(0),
    ("CosineDecayLearningRate", "warmup_learning_rate"): _ge(0.0),
    ("CosineDecayLearningRate", "min_learning_rate"): _ge(0.0),
    ("MomentumOptimizer", "momentum_optimizer_value"): _within(0.0, 1.0),
    ("RMSPropOptimizer", "momentum_optimizer_value"): _within(0.0, 1.0),
    ("RMSPropOptimizer", "decay"): _within(0.0, 1.0),
    ("RMSPropOptimizer", "epsilon"): _gt(0.0),
    ("AdadeltaOptimizer", "rho"): _within(0.0, 1.0),
    ("AdamWOptimizer", "weight_decay"): _ge(0.0),
    ("AdamWOptimizer", "beta1"): _within(0.0, 1.0),
    ("AdamWOptimizer", "beta2"): _within(0.0, 1.0),
    ("AdamWOptimizer", "epsilon"): _gt(0.0),
    ("TrainConfig", "save_checkpoint_steps"): _ge(0),
    ("TrainConfig", "save_summaries_steps"): _ge(0),
    ("TrainConfig", "log_every_n_steps"): _ge(0),
    ("TrainConfig", "max_checkpoints_to_keep"): _ge(0),
    ("TrainConfig", "profile_at_step"): _ge(0),
    ("TrainConfig", "eval_every_n_steps"): _ge(0),
    ("TrainConfig", "num_image_summaries"): _ge(0),
    ("TrainConfig", "worker_recovery_wait_secs"): _ge(0.0),
    ("TrainConfig", "operation_timeout_ms"): _ge(0),
    ("TrainConfig", "clip_gradients_by_global_norm"): _ge(0.0),
    ("TrainConfig", "startup_delay_steps"): _ge(0.0),
    ("EvalConfig", "batch_size"): _gt(0),
    ("BidirectionalRnn", "num_output_units"): _ge(0),
    ("ResNet", "block_depths"): _gt(0),
    ("RandomRotation", "max_angle"): _within(0.0, 180.0),
    ("RandomPerspective", "max_shift"): _within(0.0, 0.5),
    ("RandomCurveWarp", "max_amplitude"): _within(0.0, 0.5),
    ("RandomCurveWarp", "min_periods"): _ge(0.0),
    ("RandomGaussianBlur", "min_sigma"): _ge(0.0),
    ("RandomGaussianNoise", "min_stddev"): _ge(0.0),
    ("RandomJpegQuality", "min_quality"): _within(0, 100),
    ("RandomJpegQuality", "max_quality"): _within(0, 100),
    ("RandomCropPad", "max_crop"): _within(0.0, 0.9),
    ("RandomCropPad", "max_pad"): _ge(0.0),
    ("RandomAdjustBrightness", "max_delta"): _ge(0.0),
    ("RandomAdjustHue", "max_delta"): _within(0.0, 0.5),
    ("RandomAdjustContrast", "min_delta"): _ge(0.0),
    ("RandomAdjustSaturation", "min_delta"): _ge(0.0),
    ("RandomPixelValueScale", "minval"): _ge(0.0),
}

# (message type, low field, high field): low must not exceed high.
_ORDERED_PAIRS = (
    ("UniformInitializer", "minval", "maxval"),
    ("RandomCurveWarp", "min_periods", "max_periods"),
    ("RandomGaussianBlur", "min_sigma", "max_sigma"),
    ("RandomGaussianNoise", "min_stddev", "max_stddev"),
    ("RandomJpegQuality", "min_quality", "max_quality"),
)

_REGEX_FIELDS = {("TrainConfig", "freeze_variables"), ("TrainConfig", "fine_tune_skip_regexes"),
                 ("GradientMultiplier", "regex")}


def _check_fields(message, path, problems):
    """Applies _FIELD_RULES, _ORDERED_PAIRS and regex checks everywhere under `message`."""
    name = message.DESCRIPTOR.name
    for field, value in message.ListFields():
        f_path = f"{path}.{field.name}" if path else field.name
        values = list(value) if field.is_repeated else [value]
        for i, item in enumerate(values):
            i_path = f"{f_path}[{i}]" if field.is_repeated else f_path
            if field.message_type is not None:
                _check_fields(item, i_path, problems)
                continue
            rule = _FIELD_RULES.get((name, field.name))
            if rule is not None:
                ok, text = rule
                problems.require(ok(item), i_path, f"{text}, got {item}")
            if (name, field.name) in _REGEX_FIELDS:
                try:
                    re.compile(item)
                except re.error as e:
                    problems.append(f"{i_path}: {item!r} is not a valid regular expression: {e}")
    for kind, low, high in _ORDERED_PAIRS:
        if name == kind and getattr(message, low) > getattr(message, high):
            problems.append(f"{path}.{low}: {getattr(message, low)} is greater than {high} "
                            f"{getattr(message, high)}")


# --------------------------------------------------------------------------- parse error location

_TOKENS = re.compile(r'\s+|#[^\n]*|"(?:[^"\\\n]|\\.)*"|\'(?:[^\'\\\n]|\\.)*\'|[\w.+-]+|.',
                     re.DOTALL)


def path_at(text, line, column, root):
    """The field path (`a.b[1].c`) of the field whose name or value is at line:column of `text`.

    Used to name the field of a text-format parse error (a wrong type, an unknown enum value);
    protobuf's own message gives only the line and column.

    Args:
      text: text-format config.
      line, column: 1-based position of the error (as protobuf reports it).
      root: descriptor of the top message.

    Returns:
      The path, or "" when the position is before any field.
    """
    offsets, total = [], 0
    for row in text.split("\n"):
        offsets.append(total)
        total += len(row) + 1
    limit = offsets[min(line, len(offsets)) - 1] + max(column - 1, 0) if offsets else 0
    # Stack entries: (descriptor or None, path, {field name: occurrences so far}).
    stack = [(root, "", {})]
    last_path, pending = "", None
    for match in _TOKENS.finditer(text):
        if match.start() > limit:
            break
        token = match.group()
        if token.isspace() or token.startswith("#"):
            continue
        desc, path, counts = stack[-1]
        if token in ("{", "<"):
            child = desc.fields_by_name.get(pending) if desc is not None and pending else None
            stack.append((child.message_type if child is not None else None, last_path, {}))
            pending = None
        elif token in ("}", ">"):
            if len(stack) > 1:
                stack.pop()
            pending = None
        elif token in (":", "[", "]", ","):
            continue
        elif pending is None and re.fullmatch(r"[A-Za-z_]\w*", token):
            field = desc.fields_by_name.get(token) if desc is not None else None
            name = f"{path}.{token}" if path else token
            if field is not None and field.is_repeated:
                counts[token] = counts.get(token, -1) + 1
                name = f"{name}[{counts[token]}]"
            last_path, pending = name, token
        else:
            pending = None  # a value ends the field
    return last_path


# --------------------------------------------------------------------------- evaluation

_PROTOCOLS = (36, 62, 94)
_METRICS_SETS = ("recognition_metrics",)


def _check_eval(config, problems):
    """What aster-eval would refuse, caught before training starts (eval_config is optional)."""
    if not config.HasField("eval_config"):
        return
    eval_config = config.eval_config
    problems.require(eval_config.protocol in _PROTOCOLS, "eval_config.protocol",
                     f"{eval_config.protocol} is not one of {list(_PROTOCOLS)}")
    problems.require(eval_config.metrics_set in _METRICS_SETS, "eval_config.metrics_set",
                     f"{eval_config.metrics_set!r} is not one of {list(_METRICS_SETS)}")
    names, readers = len(eval_config.dataset_name), len(config.eval_input_reader)
    problems.require(names <= readers, "eval_config.dataset_name",
                     f"has {names} entries but there are only {readers} eval_input_readers")
