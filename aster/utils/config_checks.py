"""The rules of a pipeline config: every check that needs no graph, written once.

    problems = config_checks.find_problems(config)        # aster-config validate, validate()
    config_checks.check(config.model, "model")              # what every builder calls first

find_problems() returns every problem of a whole TrainEvalPipelineConfig, each starting with the
field path; check() raises the first problem of one message (and everything under it) as a
ConfigError. Every builder calls check() on its message before building, so `aster-config
validate` and the builders accept and reject the same configs with the same message.

Where a rule lives:
- _FIELD_RULES and _ORDERED_PAIRS: one field's range, or two fields' order, by message type;
  applied to the effective value (set or default) wherever the message appears.
- _TYPE_RULES: rules of one message type that need more than one field (required sub-messages,
  oneofs, cross-field conditions), registered with @_rules_for("TypeName").
- batch_size_problems(): the batch sizes against the readers and clones (the input builder calls
  it with the real clone count).
The core classes keep their own argument checks for Python callers; a config that passes these
rules never reaches them (tests/utils/config_agreement_test.py mutates the shipped configs to show
it).
"""

import glob
import os
import re

from aster.core import charsets
from aster.utils import recognition_evaluation

# The spatial transformer's options (aster.core.spatial_transformer, which imports TensorFlow).
TPS_PATTERNS = ("identity", "slope", "sine")
TPS_ACTIVATIONS = ("none", "sigmoid")
MIN_DECODE_STEPS = 2  # an attention decoder needs a step for a character and one for EOS
ATTENTION_LABEL_OFFSET = 2  # labels 0 and 1 are GO and EOS for attention decoders
RESNET_BLOCKS = 5
# Input heights each encoder convnet reduces to a map of height 1 (the feature sequence): ResNet
# halves the height five times (SAME padding), CRNN four times and then applies a VALID 2x1 conv.
ENCODER_HEIGHTS = {"resnet": (1, 32), "crnn_net": (17, 32)}


class ConfigError(ValueError):
    """A pipeline config problem, naming the field path and the bad value."""


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
    _check_fields(message, path, problems)  # a field's own range first, then combinations
    rule = _TYPE_RULES.get(message.DESCRIPTOR.name)
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


# --------------------------------------------------------------------------- per-type rules

_TYPE_RULES = {}


def _rules_for(type_name):
    def register(function):
        _TYPE_RULES[type_name] = function
        return function
    return register


def _oneof_rule(type_name, oneof):
    _TYPE_RULES[type_name] = lambda message, path, problems: problems.oneof(message, oneof, path)


for _type, _oneof in (("Model", "model_oneof"), ("Convnet", "convnet_oneof"),
                      ("RnnCell", "rnn_cell_oneof"), ("Loss", "loss_oneof"),
                      ("Regularizer", "regularizer_oneof"), ("Initializer", "initializer_oneof"),
                      ("LearningRate", "learning_rate")):
    _oneof_rule(_type, _oneof)


@_rules_for("MultiPredictorsRecognitionModel")
def _model(model, path, problems):
    problems.present(model, "feature_extractor", path)
    predictors = model.predictor
    if not problems.require(len(predictors) > 0, f"{path}.predictor", "needs at least one"):
        return
    names = [p.name for p in predictors]
    for i, name in enumerate(names):
        problems.require(name not in names[:i], f"{path}.predictor[{i}].name",
                         f"{name!r} is already used by predictor[{names.index(name)}]; names "
                         "are variable scopes")
    problems.require(not all(p.auxiliary for p in predictors), f"{path}.predictor",
                     "every predictor is auxiliary; at least one must be decoded")
    _encoder_height(model, path, problems)
    if model.keypoint_supervision:
        problems.require(model.HasField("spatial_transformer"), f"{path}.keypoint_supervision",
                         "needs a spatial_transformer whose control points it supervises")
    if model.HasField("regression_loss"):
        kind = model.regression_loss.WhichOneof("loss_oneof")
        problems.require(kind in (None, "l2_regression_loss"), f"{path}.regression_loss",
                         f"must be l2_regression_loss, got {kind!r}")


