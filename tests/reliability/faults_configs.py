"""Mutated pipeline configs: a generator of invalid variants of the shipped configs, and a runner.

    mutations = generate(data_dir)            # >= 500 Mutation objects (and VALID_EDITS controls)
    result = run_all(data_dir)                # Result(case, tried, held, figure, failures)

Each Mutation is genuinely invalid (a builder, TensorFlow or the trainer would fail on it, or it
names something that does not exist); it is applied either to the parsed config (proto
mutations) or to its text (mutations a type system rejects: wrong types, unknown enum or field
names). "Held" means: aster.utils.config_util raised ConfigError whose message contains the
mutated field's path, and nothing else was raised. The controls in `valid_edits()` are changes
that look suspicious but are valid (zero meaning "off"/"no limit", ...) and must be accepted.
"""

import collections
import glob
import os
import re

from google.protobuf import descriptor

from aster.utils import config_util

FD = descriptor.FieldDescriptor
ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
SHIPPED = sorted(glob.glob(os.path.join(ROOT, "configs", "*.config")))

Mutation = collections.namedtuple("Mutation", "name category path apply check_files")
Result = collections.namedtuple("Result", "case tried held figure failures")

# (message type, field) -> values that must be rejected (set on the parsed config).
BAD_VALUES = {
    ("MultiPredictorsRecognitionModel", "input_height"): [0, -1],
    ("MultiPredictorsRecognitionModel", "input_width"): [0, -8],
    ("SpatialTransformer", "localization_h"): [0, -1],
    ("SpatialTransformer", "localization_w"): [0],
    ("SpatialTransformer", "output_h"): [0],
    ("SpatialTransformer", "output_w"): [0, -100],
    ("SpatialTransformer", "num_control_points"): [0, 2, 3, 5, -2, 21],
    ("SpatialTransformer", "margin_x"): [-0.1, 0.5, 2.0],
    ("SpatialTransformer", "margin_y"): [-0.1, 0.5],
    ("SpatialTransformer", "init_bias_pattern"): ["zigzag", ""],
    ("SpatialTransformer", "activation"): ["relu"],
    ("LstmCell", "num_units"): [0],
    ("GruCell", "num_units"): [0],
    ("BidirectionalRnn", "num_output_units"): [-1],
    ("AttentionPredictor", "num_attention_units"): [0, -1],
    ("AttentionPredictor", "max_num_steps"): [0, -1],
    ("AttentionPredictor", "beam_width"): [0, -1],
    ("AttentionPredictor", "length_penalty"): [-0.5],
    ("CtcPredictor", "beam_width"): [0],
    ("CtcPredictor", "loss_weight"): [-1.0],
    ("LabelMap", "label_offset"): [-1],
    ("SequenceCrossEntropyLoss", "weight"): [-1.0],
    ("SequenceCrossEntropyLoss", "label_smoothing"): [-0.1, 1.0],
    ("BatchNorm", "decay"): [-0.1, 1.5],
    ("BatchNorm", "epsilon"): [0.0, -0.001],
    ("L2Regularizer", "weight"): [-0.0001],
    ("L1Regularizer", "weight"): [-0.0001],
    ("VarianceScalingInitializer", "factor"): [0.0, -2.0],
    ("TruncatedNormalInitializer", "stddev"): [0.0, -1.0],
    ("TrainConfig", "batch_queue_capacity"): [0, -1],
    ("TrainConfig", "num_batch_queue_threads"): [0, -1],
    ("TrainConfig", "prefetch_queue_capacity"): [0, -1],
    ("TrainConfig", "save_checkpoint_secs"): [-1],
    ("TrainConfig", "save_checkpoint_steps"): [-1],
    ("TrainConfig", "save_summaries_steps"): [-1],
    ("TrainConfig", "log_every_n_steps"): [-1],
    ("TrainConfig", "max_checkpoints_to_keep"): [-1],
    ("TrainConfig", "profile_at_step"): [-1],
    ("TrainConfig", "eval_every_n_steps"): [-1],
    ("TrainConfig", "num_image_summaries"): [-1],
    ("TrainConfig", "worker_recovery_wait_secs"): [-1.0],
    ("TrainConfig", "operation_timeout_ms"): [-1],
    ("TrainConfig", "gradient_clipping_by_norm"): [-1.0],
    ("TrainConfig", "clip_gradients_by_global_norm"): [-1.0],
    ("TrainConfig", "replicas_to_aggregate"): [0, -1],
    ("TrainConfig", "freeze_variables"): [["(unclosed"]],
    ("TrainConfig", "fine_tune_skip_regexes"): [["*bad"]],
    ("Optimizer", "moving_average_decay"): [-0.1, 0.0, 1.0, 1.5],
    ("ConstantLearningRate", "learning_rate"): [0.0, -0.1],
    ("ExponentialDecayLearningRate", "initial_learning_rate"): [0.0],
    ("ExponentialDecayLearningRate", "decay_steps"): [0],
    ("ExponentialDecayLearningRate", "decay_factor"): [0.0],
    ("ManualStepLearningRate", "initial_learning_rate"): [-0.001],
    ("CosineDecayLearningRate", "learning_rate_base"): [0.0],
    ("CosineDecayLearningRate", "total_steps"): [0],
    ("MomentumOptimizer", "momentum_optimizer_value"): [-0.1, 1.5],
    ("RMSPropOptimizer", "decay"): [1.5],
    ("AdamWOptimizer", "beta1"): [1.5],
    ("ResizeImage", "target_height"): [0, -1],
    ("ResizeImage", "target_width"): [0, -1],
    ("ResizeImageRandomMethod", "target_height"): [0],
    ("ResizeImageRandomMethod", "target_width"): [-5],
    ("RandomRgbToGray", "probability"): [-0.1, 1.5],
    ("RandomRotation", "probability"): [2.0],
    ("RandomRotation", "max_angle"): [-5.0],
    ("RandomPerspective", "probability"): [-1.0],
    ("RandomGaussianBlur", "probability"): [1.01],
    ("RandomGaussianBlur", "min_sigma"): [-1.0, 99.0],
    ("RandomGaussianNoise", "min_stddev"): [-1.0],
    ("RandomJpegQuality", "min_quality"): [-1, 120],
    ("RandomJpegQuality", "max_quality"): [101],
    ("RandomCropPad", "max_crop"): [-0.1, 1.0],
    ("RandomPixelValueScale", "minval"): [5.0],
    ("RandomAdjustContrast", "min_delta"): [10.0],
    ("RandomAdjustHue", "max_delta"): [-0.1, 0.9],
    ("EvalConfig", "batch_size"): [0],
    ("EvalConfig", "protocol"): [2, 37, 100],
    ("EvalConfig", "metrics_set"): ["coco_detection_metrics"],
}

