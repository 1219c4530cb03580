"""Retired config fields: deprecated in the protos, dropped (or renamed) with a warning or refused
with a reason while a config loads (aster/utils/config_migrations.py)."""

import glob
import logging
import os

import pytest

from aster.protos import pipeline_pb2
from aster.utils import config_checks, config_util, retired_fields
from aster.utils.config_util import ConfigError

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
MODEL = "model { multi_predictors_recognition_model { %s } }"
RESNET = MODEL % "feature_extractor { convnet { resnet { %s net_depth: RESNET_30 } } }"
CRNN = MODEL % "feature_extractor { convnet { crnn_net { %s } } }"
ATTENTION = MODEL % 'predictor { name: "F" attention_predictor { %s max_num_steps: 9 } }'
LM = MODEL % 'predictor { name: "F" attention_predictor { lm_rnn_cell { %s } } }'
TRAIN = "train_config { %s num_steps: 7 }"
EVAL = "eval_config { %s num_examples: 5 }"
READER = 'train_input_reader { %s tf_record_input_reader { input_path: "a" } }'

# (template, field, a value that may be dropped, a value that is refused or None, the path)
CASES = [
    (TRAIN, "from_detection_checkpoint", "true", None, "train_config"),
    (TRAIN, "startup_delay_steps", "15", None, "train_config"),
    (EVAL, "visualization_export_dir", '"/tmp/x"', None, "eval_config"),
    (EVAL, "export_path", '"/tmp/x"', None, "eval_config"),
    (EVAL, "eval_instance_masks", "false", "true", "eval_config"),
    (READER, "label_map_path", '""', '"labels.pbtxt"', "train_input_reader[0]"),
    (READER, "min_after_dequeue", "1000", None, "train_input_reader[0]"),
    (READER, "load_instance_masks", "false", "true", "train_input_reader[0]"),
    (LM, "restore_path", '""', '"lm.ckpt"',
     "model.multi_predictors_recognition_model.predictor[0].attention_predictor.lm_rnn_cell"),
    (RESNET, "net_type", "SINGLE_BRANCH", "TWO_BRANCHES",
     "model.multi_predictors_recognition_model.feature_extractor.convnet.resnet"),
    (CRNN, "net_type", "SINGLE_BRANCH", "THREE_BRANCHES",
     "model.multi_predictors_recognition_model.feature_extractor.convnet.crnn_net"),
    (ATTENTION, "multi_attention", "false", "true",
     "model.multi_predictors_recognition_model.predictor[0].attention_predictor"),
    (EVAL, "metrics_set", '"recognition_metrics"', '"coco_detection_metrics"', "eval_config"),
    ("train_input_reader { %s }", "external_input_reader", None, "{ }", "train_input_reader[0]"),
]


def _types(root=pipeline_pb2.TrainEvalPipelineConfig.DESCRIPTOR, seen=None):
    seen = {} if seen is None else seen
    if root.name not in seen:
        seen[root.name] = root
        for field in root.fields:
            if field.message_type is not None:
                _types(field.message_type, seen)
    return seen


def test_every_retired_field_is_deprecated_in_its_message_and_has_a_case():
    types = _types()
    for type_name, field in retired_fields.RETIRED:
        assert type_name in types, type_name
        assert types[type_name].fields_by_name[field].GetOptions().deprecated, (type_name, field)
    cases = {field for _, field, *_ in CASES} | {"bfloat16"}
    assert cases == {f for _, f in retired_fields.RETIRED}


def test_every_deprecated_field_is_retired():
    for name, message_type in _types().items():
        for field in message_type.fields:
            if field.GetOptions().deprecated:
                assert retired_fields.lookup(name, field.name) is not None, (name, field.name)


@pytest.mark.parametrize("template, field, harmless, refused, path",
                         [c for c in CASES if c[2] is not None])
