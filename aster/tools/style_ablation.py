"""Which part of the out-of-distribution style costs a model its accuracy.

    python -m aster.tools.style_ablation --pipeline_config_path configs/demo_cpu.config \
        --checkpoint_path runs/demo_cpu/model.ckpt-5000 --output_dir runs/demo_cpu/style_ablation

renders sets like aster-synth-words' validation splits that each change one factor (the
backgrounds, stroke weights, share of clean images, arc strength or font families) to the other
style's, evaluates the checkpoint on all of them with aster-eval (beam and protocol of the
config), and prints each set's word accuracy with the change against its reference set. The
rows are the drop that one factor alone explains, measured on the same words and fonts, so that
a fix to the data engine aims at what costs most. Words, fonts and seeds are those of
aster-synth-words with default settings (--seed); the sets lie under --output_dir/sets.
"""

import argparse
import dataclasses
import json
import os
import subprocess
import sys

from aster.synth import fonts as fonts_lib
from aster.synth import generator, styles
from aster.utils import cli

PROG = "python -m aster.tools.style_ablation"


@dataclasses.dataclass(frozen=True)
class Variant:
    name: str
    split: str  # the aster-synth-words render split it starts from
    reference: str  # the variant it is compared with ("" for a reference)
    change: str  # what differs from the split, in words
    style: dict = dataclasses.field(default_factory=dict)  # RenderStyle fields replaced
    families_of: str = ""  # take the font families of this split instead


_TRAIN = styles.TRAIN_STYLE
_STROKES = {f: getattr(_TRAIN, f) for f in ("thin_prob", "bold_prob", "outline_prob",
                                            "shadow_prob")}
VARIANTS = (
    Variant("ood", "val_ood_straight", "", "val_ood, straight"),
    Variant("ood_train_backgrounds", "val_ood_straight", "ood", "training backgrounds",
            {"backgrounds": _TRAIN.backgrounds}),
    Variant("ood_train_strokes", "val_ood_straight", "ood", "training stroke weights",
            _STROKES),
    Variant("ood_clean", "val_ood_straight", "ood", "training share of clean images",
            {"clean_prob": _TRAIN.clean_prob}),
    Variant("ood_val_fonts", "val_ood_straight", "ood", "val's font families",
            families_of="val"),
    Variant("val", "val", "", "val, straight", {"curve_prob": 0.0}),
    Variant("val_ood_fonts", "val", "val", "val_ood's font families", {"curve_prob": 0.0},
            families_of="val_ood_straight"),
    Variant("ood_curved", "val_ood_curved", "", "val_ood, curved"),
    Variant("ood_curved_train_arcs", "val_ood_curved", "ood_curved", "training arc strength",
            {"min_arc": _TRAIN.min_arc, "max_arc": _TRAIN.max_arc}),
    Variant("ood_curved_train_backgrounds", "val_ood_curved", "ood_curved",
            "training backgrounds", {"backgrounds": _TRAIN.backgrounds}),
)


def variant_plans(plans, variants=VARIANTS):
    """{variant name: generator.SplitPlan} from aster-synth-words' plans."""
    out = {}
    for v in variants:
        plan = plans[v.split]
        plan = dataclasses.replace(plan, style=plan.style.replace(**v.style))
        if v.families_of:
            plan = dataclasses.replace(plan, families=plans[v.families_of].families)
        out[v.name] = plan
    return out


def render_sets(output_dir, images, seed=0, num_workers=1, variants=VARIANTS):
    """Renders every variant's set (skipping one already there); returns {name: tfrecord path}."""
    plans, _ = generator.make_plans(fonts_lib.find_fonts(), seed)
    os.makedirs(output_dir, exist_ok=True)
    paths = {}
    for name, plan in variant_plans(plans, variants).items():
        path = os.path.join(output_dir, f"{name}.tfrecord")
        if not os.path.exists(path):  # write_tfrecords leaves no partial file
            _, seconds, _ = generator.generate(plan, images, path, 1, num_workers)
            print(f"[style_ablation] {name}: {images} images in {seconds:.1f} s", flush=True)
        paths[name] = path
    return paths


def eval_override(paths):
    """The aster-eval --config_override snippet evaluating exactly `paths` ({name: path})."""
    names = ", ".join(f'"{name}"' for name in paths)
    lines = [f"eval_config {{ dataset_name: [{names}] compare_identity_rectification: false "
             "num_visualizations: 0 }"]
    for path in paths.values():
        lines.append("eval_input_reader { shuffle: false num_epochs: 1 num_readers: 1 "
                     f'tf_record_input_reader {{ input_path: "{path}" }} }}')
    return "\n".join(lines)


def table(results, variants=VARIANTS):
    """Markdown rows from aster-eval's results.json dict: accuracy, and the change in points
    against the reference."""
    accuracy = {d["name"]: 100.0 * d["accuracy"] for d in results["datasets"]}
    rows = ["| set | changed | images | word accuracy | against reference (points) |",
            "|---|---|---:|---:|---:|"]
    sizes = {d["name"]: d["num_scored"] for d in results["datasets"]}
    for v in variants:
        if v.name not in accuracy:
            continue
        delta = (f"{accuracy[v.name] - accuracy[v.reference]:+.1f} vs {v.reference}"
                 if v.reference in accuracy else "")
        rows.append(f"| {v.name} | {v.change} | {sizes[v.name]} | {accuracy[v.name]:.2f}% | "
                    f"{delta} |")
    return "\n".join(rows)


def build_parser():
    parser = argparse.ArgumentParser(prog=PROG, description=__doc__.split("\n\n")[0],
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--pipeline_config_path", required=True)
    parser.add_argument("--checkpoint_path", required=True, help="e.g. dir/model.ckpt-5000")
    parser.add_argument("--output_dir", required=True, help="sets/ and eval/ go here")
    parser.add_argument("--images", type=int, default=600, help="images per set")
    parser.add_argument("--seed", type=int, default=0, help="aster-synth-words --seed")
    parser.add_argument("--num_workers", type=int, default=os.cpu_count() or 1)
    return parser


def main(argv=None):
    args = build_parser().parse_args(argv)
    if args.images < 1:
        return cli.fail(PROG, f"--images must be >= 1, got {args.images}")
    if not os.path.exists(args.checkpoint_path + ".index"):
        return cli.fail(PROG, f"no checkpoint at {args.checkpoint_path} (expected "
                              f"{args.checkpoint_path}.index)")
    try:
        paths = render_sets(os.path.join(args.output_dir, "sets"), args.images, args.seed,
                            args.num_workers)
    except ValueError as err:  # fonts.NoFontsError included
        return cli.fail(PROG, str(err))
    eval_dir = os.path.join(args.output_dir, "eval")
    command = [sys.executable, "-m", "aster.eval", "--pipeline_config_path",
               args.pipeline_config_path, "--checkpoint_path", args.checkpoint_path,
               "--eval_dir", eval_dir, "--config_override", eval_override(paths)]
    if subprocess.run(command, check=False).returncode != 0:
        return cli.fail(PROG, "aster-eval failed (its messages are above)")
    with open(os.path.join(eval_dir, "results.json"), encoding="utf-8") as f:
        print(table(json.load(f)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
