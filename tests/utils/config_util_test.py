import os

import pytest

from aster.utils import config_util
from aster.utils.config_util import ConfigError

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
PAPER = os.path.join(ROOT, "configs", "aster_paper.config")
TINY = os.path.join(ROOT, "configs", "tiny.config")
MODEL = "model.multi_predictors_recognition_model"


def _tiny():
    return config_util.load_pipeline_config(TINY)


@pytest.mark.parametrize("path", [PAPER, TINY])
def test_shipped_configs_round_trip_losslessly(path, tmp_path):
    config = config_util.load_pipeline_config(path)
    written = config_util.save_pipeline_config(config, str(tmp_path))
    assert written == str(tmp_path / "pipeline.config")
    assert config_util.load_pipeline_config(written) == config
    assert config_util.parse_pipeline_config(config_util.config_to_text(config)) == config


@pytest.mark.parametrize("path", [PAPER, TINY])
def test_shipped_configs_validate(path):
    config_util.validate(config_util.load_pipeline_config(path))


def test_paper_config_has_published_setup():
    config = config_util.load_pipeline_config(PAPER)
    model = config.model.multi_predictors_recognition_model
    assert model.spatial_transformer.init_bias_pattern == "sine"
    assert [p.name for p in model.predictor] == ["Forward", "Backward"]
    assert [p.attention_predictor.reverse for p in model.predictor] == [False, True]
    assert list(config.train_config.batch_size) == [32, 32]
    schedule = config.train_config.optimizer.adadelta_optimizer.learning_rate
    steps = [s.step for s in schedule.manual_step_learning_rate.schedule]
    assert steps == [600000, 800000, 1000000]
    assert config.train_config.num_steps == 1200000


def test_missing_file_names_the_file(tmp_path):
    with pytest.raises(ConfigError, match="nope.config"):
        config_util.load_pipeline_config(str(tmp_path / "nope.config"))


def test_unknown_field_in_file_suggests_nearest(tmp_path):
    path = tmp_path / "bad.config"
    path.write_text("train_config {\n  num_step: 3\n}\n")
    with pytest.raises(ConfigError, match=r"line 2.*'num_step' in train_config; did you mean 'num_steps'"):
        config_util.load_pipeline_config(str(path))


def test_wrong_type_in_file_names_line(tmp_path):
    path = tmp_path / "bad.config"
    path.write_text('train_config { num_steps: "ten" }\n')
    with pytest.raises(ConfigError, match=r"bad.config: line 1"):
        config_util.load_pipeline_config(str(path))


def test_unknown_enum_in_file_suggests(tmp_path):
    path = tmp_path / "bad.config"
    path.write_text("eval_config { data_preprocessing_steps { resize_image { method: BILINEA } } }")
    with pytest.raises(ConfigError, match=r"'BILINEA'.*did you mean 'BILINEAR'"):
        config_util.load_pipeline_config(str(path))


def test_snippet_override_sets_scalar_and_replaces_repeated():
    merged = config_util.merge_overrides(
        _tiny(), "train_config { num_steps: 7 batch_size: 4 }"
    )
    assert merged.train_config.num_steps == 7
    assert list(merged.train_config.batch_size) == [4]
    # untouched fields survive the merge
    assert merged.train_config.optimizer.HasField("adam_optimizer")


def test_snippet_override_does_not_modify_input():
    config = _tiny()
    config_util.merge_overrides(config, "train_config { num_steps: 7 }")
    assert config.train_config.num_steps == 20


def test_malformed_snippet_raises_config_error():
    with pytest.raises(ConfigError, match="config override"):
        config_util.merge_overrides(_tiny(), "train_config { num_steps: 7 ")


def test_snippet_unknown_field_suggests():
    with pytest.raises(ConfigError, match="did you mean 'num_steps'"):
        config_util.merge_overrides(_tiny(), "train_config { num_stepz: 7 }")


def test_dotted_scalar_assignment():
    merged = config_util.merge_overrides(_tiny(), assignments=["train_config.num_steps=10"])
    assert merged.train_config.num_steps == 10


