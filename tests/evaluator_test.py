"""Tests for aster/evaluator.py with a stand-in model and in-memory eval data."""

import io
import json
import logging
import os
import threading
import time

import numpy as np
import pytest
import shipped_stand_in
from PIL import Image
from stand_in_model import StandInModel, make_config, stand_in_batches, write_checkpoint

from aster import evaluator
from aster.protos import pipeline_pb2
from aster.tf_setup import tf
from aster.tools import tfrecord_utils
from aster.utils import checkpoints, config_util


def run(config, eval_dir, **kwargs):
    kwargs.setdefault("batches_fn", stand_in_batches())
    return evaluator.run(config, str(eval_dir), model_fn=StandInModel, **kwargs)


def test_evaluate_checkpoint_reports_metrics_and_writes_outputs(tmp_path):
    ckpt = write_checkpoint(str(tmp_path / "train"), 12, 7.0)
    eval_dir = tmp_path / "eval"
    (results,) = run(make_config(), eval_dir, checkpoint_path=ckpt)
    (dataset,) = results["datasets"]
    assert results["step"] == 12 and results["protocol"] == 36
    assert dataset["name"] == "bench_a"
    # 6 records with the same file name, all counted; "!!" has an empty ground truth.
    assert dataset["size"] == 6 and dataset["num_empty_groundtruth"] == 1
    assert dataset["accuracy"] == pytest.approx(4 / 5)
    assert dataset["one_minus_ned"] == pytest.approx(4 / 5)
    assert dataset["dropped"] == {"undecodable": 0, "empty_label": 0}
    assert dataset["images_per_sec"] > 0
    with open(eval_dir / "results.json") as f:
        assert json.load(f) == json.loads(json.dumps(results))
    md = (eval_dir / "step-12" / "results.md").read_text()
    assert "| bench_a | 6 | 80.00% | 80.00% |" in md
    assert os.path.getsize(dataset["examples_sheet"]) > 0
    rows = (eval_dir / "step-12" / "predictions-bench_a.tsv").read_text().splitlines()
    assert len(rows) == 7 and rows[3].split("\t")[:4] == ["2", "same.png", "8", "7"]


def test_evaluate_writes_summaries_under_dataset_dir(tmp_path):
    ckpt = write_checkpoint(str(tmp_path / "train"), 3, 7.0)
    run(make_config(), tmp_path / "eval", checkpoint_path=ckpt)
    events = [f for f in os.listdir(tmp_path / "eval" / "bench_a") if "tfevents" in f]
    assert events
    values = {}
    for event in tf.train.summary_iterator(str(tmp_path / "eval" / "bench_a" / events[0])):
        for value in event.summary.value:
            values[value.tag] = (event.step, value)
    assert values["eval/accuracy"][0] == 3
    assert values["eval/accuracy"][1].simple_value == pytest.approx(0.8)
    assert values["eval/examples"][1].image.encoded_image_string.startswith(b"\x89PNG")


def test_evaluate_every_eval_reader_with_configured_and_derived_names(tmp_path):
    ckpt = write_checkpoint(str(tmp_path / "train"), 1, 7.0)
    config = make_config("""
        eval_input_reader { tf_record_input_reader { input_path: "x/bench_b.tfrecord" } }
        eval_config { dataset_name: "first" }""")
    (results,) = run(config, tmp_path / "eval", checkpoint_path=ckpt)
    assert [d["name"] for d in results["datasets"]] == ["first", "bench_b"]
    assert os.path.isdir(tmp_path / "eval" / "first")


def test_protocol_and_num_examples_and_lexicon(tmp_path):
    ckpt = write_checkpoint(str(tmp_path / "train"), 1, 7.0)
    batches = stand_in_batches(["7", "8", "1", "9"], lexicons=["", "8\t1", "1\t7", ""],
                               dropped=2)
    config = make_config("eval_config { protocol: 62 num_examples: 3 }")
    (results,) = run(config, tmp_path / "eval", checkpoint_path=ckpt, batches_fn=batches)
    (dataset,) = results["datasets"]
    assert results["protocol"] == 62 and dataset["size"] == 3
    assert dataset["accuracy"] == pytest.approx(1 / 3)
    # gt "8": "7" ties 8/1 and snaps to "8" (first) -> right; gt "1": "7" is in "1\t7" -> wrong.
    assert dataset["num_with_lexicon"] == 2 and dataset["lexicon_accuracy"] == 0.5
    assert set(dataset["protocols"]) == {"36", "62", "94"}
    assert dataset["dropped"]["undecodable"] == 2 and dataset["num_dropped"] == 2


