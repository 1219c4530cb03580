"""Word accuracy on crops larger than the model's input, resized with and without antialiasing.

    .venv/bin/python benchmarks/resize_antialias.py [--checkpoint_path aster_base]
        [--heights 32 64 128] [--images 500] [--greedy]

For each height, --images words of the `val` split (unseen words, the training style; font
families as aster-synth-words holds them out with --seed) are rendered at that height (and
the width in proportion to 32x100) into a temporary TFRecord, then the checkpoint (default: the
shipped base model, with its pipeline.config) is evaluated on it twice, the eval_config's
resize_image step with `antialias: false` (tf.image.resize's plain bilinear, which samples a
large crop) and `antialias: true` (the filter widened to the output pixel's footprint). At 32
rows the two are the same image: that row checks the set-up. Prints a table and one JSON line.
"""

import argparse
import json
import os
import sys
import tempfile

import common  # benchmarks/common.py (scripts run as python benchmarks/<name>.py)


def render_set(height, count, folder, seed):
    """Renders `count` val words at `height` x round(height * 100 / 32); returns the TFRecord."""
    from aster.synth import fonts, generator, styles

    width = round(height * 100 / 32)
    style = styles.TRAIN_STYLE.replace(height=height, width=width)
    plans, _ = generator.make_plans(fonts.find_fonts(), seed=seed, style=style)
    path = os.path.join(folder, f"val_{height}.tfrecord")
    generator.generate(plans["val"], count, path, num_workers=1)
    return path


def accuracy(config, checkpoint, record, antialias, folder):
    """Word accuracy of the checkpoint on `record` with the resize step's antialias set."""
    from aster import evaluator
    from aster.utils import config_util

    name = f"{os.path.basename(record)[:-9]}_{'aa' if antialias else 'plain'}"
    assignments = [f"eval_input_reader[0].tf_record_input_reader.input_path={record}",
                   f"eval_config.dataset_name={name}",
                   "eval_config.compare_identity_rectification=false",
                   "eval_config.num_visualizations=0"]
    config = config_util.merge_overrides(config, assignments=assignments)
    del config.eval_input_reader[1:]
    steps = [s for s in config.eval_config.data_preprocessing_steps
             if s.WhichOneof("preprocessing_step") == "resize_image"]
    if not steps:
        raise ValueError("the config's eval_config has no resize_image step")
    steps[0].resize_image.antialias = antialias
    (result,) = evaluator.run(config, os.path.join(folder, name), checkpoint_path=checkpoint)
    return result["datasets"][0]["accuracy"]


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--checkpoint_path", default="aster_base",
                        help="checkpoint, training or model folder, or a shipped model's name")
    parser.add_argument("--pipeline_config_path", default="",
                        help="default: the pipeline.config beside the checkpoint")
    parser.add_argument("--heights", type=int, nargs="+", default=[32, 64, 128])
    parser.add_argument("--images", type=int, default=500)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--greedy", action="store_true", help="beam width 1 (faster)")
    args = parser.parse_args(argv)

    from aster.exporters.lite_export import decoding_config
    from aster.utils import checkpoints, config_util

    checkpoint = checkpoints.resolve(args.checkpoint_path, "--checkpoint_path")
    config_path = args.pipeline_config_path or os.path.join(os.path.dirname(checkpoint),
                                                            config_util.PIPELINE_FILENAME)
    config = decoding_config(config_util.load_pipeline_config(config_path),
                             "greedy" if args.greedy else "beam")
    description, load = common.machine()
    print(f"# Resize antialiasing: {checkpoint}, {args.images} val words per height, "
          f"{'greedy' if args.greedy else 'beam'}\n# {description}; load {load:.2f}\n")
    print("| height | plain bilinear | antialiased | gain (points) |\n|---:|---:|---:|---:|")
    rows = []
    with tempfile.TemporaryDirectory() as folder:
        for height in args.heights:
            record = render_set(height, args.images, folder, args.seed)
            plain = accuracy(config, checkpoint, record, False, folder)
            smooth = accuracy(config, checkpoint, record, True, folder)
            rows.append({"height": height, "plain": plain, "antialiased": smooth})
            print(f"| {height} | {100 * plain:.2f}% | {100 * smooth:.2f}% | "
                  f"{100 * (smooth - plain):+.2f} |", flush=True)
    print(json.dumps({"benchmark": "resize_antialias", "checkpoint": checkpoint, "rows": rows}))
    return 0


if __name__ == "__main__":
    sys.exit(main())
