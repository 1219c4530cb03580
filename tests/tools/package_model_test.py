"""Tests for aster/tools/package_model.py: weights only, training time from the event files, the
provenance record kept across resumes, the card of a run that continued another one."""

import json
import os
import shlex
import subprocess
import time

import numpy as np
import pytest

from aster import pretrained
from aster.synth import reserved_fonts
from aster.tf_setup import tf
from aster.tools import model_card, package_model

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def _train_checkpoint(path, use_moving_average=False):
    """A checkpoint of two variables after one Adam step (slots, counters, global step), with
    their moving averages when asked; returns the variables' values."""
    with tf.Graph().as_default():
        step = tf.train.get_or_create_global_step()
        with tf.variable_scope("net"):
            weights = tf.get_variable("w", initializer=np.arange(6, dtype=np.float32).reshape(2, 3))
            mean = tf.get_variable("bn/moving_mean", initializer=np.ones(3, np.float32),
                                   trainable=False)
        loss = tf.reduce_sum(tf.square(weights)) + tf.reduce_sum(mean)
        train = tf.train.AdamOptimizer(0.1).minimize(loss, global_step=step)
        if use_moving_average:
            ema = tf.train.ExponentialMovingAverage(0.5)
            with tf.control_dependencies([train]):
                train = ema.apply([weights])
        with tf.Session() as session:
            session.run(tf.global_variables_initializer())
            session.run(train)
            tf.train.Saver().save(session, path, global_step=step)
            return session.run({"net/w": weights, "net/bn/moving_mean": mean,
                                "average": ema.average(weights) if use_moving_average else mean})


def test_model_variable_names_leave_out_slots_counters_and_the_global_step():
    names = ["global_step", "beta1_power", "beta2_power", "net/w", "net/w/Adam", "net/w/Adam_1",
             "net/w/ExponentialMovingAverage", "net/bn/moving_mean", "clone/beta2_power"]
    assert package_model.model_variable_names(names) == ["net/bn/moving_mean", "net/w"]


def test_weights_written_alone_restore_as_trained(tmp_path):
    trained = _train_checkpoint(str(tmp_path / "run" / "model.ckpt"))
    values = package_model.weights(str(tmp_path / "run" / "model.ckpt-1"), False)
    files = package_model.write_weights(values, str(tmp_path / "out" / "model.ckpt-1"))
    assert [f.rsplit("/", 1)[1] for f in files] == ["model.ckpt-1.data-00000-of-00001",
                                                    "model.ckpt-1.index"]
    reader = tf.train.load_checkpoint(str(tmp_path / "out" / "model.ckpt-1"))
    assert sorted(reader.get_variable_to_shape_map()) == ["net/bn/moving_mean", "net/w"]
    np.testing.assert_array_equal(reader.get_tensor("net/w"), trained["net/w"])
    assert not (tmp_path / "out" / "checkpoint").exists()


def test_with_moving_averages_the_trainable_weights_are_their_averages(tmp_path):
    trained = _train_checkpoint(str(tmp_path / "model.ckpt"), use_moving_average=True)
    values = package_model.weights(str(tmp_path / "model.ckpt-1"), True)
    np.testing.assert_allclose(values["net/w"], trained["average"])
    assert not np.allclose(values["net/w"], trained["net/w"])
    np.testing.assert_array_equal(values["net/bn/moving_mean"], trained["net/bn/moving_mean"])


def test_training_time_leaves_out_stops(tmp_path):
    start = time.time()  # the writer's own first event carries the time it is written
    writer = tf.summary.FileWriter(str(tmp_path))
    for step, offset in enumerate([0.0, 100.0, 250.0, 4000.0, 4060.0]):
        writer.add_event(tf.Event(wall_time=start + offset, step=step))
    writer.close()
    seconds, stops = package_model.training_time(str(tmp_path))
    assert stops == 1
    assert 310.0 <= seconds < 320.0


def test_provenance_is_recorded_once(tmp_path):
    first = package_model.record(str(tmp_path), "aster-train A")
    again = package_model.record(str(tmp_path), "aster-train B")
    assert again == first and first["command"] == "aster-train A"
    with open(tmp_path / "provenance.json", encoding="utf-8") as f:
        assert json.load(f)["cpu"] == first["cpu"]


def _stage(command, step, seconds, accuracy):
    """The card.json facts of a stage, as package_model writes them (shortened)."""
    return {
        "name": "stage", "step": step, "train_seconds": seconds, "train_stops": 0,
        "batch_size": 64, "bfloat16": True,
        "provenance": {"command": command, "commit": "0123456789abcdef", "cores": 2,
                       "cpu": "AMD EPYC", "started_at": "2026-12-05T12:00:00+00:00"},
        "curve": [[step, {"val": accuracy}]],
        "beam": {"datasets": [{"name": "val", "accuracy": accuracy, "size": 2000}]},
    }


