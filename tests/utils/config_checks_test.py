"""Facts stated in several messages must agree (aster/utils/config_checks.py, config_type_rules):
every problem names both fields."""

import os

import pytest

from aster.utils import config_checks, config_util

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
MODEL = "model.multi_predictors_recognition_model"


def _demo(*assignments):
    config = config_util.load_pipeline_config(os.path.join(ROOT, "configs", "demo_cpu.config"))
    return config_util.merge_overrides(config, None, assignments)


def _problems(config):
    return config_checks.find_problems(config)


def test_the_demo_config_has_no_disagreement():
    assert _problems(_demo()) == []
    config_checks.check_agreement(_demo())


def test_predictors_with_other_characters_name_both_label_maps():
    config = _demo(f"{MODEL}.predictor[2].ctc_predictor.label_map.character_set."
                   "built_in_set=ALLCASES")
    [problem] = _problems(config)
    assert problem.startswith(f"{MODEL}.predictor[2].ctc_predictor.label_map.character_set: ")
    assert f"{MODEL}.predictor[0].attention_predictor.label_map.character_set" in problem
    assert "62 characters against 36" in problem and "'ABCDEFGHIJKL'..." in problem


def test_same_characters_in_another_order_agree():
    config = _demo(f"{MODEL}.predictor[1].attention_predictor.label_map.character_set."
                   "text_string=" + " ".join("zyxwvutsrqponmlkjihgfedcba9876543210"))
    assert _problems(config) == []


def test_a_training_filter_of_other_characters_names_the_filter_and_the_label_map():
    config = _demo("train_config.data_augmentation_options[1].string_filtering.include_charset."
                   "built_in_set=ALLCASES_SYMBOLS")
    [problem] = _problems(config)
    assert problem.startswith("train_config.data_augmentation_options[1].string_filtering."
                              "include_charset: keeps other characters than "
                              f"{MODEL}.predictor[0].attention_predictor.label_map.character_set")
    with pytest.raises(config_checks.ConfigError, match="data_augmentation_options"):
        config_checks.check_agreement(config)


@pytest.mark.parametrize("limit, ok", [(0, False), (16, True), (17, True), (18, False)])
def test_a_training_reader_holds_no_label_longer_than_the_decoders(limit, ok):
    config = _demo(f"train_input_reader[0].max_label_length={limit}",
                   "train_input_reader[0].length_curriculum.max_label_length=6")
    problems = _problems(config)
    if ok:
        assert problems == []
        return
    [problem] = problems
    assert problem.startswith("train_input_reader[0].max_label_length: ")
    assert f"{MODEL}.predictor[0].attention_predictor.max_num_steps is 18" in problem
    assert "set it to 17 or less" in problem


def test_the_decoder_with_the_fewest_steps_sets_the_limit():
    config = _demo(f"{MODEL}.predictor[1].attention_predictor.max_num_steps=12",
                   "train_input_reader[0].length_curriculum.max_label_length=6")
    [problem] = _problems(config)
    assert f"{MODEL}.predictor[1].attention_predictor.max_num_steps is 12" in problem


def test_an_eval_text_step_in_a_built_config_is_refused():
    config = _demo()
    config.eval_config.data_preprocessing_steps.add().string_filtering.lower_case = True
    [problem] = _problems(config)
    assert problem.startswith("eval_config.data_preprocessing_steps[1].string_filtering: "
                              "evaluation scores the transcript as written")
    with pytest.raises(config_checks.ConfigError, match="scores the transcript as written"):
        config_checks.check_eval(config)


def test_a_wider_model_input_than_the_resize_steps_names_each_step_and_the_model_size():
    config = _demo(f"{MODEL}.input_width=160", f"{MODEL}.spatial_transformer.output_w=160")
    problems = _problems(config)
    assert [p.split(":")[0] for p in problems] == [
        "train_config.data_augmentation_options[0].resize_image",
        "eval_config.data_preprocessing_steps[0].resize_image"]
    assert f"resizes to 32x100 but {MODEL}.input_height x input_width is 32x160" in problems[0]
    with pytest.raises(config_checks.ConfigError, match=r"^train_config.*resize_image"):
        config_checks.check_agreement(config)
    # aster-eval checks its own steps only
    with pytest.raises(config_checks.ConfigError, match=r"^eval_config.*resize_image"):
        config_checks.check_eval(config)


def test_resize_steps_at_the_model_input_size_agree():
    config = _demo(f"{MODEL}.input_width=160",
                   "train_config.data_augmentation_options[0].resize_image.target_width=160",
                   "eval_config.data_preprocessing_steps[0].resize_image.target_width=160")
    assert _problems(config) == []
    config.train_config.data_augmentation_options.add().resize_image_random_method.target_width = 9
    [problem] = _problems(config)
    assert problem.startswith("train_config.data_augmentation_options[2]."
                              "resize_image_random_method: resizes to 512x9")