def test_a_harmless_value_is_dropped_with_a_warning(template, field, harmless, refused, path,
                                                   caplog):
    text = template % f"{field}: {harmless}  # old config\n"
    with caplog.at_level(logging.WARNING, logger="aster.config"):
        config = config_util.parse_pipeline_config(text)
    assert config == config_util.parse_pipeline_config(template % "")
    warnings = [r.getMessage() for r in caplog.records if r.levelno == logging.WARNING]
    assert len(warnings) == 1 and f"{path}.{field} was removed: " in warnings[0]


@pytest.mark.parametrize("template, field, harmless, refused, path",
                         [c for c in CASES if c[3] is not None])
def test_a_value_asking_for_what_is_not_built_is_refused(template, field, harmless, refused,
                                                         path):
    replacement = retired_fields.lookup(path.rsplit(".", 1)[-1], field)
    with pytest.raises(ConfigError) as error:
        config_util.parse_pipeline_config(template % f"{field}: {refused}")
    message = str(error.value)
    shown = "{...}" if refused == "{ }" else refused.replace('"', "'")
    assert f"{path}.{field} was removed" in message and shown in message
    assert replacement is None or replacement.replacement in message


def test_several_retired_fields_and_the_rest_of_the_config_survive():
    text = (TRAIN % "startup_delay_steps: 15 from_detection_checkpoint: false"
            + READER % "min_after_dequeue: 4 label_map_path: ''")
    config = config_util.parse_pipeline_config(text)
    assert config.train_config.num_steps == 7
    assert config.train_input_reader[0].tf_record_input_reader.input_path == "a"


def test_an_override_of_a_retired_field_is_refused():
    with pytest.raises(ConfigError, match=r"train_config.startup_delay_steps was removed: .*"
                                          r"an override cannot set it"):
        config_util.merge_overrides(config_util.parse_pipeline_config(TRAIN % ""),
                                    assignments=["train_config.startup_delay_steps=3"])


def test_a_typo_is_still_an_unknown_field():
    with pytest.raises(ConfigError, match=r"unknown field 'num_stepz'.*did you mean 'num_steps'"):
        config_util.parse_pipeline_config("train_config { num_stepz: 3 }")


@pytest.mark.parametrize("path", sorted(glob.glob(os.path.join(ROOT, "configs", "*.config"))))
def test_shipped_configs_name_no_retired_field(path, caplog):
    with caplog.at_level(logging.WARNING, logger="aster.config"):
        config_util.load_pipeline_config(path)
    assert not caplog.records


@pytest.mark.parametrize("value", [True, False])
def test_bfloat16_is_read_as_mixed_precision_with_one_warning(value, caplog):
    text = TRAIN % f"bfloat16: {'true' if value else 'false'}"
    with caplog.at_level(logging.WARNING, logger="aster.config"):
        config = config_util.parse_pipeline_config(text)
    assert config.train_config.mixed_precision is value
    assert not config.train_config.HasField("bfloat16")
    [warning] = [r.getMessage() for r in caplog.records]
    assert "train_config.bfloat16 was renamed: write mixed_precision: true instead" in warning


def test_bfloat16_beside_a_different_mixed_precision_is_refused():
    with pytest.raises(ConfigError, match=r"bfloat16 was renamed.*beside mixed_precision"):
        config_util.parse_pipeline_config(TRAIN % "bfloat16: true mixed_precision: false")


def test_a_retired_field_set_in_code_is_a_problem_of_validate_and_the_builders():
    config = config_util.parse_pipeline_config(TRAIN % "")
    config.train_config.startup_delay_steps = 3
    [problem] = [p for p in config_checks.find_problems(config) if "startup" in p]
    assert problem.startswith("train_config.startup_delay_steps was removed: ")
    with pytest.raises(ConfigError, match="startup_delay_steps was removed"):
        config_checks.check(config.train_config, "train_config")


def test_a_retired_field_in_an_override_snippet_is_migrated(caplog):
    with caplog.at_level(logging.WARNING, logger="aster.config"):
        config = config_util.merge_overrides(config_util.parse_pipeline_config(TRAIN % ""),
                                             "train_config { bfloat16: true }")
    assert config.train_config.mixed_precision and not config.train_config.HasField("bfloat16")