def test_moving_averages_restored_when_asked(tmp_path):
    ckpt = write_checkpoint(str(tmp_path / "train"), 1, 3.0, ema_value=7.0)
    (raw,) = run(make_config(), tmp_path / "raw", checkpoint_path=ckpt)
    config = make_config("eval_config { use_moving_averages: true }")
    (ema,) = run(config, tmp_path / "ema", checkpoint_path=ckpt)
    assert raw["datasets"][0]["accuracy"] == 0.0
    assert ema["datasets"][0]["accuracy"] == pytest.approx(0.8)
    assert ema["use_moving_averages"] is True


def test_moving_averages_missing_from_checkpoint_raises(tmp_path):
    ckpt = write_checkpoint(str(tmp_path / "train"), 1, 3.0)
    config = make_config("eval_config { use_moving_averages: true }")
    with pytest.raises(ValueError, match="has no moving averages"):
        run(config, tmp_path / "eval", checkpoint_path=ckpt)


def test_checkpoint_without_model_variables_raises(tmp_path):
    with tf.Graph().as_default():
        other = tf.Variable(1.0, name="Other")
        with tf.Session() as sess:
            sess.run(other.initializer)
            ckpt = tf.train.Saver([other]).save(sess, str(tmp_path / "model.ckpt"), global_step=4)
    with pytest.raises(ValueError, match="lacks 1 of the model's 1 variables"):
        run(make_config(), tmp_path / "eval", checkpoint_path=ckpt)


def test_bad_eval_config_raises(tmp_path):
    with pytest.raises(ValueError, match="eval_config.protocol: 40 is not accepted"):
        evaluator.Evaluator(make_config("eval_config { protocol: 40 }"), str(tmp_path))
    with pytest.raises(ValueError, match="eval_config.batch_size: must be > 0, got 0"):
        evaluator.Evaluator(make_config("eval_config { batch_size: 0 }"), str(tmp_path))
    with pytest.raises(ValueError, match="dataset_name: has 2 entries but there are only 1"):
        evaluator.Evaluator(make_config('eval_config { dataset_name: ["a", "b"] }'),
                            str(tmp_path))
    with pytest.raises(ValueError, match="eval_config.metrics_set was removed: .*got 'coco'"):
        evaluator.Evaluator(make_config('eval_config { metrics_set: "coco" }'), str(tmp_path))
    with pytest.raises(ValueError, match="eval_input_reader: the pipeline config has none"):
        evaluator.Evaluator(pipeline_pb2.TrainEvalPipelineConfig(), str(tmp_path))


def test_missing_checkpoint_path_or_dir_raises(tmp_path):
    with pytest.raises(ValueError, match="model.ckpt-9': no checkpoint, folder or shipped"):
        run(make_config(), tmp_path / "eval", checkpoint_path=str(tmp_path / "model.ckpt-9"))
    with pytest.raises(ValueError, match="--checkpoint_dir is required"):
        run(make_config(), tmp_path / "eval")
    with pytest.raises(ValueError, match="no complete checkpoint found"):
        run(make_config(), tmp_path / "eval", checkpoint_dir=str(tmp_path), run_once=True)


def test_run_once_evaluates_only_the_newest(tmp_path):
    train = str(tmp_path / "train")
    for step in (1, 2, 3):
        write_checkpoint(train, step, 7.0)
    results = run(make_config(), tmp_path / "eval", checkpoint_dir=train, run_once=True)
    assert [r["step"] for r in results] == [3]


def test_run_once_and_a_folder_path_take_the_folder_s_newest_when_the_state_file_lags(tmp_path):
    train = tmp_path / "train"
    twenty = shipped_stand_in.lagging_run(train, make_config())
    results = run(make_config(), tmp_path / "eval", checkpoint_dir=str(train), run_once=True)
    results += run(make_config(), tmp_path / "eval2", checkpoint_path=str(train))
    assert [(r["step"], r["checkpoint"]) for r in results] == [(20, twenty)] * 2


