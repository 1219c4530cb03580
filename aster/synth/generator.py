"""`aster-synth-words`: synthetic word images as TFRecords, with an out-of-distribution split.

    aster-synth-words --output_dir data/synth --num_train 100000 --num_val 2000 --num_val_ood 2000

writes, in --output_dir:
  train-0000k-of-0000n.tfrecord   training images (style "train", training words and fonts)
  val.tfrecord                    in-distribution validation: unseen words and font families,
                                  the training style mix
  val_ood_straight.tfrecord       out-of-distribution validation, half without curves ...
  val_ood_curved.tfrecord         ... and half curved (arc or sine): words, font families and
                                  style mix (aster/synth/styles.py "ood") all disjoint
                                  from training; evaluate `val_ood_*.tfrecord` for the whole set
  categories/val_ood_<category>.tfrecord   with --google_fonts: val_ood per font category
                                  (font_plans.py), for an evaluation per category
  <split>_manifest.json           per split: fonts, images per font category, word and length
                                  counts, style, speed
  manifest.json                   all of it in one file

Words: aster/synth/vocabulary.py (the english-words dictionary, or --word_list FILE), split
three ways by a hash of the lower-cased text; `--text ascii94` adds punctuation templates
(aster/synth/templates.py: prices, dates, e-mails...) for a 94-character model, up to 25
characters. `--language el|ru` draws Greek or Russian instead (aster/synth/languages.py:
wordfreq's words, the fonts that draw the script, its letters in the generated strings) and
writes the model's character set as charset.txt beside the records.
Fonts: every usable font on the machine (aster/synth/fonts.py; for --language, those that draw
the script in both cases) and, with --google_fonts DIR, the Google Fonts library of `make
fonts-google`; split three ways by family (aster/synth/font_plans.py), reserved families
(aster/synth/reserved_fonts.py) never in training. Every image
carries `image/keypoints`: the top and bottom lines of its word through the drawn geometry
(aster/synth/render.py).

Determinism. Image i of a split is rendered from numpy's SeedSequence([seed, split id, i]), so
the output depends only on the seed, the split, the index, the fonts found and the settings (not
on --num_workers). A word a font cannot draw (a character missing from its cmap) is never drawn
with it: another font of the split is tried, else another word; the manifest counts these skips.
"""

import argparse
import collections
import dataclasses
import json
import multiprocessing
import os
import sys
import time

import numpy as np

from aster.core import charsets
from aster.synth import (
    font_categories,
    font_families,
    font_plans,
    languages,
    render,
    styles,
    vocabulary,
)
from aster.synth import fonts as fonts_lib
from aster.tools import tfrecord_utils
from aster.utils import cli, cli_logging

# Rendered splits: (name, split id in the seed, word / font split, style preset, curve_prob).
RENDER_SPLITS = (("train", 0, "train", "train", None), ("val", 1, "val", "train", None),
                 ("val_ood_straight", 2, "val_ood", "ood", 0.0),
                 ("val_ood_curved", 3, "val_ood", "ood", 1.0))
# With a font library: val_ood per category (font_plans.CATEGORY_SPLITS: the held-out families
# of font_categories.VAL_OOD_FAMILIES, val_ood's words and style, curved or not as the style
# draws), written as categories/val_ood_<category>.tfrecord (outside the `val_ood_*` pattern
# that reads val_ood).
CATEGORY_RENDER_SPLITS = tuple((name, 4 + i, name, "ood", None)
                               for i, name in enumerate(font_plans.CATEGORY_SPLITS))
CATEGORY_DIR = "categories"
DISJOINT_MODES = ("both", "words", "fonts", "none")
_CHUNK = 128
_FONT_TRIES = 8


@dataclasses.dataclass(frozen=True)
class SplitPlan:
    """What one rendered split draws from: its vocabulary, font families and style."""

    split: str
    split_id: int
    seed: int
    vocabulary: vocabulary.Vocabulary
    families: tuple  # ((family, (FontInfo, ...)), ...)
    style: styles.RenderStyle
    categories: tuple = ()  # font_plans.category_table(families): () draws families uniformly


