"""`aster-synth-words`: synthetic word images as TFRecords for out-of-the-box training.

    aster-synth-words --output_dir data/synth --num_train 100000 --num_val 2000 --num_shards 8

writes `data/synth/train-0000k-of-00008.tfrecord`, `data/synth/val.tfrecord` and a
`<split>_manifest.json` beside them (fonts, families, word counts, seed, settings).

Words: the built-in list (aster/tools/word_list.py) in lower, Capitalised or UPPER case, plus random
alphanumeric strings (`--random_fraction`). Fonts: every usable font on the machine
(aster/tools/fonts.py); the ones used are printed. Rendering: aster/tools/synth_render.py.

Splits and determinism. Image i of split s is rendered from numpy's SeedSequence([seed, s, i]), so
the output depends only on the seed, the split, the index, the fonts found and the settings (not on
--num_workers), and train and validation never share a (word, font, seed) triple. With
`--val_disjoint both` (the default) validation words and font families are also disjoint from
training: a word belongs to validation when crc32(lower-cased word) % 10 == 0 (random strings
included), and whole font families are held out (`--heldout_font_families`, or automatically the
20% of families with the fewest files; with a single family, individual font files, and a warning).
"""

import argparse
import dataclasses
import json
import multiprocessing
import os
import string
import sys
import time
import zlib

import numpy as np

from aster.tools import fonts as fonts_lib
from aster.tools import synth_render, tfrecord_utils
from aster.tools.word_list import WORDS

SPLITS = {"train": 0, "val": 1}
DISJOINT_MODES = ("both", "words", "fonts", "none")
_CHUNK = 128


def word_split(word):
    """"val" for the ~10% of words (case-insensitive) reserved to validation, else "train"."""
    return "val" if zlib.crc32(word.lower().encode("utf-8")) % 10 == 0 else "train"


@dataclasses.dataclass(frozen=True)
class SplitPlan:
    """What one split draws from: words, font families -> font paths, and render options."""

    split: str
    seed: int
    words: tuple
    families: tuple  # ((family, (path, ...)), ...)
    options: synth_render.RenderOptions
    random_fraction: float = 0.3
    max_length: int = 12
    disjoint_words: bool = True


def make_plans(fonts, seed=0, val_disjoint="both", heldout_families=(),
               options=synth_render.RenderOptions(), random_fraction=0.3, max_length=12):
    """Returns ({split: SplitPlan}, font note) for the fonts found.

    Raises:
      ValueError: on an unknown val_disjoint mode or a held-out family that does not exist.
    """
    if val_disjoint not in DISJOINT_MODES:
        raise ValueError(f"val_disjoint {val_disjoint!r}; expected one of {DISJOINT_MODES}")
    if not 0.0 <= random_fraction <= 1.0:
        raise ValueError(f"random_fraction must be in [0, 1], got {random_fraction}")
    disjoint_words = val_disjoint in ("both", "words")
    if val_disjoint in ("both", "fonts"):
        train_fonts, val_fonts, note = fonts_lib.split_fonts(fonts, heldout_families)
    else:
        train_fonts, val_fonts, note = fonts, fonts, "train and validation share all fonts"
    words = [w for w in WORDS if len(w) <= max_length]
    plans = {}
    for split, split_fonts in (("train", train_fonts), ("val", val_fonts)):
        pool = tuple(w for w in words if not disjoint_words or word_split(w) == split)
        families = fonts_lib.group_by_family(split_fonts)
        plans[split] = SplitPlan(
            split, seed, pool, tuple((f, tuple(x.path for x in fs)) for f, fs in families.items()),
            options, random_fraction, max_length, disjoint_words)
    return plans, note


def _random_string(rng, max_length):
    kind = rng.integers(4)
    alphabet = (string.ascii_lowercase, string.ascii_uppercase, string.digits,
                string.ascii_letters + string.digits)[kind]
    length = int(rng.integers(1, min(max_length, 10) + 1))
    return "".join(alphabet[i] for i in rng.integers(len(alphabet), size=length))


def choose_word(plan, rng):
    """Draws the text of one image of `plan.split` (respecting the word split when disjoint)."""
    if rng.random() < plan.random_fraction or not plan.words:
        for _ in range(1000):
            text = _random_string(rng, plan.max_length)
            if not plan.disjoint_words or word_split(text) == plan.split:
                return text
    word = plan.words[rng.integers(len(plan.words))]
    case = rng.random()
    return word.upper() if case < 0.2 else word.capitalize() if case < 0.45 else word


def render_one(plan, index):
    """Renders image `index` of a split: (png, height, width, text, filename)."""
    rng = np.random.default_rng(np.random.SeedSequence([plan.seed, SPLITS[plan.split], index]))
    text = choose_word(plan, rng)
    family, paths = plan.families[rng.integers(len(plan.families))]
    path = paths[rng.integers(len(paths))]
    png, height, width = synth_render.render(text, path, rng, plan.options)
    name = f"synth/{plan.split}/{index:08d}/{os.path.splitext(os.path.basename(path))[0]}"
    return png, height, width, text, name


_WORKER_PLAN = None


def _init_worker(plan):
    global _WORKER_PLAN
    _WORKER_PLAN = plan


def _render_chunk(bounds):
    return [render_one(_WORKER_PLAN, i) for i in range(*bounds)]


