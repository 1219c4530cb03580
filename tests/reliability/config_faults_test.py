"""Reliability: hundreds of mutated configs are all rejected with the field path.

The generator is tests/reliability/faults_configs.py; `make reliability` reports the same figures.
"""

import collections

import faults_configs
import pytest

from aster import train, trainer
from aster.protos import pipeline_pb2
from aster.utils import config_text, config_util


@pytest.fixture(scope="module")
def mutations(tmp_path_factory):
    return faults_configs.generate(str(tmp_path_factory.mktemp("configs")))


def test_generator_makes_over_500_mutations_in_every_category(mutations):
    categories = collections.Counter(m.category for m in mutations)
    assert len(mutations) >= 500
    assert {"deleted required piece", "wrong type", "out of range", "duplicate characters",
            "batch-size/reader mismatch", "missing input file", "unknown enum name"} <= set(
                categories)
    assert len({m.name for m in mutations}) == len(mutations)


def test_every_mutated_config_is_rejected_naming_its_field(mutations):
    failures = [f for f in map(faults_configs.check, mutations) if f]
    assert not failures, "\n".join(failures[:20])


def test_valid_edits_that_look_suspicious_are_accepted(tmp_path):
    assert faults_configs.check_valid_edits(str(tmp_path)) == []


def test_shipped_configs_are_valid(tmp_path):
    for _, config in faults_configs.base_configs(str(tmp_path)):
        config_util.validate(config, check_files=True)


def test_aster_train_rejects_before_building_a_graph(mutations, tmp_path, monkeypatch, capsys):
    def no_graph(*args, **kwargs):
        raise AssertionError("trainer.train was called for an invalid config")

    monkeypatch.setattr(trainer, "train", no_graph)
    by_category = {}
    for mutation in mutations:
        if mutation.category != "bad override":
            by_category.setdefault(mutation.category, mutation)
    for i, mutation in enumerate(by_category.values()):
        try:
            text = config_util.config_to_text(mutation.apply())
        except config_util.ConfigError:
            text = None
        if text is None:  # a text mutation: write the mutated text itself
            continue
        path = tmp_path / f"m{i}.config"
        path.write_text(text)
        assert train.main(["--pipeline_config_path", str(path), "--train_dir",
                           str(tmp_path / "t")]) == 2
        err = capsys.readouterr().err
        assert err.startswith("aster-train: config error: ") and "Traceback" not in err


def test_aster_train_rejects_text_mutations_with_the_field(tmp_path, capsys):
    text = config_util.config_to_text(config_util.load_pipeline_config(faults_configs.SHIPPED[0]))
    path = tmp_path / "bad.config"
    path.write_text(text.replace("\n  num_steps:", "\n  num_steps: 1.5 #", 1))
    assert train.main(["--pipeline_config_path", str(path), "--train_dir", str(tmp_path)]) == 2
    assert "train_config.num_steps: " in capsys.readouterr().err


def test_missing_train_file_is_a_config_error_not_a_traceback(tmp_path, capsys):
    config = config_util.load_pipeline_config(faults_configs.SHIPPED[0])
    path = tmp_path / "c.config"
    config_util.save_pipeline_config(config, str(path))
    code = train.main(["--pipeline_config_path", str(path), "--train_dir", str(tmp_path / "t"),
                       "--set", "train_input_reader[0].tf_record_input_reader.input_path=/no/x"])
    assert code == 2
    assert "train_input_reader[0].tf_record_input_reader.input_path" in capsys.readouterr().err


@pytest.mark.parametrize("text,line,column,path", [
    ("train_config {\n  batch_size: 1\n  batch_size: x\n}", 3, 15, "train_config.batch_size[1]"),
    ("eval_input_reader { }\neval_input_reader { shuffle: 2 }", 2, 30,
     "eval_input_reader[1].shuffle"),
    ('train_config { # a { comment\n optimizer { adam_optimizer { } } num_steps: "x" }', 2, 47,
     "train_config.num_steps"),
    ("train_config { num_stepz: 1 }", 1, 16, "train_config.num_stepz"),
    ("", 1, 1, ""),
])
def test_path_at_names_the_field_at_a_position(text, line, column, path):
    root = pipeline_pb2.TrainEvalPipelineConfig.DESCRIPTOR
    assert config_text.path_at(text, line, column, root) == path


def test_check_files_train_ignores_eval_readers(tmp_path):
    config = faults_configs.base_configs(str(tmp_path))[0][1]
    config.eval_input_reader[0].tf_record_input_reader.input_path = str(tmp_path / "none")
    config_util.validate(config, check_files="train")
    with pytest.raises(config_util.ConfigError, match=r"eval_input_reader\[0\]"):
        config_util.validate(config, check_files=True)
