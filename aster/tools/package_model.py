"""Turns a training run into a model folder: weights only, its pipeline.config, a generated card.

    python -m aster.tools.package_model record --train_dir runs/base_cpu --command "make pretrain"
    python -m aster.tools.package_model write --train_dir runs/base_cpu \\
        --data_dir data/base --eval_dir runs/base_cpu/eval \\
        --greedy_eval_dir runs/base_cpu/eval_greedy --output_dir models/aster_base

`record` writes TRAIN_DIR/provenance.json once, before training starts (the commit and the
files it differs in, the CPU, the commands); a resumed run keeps the first record. `write` takes
the newest checkpoint of TRAIN_DIR (or --checkpoint_path) and writes into OUTPUT_DIR (replaced):

- model.ckpt-<step>.{index,data-00000-of-00001}: the model's variables only, without the
  optimizer's slots and counters and the global step (a variable whose name is another
  variable's plus a suffix is a slot: `w/Adam`, `w/ExponentialMovingAverage`); with
  use_moving_average the trainable variables carry their moving averages. float32, as trained,
  or with --float16 stored as float16 (half the bytes: the 15 MB budget of the repository's
  models; checkpoints.saver_for restores them cast back to float32).
- pipeline.config: TRAIN_DIR/pipeline.config (the merged config the run trained with).
- MODEL_CARD.md (aster/tools/model_card.py) and card.json, the facts the card was made from:
  provenance, data manifest, steps and wall time from the run's event files, evaluation reports
  (beam and greedy, for the checkpoint written), the accuracy at every evaluated step; with
  --starts_from (a run that continued another one through fine_tune_checkpoint) the earlier
  stage's facts from the model folder written for it, so the card names every stage.

The folder is checked before the command returns: the inference graph restores its checkpoint.
"""

import argparse
import collections
import datetime
import glob
import json
import os
import shutil
import subprocess
import sys

import numpy as np

from aster import pretrained
from aster.synth import reserved_fonts
from aster.tf_setup import tf
from aster.utils import checkpoints, cli_logging, config_util

PROVENANCE = "provenance.json"
CARD_JSON = "card.json"
OPTIMIZER_COUNTERS = ("global_step", "beta1_power", "beta2_power")
# A gap this long between two event records of the run is a stop (then a resume), not training.
MAX_EVENT_GAP_SECS = 600.0


def _git(*args):
    try:
        return subprocess.run(["git", *args], capture_output=True, text=True, check=True,
                              cwd=os.path.dirname(os.path.dirname(os.path.dirname(
                                  os.path.abspath(__file__))))).stdout.rstrip()
    except (OSError, subprocess.CalledProcessError):
        return ""


def cpu_description(path="/proc/cpuinfo"):
    """(model name, notable flags) of this machine's CPU."""
    from aster.core import session_options

    name = "unknown CPU"
    try:
        with open(path, encoding="utf-8") as f:
            for line in f:
                if line.startswith("model name"):
                    name = line.split(":", 1)[1].strip()
                    break
    except OSError:
        pass
    flags = session_options.cpu_flags(path)
    notable = [f for f in ("avx2", "avx512f", "avx512_bf16", "amx_bf16") if f in flags]
    return name, notable


def record(train_dir, command, data_command=""):
    """Writes train_dir/provenance.json unless it exists; returns its contents."""
    path = os.path.join(train_dir, PROVENANCE)
    if os.path.isfile(path):
        with open(path, encoding="utf-8") as f:
            return json.load(f)
    name, flags = cpu_description()
    dirty = [line[3:] for line in _git("status", "--porcelain").splitlines() if line]
    facts = {
        "commit": _git("rev-parse", "HEAD"),
        "uncommitted_files": dirty,
        "started_at": datetime.datetime.now(datetime.UTC).isoformat(timespec="seconds"),
        "cpu": name,
        "cpu_flags": flags,
        "cores": os.cpu_count(),
        "command": command,
        "data_command": data_command,
    }
    os.makedirs(train_dir, exist_ok=True)
    with open(path, "w", encoding="utf-8") as f:
        json.dump(facts, f, indent=2)
    return facts


def model_variable_names(names):
    """The names of `names` (a checkpoint's variables) that are the model's own."""
    names = set(names)

    def is_slot(name):
        parts = name.split("/")
        return any("/".join(parts[:i]) in names for i in range(1, len(parts)))

    return sorted(n for n in names
                  if n.split("/")[-1] not in OPTIMIZER_COUNTERS and not is_slot(n))


def weights(checkpoint_path, use_moving_average):
    """{name: float numpy array} of the model's variables in the checkpoint."""
    reader = tf.train.load_checkpoint(checkpoint_path)
    shapes = reader.get_variable_to_shape_map()
    values = {}
    for name in model_variable_names(shapes):
        average = f"{name}/ExponentialMovingAverage"
        source = average if use_moving_average and average in shapes else name
        values[name] = reader.get_tensor(source)
    return values


def stored_values(values, float16):
    """{name: array} as the model folder stores them: with `float16` the float32 arrays as
    float16 (the rest, e.g. integer counters, as they are)."""
    if not float16:
        return values
    return {name: value.astype(np.float16) if value.dtype == np.float32 else value
            for name, value in values.items()}


