"""`base:` configs (aster/utils/config_util.py) and the migrations applied while loading
(aster/utils/config_migrations.py)."""

import glob
import logging
import os

import pytest

from aster.utils import config_checks, config_util
from aster.utils.config_util import ConfigError

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
TRAIN = "train_config"


def _write(path, text):
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return str(path)


def test_base_is_merged_relative_to_the_file_and_cleared(tmp_path):
    _write(tmp_path / "bases" / "common.config",
           'train_config { num_steps: 100 batch_size: [8, 8] log_every_n_steps: 7 }\n'
           'eval_config { num_examples: 5 dataset_name: ["a", "b"] }\n')
    path = _write(tmp_path / "run" / "my.config",
                  'base: "../bases/common.config"\n'
                  'train_config { num_steps: 300 batch_size: [4] }\n')
    config = config_util.load_pipeline_config(path)
    assert not config.base
    assert config.train_config.num_steps == 300  # a scalar replaces
    assert list(config.train_config.batch_size) == [4]  # a named list replaces the whole list
    assert config.train_config.log_every_n_steps == 7  # the rest of the message is the base's
    assert list(config.eval_config.dataset_name) == ["a", "b"]


def test_bases_chain_and_merge_in_order(tmp_path):
    _write(tmp_path / "a.config", "train_config { num_steps: 1 log_every_n_steps: 1 }")
    _write(tmp_path / "b.config", 'base: "a.config"\ntrain_config { num_steps: 2 }')
    _write(tmp_path / "c.config", "train_config { save_summaries_steps: 3 num_steps: 3 }")
    path = _write(tmp_path / "d.config", 'base: "b.config"\nbase: "c.config"\n')
    config = config_util.load_pipeline_config(path)
    assert (config.train_config.num_steps, config.train_config.log_every_n_steps,
            config.train_config.save_summaries_steps) == (3, 1, 3)


def test_an_empty_message_of_the_base_stays_set(tmp_path):
    _write(tmp_path / "a.config",
           "train_config { optimizer { adam_optimizer { learning_rate { "
           "constant_learning_rate { } } } } }")
    path = _write(tmp_path / "b.config", 'base: "a.config"\ntrain_config { num_steps: 2 }')
    config = config_util.load_pipeline_config(path)
    rate = config.train_config.optimizer.adam_optimizer.learning_rate
    assert rate.WhichOneof("learning_rate") == "constant_learning_rate"


def test_overrides_apply_after_the_base(tmp_path):
    _write(tmp_path / "a.config", "train_config { num_steps: 1 }")
    path = _write(tmp_path / "b.config", 'base: "a.config"\ntrain_config { num_steps: 2 }')
    config = config_util.merge_overrides(config_util.load_pipeline_config(path), None,
                                         ["train_config.num_steps=5"])
    assert config.train_config.num_steps == 5


def test_a_missing_base_names_the_config_and_the_path(tmp_path):
    path = _write(tmp_path / "b.config", 'base: "nowhere.config"\n')
    with pytest.raises(ConfigError, match=r"b\.config: base 'nowhere\.config' is not a file"):
        config_util.load_pipeline_config(path)


def test_a_cycle_of_bases_is_refused(tmp_path):
    _write(tmp_path / "a.config", 'base: "b.config"\n')
    path = _write(tmp_path / "b.config", 'base: "a.config"\n')
    with pytest.raises(ConfigError, match="its bases form a cycle"):
        config_util.load_pipeline_config(path)


def test_a_bad_field_in_a_base_names_the_base_file(tmp_path):
    _write(tmp_path / "a.config", "train_config { num_stepz: 1 }")
    path = _write(tmp_path / "b.config", 'base: "a.config"\n')
    with pytest.raises(ConfigError, match=r"a\.config.*num_stepz.*did you mean 'num_steps'"):
        config_util.load_pipeline_config(path)


def test_parsed_text_takes_bases_relative_to_base_dir(tmp_path):
    _write(tmp_path / "a.config", "train_config { num_steps: 4 }")
    config = config_util.parse_pipeline_config('base: "a.config"', base_dir=str(tmp_path))
    assert config.train_config.num_steps == 4


@pytest.mark.parametrize("names", [
    ["demo_cpu", "base_cpu", "base_cpu_stage2", "base_cpu_stage3", "base_cpu_stage4"],
    ["base_cpu_stage5", "base_cpu_stage6", "base_cpu_stage7", "base_cpu_stage8"],
    ["base_cpu_stage10", "base_cpu_stage11", "finetune_cpu"]])
def test_the_cpu_configs_share_one_model_block(names):
    """The 36-class configs (demo_cpu, stages one to four), the 94-class ones (stages five to
    eight) and the 94-class ones at 32x160 (stages ten and eleven, finetune_cpu: the shipped
    model's) each state their model once, in configs/base/."""
    models = []
    for name in names:
        path = os.path.join(ROOT, "configs", f"{name}.config")
        with open(path, encoding="utf-8") as f:
            text = f.read()
        assert "\nmodel {" not in text, f"{name}.config repeats the model block"
        models.append(config_util.load_pipeline_config(path).model)
    assert all(m == models[0] for m in models) and models[0].HasField(
        "multi_predictors_recognition_model")


@pytest.mark.parametrize("path", sorted(glob.glob(os.path.join(ROOT, "configs", "*.config"))))
def test_every_shipped_config_loads_without_a_migration(path, caplog):
    with caplog.at_level(logging.WARNING, logger="aster.config"):
        config = config_util.load_pipeline_config(path)
    assert not caplog.records, [r.getMessage() for r in caplog.records]
    assert config_checks.find_problems(config) == []


def test_an_eval_text_step_is_removed_with_one_warning(tmp_path, caplog):
    path = _write(tmp_path / "old.config",
                  "eval_config { data_preprocessing_steps { resize_image { } }\n"
                  "  data_preprocessing_steps { string_filtering { lower_case: true } } }")
    with caplog.at_level(logging.WARNING, logger="aster.config"):
        config = config_util.load_pipeline_config(path)
    steps = config.eval_config.data_preprocessing_steps
    assert [s.WhichOneof("preprocessing_step") for s in steps] == ["resize_image"]
    [record] = caplog.records
    assert "eval_config.data_preprocessing_steps[1].string_filtering is ignored" in (
        record.getMessage())
