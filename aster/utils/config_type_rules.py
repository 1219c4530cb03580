"""The rules of config messages that need more than one field, by message type.

Each function takes (message, path, problems) and appends "path: what" problems; `TYPE_RULES`
maps a message type name to its function. aster.utils.config_checks applies them wherever the
message appears (see its docstring for where every kind of rule lives).
"""

from aster.core import charsets, tps_options
from aster.utils.config_field_rules import RESNET_BLOCKS

TPS_PATTERNS = tps_options.INIT_PATTERNS
TPS_ACTIVATIONS = tps_options.ACTIVATIONS
ATTENTION_LABEL_OFFSET = 2  # labels 0 and 1 are GO and EOS for attention decoders
# Input heights each encoder convnet reduces to a map of height 1 (the feature sequence): ResNet
# halves the height five times (SAME padding), CRNN four times and then applies a VALID 2x1 conv.
ENCODER_HEIGHTS = {"resnet": (1, 32), "crnn_net": (17, 32)}



TYPE_RULES = {}


def _rules_for(type_name):
    def register(function):
        TYPE_RULES[type_name] = function
        return function
    return register


def _oneof_rule(type_name, oneof):
    TYPE_RULES[type_name] = lambda message, path, problems: problems.oneof(message, oneof, path)


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
    _same_characters(model, path, problems)
    if model.keypoint_supervision:
        problems.require(model.HasField("spatial_transformer"), f"{path}.keypoint_supervision",
                         "needs a spatial_transformer whose control points it supervises")
    if model.HasField("regression_loss"):
        kind = model.regression_loss.WhichOneof("loss_oneof")
        problems.require(kind in (None, "l2_regression_loss"), f"{path}.regression_loss",
                         f"must be l2_regression_loss, got {kind!r}")


def label_map_characters(model, path):
    """[(field path, set of characters)] of the predictors' label maps, in predictor order.

    A character set that cannot be read is left out (its own rule reports it).
    """
    found = []
    for i, predictor in enumerate(model.predictor):
        kind = predictor.WhichOneof("predictor_oneof")
        if kind is None or not getattr(predictor, kind).HasField("label_map"):
            continue
        field = f"{path}.predictor[{i}].{kind}.label_map.character_set"
        try:
            chars = charsets.from_config(getattr(predictor, kind).label_map.character_set, field)
        except ValueError:
            continue
        found.append((field, set(chars)))
    return found


def describe_difference(a, b):
    """What one character set has that the other lacks, in a few characters."""
    only_a, only_b = "".join(sorted(a - b)), "".join(sorted(b - a))
    parts = [f"{len(a)} characters against {len(b)}"]
    if only_a:
        parts.append(f"only in the first: {only_a[:12]!r}{'...' if len(only_a) > 12 else ''}")
    if only_b:
        parts.append(f"only in the second: {only_b[:12]!r}{'...' if len(only_b) > 12 else ''}")
    return "; ".join(parts)


def _same_characters(model, path, problems):
    """Every predictor reads the same characters (one fact: what the model reads)."""
    maps = label_map_characters(model, path)
    for field, chars in maps[1:]:
        first_field, first = maps[0]
        problems.require(chars == first, field,
                         f"names other characters than {first_field} "
                         f"({describe_difference(chars, first)}); every predictor of a model "
                         "reads the same characters")


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
        size = len(charsets.from_config(label_map.character_set, f"{path}.character_set"))
    except ValueError as e:
        problems.append(str(e))
        return
    if label_map.HasField("unk_label") and label_map.unknown_handling == label_map.UNKNOWN_CLASS:
        end = label_map.label_offset + size
        problems.require(label_map.unk_label in (0, end), f"{path}.unk_label",
                         f"is {label_map.unk_label}, but the unknown class must follow the "
                         f"characters: set it to {end} (label_offset + {size} characters) or "
                         "leave it unset")


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
        charsets.from_config(step.include_charset, f"{path}.include_charset")
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
    for name in READER_PATHS:
        body = getattr(reader, kind)
        if hasattr(body, name):
            problems.require(bool(getattr(body, name).strip()), f"{path}.{kind}.{name}",
                             "is empty")
    curriculum = reader.length_curriculum
    if curriculum.steps:
        limit = curriculum.max_label_length
        problems.require(limit >= 1, f"{path}.length_curriculum.max_label_length",
                         f"must be >= 1 when length_curriculum.steps is set, got {limit}")
        problems.require(not reader.max_label_length or limit <= reader.max_label_length,
                         f"{path}.length_curriculum.max_label_length",
                         f"{limit} is above the reader's max_label_length "
                         f"({reader.max_label_length})")



READER_PATHS = ("input_path", "path")
