"""Validation and the builders agree: every numeric field of the shipped configs, pushed across
its boundaries, is accepted by both `config_util.validate` and the builders (model graph, input
pipeline, optimizer) or rejected by both with the same field path.

The builders call `config_checks.check` on their message before building, so agreement on the
rules is by construction; what this shows is that no value the rules accept fails later in a
builder, the core or TensorFlow's graph construction (a pooling that runs out of height, a
zero-sized kernel), and that the error the builder raises is the validator's.

Values tried per field: -1, 0, 1, 2 and the shipped value +- 1 for integers (unsigned: no
negatives), -0.5, 0, 0.25, 0.5, 1, 2 and twice the shipped value for floats. A (message type,
field, value) is built once, in the cheapest shipped config that has the field.
"""

import glob
import os

import pytest
from google.protobuf import descriptor

from aster.builders import input_reader_builder, model_builder, optimizer_builder
from aster.tf_setup import tf
from aster.utils import config_checks, config_util
from tests import trainer_helpers

FD = descriptor.FieldDescriptor
ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
# Cheapest to build first: a field is built in the first config that has it.
ORDER = ("tiny", "crnn_ctc", "demo_cpu", "demo_cpu_el", "demo_cpu_ru", "base_cpu", "base_cpu_stage2",
         "base_cpu_stage3", "base_cpu_stage4", "base_cpu_stage5", "base_cpu_stage6", "base_cpu_stage7",
         "base_cpu_stage8", "base_cpu_stage9", "base_cpu_stage10",
         "base_cpu_stage11", "finetune_cpu", "aster_paper")
CONFIGS = sorted(glob.glob(os.path.join(ROOT, "configs", "*.config")),
                 key=lambda p: ORDER.index(os.path.basename(p).split(".")[0]))
_INTS = {FD.TYPE_INT32, FD.TYPE_INT64, FD.TYPE_SINT32, FD.TYPE_SINT64}
_UINTS = {FD.TYPE_UINT32, FD.TYPE_UINT64}
_FLOATS = {FD.TYPE_FLOAT, FD.TYPE_DOUBLE}
# Fields that size the work rather than the graph: huge values only cost time, and which
# values are valid is covered elsewhere (training loops, data).
_NOT_BUILT = {"num_steps", "num_examples", "max_evals", "eval_interval_secs"}


def _values(field, value):
    if field.type in _FLOATS:
        return sorted({-0.5, 0.0, 0.25, 0.5, 1.0, 2.0, round(2 * value, 6)})
    ints = {0, 1, 2, value - 1, value + 1}
    if field.type in _INTS:
        ints.add(-1)
    return sorted(v for v in ints if v >= 0 or field.type in _INTS)


def _numeric_fields(message, path=""):
    """(path, message, field, value) of every set numeric field under message."""
    for field, value in message.ListFields():
        f_path = f"{path}.{field.name}" if path else field.name
        items = list(enumerate(value)) if field.is_repeated else [(None, value)]
        for index, item in items:
            i_path = f_path if index is None else f"{f_path}[{index}]"
            if field.message_type is not None:
                yield from _numeric_fields(item, i_path)
            elif field.type in _INTS | _UINTS | _FLOATS:
                yield i_path, message, field, item


def _fields():
    """(config file, path, field descriptor, shipped value), once per (message type, field)."""
    seen, fields = set(), []
    for config_path in CONFIGS:
        config = config_util.load_pipeline_config(config_path)
        for path, message, field, value in _numeric_fields(config):
            key = (message.DESCRIPTOR.name, field.name, _context(message))
            if field.name not in _NOT_BUILT and key not in seen:
                seen.add(key)
                fields.append((config_path, path, field, value))
    return fields


def _context(message):
    """The model's input size means different things with and without a rectifier, per encoder."""
    if message.DESCRIPTOR.name != "MultiPredictorsRecognitionModel":
        return None
    return (message.HasField("spatial_transformer"),
            message.feature_extractor.convnet.WhichOneof("convnet_oneof"))


def _load(config_path, path, value):
    config = config_util.load_pipeline_config(config_path)
    config_util.set_field(config, f"{path}={value}")
    return config