def write_weights(values, prefix):
    """Writes {name: array} as a TensorFlow checkpoint at `prefix` (no meta graph, no state
    file); returns the files written."""
    graph = tf.Graph()
    with graph.as_default():
        variables = {name: tf.Variable(np.asarray(value), name=f"v{i}", trainable=False)
                     for i, (name, value) in enumerate(sorted(values.items()))}
        saver = tf.train.Saver(variables, write_version=tf.train.SaverDef.V2)
        with tf.Session(graph=graph) as session:
            session.run(tf.variables_initializer(list(variables.values())))
            saver.save(session, prefix, write_meta_graph=False, write_state=False)
    return sorted(glob.glob(glob.escape(prefix) + ".*"))


def training_time(train_dir):
    """(seconds of training, number of stops) from the event files' wall times: the sum of the
    gaps between consecutive records, leaving out gaps over MAX_EVENT_GAP_SECS (a stop)."""
    times = []
    for path in glob.glob(os.path.join(glob.escape(train_dir), "events.out.tfevents.*")):
        try:
            for event in tf.compat.v1.train.summary_iterator(path):
                times.append(event.wall_time)
        except tf.errors.DataLossError:  # the last record of a file still being written
            pass
    times.sort()
    gaps = np.diff(times) if len(times) > 1 else np.zeros(0)
    kept = gaps[gaps <= MAX_EVENT_GAP_SECS]
    return float(kept.sum()), int((gaps > MAX_EVENT_GAP_SECS).sum())


def _load_json(path, what):
    if not os.path.isfile(path):
        raise ValueError(f"{path}: missing ({what})")
    with open(path, encoding="utf-8") as f:
        return json.load(f)


DATA_FIELDS = ("num_images", "seed", "words", "num_words", "random_fraction", "max_length",
               "num_fonts", "curves", "backgrounds")


def data_facts(manifests):
    """What the card says of the training data, from the manifest.json of each folder that
    aster-synth-words wrote for it: the train splits' size, seeds, word source and font families
    (the union), and the other splits' sizes.

    Raises:
      ValueError: when a training family is reserved for outside evaluation
        (aster/synth/reserved_fonts.py): such a card cannot be written.
    """
    trains = [m["splits"]["train"] for m in manifests]
    facts = {k: trains[0][k] for k in DATA_FIELDS if k in trains[0]}
    facts["num_images"] = sum(t["num_images"] for t in trains)
    for key in ("curves", "backgrounds"):
        if all(key in t for t in trains):
            facts[key] = dict(sum((collections.Counter(t[key]) for t in trains),
                                  collections.Counter()))
    if len(trains) > 1:
        facts["seed"] = ", ".join(str(t.get("seed", "?")) for t in trains)
    facts["font_families"] = sorted(set().union(*(t.get("fonts", {}) for t in trains)))
    reserved_fonts.check_training_families(facts["font_families"],
                                           "the training data's manifest.json (splits.train.fonts)")
    categories = {}
    for t in trains:  # a font library's manifest says each family's category (font_categories)
        categories.update(t.get("font_categories") or {})
    if categories:
        facts["font_categories"] = {f: categories.get(f, "unknown") for f in facts["font_families"]}
    for key in ("text", "text_mix"):
        if key in trains[0]:
            facts[key] = trains[0][key]
    facts["other_splits"] = {name: split["num_images"] for m in manifests
                             for name, split in m["splits"].items() if name != "train"}
    return facts


def evaluation(eval_dir, step, what):
    """The report of `step` in eval_dir (eval_dir/step-<step>/results.json)."""
    return _load_json(os.path.join(eval_dir, f"step-{step}", "results.json"),
                      f"{what} of step {step}: run aster-eval on that checkpoint first")


def curve(eval_dir):
    """[(step, {dataset: accuracy})] of every checkpoint evaluated in eval_dir."""
    points = []
    for path in glob.glob(os.path.join(glob.escape(eval_dir), "step-*", "results.json")):
        with open(path, encoding="utf-8") as f:
            report = json.load(f)
        points.append((report["step"], {d["name"]: d["accuracy"] for d in report["datasets"]}))
    return sorted(points)


STAGE_FIELDS = ("name", "step", "provenance", "train_seconds", "train_stops", "batch_size",
                "bfloat16", "curve", "starts_from")


def earlier_stage(model_dir):
    """What the card says of the run this one continued: the facts of the model folder
    package_model wrote for it (its card.json), with each set's beam-search accuracy."""
    card = _load_json(os.path.join(model_dir, CARD_JSON),
                      "the model folder package_model wrote for the earlier stage")
    facts = {k: card[k] for k in STAGE_FIELDS if k in card}
    facts["accuracy"] = {d["name"]: d["accuracy"] for d in card["beam"]["datasets"]}
    return facts