def test_dotted_indexed_repeated_message_assignment():
    merged = config_util.merge_overrides(
        _tiny(), assignments=["train_input_reader[0].tf_record_input_reader.input_path=a.tfrecord"]
    )
    assert merged.train_input_reader[0].tf_record_input_reader.input_path == "a.tfrecord"


def test_dotted_index_equal_to_length_appends():
    merged = config_util.merge_overrides(
        _tiny(),
        assignments=[
            "train_input_reader[1].tf_record_input_reader.input_path=b.tfrecord",
            "train_config.batch_size[1]=4",
        ],
    )
    assert len(merged.train_input_reader) == 2
    assert list(merged.train_config.batch_size) == [8, 4]


def test_dotted_enum_by_name_and_bool_and_float():
    merged = config_util.merge_overrides(
        _tiny(),
        assignments=[
            f"{MODEL}.predictor[0].attention_predictor.label_map.character_set.built_in_set=ALLCASES",
            f"{MODEL}.keypoint_supervision=true",
            f"{MODEL}.spatial_transformer.margin_x=0.05",
        ],
    )
    model = merged.model.multi_predictors_recognition_model
    charset = model.predictor[0].attention_predictor.label_map.character_set
    assert charset.built_in_set == charset.ALLCASES
    assert model.keypoint_supervision is True
    assert abs(model.spatial_transformer.margin_x - 0.05) < 1e-7


def test_dotted_repeated_scalar_list_replaces():
    merged = config_util.merge_overrides(_tiny(), assignments=["train_config.batch_size=16,16"])
    assert list(merged.train_config.batch_size) == [16, 16]


def test_dotted_message_value_replaces_message():
    merged = config_util.merge_overrides(
        _tiny(),
        assignments=["train_config.optimizer={adadelta_optimizer { rho: 0.9 }}"],
    )
    optimizer = merged.train_config.optimizer
    assert optimizer.WhichOneof("optimizer") == "adadelta_optimizer"
    assert abs(optimizer.adadelta_optimizer.rho - 0.9) < 1e-7


def test_dotted_string_quotes_are_stripped():
    merged = config_util.merge_overrides(
        _tiny(), assignments=['train_config.fine_tune_checkpoint="/tmp/x y"']
    )
    assert merged.train_config.fine_tune_checkpoint == "/tmp/x y"


@pytest.mark.parametrize(
    "assignment,pattern",
    [
        ("train_config.num_stepz=3", r"unknown field 'num_stepz' in train_config; did you mean 'num_steps'"),
        ("trian_config.num_steps=3", r"did you mean 'train_config'"),
        ("train_config.num_steps=ten", r"train_config.num_steps: expected an integer, got 'ten'"),
        ("train_config.num_steps=-1", r"train_config.num_steps: -1 is out of range"),
        ("train_config.sync_replicas=maybe", r"expected true or false"),
        ("train_config.gradient_clipping_by_norm=abc", r"expected a number"),
        (f"{MODEL}.feature_extractor.convnet.resnet.net_depth=RESNET_5",
         r"unknown NetDepth value 'RESNET_5'; did you mean 'RESNET_50'"),
        ("train_input_reader[3].shuffle=false", r"index 3 is out of range \(train_input_reader has 1"),
        ("train_config.batch_size[5]=1", r"index 5 is out of range"),
        ("train_input_reader.shuffle=false", r"give an index like train_input_reader\[0\]"),
        ("train_config[0].num_steps=1", r"not a repeated field"),
        ("train_config.num_steps", r"not of the form path=value"),
        ("train_config..num_steps=1", r"bad path element"),
        ("train_config.num_steps.x=1", r"train_config.num_steps is not a message"),
        ("train_config.optimizer={adam_optimizer { nope: 1 }}", r"bad Optimizer value"),
    ],
)
def test_bad_assignment_names_field_and_value(assignment, pattern):
    with pytest.raises(ConfigError, match=pattern):
        config_util.merge_overrides(_tiny(), assignments=[assignment])