# (parent message type, field or oneof name): deleting it leaves the config unusable. Oneofs are
# cleared (the message stays, with nothing chosen).
REQUIRED = [
    ("TrainEvalPipelineConfig", "model"),
    ("Model", "model_oneof"),
    ("MultiPredictorsRecognitionModel", "feature_extractor"),
    ("MultiPredictorsRecognitionModel", "predictor"),
    ("FeatureExtractor", "convnet"),
    ("SpatialTransformer", "convnet"),
    ("Convnet", "convnet_oneof"),
    ("BidirectionalRnn", "fw_bw_rnn_cell"),
    ("RnnCell", "rnn_cell_oneof"),
    ("Predictor", "predictor_oneof"),
    ("AttentionPredictor", "rnn_cell"),
    ("AttentionPredictor", "label_map"),
    ("CtcPredictor", "label_map"),
    ("TrainConfig", "optimizer"),
    ("TrainConfig", "batch_size"),
    ("Optimizer", "optimizer"),
    ("AdamOptimizer", "learning_rate"),
    ("MomentumOptimizer", "learning_rate"),
    ("RMSPropOptimizer", "learning_rate"),
    ("AdadeltaOptimizer", "learning_rate"),
    ("NadamOptimizer", "learning_rate"),
    ("AdamWOptimizer", "learning_rate"),
    ("LearningRate", "learning_rate"),
    ("InputReader", "input_reader"),
    ("TFRecordInputReader", "input_path"),
    ("PreprocessingStep", "preprocessing_step"),
]

# Shown to be valid on purpose: zero as "off"/"no limit", a larger beam, no eval section. (A
# training reader's max_label_length of 0 is not: config_checks holds it to the decoders.)
VALID_EDITS = [
    ("train_config.num_steps", 0),
    ("train_config.save_checkpoint_secs", 0),
    ("train_config.save_summaries_steps", 0),
    ("train_config.log_every_n_steps", 0),
    ("train_config.max_checkpoints_to_keep", 0),
    ("train_config.gradient_clipping_by_norm", 0.0),
    ("train_config.optimizer.moving_average_decay", 0.999999),
    ("train_input_reader[0].num_readers", 0),
    ("train_input_reader[0].queue_capacity", 0),
    ("train_input_reader[0].num_epochs", 0),
    ("eval_config.num_examples", 0),
    ("eval_config.max_evals", 0),
    ("eval_config.protocol", 0),  # auto
    ("eval_config.protocol", 1),  # the model's character set
]