def count_parameters(config, checkpoint_path):
    """(trainable parameters of the inference model, restored into it from the checkpoint):
    restoring is the check that the written folder loads."""
    from aster import inference

    graph = tf.Graph()
    with graph.as_default():
        images = tf.placeholder(tf.float32, [None, *inference.model_input_size(config.model), 3])
        built = inference.build_inference_graph(config.model, images)
        saver = checkpoints.make_saver(built.variables, checkpoint_path, False)
        with tf.Session(graph=graph) as session:
            checkpoints.restore(session, saver, checkpoint_path)
        return int(sum(np.prod(v.shape.as_list()) for v in tf.trainable_variables()))


def write(args):
    """Writes the model folder; returns the card's facts."""
    from aster.tools import model_card

    checkpoint = checkpoints.resolve(args.checkpoint_path or args.train_dir, "--checkpoint_path")
    step = checkpoints.checkpoint_step(checkpoint)
    config_path = os.path.join(args.train_dir, config_util.PIPELINE_FILENAME)
    config = config_util.load_pipeline_config(config_path)
    facts = {
        "name": os.path.basename(os.path.normpath(args.output_dir)),
        "step": step,
        "provenance": _load_json(os.path.join(args.train_dir, PROVENANCE),
                                 "written by `package_model record` before training"),
        "data": data_facts([_load_json(os.path.join(d, "manifest.json"),
                                       "the aster-synth-words manifest of the training data")
                            for d in args.data_dir]),
        "beam": evaluation(args.eval_dir, step, "the beam-search evaluation"),
        "greedy": evaluation(args.greedy_eval_dir, step, "the greedy evaluation"),
        "curve": curve(args.eval_dir),
        "bfloat16": config.train_config.mixed_precision,
        "batch_size": sum(config.train_config.batch_size),
        "packaged_at": datetime.datetime.now(datetime.UTC).isoformat(timespec="seconds"),
        "packaged_commit": _git("rev-parse", "HEAD"),
    }
    facts["train_seconds"], facts["train_stops"] = training_time(args.train_dir)
    if args.starts_from:
        facts["starts_from"] = earlier_stage(args.starts_from)
    values = weights(checkpoint, config.train_config.optimizer.use_moving_average)
    values = stored_values(values, args.float16)
    facts["weights_dtype"] = "float16" if args.float16 else "float32"
    if os.path.isdir(args.output_dir):
        shutil.rmtree(args.output_dir)
    os.makedirs(args.output_dir)
    files = write_weights(values, os.path.join(args.output_dir, f"model.ckpt-{step}"))
    shutil.copyfile(config_path, os.path.join(args.output_dir, pretrained.CONFIG_FILENAME))
    facts["num_variables"] = len(values)
    facts["num_values"] = int(sum(v.size for v in values.values()))
    facts["weights_bytes"] = int(sum(os.path.getsize(f) for f in files))
    facts["trainable_parameters"] = count_parameters(config, files[0].rsplit(".", 1)[0])
    facts["model"] = model_card.model_facts(config)
    with open(os.path.join(args.output_dir, CARD_JSON), "w", encoding="utf-8") as f:
        json.dump(facts, f, indent=2, sort_keys=True)
    with open(os.path.join(args.output_dir, pretrained.CARD_FILENAME), "w",
              encoding="utf-8") as f:
        f.write(model_card.render(facts))
    return facts


def build_parser():
    parser = argparse.ArgumentParser(prog="python -m aster.tools.package_model",
                                     description=__doc__.split("\n")[0])
    sub = parser.add_subparsers(dest="action", required=True)
    rec = sub.add_parser("record", help="write TRAIN_DIR/provenance.json before training")
    rec.add_argument("--train_dir", required=True)
    rec.add_argument("--command", required=True, help="the training command, for the card")
    rec.add_argument("--data_command", default="", help="the data command, for the card")
    out = sub.add_parser("write", help="write the model folder from a trained and evaluated run")
    out.add_argument("--train_dir", required=True)
    out.add_argument("--checkpoint_path", default="", help="default: TRAIN_DIR's newest")
    out.add_argument("--data_dir", required=True, nargs="+",
                     help="the training data's folders (their manifest.json)")
    out.add_argument("--eval_dir", required=True, help="aster-eval's folder, beam search")
    out.add_argument("--greedy_eval_dir", required=True, help="aster-eval's folder, greedy")
    out.add_argument("--output_dir", required=True, help="the model folder (replaced)")
    out.add_argument("--float16", action="store_true",
                     help="store the float32 weights as float16 (half the bytes; every command "
                          "restores them cast back to float32)")
    out.add_argument("--starts_from", default="",
                     help="the model folder written for the run this one continued "
                          "(fine_tune_checkpoint): the card names every stage")
    return parser


def main(argv=None):
    args = build_parser().parse_args(argv)
    cli_logging.configure()
    try:
        if args.action == "record":
            record(args.train_dir, args.command, args.data_command)
            return 0
        facts = write(args)
    except (ValueError, checkpoints.CheckpointUnavailableError) as e:
        print(f"package_model: {e}", file=sys.stderr)
        return 1
    print(f"package_model: wrote {args.output_dir} (step {facts['step']}, "
          f"{facts['weights_bytes'] / 1e6:.1f} MB of weights)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