@pytest.mark.parametrize(
    "assignment,pattern",
    [
        ("train_config.batch_size=4,4",
         r"train_config.batch_size: has 2 entries but there is 1 train_input_reader"),
        ("train_config.batch_size=0", r"train_config.batch_size\[0\]: must be > 0, got 0"),
        (f"{MODEL}.predictor[0].attention_predictor.beam_width=0", r"beam_width: must be >= 1"),
        (f"{MODEL}.predictor[0].attention_predictor.max_num_steps=0", r"max_num_steps: must be >= 2"),
        (f"{MODEL}.predictor[0].attention_predictor.label_map.character_set.text_string=a b a",
         r"character_set.text_string: character 'a' appears more than once"),
        (f"{MODEL}.predictor[1].name=Forward", r"predictor\[1\].name: 'Forward' is already used by predictor\[0\]"),
        (f"{MODEL}.spatial_transformer.num_control_points=7", r"num_control_points: must be an even"),
        (f"{MODEL}.spatial_transformer.init_bias_pattern=wave", r"init_bias_pattern: 'wave' is not"),
        ("train_input_reader[0].tf_record_input_reader.input_path=", r"input_path: is empty"),
        ("train_config.optimizer={}", r"train_config.optimizer: optimizer is not set"),
        ("train_input_reader[0].length_curriculum={steps: 10}",
         r"train_input_reader\[0\].length_curriculum.max_label_length: must be >= 1 when"),
        ("train_input_reader[0]={max_label_length: 5 length_curriculum {steps: 10 max_label_length: 6}"
         " tf_record_input_reader {input_path: 'a'}}",
         r"length_curriculum.max_label_length: 6 is above the reader's max_label_length \(5\)"),
        ("eval_input_reader[0].length_curriculum={steps: 10 max_label_length: 6}",
         r"eval_input_reader\[0\].length_curriculum: applies to training readers only"),
        (f"{MODEL}.regression_loss={{sequence_cross_entropy_loss {{}}}}",
         r"regression_loss: must be l2_regression_loss"),
        ("train_config.data_augmentation_options[0]={}", r"preprocessing_step is not set"),
        ("train_config.data_augmentation_options[0]={random_adjust_contrast {min_delta: 2 max_delta: 1}}",
         r"min_delta: 2.0 is greater than max_delta 1.0"),
    ],
)
def test_validate_rejects_with_field_path(assignment, pattern):
    config = config_util.merge_overrides(_tiny(), assignments=[assignment])
    with pytest.raises(ConfigError, match=pattern):
        config_util.validate(config)


def test_validate_rejects_a_model_whose_predictors_are_all_auxiliary():
    config = config_util.merge_overrides(_tiny(), assignments=[
        f"{MODEL}.predictor[0].auxiliary=true"])
    config_util.validate(config)  # one decoded predictor left
    config = config_util.merge_overrides(config, assignments=[
        f"{MODEL}.predictor[1].auxiliary=true"])
    with pytest.raises(ConfigError, match=r"predictor: every predictor is auxiliary"):
        config_util.validate(config)


def test_validate_requires_model():
    config = _tiny()
    config.ClearField("model")
    with pytest.raises(ConfigError, match="model: is not set"):
        config_util.validate(config)


def test_validate_check_files_reports_missing_input(tmp_path):
    config = config_util.merge_overrides(
        _tiny(),
        assignments=[
            f"train_input_reader[0].tf_record_input_reader.input_path={tmp_path}/x*",
            f"eval_input_reader[0].tf_record_input_reader.input_path={tmp_path}/x1",
        ],
    )
    config_util.validate(config)  # without check_files the path is not looked at
    with pytest.raises(ConfigError, match=r"matches no file"):
        config_util.validate(config, check_files=True)
    (tmp_path / "x1").write_bytes(b"")
    config_util.validate(config, check_files=True)


def test_save_is_atomic_and_overwrites(tmp_path):
    target = tmp_path / "out.config"
    target.write_text("old")
    config_util.save_pipeline_config(_tiny(), str(target))
    assert config_util.load_pipeline_config(str(target)) == _tiny()
    assert [p.name for p in tmp_path.iterdir()] == ["out.config"]


def test_diff_lists_changed_leaves():
    a = _tiny()
    b = config_util.merge_overrides(a, assignments=["train_config.num_steps=3"])
    assert config_util.diff(a, b) == [("train_config.num_steps", 20, 3)]
    assert config_util.diff(a, a) == []