# --------------------------------------------------------------------------- walking a config


def _messages(message, path=""):
    """Yields (path, message) for every message set in the tree, the root included."""
    yield path, message
    for field, value in message.ListFields():
        if field.message_type is None:
            continue
        f_path = f"{path}.{field.name}" if path else field.name
        if field.is_repeated:
            for i, item in enumerate(value):
                yield from _messages(item, f"{f_path}[{i}]")
        else:
            yield from _messages(value, f_path)


def _resolve(config, path):
    """The message at a path produced by _messages."""
    message = config
    for token in filter(None, path.split(".")):
        match = re.fullmatch(r"(\w+)(?:\[(\d+)\])?", token)
        message = getattr(message, match.group(1))
        if match.group(2) is not None:
            message = message[int(match.group(2))]
    return message


def _copy(config):
    clone = type(config)()
    clone.CopyFrom(config)
    return clone


def _proto_mutation(base, path, edit):
    def apply():
        config = _copy(base)
        edit(_resolve(config, path))
        return config

    return apply


def _join(path, name):
    return f"{path}.{name}" if path else name


# --------------------------------------------------------------------------- proto mutations


def _set_value(field_name, value):
    def edit(message):
        field = message.DESCRIPTOR.fields_by_name[field_name]
        if field.is_repeated:
            container = getattr(message, field_name)
            del container[:]
            container.extend(value)
        else:
            setattr(message, field_name, value)

    return edit


def _out_of_range(tag, base):
    for path, message in _messages(base):
        name = message.DESCRIPTOR.name
        for (kind, field_name), values in BAD_VALUES.items():
            if kind != name:
                continue
            for value in values:
                yield Mutation(f"{tag}: {_join(path, field_name)} = {value!r}", "out of range",
                               _join(path, field_name),
                               _proto_mutation(base, path, _set_value(field_name, value)), False)
        # Zero entries of repeated sizes.
        if name == "TrainConfig":
            for i in range(len(message.batch_size)):
                yield Mutation(f"{tag}: {path}.batch_size[{i}] = 0", "out of range",
                               f"{path}.batch_size[{i}]", _proto_mutation(
                                   base, path, _zero_entry("batch_size", i)), False)
        if name == "ResNet":
            for i in range(len(message.block_depths)):
                yield Mutation(f"{tag}: {path}.block_depths[{i}] = 0", "out of range",
                               f"{path}.block_depths[{i}]", _proto_mutation(
                                   base, path, _zero_entry("block_depths", i)), False)


def _zero_entry(field_name, index):
    def edit(message):
        getattr(message, field_name)[index] = 0

    return edit


def _clear(name):
    def edit(message):
        message.ClearField(name)

    return edit


def _deletions(tag, base):
    for path, message in _messages(base):
        desc = message.DESCRIPTOR
        for kind, name in REQUIRED:
            if kind != desc.name:
                continue
            if name in desc.oneofs_by_name:
                if message.WhichOneof(name) is None:
                    continue
            elif name in desc.fields_by_name:
                field = desc.fields_by_name[name]
                present = len(getattr(message, name)) if field.is_repeated else (
                    message.HasField(name) if field.message_type is not None
                    else bool(getattr(message, name)))
                if not present:
                    continue
            yield Mutation(f"{tag}: delete {_join(path, name)}", "deleted required piece",
                           path if name in desc.oneofs_by_name else _join(path, name),
                           _proto_mutation(base, path, _clear(name)), False)


def _charset_duplicates(tag, base):
    for path, message in _messages(base):
        if message.DESCRIPTOR.name != "CharacterSet":
            continue
        for text in ("a b c a", "x y z 0 1 2 3 y", "é e é"):
            yield Mutation(f"{tag}: {path}.text_string = {text!r}", "duplicate characters",
                           f"{path}.text_string",
                           _proto_mutation(base, path, _set_text_string(text)), False)


def _set_text_string(text):
    def edit(message):
        message.text_string = text

    return edit