def _encoder_height(model, path, problems):
    """The encoder sees the rectifier's output_h, or the model's input_height without one."""
    kind = model.feature_extractor.convnet.WhichOneof("convnet_oneof")
    if kind not in ENCODER_HEIGHTS:
        return
    low, high = ENCODER_HEIGHTS[kind]
    if model.HasField("spatial_transformer"):
        height, field = model.spatial_transformer.output_h, "spatial_transformer.output_h"
    else:
        height, field = model.input_height, "input_height"
    problems.require(low <= height <= high, f"{path}.{field}",
                     f"must be in [{low}, {high}] for the {kind} encoder (it reduces that height "
                     f"to 1), got {height}")


@_rules_for("SpatialTransformer")
def _stn(stn, path, problems):
    problems.present(stn, "convnet", path)
    _require_op(stn.fc_hyperparams, "FC", f"{path}.fc_hyperparams", problems)
    k = stn.num_control_points
    problems.require(k >= 4 and k % 2 == 0, f"{path}.num_control_points",
                     f"must be an even number >= 4, got {k}")
    problems.require(stn.init_bias_pattern in TPS_PATTERNS, f"{path}.init_bias_pattern",
                     f"{stn.init_bias_pattern!r} is not one of {list(TPS_PATTERNS)}")
    problems.require(stn.activation in TPS_ACTIVATIONS, f"{path}.activation",
                     f"{stn.activation!r} is not one of {list(TPS_ACTIVATIONS)}")


def _require_op(hyperparams, op, path, problems):
    """hyperparams.op (set or default) must be `op` ("CONV" or "FC")."""
    name = hyperparams.Op.Name(hyperparams.op)
    problems.require(name == op, f"{path}.op", f"must be {op} here, got {name}")


@_rules_for("CrnnNet")
@_rules_for("StnConvnet")
def _conv_net(net, path, problems):
    _require_op(net.conv_hyperparams, "CONV", f"{path}.conv_hyperparams", problems)


@_rules_for("ResNet")
def _resnet(net, path, problems):
    _conv_net(net, path, problems)
    depths = list(net.block_depths)
    problems.require(len(depths) in (0, RESNET_BLOCKS), f"{path}.block_depths",
                     f"needs {RESNET_BLOCKS} channel counts (or none for the default), got "
                     f"{depths}")


@_rules_for("FeatureExtractor")
def _feature_extractor(extractor, path, problems):
    problems.present(extractor, "convnet", path)


@_rules_for("BidirectionalRnn")
def _bidirectional_rnn(rnn, path, problems):
    problems.present(rnn, "fw_bw_rnn_cell", path)
    if rnn.num_output_units > 0 and problems.require(
            rnn.HasField("fc_hyperparams"), f"{path}.fc_hyperparams",
            f"is required when num_output_units > 0 (got {rnn.num_output_units})"):
        _require_op(rnn.fc_hyperparams, "FC", f"{path}.fc_hyperparams", problems)


@_rules_for("Predictor")
def _predictor(predictor, path, problems):
    problems.oneof(predictor, "predictor_oneof", path)
    problems.require(bool(predictor.name) and "/" not in predictor.name, f"{path}.name",
                     f"must be a non-empty scope name without '/', got {predictor.name!r}")


@_rules_for("AttentionPredictor")
def _attention_predictor(predictor, path, problems):
    problems.present(predictor, "rnn_cell", path)
    if problems.present(predictor, "label_map", path):
        offset = predictor.label_map.label_offset
        problems.require(offset >= ATTENTION_LABEL_OFFSET, f"{path}.label_map.label_offset",
                         f"must be >= {ATTENTION_LABEL_OFFSET} for an attention predictor "
                         f"(0 = GO, 1 = EOS), got {offset}")
    if predictor.HasField("loss"):
        kind = predictor.loss.WhichOneof("loss_oneof")
        problems.require(kind in (None, "sequence_cross_entropy_loss"), f"{path}.loss",
                         f"must be sequence_cross_entropy_loss, got {kind!r}")