def _rendered(plan, count, num_workers, progress_seconds=5.0):
    """Yields render_one results for indices 0..count-1 in order, using worker processes."""
    chunks = [(s, min(s + _CHUNK, count)) for s in range(0, count, _CHUNK)]
    start, last, done = time.monotonic(), time.monotonic(), 0
    if num_workers <= 1:
        _init_worker(plan)
        results = map(_render_chunk, chunks)
        pool = None
    else:
        methods = multiprocessing.get_all_start_methods()
        context = multiprocessing.get_context("fork" if "fork" in methods else "spawn")
        pool = context.Pool(num_workers, initializer=_init_worker, initargs=(plan,))
        results = pool.imap(_render_chunk, chunks)
    try:
        for chunk in results:
            yield from chunk
            done += len(chunk)
            if time.monotonic() - last >= progress_seconds:
                last = time.monotonic()
                print(f"[synth {plan.split}] {done}/{count} ({100 * done // count}%) "
                      f"{done / (last - start):.0f} images/s", file=sys.stderr, flush=True)
    finally:
        if pool is not None:
            pool.terminate()


def generate(plan, count, output_path, num_shards=1, num_workers=1):
    """Renders `count` images of a split into TFRecords; returns (paths, seconds)."""
    start = time.monotonic()
    examples = (tfrecord_utils.make_example(png, text, filename=name, height=h, width=w)
                for png, h, w, text, name in _rendered(plan, count, num_workers))
    paths = tfrecord_utils.write_tfrecords(examples, output_path, num_shards)
    return paths, time.monotonic() - start


def _manifest(plan, count, paths, seconds, note, args):
    return {"split": plan.split, "num_images": count, "files": paths, "seed": plan.seed,
            "seconds": round(seconds, 2), "images_per_second": round(count / max(seconds, 1e-9)),
            "num_workers": args.num_workers, "val_disjoint": args.val_disjoint,
            "font_split": note, "num_words": len(plan.words),
            "fonts": {family: list(paths) for family, paths in plan.families},
            "options": dataclasses.asdict(plan.options),
            "random_fraction": plan.random_fraction, "max_length": plan.max_length}


def build_parser():
    parser = argparse.ArgumentParser(prog="aster-synth-words", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--output_dir", required=True, help="folder for the TFRecords")
    parser.add_argument("--split", choices=("train", "val", "both"), default="both")
    parser.add_argument("--num_train", type=int, default=100000, help="training images")
    parser.add_argument("--num_val", type=int, default=2000, help="validation images")
    parser.add_argument("--num_shards", type=int, default=4, help="training shards")
    parser.add_argument("--num_val_shards", type=int, default=1, help="validation shards")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--num_workers", type=int, default=os.cpu_count() or 1,
                        help="rendering processes (default: all cores)")
    parser.add_argument("--height", type=int, default=32, help="output height in pixels")
    parser.add_argument("--width", type=int, default=100,
                        help="output width (the maximum width with --keep_aspect)")
    parser.add_argument("--keep_aspect", action="store_true",
                        help="keep the text's aspect ratio up to --width (e.g. 64x256)")
    parser.add_argument("--random_fraction", type=float, default=0.3,
                        help="share of random alphanumeric strings instead of list words")
    parser.add_argument("--max_length", type=int, default=12, help="longest word")
    parser.add_argument("--val_disjoint", choices=DISJOINT_MODES, default="both",
                        help="what validation keeps apart from training: words, font families")
    parser.add_argument("--heldout_font_families", default="",
                        help="comma-separated font families for validation only "
                        "(default: automatic, see --list_fonts)")
    parser.add_argument("--font_dirs", nargs="*", default=[], help="extra font folders")
    parser.add_argument("--fonts", nargs="*", default=[], help="use only these font files")
    parser.add_argument("--list_fonts", action="store_true",
                        help="print the usable fonts by family and the split, then exit")
    return parser


def _options(args):
    if args.height < 8 or args.width < 8:
        raise ValueError(f"--height/--width must be >= 8, got {args.height}x{args.width}")
    return synth_render.RenderOptions(height=args.height, width=args.width,
                                      keep_aspect=args.keep_aspect)


def _print_fonts(fonts, note):
    for family, members in fonts_lib.group_by_family(fonts).items():
        print(f"  {family}: {', '.join(os.path.basename(f.path) for f in members)}")
    print(f"  {note}")


def run(args):
    """Generates the requested splits; returns {split: manifest dict}."""
    fonts = fonts_lib.find_fonts(args.font_dirs, args.fonts)
    heldout = tuple(f.strip() for f in args.heldout_font_families.split(",") if f.strip())
    plans, note = make_plans(fonts, args.seed, args.val_disjoint, heldout, _options(args),
                             args.random_fraction, args.max_length)
    print(f"aster-synth-words: {len(fonts)} usable fonts in "
          f"{len(fonts_lib.group_by_family(fonts))} families:")
    _print_fonts(fonts, note)
    if args.list_fonts:
        return {}
    jobs = [("train", args.num_train, args.num_shards), ("val", args.num_val, args.num_val_shards)]
    manifests = {}
    for split, count, shards in jobs:
        if args.split not in (split, "both") or count <= 0:
            continue
        paths, seconds = generate(plans[split], count, os.path.join(args.output_dir,
                                                                    f"{split}.tfrecord"),
                                  shards, args.num_workers)
        manifests[split] = _manifest(plans[split], count, paths, seconds, note, args)
        with open(os.path.join(args.output_dir, f"{split}_manifest.json"), "w") as f:
            json.dump(manifests[split], f, indent=2)
        print(f"[synth {split}] {count} images in {seconds:.1f} s: "
              f"{count / max(seconds, 1e-9):.0f} images/s with {args.num_workers} workers "
              f"-> {paths[0]}{' ...' if len(paths) > 1 else ''}", flush=True)
    return manifests


def main(argv=None):
    """Console entry point; returns 0, or 2 with a message on stderr for a bad setting."""
    args = build_parser().parse_args(argv)
    try:
        run(args)
    except ValueError as err:  # includes fonts.NoFontsError
        print(f"aster-synth-words: error: {err}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())