def _reader_counts(tag, base):
    if not base.HasField("train_config"):
        return
    sizes = list(base.train_config.batch_size)

    def extra_size(message):
        message.train_config.batch_size.append(sizes[0])

    def fewer_sizes(message):
        del message.train_config.batch_size[-1]

    def extra_reader(message):
        message.train_input_reader.add().CopyFrom(message.train_input_reader[0])

    for name, edit in (("one more batch_size", extra_size), ("one batch_size less", fewer_sizes),
                       ("one more train_input_reader", extra_reader)):
        yield Mutation(f"{tag}: {name}", "batch-size/reader mismatch", "train_config.batch_size",
                       _proto_mutation(base, "", edit), False)


def _missing_files(tag, base, data_dir):
    for path, message in _messages(base):
        if message.DESCRIPTOR.name != "TFRecordInputReader":
            continue
        for missing in (os.path.join(data_dir, "missing.tfrecord"),
                        os.path.join(data_dir, "nothing-*.tfrecord"),
                        f"{message.input_path},{os.path.join(data_dir, 'gone.tfrecord')}"):
            yield Mutation(f"{tag}: {path}.input_path = {missing!r}", "missing input file",
                           f"{path}.input_path",
                           _proto_mutation(base, path, _set_value("input_path", missing)), True)
    for path, message in _messages(base):
        if message.DESCRIPTOR.name == "CharacterSet":
            missing = os.path.join(data_dir, "no-such-charset.txt")
            yield Mutation(f"{tag}: {path}.text_file = {missing!r}", "missing input file",
                           f"{path}.text_file",
                           _proto_mutation(base, path, _set_value("text_file", missing)), False)
            break


# --------------------------------------------------------------------------- text mutations

_INT_TYPES = {FD.TYPE_INT32, FD.TYPE_INT64, FD.TYPE_UINT32, FD.TYPE_UINT64}
_UINT_TYPES = {FD.TYPE_UINT32, FD.TYPE_UINT64}


def _wrong_values(field, value):
    """Replacement values of the wrong type (or outside what the type can hold)."""
    kind = field.type
    if kind in _INT_TYPES:
        out = ["1.5", '"7"', "ten"]
        out.append("-1" if kind in _UINT_TYPES else "99999999999999999999")
        return out
    if kind in (FD.TYPE_FLOAT, FD.TYPE_DOUBLE):
        return ['"0.5"', "half"]
    if kind == FD.TYPE_BOOL:
        return ["2", "maybe"]
    if kind == FD.TYPE_STRING:
        return ["unquoted_word", "{ }"]
    if kind == FD.TYPE_ENUM:
        return ["NOT_A_VALUE", value.lower() if value.lower() != value else "x" + value]
    return []


def _text_lines(text, root):
    """Yields (line index, field descriptor or None for a block, path) for the text lines."""
    stack = [(root, "", {})]
    for index, line in enumerate(text.split("\n")):
        stripped = line.strip()
        if stripped == "}":
            stack.pop()
            continue
        match = re.fullmatch(r"(\w+)(: .*| \{)", stripped)
        if not match:
            continue
        desc, path, counts = stack[-1]
        field = desc.fields_by_name[match.group(1)]
        name = _join(path, field.name)
        if field.is_repeated:
            counts[field.name] = counts.get(field.name, -1) + 1
            name = f"{name}[{counts[field.name]}]"
        if stripped.endswith("{"):
            stack.append((field.message_type, name, {}))
            yield index, field, name, None
        else:
            yield index, field, name, match.group(2)[2:]


def _replace_line(lines, index, new_line):
    out = list(lines)
    out[index] = new_line
    return "\n".join(out)


def _text_mutation(text):
    return lambda: config_util.parse_pipeline_config(text, source="mutated.config")


def _typos(tag, lines, index, field, path, indent):
    typo = field.name[:-1] + ("x" if field.name[-1] != "x" else "y")
    rest = lines[index].strip()[len(field.name):]
    parent = re.sub(r"\[\d+\]$", "", path).rsplit(".", 1)[0] if "." in path else ""
    yield Mutation(f"{tag}: misspell {path}", "unknown field name", _join(parent, typo),
                   _text_mutation(_replace_line(lines, index, f"{indent}{typo}{rest}")), False)