@_rules_for("CtcPredictor")
def _ctc_predictor(predictor, path, problems):
    problems.present(predictor, "label_map", path)
    if predictor.HasField("fc_hyperparams"):
        _require_op(predictor.fc_hyperparams, "FC", f"{path}.fc_hyperparams", problems)


@_rules_for("LabelMap")
def _label_map(label_map, path, problems):
    try:
        size = len(_charset(label_map.character_set, f"{path}.character_set"))
    except ValueError as e:
        problems.append(str(e))
        return
    if label_map.HasField("unk_label") and label_map.unknown_handling == label_map.UNKNOWN_CLASS:
        end = label_map.label_offset + size
        problems.require(label_map.unk_label in (0, end), f"{path}.unk_label",
                         f"is {label_map.unk_label}, but the unknown class must follow the "
                         f"characters: set it to {end} (label_offset + {size} characters) or "
                         "leave it unset")


def _charset(charset, path):
    """The characters of a CharacterSet; ValueError starting with the field path."""
    source = charset.WhichOneof("source_oneof")
    try:
        if source == "text_string":
            return charsets.from_text_string(charset.text_string, f"{path}.text_string")
        if source == "text_file":  # part of the model's definition: needed to build it
            return charsets.from_text_file(charset.text_file)
        return charsets.BUILT_IN[charset.BuiltInSet.Name(charset.built_in_set)]
    except ValueError as e:
        message = str(e)
        raise ValueError(message if message.startswith(path) else f"{path}.{source}: {message}"
                         ) from None


@_rules_for("PreprocessingStep")
def _preprocessing_step(step, path, problems):
    """The oneof, and the rules every step type shares by field name."""
    if not problems.oneof(step, "preprocessing_step", path):
        return
    kind = step.WhichOneof("preprocessing_step")
    body, path = getattr(step, kind), f"{path}.{kind}"
    for name in ("target_height", "target_width"):
        if hasattr(body, name):
            problems.require(getattr(body, name) > 0, f"{path}.{name}",
                             f"must be > 0, got {getattr(body, name)}")
    if hasattr(body, "probability"):
        problems.require(0.0 <= body.probability <= 1.0, f"{path}.probability",
                         f"must be in [0.0, 1.0], got {body.probability}")
    for low, high in (("minval", "maxval"), ("min_delta", "max_delta")):
        if hasattr(body, low) and hasattr(body, high):
            problems.require(getattr(body, low) <= getattr(body, high), f"{path}.{low}",
                             f"{getattr(body, low)} is greater than {high} {getattr(body, high)}")


@_rules_for("StringFiltering")
def _string_filtering(step, path, problems):
    try:
        _charset(step.include_charset, f"{path}.include_charset")
    except ValueError as e:
        problems.append(str(e))


@_rules_for("Optimizer")
def _optimizer(optimizer, path, problems):
    if not problems.oneof(optimizer, "optimizer", path):
        return
    kind = optimizer.WhichOneof("optimizer")
    problems.present(getattr(optimizer, kind), "learning_rate", f"{path}.{kind}")
    decay = optimizer.moving_average_decay
    problems.require(0.0 < decay < 1.0, f"{path}.moving_average_decay",
                     f"must be in (0, 1), got {decay}")


@_rules_for("ManualStepLearningRate")
def _manual_step(schedule, path, problems):
    steps = [s.step for s in schedule.schedule]
    problems.require(bool(steps), f"{path}.schedule", "is empty; give at least one step")
    problems.require(all(a < b for a, b in zip(steps, steps[1:], strict=False)),
                     f"{path}.schedule", f"steps must be strictly increasing, got {steps}")


@_rules_for("CosineDecayLearningRate")
def _cosine_decay(schedule, path, problems):
    ramp = schedule.warmup_steps + schedule.hold_base_rate_steps
    problems.require(schedule.total_steps >= ramp, f"{path}.total_steps",
                     f"must be >= warmup_steps + hold_base_rate_steps ({ramp}), got "
                     f"{schedule.total_steps}")
    if schedule.warmup_steps > 0:
        problems.require(schedule.warmup_learning_rate <= schedule.learning_rate_base,
                         f"{path}.warmup_learning_rate",
                         f"must be <= learning_rate_base ({schedule.learning_rate_base}), got "
                         f"{schedule.warmup_learning_rate}")