def test_a_continued_run_names_both_stages_on_its_card(tmp_path):
    with open(os.path.join(pretrained.model_dir(), package_model.CARD_JSON), encoding="utf-8") as f:  # a complete card to extend
        facts = json.load(f)
    first = tmp_path / "first"
    first.mkdir()
    earlier = _stage("aster-train --train_dir runs/one", 30000, 7200.0, 0.899)
    earlier["provenance"]["data_command"] = "aster-synth-words --output_dir data/one"
    with open(first / package_model.CARD_JSON, "w", encoding="utf-8") as f:
        json.dump(earlier, f)
    facts.update(_stage("aster-train --train_dir runs/two", 25000, 5400.0, 0.925),
                 starts_from=package_model.earlier_stage(str(first)))
    facts["beam"]["datasets"] = [dict(d, accuracy=0.925) for d in facts["beam"]["datasets"]]
    card = model_card.render(facts)
    assert ("Stage 1: `aster-train --train_dir runs/one` at commit `0123456789` on the data of "
            "`aster-synth-words --output_dir data/one`, 30,000 steps") in card
    assert "(beam) `val` 89.90%" in card
    assert "Training (last stage): `aster-train --train_dir runs/two`, 25,000 steps" in card
    assert "1 h 30 min of training" in card and "3 h 30 min with the earlier stages" in card
    assert "| stage | step |" in card and "| 1 | 30000 | 89.90% |" in card
    assert "| 2 | 25000 | 92.50% |" in card


def test_the_earlier_stage_must_be_a_model_folder(tmp_path):
    with pytest.raises(ValueError, match=r"card\.json: missing \(.*earlier stage\)"):
        package_model.earlier_stage(str(tmp_path))


def _manifest(num_images, seed, families, curves):
    return {"splits": {"train": {"num_images": num_images, "seed": seed, "words": "w",
                                 "fonts": {f: 1 for f in families}, "curves": curves}}}


def test_the_data_of_several_folders_is_summed_and_its_families_joined():
    one = _manifest(500, 0, ["Go", "Lora"], {"arc": 100, "none": 400})
    one["splits"]["val"] = {"num_images": 20}
    facts = package_model.data_facts([one, _manifest(300, 1, ["Lora", "PT Sans"],
                                                     {"arc": 50, "none": 250})])
    assert facts["num_images"] == 800 and facts["seed"] == "0, 1"
    assert facts["font_families"] == ["Go", "Lora", "PT Sans"]
    assert facts["curves"] == {"arc": 150, "none": 650}
    assert facts["other_splits"] == {"val": 20}
    assert package_model.data_facts([one])["seed"] == 0
    assert model_card._seeds("0, 1") == "seeds 0, 1" and model_card._seeds(0) == "seed 0"


def test_a_card_cannot_list_a_reserved_training_family():
    with pytest.raises(ValueError, match=r"splits.train.fonts\): training font families "
                       r"\['Lobster'\] are reserved"):
        package_model.data_facts([_manifest(10, 0, ["Go", "Lobster"], {"none": 10})])


def test_the_shipped_cards_training_families_are_not_reserved():
    with open(os.path.join(ROOT, "models", "aster_base", "card.json"), encoding="utf-8") as f:
        card = json.load(f)
    families = card["data"]["font_families"]
    assert len(families) > 50
    reserved_fonts.check_training_families(families, "models/aster_base/card.json")


def test_make_pretrain_chains_ten_stages_into_the_shipped_folder():
    """make pretrain: stages one to four (36 classes), then make pretrain-94's five to ten, each
    from the folder the one before wrote; the tenth is the shipped folder."""
    result = subprocess.run(["make", "-n", "pretrain"], cwd=ROOT, capture_output=True, text=True,
                            timeout=60, check=True)
    writes = [shlex.split(line) for line in result.stdout.splitlines()
              if "package_model write" in line]
    outputs = [w[w.index("--output_dir") + 1] for w in writes]
    assert outputs == ["runs/base_cpu/model"] + [
        f"runs/base_cpu_stage{n}/model" for n in range(2, 10)] + ["models/aster_base"]
    for earlier, write in zip(outputs, writes[1:], strict=False):
        assert write[write.index("--starts_from") + 1] == earlier
    stage4 = writes[3]
    assert stage4[stage4.index("--data_dir") + 1] == "data/base_wide"
    assert "--float16" in writes[-1]
    # Stage four's data: the extra fonts, and make train's held-out families named (7 + 11).
    records = [shlex.split(line) for line in result.stdout.splitlines()
               if "package_model record" in line and "base_cpu_stage4" in line]
    assert len(records) == 1
    data_command = shlex.split(records[0][records[0].index("--data_command") + 1])
    flag = {name: data_command[data_command.index(name) + 1]
            for name in ("--font_dirs", "--heldout_font_families", "--ood_font_families")}
    assert flag["--font_dirs"] == "data/fonts_extra"
    assert len(flag["--heldout_font_families"].split(",")) == 7
    assert len(flag["--ood_font_families"].split(",")) == 11


def test_float16_folders_store_half_the_bytes_and_say_so(tmp_path):
    _train_checkpoint(str(tmp_path / "run" / "model.ckpt"))
    values = package_model.weights(str(tmp_path / "run" / "model.ckpt-1"), False)
    values["net/counter"] = np.arange(3, dtype=np.int64)
    half = package_model.stored_values(values, float16=True)
    assert half["net/w"].dtype == np.float16 and half["net/counter"].dtype == np.int64
    assert package_model.stored_values(values, float16=False) is values
    sizes = {}
    for name, stored in (("full", values), ("half", half)):
        files = package_model.write_weights(stored, str(tmp_path / name / "model.ckpt-1"))
        sizes[name] = os.path.getsize(files[0])
    assert sizes["half"] < sizes["full"]
    with open(os.path.join(pretrained.model_dir(), package_model.CARD_JSON), encoding="utf-8") as f:
        facts = json.load(f)
    assert f"{facts['num_values']:,} float16 values" in model_card.render(facts)
    del facts["weights_dtype"]
    assert "float32 values" in model_card.render(facts)  # folders written before the flag