def _text_mutations(tag, base):
    text = config_util.config_to_text(base)
    lines = text.split("\n")
    for index, field, path, value in _text_lines(text, base.DESCRIPTOR):
        indent = lines[index][: len(lines[index]) - len(lines[index].lstrip())]
        if value is None:  # a block: give the message field a scalar instead, or misspell it
            yield from _typos(tag, lines, index, field, path, indent)
            continue
        category = "unknown enum name" if field.type == FD.TYPE_ENUM else "wrong type"
        for wrong in _wrong_values(field, value):
            mutated = _replace_line(lines, index, f"{indent}{field.name}: {wrong}")
            yield Mutation(f"{tag}: {path} = {wrong}", category, path, _text_mutation(mutated),
                           False)


def _override_mutations(tag, base):
    """Bad --set assignments, which go through config_util.merge_overrides."""
    assignments = [
        ("train_config.batch_size=-4", "train_config.batch_size"),
        ("train_config.num_steps=many", "train_config.num_steps"),
        ("train_config.optimizer.use_moving_average=perhaps",
         "train_config.optimizer.use_moving_average"),
        ("train_config.data_augmentation_options[0].resize_image.method=FANCY",
         "train_config.data_augmentation_options[0].resize_image.method"),
        ("train_config.sync_replicas.value=1", "train_config.sync_replicas"),
        ("train_input_reader[7].shuffle=false", "train_input_reader[7]"),
        ("eval_config.batch_size=99999999999", "eval_config.batch_size"),
    ]
    for assignment, path in assignments:
        yield Mutation(f"{tag}: --set {assignment}", "bad override", path,
                       lambda a=assignment: config_util.merge_overrides(base, None, [a]), False)


# --------------------------------------------------------------------------- generator and runner


def base_configs(data_dir):
    """The shipped configs with every input path pointing at an existing (empty) file."""
    os.makedirs(data_dir, exist_ok=True)
    bases = []
    for path in SHIPPED:
        config = config_util.load_pipeline_config(path)
        for i, (_, message) in enumerate(
                m for m in _messages(config) if m[1].DESCRIPTOR.name == "TFRecordInputReader"):
            existing = os.path.join(data_dir, f"{os.path.basename(path)}-{i}.tfrecord")
            open(existing, "wb").close()
            message.input_path = existing
        bases.append((os.path.basename(path), config))
    return bases


def generate(data_dir):
    """All mutations of all shipped configs (a list of Mutation)."""
    mutations = []
    for tag, base in base_configs(data_dir):
        for family in (_deletions(tag, base), _out_of_range(tag, base),
                       _charset_duplicates(tag, base), _reader_counts(tag, base),
                       _missing_files(tag, base, data_dir), _text_mutations(tag, base),
                       _override_mutations(tag, base)):
            mutations.extend(family)
    return mutations


def check(mutation):
    """Returns None when the mutation is rejected properly, else a description of what happened."""
    try:
        config = mutation.apply()
        config_util.validate(config, check_files=mutation.check_files)
    except config_util.ConfigError as error:
        message = str(error)
        if mutation.path and mutation.path not in message:
            return f"{mutation.name}: rejected without the path {mutation.path!r}: {message}"
        return None
    except Exception as error:  # noqa: BLE001 - any other exception is the failure recorded
        return f"{mutation.name}: {type(error).__name__} instead of ConfigError: {error}"
    return f"{mutation.name}: accepted"


def check_valid_edits(data_dir):
    """Failures among VALID_EDITS applied to every shipped config (should be none)."""
    failures = []
    for tag, base in base_configs(data_dir):
        for path, value in VALID_EDITS:
            if not path.startswith(tuple(f.name for f, _ in base.ListFields())):
                continue
            edited = config_util.merge_overrides(base, None, [f"{path}={value}"])
            try:
                config_util.validate(edited, check_files=True)
            except config_util.ConfigError as error:
                failures.append(f"{tag}: {path}={value} rejected: {error}")
    return failures


def run_all(data_dir):
    """Checks every mutation; returns a Result with per-category figures."""
    mutations = generate(data_dir)
    failures = [f for f in map(check, mutations) if f]
    by_category = collections.Counter(m.category for m in mutations)
    held = len(mutations) - len(failures)
    figure = (f"{len(mutations)} mutated configs from {len(SHIPPED)} shipped: {held} rejected "
              f"with ConfigError naming the field path (" +
              ", ".join(f"{c} {n}" for c, n in sorted(by_category.items())) + ")")
    return Result("Config mutations", len(mutations), held, figure, failures)