@_rules_for("TrainConfig")
def _train(train, path, problems):
    problems.present(train, "optimizer", "train_config")


@_rules_for("InputReader")
def _reader(reader, path, problems):
    if not problems.oneof(reader, "input_reader", path):
        return
    kind = reader.WhichOneof("input_reader")
    problems.require(kind != "external_input_reader", f"{path}.external_input_reader",
                     "has no reader in this framework; use tf_record_input_reader or "
                     "lmdb_input_reader")
    for name in _READER_PATHS:
        body = getattr(reader, kind)
        if hasattr(body, name):
            problems.require(bool(getattr(body, name).strip()), f"{path}.{kind}.{name}",
                             "is empty")


_READER_PATHS = ("input_path", "path")


def _check_files(reader, path, problems):
    kind = reader.WhichOneof("input_reader")
    body = getattr(reader, kind) if kind else None
    for name in _READER_PATHS:
        if body is None or not hasattr(body, name):
            continue
        for pattern in (p.strip() for p in getattr(body, name).split(",") if p.strip()):
            problems.require(bool(glob.glob(pattern)) or os.path.exists(pattern),
                             f"{path}.{kind}.{name}", f"{pattern!r} matches no file")


# --------------------------------------------------------------------------- per-field rules

# (message type, field) -> (predicate, message). Applied to the field's value (set or default)
# wherever the message appears in the config tree, so a rule covers e.g. every BatchNorm of every
# hyperparams. Only values that a builder or TensorFlow would reject, or that make training
# meaningless (a negative interval), are listed: zero is allowed where it means "off" or "no
# limit".
def _ge(low):
    return (lambda v: v >= low), f"must be >= {low}"


def _gt(low):
    return (lambda v: v > low), f"must be > {low}"


def _within(low, high):
    return (lambda v: low <= v <= high), f"must be in [{low}, {high}]"


def _below(low, high):
    return (lambda v: low <= v < high), f"must be in [{low}, {high})"


_POSITIVE = _gt(0)