def make_plans(fonts, seed=0, val_disjoint="both", heldout=None, style=styles.TRAIN_STYLE,
               ood_style=styles.OOD_STYLE, word_list=None, random_fraction=0.3,
               max_length=None, language=None, text="words", category_weights=None):
    """Returns ({render split: SplitPlan}, font note) for the fonts found.

    Args:
      fonts: FontInfo list.
      heldout: optional {"val": [family, ...], "val_ood": [...]} of named held-out families.
      style, ood_style: RenderStyle of train/val and of val_ood (sizes and the legibility floor
        taken from `style`).
      word_list: optional path of a word file replacing the dictionary.
      language: optional languages.Language: its word list (unless word_list) and letters.
      max_length, text: longest text (None: the text's) and what is drawn (vocabulary.TEXTS).
      category_weights: {category: weight} of a font library's sampling (None: the defaults of
        font_categories.CATEGORY_WEIGHTS).

    Fonts are split by font_plans.split_for_run: reserved families never train, and a font
    library adds its per-category val_ood splits and category-weighted sampling.

    Raises:
      ValueError: an unknown val_disjoint mode, a named family that does not exist, a word list
        without a usable word, no training font left.
    """
    if val_disjoint not in DISJOINT_MODES:
        raise ValueError(f"val_disjoint {val_disjoint!r}; expected one of {DISJOINT_MODES}")
    font_splits, note = font_plans.split_for_run(fonts, heldout,
                                                 disjoint=val_disjoint in ("both", "fonts"))
    vocabularies = vocabulary.build_all(word_list, random_fraction, max_length,
                                        language=language, text=text)
    if val_disjoint not in ("both", "words"):
        vocabularies = {s: _merged(vocabularies, s) for s in vocabulary.SPLITS}
    ood_style = ood_style.replace(height=style.height, width=style.width,
                                  keep_aspect=style.keep_aspect,
                                  min_legibility=style.min_legibility,
                                  legibility_tries=style.legibility_tries)
    plans = {}
    for name, split_id, split, preset, curve_prob in RENDER_SPLITS + CATEGORY_RENDER_SPLITS:
        if split not in font_splits:
            continue
        split_style = style if preset == "train" else ood_style
        if curve_prob is not None:
            split_style = split_style.replace(curve_prob=curve_prob)
        families = font_families.group_by_family(font_splits[split])
        families = tuple((f, tuple(fs)) for f, fs in families.items())
        words = vocabularies["val_ood" if split.startswith("val_ood") else split]
        plans[name] = SplitPlan(name, split_id, seed, words, families, split_style,
                                font_plans.category_table(families, category_weights))
    return plans, note


def _merged(vocabularies, split):
    """One split's Vocabulary holding every split's words (for --val_disjoint fonts / none)."""
    groups = collections.defaultdict(list)
    for v in vocabularies.values():
        for length, words in v.by_length:
            groups[length].extend(words)
    base = vocabularies[split]
    return dataclasses.replace(base, by_length=tuple(
        (length, tuple(sorted(groups[length]))) for length in sorted(groups)),
        shared=True)


def _choose(plan, rng):
    """(text, FontInfo, skips): a text and a font of the split that draws every character.

    The text is as the font draws it (FontInfo.drawn_text: upper case for a caps-only face), so
    the label is what the image shows."""
    skips = 0
    for _ in range(100):
        text = plan.vocabulary.draw(rng)
        for _ in range(_FONT_TRIES):
            members = font_plans.draw_family(plan.families, plan.categories, rng)
            font = members[int(rng.integers(len(members)))]
            if font.can_draw(text):
                return font.drawn_text(text), font, skips
            skips += 1
    raise ValueError(f"no font of split {plan.split} draws any of 100 drawn words (last "
                     f"{text!r}): check --fonts / --word_list")


class RenderError(RuntimeError):
    """A font failed to draw a text: names the image, the font file and the text."""