def test_loop_evaluates_checkpoints_written_while_polling_in_order(tmp_path):
    train = str(tmp_path / "train")
    os.makedirs(train)
    config = make_config("train_config { num_steps: 30 } eval_config { eval_timeout_secs: 60 }")

    def writer():
        for step in (10, 20, 30):
            time.sleep(0.2)
            write_checkpoint(train, step, step / 10 + 6)

    thread = threading.Thread(target=writer)
    thread.start()
    try:
        results = run(config, tmp_path / "eval", checkpoint_dir=train,
                      sleep=lambda secs: time.sleep(0.05))
    finally:
        thread.join()
    assert [r["step"] for r in results] == [10, 20, 30]
    # step 10 restored value 7: the only checkpoint whose predictions match "7".
    assert [r["datasets"][0]["num_correct"] for r in results] == [4, 1, 0]


def test_loop_skips_checkpoint_deleted_before_its_turn_with_log(tmp_path, caplog):
    train = str(tmp_path / "train")
    paths = [write_checkpoint(train, step, 7.0) for step in (1, 2, 3)]

    def on_result(result):
        if result["step"] == 1:
            for name in os.listdir(train):
                if name.startswith(os.path.basename(paths[1]) + "."):
                    os.remove(os.path.join(train, name))

    config = make_config("train_config { num_steps: 3 } eval_config { eval_timeout_secs: 60 }")
    with caplog.at_level(logging.WARNING):
        results = run(config, tmp_path / "eval", checkpoint_dir=train, on_result=on_result)
    assert [r["step"] for r in results] == [1, 3]
    assert any("model.ckpt-2 was deleted before its turn" in r.getMessage()
               for r in caplog.records)


def test_loop_survives_checkpoint_vanishing_during_evaluation(tmp_path, caplog):
    train = str(tmp_path / "train")
    first = write_checkpoint(train, 1, 7.0)
    write_checkpoint(train, 2, 7.0)
    base = stand_in_batches()
    calls = []

    def batches_fn(*args):
        calls.append(1)
        if len(calls) == 1:  # delete step 1 after the loop has chosen it, before the restore
            for name in os.listdir(train):
                if name.startswith("model.ckpt-1."):
                    os.remove(os.path.join(train, name))
        return base(*args)

    config = make_config("eval_config { max_evals: 5 eval_timeout_secs: 1 }")
    with caplog.at_level(logging.WARNING):
        results = run(config, tmp_path / "eval", checkpoint_dir=train, batches_fn=batches_fn,
                      sleep=lambda secs: time.sleep(0.2))
    assert [r["step"] for r in results] == [2]
    assert any(first in r.getMessage() and "unavailable" in r.getMessage()
               for r in caplog.records)
    assert checkpoints.newest(train).step == 2


def test_only_visualize_incorrect_puts_wrong_examples_first(tmp_path):
    ckpt = write_checkpoint(str(tmp_path / "train"), 1, 7.0)
    batches = stand_in_batches(["7", "7", "7", "7", "7", "9"])
    config = make_config("eval_config { only_visualize_incorrect: true num_visualizations: 2 }")
    (results,) = run(config, tmp_path / "eval", checkpoint_path=ckpt, batches_fn=batches)
    assert results["datasets"][0]["examples_shown"] == [5, 0]
    (results,) = run(make_config("eval_config { num_visualizations: 2 }"), tmp_path / "eval2",
                     checkpoint_path=ckpt, batches_fn=batches)
    assert results["datasets"][0]["examples_shown"] == [0, 1]