_FIELD_RULES = {
    ("MultiPredictorsRecognitionModel", "input_height"): _POSITIVE,
    ("MultiPredictorsRecognitionModel", "input_width"): _POSITIVE,
    ("SpatialTransformer", "localization_h"): _POSITIVE,
    ("SpatialTransformer", "localization_w"): _POSITIVE,
    ("SpatialTransformer", "output_h"): _POSITIVE,
    ("SpatialTransformer", "output_w"): _POSITIVE,
    ("SpatialTransformer", "margin_x"): _below(0.0, 0.5),
    ("SpatialTransformer", "margin_y"): _below(0.0, 0.5),
    ("LstmCell", "num_units"): _POSITIVE,
    ("GruCell", "num_units"): _POSITIVE,
    ("AttentionPredictor", "num_attention_units"): _POSITIVE,
    ("AttentionPredictor", "max_num_steps"): _ge(MIN_DECODE_STEPS),
    ("AttentionPredictor", "beam_width"): _ge(1),
    ("AttentionPredictor", "length_penalty"): _ge(0.0),
    ("CtcPredictor", "beam_width"): _ge(1),
    ("CtcPredictor", "loss_weight"): _ge(0.0),
    ("LabelMap", "label_offset"): _ge(0),
    ("BatchNorm", "decay"): _within(0.0, 1.0),
    ("BatchNorm", "epsilon"): _gt(0.0),
    ("L1Regularizer", "weight"): _ge(0.0),
    ("L2Regularizer", "weight"): _ge(0.0),
    ("TruncatedNormalInitializer", "stddev"): _gt(0.0),
    ("VarianceScalingInitializer", "factor"): _gt(0.0),
    ("OrthogonalInitializer", "gain"): _gt(0.0),
    ("SequenceCrossEntropyLoss", "weight"): _ge(0.0),
    ("SequenceCrossEntropyLoss", "label_smoothing"): _below(0.0, 1.0),
    ("L2RegressionLoss", "weight"): _ge(0.0),
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
    ("TrainConfig", "batch_queue_capacity"): _POSITIVE,
    ("TrainConfig", "num_batch_queue_threads"): _POSITIVE,
    ("TrainConfig", "prefetch_queue_capacity"): _POSITIVE,
    ("TrainConfig", "replicas_to_aggregate"): _POSITIVE,
    ("TrainConfig", "save_checkpoint_secs"): _ge(0),
    ("TrainConfig", "gradient_clipping_by_norm"): _ge(0.0),
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
    ("EvalConfig", "batch_size"): _POSITIVE,
    ("BidirectionalRnn", "num_output_units"): _ge(0),
    ("ResNet", "block_depths"): _POSITIVE,
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

# (message type, low field, high field): low must not exceed high (strict: it must be below).
_ORDERED_PAIRS = (
    ("UniformInitializer", "minval", "maxval", True),
    ("RandomCurveWarp", "min_periods", "max_periods", False),
    ("RandomGaussianBlur", "min_sigma", "max_sigma", False),
    ("RandomGaussianNoise", "min_stddev", "max_stddev", False),
    ("RandomJpegQuality", "min_quality", "max_quality", False),
)

_REGEX_FIELDS = {("TrainConfig", "freeze_variables"), ("TrainConfig", "fine_tune_skip_regexes"),
                 ("GradientMultiplier", "regex")}


def _check_fields(message, path, problems):
    """Applies _FIELD_RULES, _ORDERED_PAIRS and the regex checks to the fields of `message`."""
    name = message.DESCRIPTOR.name
    for field in message.DESCRIPTOR.fields:
        if field.message_type is not None:
            continue
        rule = _FIELD_RULES.get((name, field.name))
        is_regex = (name, field.name) in _REGEX_FIELDS
        if rule is None and not is_regex:
            continue
        f_path = f"{path}.{field.name}" if path else field.name
        value = getattr(message, field.name)
        values = list(value) if field.is_repeated else [value]
        for i, item in enumerate(values):
            i_path = f"{f_path}[{i}]" if field.is_repeated else f_path
            if rule is not None:
                ok, text = rule
                problems.require(ok(item), i_path, f"{text}, got {item}")
            if is_regex:
                try:
                    re.compile(item)
                except re.error as e:
                    problems.append(f"{i_path}: {item!r} is not a valid regular expression: {e}")
    for kind, low, high, strict in _ORDERED_PAIRS:
        if name != kind:
            continue
        a, b = getattr(message, low), getattr(message, high)
        if a > b or (strict and a == b):
            problems.append(f"{path}.{low}: {a} must be {'below' if strict else 'at most'} "
                            f"{high} {b}")


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

_PROTOCOLS = recognition_evaluation.SETTINGS  # what the evaluator accepts
_METRICS_SETS = ("recognition_metrics",)


def check_eval(config):
    """Raises ConfigError with the first problem of the evaluation settings (the evaluator's)."""
    problems = _Problems()
    _check_eval(config, problems)
    _walk(config.eval_config, "eval_config", problems)
    if problems:
        raise ConfigError(problems[0])


def _check_eval(config, problems):
    """What aster-eval would refuse, caught before training starts (eval_config is optional)."""
    if not config.HasField("eval_config"):
        return
    eval_config = config.eval_config
    problems.require(eval_config.protocol in _PROTOCOLS, "eval_config.protocol",
                     f"{eval_config.protocol} is not accepted; "
                     f"{recognition_evaluation.expected(_PROTOCOLS)}")
    problems.require(eval_config.metrics_set in _METRICS_SETS, "eval_config.metrics_set",
                     f"{eval_config.metrics_set!r} is not one of {list(_METRICS_SETS)}")
    names, readers = len(eval_config.dataset_name), len(config.eval_input_reader)
    problems.require(names <= readers, "eval_config.dataset_name",
                     f"has {names} entries but there are only {readers} eval_input_readers")
