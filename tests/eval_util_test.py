"""Tests for aster/eval_util.py: dataset names and decoding settings."""

from aster import eval_util


def test_dataset_names_from_paths_configured_and_deduplicated():
    paths = ["data/iiit5k_test.tfrecord", "data/svt-00000-of-00004.tfrecord",
             "/x/ic13_*.tfrecord,/y/other.tfrecord", "data/iiit5k_test.tfrecord", ""]
    names = eval_util.dataset_names(paths, ["", "svt_test"])
    assert names == ["iiit5k_test", "svt_test", "ic13", "iiit5k_test_2", "dataset4"]
    assert eval_util.dataset_names(["a/svt-00001-of-00004.tfrecord"]) == ["svt"]
    assert eval_util.dataset_names(["a.tfrecord"], ["my set/1"]) == ["my_set_1"]


def test_decoding_settings_reads_each_predictor():
    from aster.protos import model_pb2  # tests may import protos directly

    model = model_pb2.Model()
    predictor = model.multi_predictors_recognition_model.predictor.add(name="Backward")
    predictor.attention_predictor.beam_width = 5
    predictor.attention_predictor.reverse = True
    settings = eval_util.decoding_settings(model)
    assert settings == [{"predictor": "Backward", "type": "attention_predictor", "beam_width": 5,
                         "max_num_steps": 40, "reverse": True, "length_penalty": 0.0}]
    assert eval_util.decoding_settings(model_pb2.Model()) == []
    auxiliary = model.multi_predictors_recognition_model.predictor.add(name="Ctc", auxiliary=True)
    auxiliary.ctc_predictor.beam_width = 1
    assert [s["predictor"] for s in eval_util.decoding_settings(model)] == ["Backward"]
