"""The rules of single config fields: ranges by (message type, field), orders of field pairs.

`check_fields(message, path, problems)` applies them to the fields of one message (effective
values: set or default); aster.utils.config_checks calls it for every message of a config.
"""

import re

MIN_DECODE_STEPS = 2  # an attention decoder needs a step for a character and one for EOS
RESNET_BLOCKS = 5

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


def check_fields(message, path, problems):
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