def _cases():
    """(config file, path, value, problems) to build: per field every value validation rejects
    (the builders must reject it too, at once) and the lowest and highest value it accepts (the
    builders must build them: values in between add graph builds, not boundaries)."""
    cases = []
    for config_path, path, field, shipped in _fields():
        accepted = []
        for value in _values(field, shipped):
            problems = config_checks.find_problems(_load(config_path, path, value))
            if problems:
                cases.append((config_path, path, value, problems))
            else:
                accepted.append(value)
        for value in sorted({accepted[0], accepted[-1]} if accepted else ()):
            cases.append((config_path, path, value, []))
    return cases


def _part(path):
    if path.startswith("model."):
        return "model"
    if path.startswith("train_config.optimizer."):
        return "optimizer"
    return "eval_input" if path.startswith("eval_") else "train_input"


def _build(config, part, records):
    """Builds the part of what aster-train builds that the field is in; the exception or None."""
    for reader in list(config.train_input_reader) + list(config.eval_input_reader):
        reader.ClearField("input_reader")
        reader.tf_record_input_reader.input_path = records
    with tf.Graph().as_default():
        try:
            global_step = tf.train.get_or_create_global_step()
            if part in ("model", "train_input"):
                config_checks.check_agreement(config)  # as trainer.train does
            if part == "model":
                _build_model(config.model)
            elif part == "optimizer":
                optimizer = optimizer_builder.build(config.train_config.optimizer, global_step)
                weight = tf.get_variable("agreement_weight", [], tf.float32)
                optimizer.minimize(tf.square(weight), global_step=global_step)
            elif part == "train_input":
                config_checks.check(config.train_config, "train_config")  # as trainer.train does
                input_reader_builder.build_batch_queue(
                    config.train_input_reader, config.train_config, 1).dequeue()
            else:
                config_checks.check_eval(config)  # as the Evaluator does
                for i, reader in enumerate(config.eval_input_reader):
                    input_reader_builder.build_eval_batches(reader, config.eval_config, 2,
                                                            f"eval_input_reader[{i}]")
        except Exception as error:  # anything but the validator's ConfigError is a disagreement
            return error
    return None


def _build_model(model_config):
    """The training graph of the model on a batch of two: preprocess, predict, loss."""
    model = model_builder.build(model_config, is_training=True)
    recognition = getattr(model_config, model_config.WhichOneof("model_oneof"))
    images = tf.zeros([2, recognition.input_height, recognition.input_width, 3])
    stn = recognition.spatial_transformer
    keypoints = tf.zeros([2, 2 * stn.num_control_points]) if recognition.keypoint_supervision \
        else None
    model.provide_groundtruth(tf.constant(["ab", "c"]), keypoints)
    model.loss(model.predict(model.preprocess(images)))


def _path_of(message):
    return message.split(": ", 1)[0]


def disagreements(records):
    """Every case where validation and the builders differ, as one line each."""
    found = []
    for config_path, path, value, problems in _cases():
        error = _build(_load(config_path, path, value), _part(path), records)
        case = f"{os.path.basename(config_path)}: {path} = {value}"
        if error is not None and not isinstance(error, config_checks.ConfigError):
            found.append(f"{case}: the builders fail with {type(error).__name__}: "
                         f"{str(error).splitlines()[0][:300]}")
        elif problems and error is None:
            found.append(f"{case}: validate rejects ({problems[0]}), the builders accept")
        elif error is not None and not problems:
            found.append(f"{case}: the builders reject ({error}), validate accepts")
        elif error is not None and _path_of(str(error)) != _path_of(problems[0]):
            found.append(f"{case}: validate names {problems[0]!r}, the builders {error}")
    return found


@pytest.fixture(scope="module")
def records(tmp_path_factory):
    path = str(tmp_path_factory.mktemp("agreement") / "words.tfrecord")
    trainer_helpers.write_records(path, count=8)
    return path


def test_every_numeric_field_of_the_shipped_configs_is_mutated_across_its_boundary():
    cases = _cases()
    mutated = {(c, p) for c, p, _, _ in cases}
    fields = _fields()
    assert len(fields) >= 40
    assert {(c, p) for c, p, _, _ in fields} == mutated
    assert sum(1 for *_, problems in cases if problems) >= 80  # most fields have a boundary


@pytest.mark.slow
def test_validation_and_the_builders_accept_and_reject_the_same_values(records):
    found = disagreements(records)
    assert not found, "\n".join(found)