def render_one(plan, index):
    """Renders image `index` of a split: (Rendered, text, filename, font-word skips, font
    category)."""
    rng = np.random.default_rng(np.random.SeedSequence([plan.seed, plan.split_id, index]))
    text, font, skips = _choose(plan, rng)
    try:
        rendered = render.render(text, font.path, rng, plan.style)
    except (OSError, ValueError) as e:
        raise RenderError(f"image {index} of split {plan.split} (seed {plan.seed}): {font.path} "
                          f"failed to draw {text!r}: {e}") from e
    name = f"synth/{plan.split}/{index:08d}/{os.path.splitext(os.path.basename(font.path))[0]}"
    return rendered, text, name, skips, font.category


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
    """Renders `count` images of a split into TFRecords; returns (paths, seconds, stats)."""
    start = time.monotonic()
    stats = {"lengths": collections.Counter(), "curves": collections.Counter(),
             "backgrounds": collections.Counter(), "categories": collections.Counter(),
             "font_word_skips": 0, "illegible_redraws": 0}

    def examples():
        for rendered, text, name, skips, category in _rendered(plan, count, num_workers):
            stats["lengths"][len(text)] += 1
            stats["categories"][category or "unknown"] += 1
            stats["curves"][rendered.curve or "none"] += 1
            stats["backgrounds"][rendered.background] += 1
            stats["font_word_skips"] += skips
            stats["illegible_redraws"] += rendered.redrawn
            yield tfrecord_utils.make_example(rendered.png, text, filename=name,
                                              keypoints=rendered.keypoints,
                                              height=rendered.height, width=rendered.width)

    paths = tfrecord_utils.write_tfrecords(examples(), output_path, num_shards)
    return paths, time.monotonic() - start, stats


def _manifest(plan, count, paths, seconds, stats, note, args):
    return {
        "split": plan.split, "num_images": count, "files": paths, "seed": plan.seed,
        "seconds": round(seconds, 2), "images_per_second": round(count / max(seconds, 1e-9)),
        "num_workers": args.num_workers, "val_disjoint": args.val_disjoint,
        "language": args.charset or args.language,
        "words": vocabulary.source_name(args.word_list, plan.vocabulary.language),
        "num_words": plan.vocabulary.num_words,
        "word_length_histogram": {str(k): v for k, v in plan.vocabulary.length_histogram()
                                  .items()},
        "text_length_histogram": {str(k): v for k, v in sorted(stats["lengths"].items())},
        "curves": dict(sorted(stats["curves"].items())),
        "backgrounds": dict(sorted(stats["backgrounds"].items())),
        "font_word_skips": stats["font_word_skips"],
        # Drafts drawn again by the renderer's legibility check (RenderStyle.min_legibility).
        "illegible_redraws": stats["illegible_redraws"],
        "font_split": note,
        "num_families": len(plan.families),
        "num_fonts": sum(len(fs) for _, fs in plan.families),
        "fonts": {family: [f.path for f in fs] for family, fs in plan.families},
        # Images per font category, the category of each family and the sampling weights
        # (font_categories.py; {} when families are drawn uniformly, without a font library).
        "images_per_category": dict(sorted(stats["categories"].items())),
        "font_categories": {family: fs[0].category for family, fs in plan.families},
        "category_weights": {c: round(w, 4) for c, w, _ in plan.categories},
        "caps_only_fonts": sorted(f.path for _, fs in plan.families for f in fs if f.caps_only),
        "style": dataclasses.asdict(plan.style),
        "random_fraction": plan.vocabulary.random_fraction,
        "max_length": plan.vocabulary.max_length,
        "text": args.text,
        # Share of each source, the casing mix and the template kinds (vocabulary.text_mix).
        "text_mix": vocabulary.text_mix(plan.vocabulary),
    }