def test_corrupt_image_in_eval_set_is_reported_and_skipped(tmp_path):
    def png(value):
        buffer = io.BytesIO()
        Image.new("RGB", (40, 12), (value, value, value)).save(buffer, format="PNG")
        return buffer.getvalue()

    examples = [tfrecord_utils.make_example(png(10 * i), "7", filename="same.png")
                for i in range(5)]
    examples.insert(2, tfrecord_utils.make_example(b"\x89PNG broken", "7", filename="bad.png",
                                                   height=12, width=40))
    examples.append(tfrecord_utils.make_example(png(200), "8", filename="last.png"))
    examples.append(tfrecord_utils.make_example(b"not an image", "7", filename="tail.png",
                                                height=12, width=40))  # after the last kept
    record = str(tmp_path / "with_corrupt.tfrecord")
    tfrecord_utils.write_tfrecords(examples, record)
    config = make_config(f"""
        eval_input_reader {{ shuffle: false num_readers: 1
                             tf_record_input_reader {{ input_path: "{record}" }} }}
        eval_config {{
          dataset_name: ["unused", "with_corrupt"]
          data_preprocessing_steps {{ resize_image {{ target_height: 16 target_width: 32 }} }}
        }}""")
    del config.eval_input_reader[0]
    del config.eval_config.dataset_name[0]
    ckpt = write_checkpoint(str(tmp_path / "train"), 1, 7.0)
    (results,) = evaluator.run(config, str(tmp_path / "eval"), checkpoint_path=ckpt,
                               model_fn=StandInModel)
    (dataset,) = results["datasets"]
    assert dataset["name"] == "with_corrupt"
    assert dataset["size"] == 6 and dataset["num_dropped"] == 2
    assert dataset["dropped"]["undecodable"] == 2
    assert dataset["accuracy"] == pytest.approx(5 / 6)
    md = (tmp_path / "eval" / "results.md").read_text()
    assert "| 2 (undecodable 2) |" in md


@pytest.mark.slow
def test_evaluate_real_tiny_model_on_tfrecords(tmp_path):
    from aster.builders import model_builder

    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    config = config_util.load_pipeline_config(os.path.join(root, "configs", "tiny.config"))
    rng = np.random.default_rng(0)
    examples = []
    for i in range(10):
        buffer = io.BytesIO()
        Image.fromarray(rng.integers(0, 255, (24, 80, 3), dtype=np.uint8)).save(buffer, "PNG")
        examples.append(tfrecord_utils.make_example(buffer.getvalue(), f"Word{i}", "png",
                                                    filename=f"w{i}.png"))
    record = str(tmp_path / "val.tfrecord")
    tfrecord_utils.write_tfrecords(examples, record)
    config = config_util.merge_overrides(config, assignments=[
        f"eval_input_reader[0].tf_record_input_reader.input_path={record}",
        "eval_config.batch_size=4"])
    with tf.Graph().as_default():
        model = model_builder.build(config.model, is_training=False)
        model.postprocess(model.predict(model.preprocess(tf.zeros([1, 32, 64, 3]))))
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            ckpt = tf.train.Saver().save(sess, str(tmp_path / "train" / "model.ckpt"),
                                         global_step=2, write_meta_graph=False)
    (results,) = evaluator.run(config, str(tmp_path / "eval"), checkpoint_path=ckpt)
    (dataset,) = results["datasets"]
    assert dataset["name"] == "val" and dataset["size"] == 10 and dataset["num_scored"] == 10
    assert 0.0 <= dataset["accuracy"] <= 1.0 and 0.0 <= dataset["one_minus_ned"] <= 1.0
    assert results["decoding"][0]["predictor"] == "Forward"
    assert dataset["examples_shown"] == [0, 1, 2, 3]


def test_throughput_excludes_the_first_batch_when_there_are_more():
    # 4 images in the first second (warm-up), then 60 in the next two.
    assert evaluator._throughput(0.0, (1.0, 4), 3.0, 64) == pytest.approx(30.0)
    assert evaluator._throughput(0.0, (2.0, 4), 2.0, 4) == pytest.approx(2.0)
    assert evaluator._throughput(0.0, None, 0.0, 0) == 0.0


def test_ignore_groundtruth_evaluates_newest_once_without_accuracy(tmp_path):
    train = str(tmp_path / "train")
    for step in (1, 2):
        write_checkpoint(train, step, 7.0)
    config = make_config("eval_config { ignore_groundtruth: true }")
    (results,) = run(config, tmp_path / "eval", checkpoint_dir=train)
    (dataset,) = results["datasets"]
    assert results["step"] == 2 and dataset["ignore_groundtruth"] is True
    assert dataset["accuracy"] is None and dataset["num_empty_groundtruth"] == dataset["size"]
    rows = (tmp_path / "eval" / "step-2" / "predictions-bench_a.tsv").read_text().splitlines()
    assert len(rows) == 7 and rows[1].split("\t")[3] == "7"
