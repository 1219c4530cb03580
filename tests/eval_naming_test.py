"""Every eval reader type names its dataset: eval_config.dataset_name, else the reader's path
(TFRecord input_path, LMDB path), never a bare "dataset<i>" when there is a path."""

import input_fixtures as fx
from google.protobuf import text_format
from stand_in_model import StandInModel, write_checkpoint

from aster import eval_util, evaluator
from aster.protos import pipeline_pb2


def _config(readers, extra=""):
    config = pipeline_pb2.TrainEvalPipelineConfig()
    text_format.Merge(
        "eval_config { batch_size: 4 num_examples: 0 num_visualizations: 2 "
        "data_preprocessing_steps { resize_image { target_height: 16 target_width: 32 } } }\n"
        + "".join(f"eval_input_reader {{ shuffle: false {r} }}\n" for r in readers) + extra,
        config)
    return config


def test_dataset_names_from_lmdb_directories_with_or_without_trailing_slash():
    names = eval_util.dataset_names(["lmdb/IIIT5k_3000/", "lmdb/svt.lmdb", "a/IIIT5k_3000"])
    assert names == ["IIIT5k_3000", "svt", "IIIT5k_3000_2"]


def test_lmdb_readers_are_named_after_their_path_unless_configured(tmp_path):
    readers = ['lmdb_input_reader { path: "data/evaluation/CUTE80/" }',
               'lmdb_input_reader { path: "data/evaluation/SVT,data/evaluation/SVTP" }',
               'tf_record_input_reader { input_path: "data/ic13.tfrecord" }']
    assert evaluator.Evaluator(_config(readers), str(tmp_path)).dataset_names == [
        "CUTE80", "SVT", "ic13"]
    named = _config(readers, 'eval_config { dataset_name: "cute" dataset_name: "" }')
    assert evaluator.Evaluator(named, str(tmp_path)).dataset_names == ["cute", "SVT", "ic13"]


def test_lmdb_eval_set_is_reported_under_its_name(tmp_path):
    labels = ["7", "7", "8", "7"]
    path = fx.write_lmdb(tmp_path / "bench_lmdb",
                         [(fx.image_bytes(seed=i), label) for i, label in enumerate(labels)])
    ckpt = write_checkpoint(str(tmp_path / "train"), 5, 7.0)
    config = _config([f'lmdb_input_reader {{ path: "{path}/" }}'])
    (results,) = evaluator.run(config, str(tmp_path / "eval"), checkpoint_path=ckpt,
                               model_fn=StandInModel)
    (dataset,) = results["datasets"]
    assert dataset["name"] == "bench_lmdb" and dataset["input_path"] == f"{path}/"
    assert dataset["size"] == 4 and dataset["accuracy"] == 0.75
    assert (tmp_path / "eval" / "bench_lmdb").is_dir()
    assert (tmp_path / "eval" / "step-5" / "predictions-bench_lmdb.tsv").is_file()
    assert "| bench_lmdb | 4 |" in (tmp_path / "eval" / "results.md").read_text()