def build_parser():
    parser = argparse.ArgumentParser(prog="aster-synth-words", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--output_dir", required=True, help="folder for the TFRecords")
    parser.add_argument("--split", choices=("train", "val", "val_ood", "all", "both"),
                        default="all", help="what to write (both: train and val; all: every "
                        "split)")
    parser.add_argument("--num_train", type=int, default=100000, help="training images")
    parser.add_argument("--num_val", type=int, default=2000, help="validation images")
    parser.add_argument("--num_val_ood", type=int, default=2000,
                        help="out-of-distribution validation images (half curved)")
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
    parser.add_argument("--min_legibility", type=float,
                        default=styles.TRAIN_STYLE.min_legibility,
                        help="draw an image again when its text stands out from the background "
                        "around it by less than this (render.legibility); 0: never, as "
                        "before the check existed")
    parser.add_argument("--random_fraction", type=float, default=0.3,
                        help="share of generated strings (letters, digits, dates, prices...)")
    parser.add_argument("--max_length", type=int, default=None,
                        help="longest text (keep it below the decoder's max_num_steps; "
                        "default: 16, 25 with --text ascii94)")
    parser.add_argument("--text", choices=sorted(vocabulary.TEXTS), default="words",
                        help="what is drawn: words (dictionary words and generated strings, for "
                        "a 36-class model) or ascii94 (also punctuation templates: prices, "
                        "times, dates, e-mails..., case kept, the 94 printable ASCII "
                        "characters, up to 25; English only); see aster/synth/vocabulary.py")
    parser.add_argument("--word_list", default=None,
                        help="a UTF-8 file of words, one per line, instead of the dictionary")
    parser.add_argument("--language", choices=(languages.ENGLISH, *languages.LANGUAGES),
                        default=languages.ENGLISH,
                        help="the script and words: en (English), el (Greek), ru (Russian); "
                        "el and ru need the wordfreq package (pip install -e '.[languages]')")
    parser.add_argument("--charset", default=None,
                        help="instead of --language: a UTF-8 file of the model's characters, one "
                        "per line, lower case (e.g. configs/charsets/ru.txt edited); needs "
                        "--word_list; fonts must draw its letters in both cases")
    parser.add_argument("--val_disjoint", choices=DISJOINT_MODES, default="both",
                        help="what validation keeps apart from training: words, font families")
    parser.add_argument("--heldout_font_families", default="",
                        help="comma-separated font families for val only (default: automatic)")
    parser.add_argument("--ood_font_families", default="",
                        help="comma-separated font families for val_ood only (default: "
                        "automatic)")
    parser.add_argument("--font_dirs", nargs="*", default=[], help="extra font folders")
    parser.add_argument("--google_fonts", default=None, metavar="DIR",
                        help="a Google Fonts library folder (`make fonts-google`: "
                        "data/fonts_google): its families train, sampled by category "
                        "(aster/synth/font_categories.py), caps-only faces drawn in upper "
                        "case, and a few per category held out for val_ood_<category>")
    parser.add_argument("--category_weights", default="", metavar="CAT=W,...",
                        help="with --google_fonts: how often each font category is drawn, e.g. "
                        "'display=0.3,handwriting=0.3' (the others keep their defaults, "
                        "aster/synth/font_categories.py; renormalised)")
    parser.add_argument("--num_val_ood_per_category", type=int, default=500,
                        help="images of each categories/val_ood_<category>.tfrecord (only with "
                        "--google_fonts)")
    parser.add_argument("--fonts", nargs="*", default=[], help="use only these font files")
    parser.add_argument("--list_fonts", action="store_true",
                        help="print the usable fonts by family and the split, then exit")
    cli.add_verbose_flag(parser)
    return parser


def _style(args):
    style = styles.TRAIN_STYLE.replace(height=args.height, width=args.width,
                                            keep_aspect=args.keep_aspect,
                                            min_legibility=args.min_legibility)
    if args.height < 8 or args.width < 8:
        raise ValueError(f"--height/--width must be >= 8, got {args.height}x{args.width}")
    styles.check(style)
    return style


def _names(value):
    return [f.strip() for f in value.split(",") if f.strip()]


def _heldout(args):
    named = {"val": _names(args.heldout_font_families),
             "val_ood": _names(args.ood_font_families)}
    return {k: v for k, v in named.items() if v} or None


def _jobs(args, plans=()):
    """[(render split, images, shards)] that the flags ask for (category splits: those planned)."""
    jobs = []
    for name, _, split, _, _ in RENDER_SPLITS:
        if args.split in ("all", split) or (args.split == "both" and split != "val_ood"):
            if split == "train":
                jobs.append((name, args.num_train, args.num_shards))
            elif split == "val":
                jobs.append((name, args.num_val, args.num_val_shards))
            else:
                half = args.num_val_ood // 2
                count = half if name.endswith("straight") else args.num_val_ood - half
                jobs.append((name, count, args.num_val_shards))
    if args.split in ("all", "val_ood"):
        jobs.extend((name, args.num_val_ood_per_category, args.num_val_shards)
                    for name, *_ in CATEGORY_RENDER_SPLITS if name in plans)
    return [job for job in jobs if job[1] > 0]


def _record_path(output_dir, name):
    """Where a render split's records go (category splits: in CATEGORY_DIR)."""
    if name in font_plans.CATEGORY_SPLITS:
        os.makedirs(os.path.join(output_dir, CATEGORY_DIR), exist_ok=True)
        return os.path.join(output_dir, CATEGORY_DIR, f"{name}.tfrecord")
    return os.path.join(output_dir, f"{name}.tfrecord")


def run(args):
    """Generates the requested splits; returns {split: manifest dict}."""
    category_weights = font_categories.parse_weights(args.category_weights)
    language = languages.get(args.language)
    if args.charset:
        if not args.word_list:
            raise ValueError("--charset needs --word_list FILE (the words to draw)")
        language = languages.from_charset_file(args.charset)
    required = language.font_chars if language else fonts_lib.REQUIRED_CHARS
    library = [args.google_fonts] if args.google_fonts else []
    fonts = fonts_lib.find_fonts(args.font_dirs, args.fonts, required, library_dirs=library,
                                 keep_caps_only=bool(library))
    plans, note = make_plans(fonts, args.seed, args.val_disjoint, _heldout(args), _style(args),
                             word_list=args.word_list, random_fraction=args.random_fraction,
                             max_length=args.max_length, language=language, text=args.text,
                             category_weights=category_weights)
    print(f"aster-synth-words: {len(fonts)} usable fonts in "
          f"{len(font_families.group_by_family(fonts))} families; {note}")
    for name, plan in plans.items():
        weights = ", ".join(f"{c} {w:.0%} ({len(i)})" for c, w, i in plan.categories)
        print(f"  {name}: {len(plan.families)} families, {plan.vocabulary.num_words} words"
              + (f"; categories (weight, families): {weights}" if weights else ""))
    if args.list_fonts:
        for family, members in font_families.group_by_family(fonts).items():
            print(f"  {family}: {', '.join(os.path.basename(f.path) for f in members)}")
        return {}
    os.makedirs(args.output_dir, exist_ok=True)
    if language is not None:
        chars = charsets.from_text_file(args.charset) if args.charset else language.charset
        with open(os.path.join(args.output_dir, "charset.txt"), "w", encoding="utf-8") as f:
            f.write("\n".join(chars) + "\n")
    manifests = {}
    for name, count, shards in _jobs(args, plans):
        paths, seconds, stats = generate(plans[name], count, _record_path(args.output_dir, name),
                                         shards, args.num_workers)
        manifests[name] = _manifest(plans[name], count, paths, seconds, stats, note, args)
        with open(os.path.join(args.output_dir, f"{name}_manifest.json"), "w") as f:
            json.dump(manifests[name], f, indent=2)
        print(f"[synth {name}] {count} images in {seconds:.1f} s: "
              f"{count / max(seconds, 1e-9):.0f} images/s with {args.num_workers} workers, "
              f"{stats['font_word_skips']} font/word skips, {stats['illegible_redraws']} "
              f"illegible drafts drawn again "
              f"-> {paths[0]}{' ...' if len(paths) > 1 else ''}", flush=True)
    with open(os.path.join(args.output_dir, "manifest.json"), "w") as f:
        json.dump({"fonts": note, "splits": manifests}, f, indent=2)
    return manifests


def main(argv=None):
    """Console entry point; returns 0, 2 with a message on stderr for a bad setting, or 1 when a
    font fails to draw a text (RenderError)."""
    args = build_parser().parse_args(argv)
    if args.verbose:
        cli_logging.configure(verbose=True)
    try:
        run(args)
    except ValueError as err:  # includes fonts.NoFontsError and vocabulary.VocabularyError
        print(f"aster-synth-words: error: {err}", file=sys.stderr)
        return 2
    except RenderError as err:
        print(f"aster-synth-words: error: {err}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
