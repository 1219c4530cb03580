"""Word accuracy of an evaluation's predictions broken down by transcript length, text kind and
(for aster-synth-words images) font family.

    python -m aster.tools.prediction_breakdown runs/demo_cpu/eval/step-5000/predictions-val.tsv \
        --manifest data/synth/manifest.json

reads the predictions TSV that aster-eval writes per dataset (eval_reports.write_predictions:
index, filename, groundtruth, prediction, ..., correct) and prints one table per grouping:
images, word accuracy and its share of all errors. The ground truth there is already the
protocol's (e.g. lower-cased alphanumerics), so lengths and kinds are those the model was
scored on. With --manifest, a synthetic image's family is looked up from the font file in its
filename (synth/<split>/<index>/<font file stem>); other images fall under "(unknown)".
"""

import argparse
import collections
import csv
import json
import os
import sys

from aster.utils import cli

PROG = "python -m aster.tools.prediction_breakdown"
LENGTH_BUCKETS = ((1, 3), (4, 6), (7, 9), (10, 12), (13, 99))
LENGTH_LABELS = ["0"] + [f"{low}-{high}" if high < 99 else f">={low}"
                         for low, high in LENGTH_BUCKETS]
UNKNOWN = "(unknown)"


def read_predictions(path):
    """[(groundtruth, prediction, correct, filename)] of a predictions TSV.

    Raises:
      ValueError: naming the file, when it lacks the columns write_predictions writes.
    """
    with open(path, encoding="utf-8", newline="") as f:
        reader = csv.DictReader(f, delimiter="\t")
        needed = {"filename", "groundtruth", "prediction", "correct"}
        missing = needed - set(reader.fieldnames or ())
        if missing:
            raise ValueError(f"{path}: not an aster-eval predictions file (no column "
                             f"{', '.join(sorted(missing))})")
        return [(row["groundtruth"], row["prediction"], row["correct"] == "1", row["filename"])
                for row in reader]


def length_bucket(text):
    for (low, high), label in zip(LENGTH_BUCKETS, LENGTH_LABELS[1:], strict=True):
        if low <= len(text) <= high:
            return label
    return "0"


def text_kind(text):
    """"letters", "digits", "letters+digits" or "other" (any other character)."""
    letters = any(c.isalpha() for c in text)
    digits = any(c.isdigit() for c in text)
    if not all(c.isalnum() for c in text) or not text:
        return "other"
    return "letters+digits" if letters and digits else ("letters" if letters else "digits")


def families_by_font(manifest_path):
    """{font file stem: family} from an aster-synth-words manifest.json (all its splits)."""
    with open(manifest_path, encoding="utf-8") as f:
        manifest = json.load(f)
    families = {}
    for split in manifest.get("splits", {}).values():
        for family, paths in split.get("fonts", {}).items():
            for path in paths:
                families[os.path.splitext(os.path.basename(path))[0]] = family
    if not families:
        raise ValueError(f"{manifest_path}: no fonts listed (not an aster-synth-words "
                         "manifest.json?)")
    return families


def family_of(filename, families):
    return families.get(filename.rsplit("/", 1)[-1], UNKNOWN) if families else UNKNOWN


def breakdown(rows, key, order=None):
    """[(group, images, accuracy, share of all errors)] for groups of key(row), sorted by name
    or by their place in `order` (a list of the group names)."""
    counts = collections.defaultdict(lambda: [0, 0])
    for row in rows:
        group = counts[key(row)]
        group[0] += 1
        group[1] += row[2]
    errors = sum(n - c for n, c in counts.values()) or 1
    place = (lambda item: order.index(item[0])) if order else None
    return [(g, n, c / n, (n - c) / errors)
            for g, (n, c) in sorted(counts.items(), key=place)]


def format_table(title, table):
    lines = [f"| {title} | images | word accuracy | share of errors |", "|---|---:|---:|---:|"]
    lines += [f"| {g} | {n} | {100 * a:.1f}% | {100 * e:.1f}% |" for g, n, a, e in table]
    return "\n".join(lines)


def report(path, families=None):
    """The markdown tables of one predictions file."""
    rows = read_predictions(path)
    if not rows:
        raise ValueError(f"{path}: no predictions")
    correct = sum(r[2] for r in rows)
    parts = [f"### {path}: {len(rows)} images, word accuracy {100 * correct / len(rows):.2f}%",
             format_table("length", breakdown(rows, lambda r: length_bucket(r[0]),
                                             LENGTH_LABELS)),
             format_table("kind", breakdown(rows, lambda r: text_kind(r[0])))]
    if families is not None:
        parts.append(format_table("font family", breakdown(
            rows, lambda r: family_of(r[3], families))))
    return "\n\n".join(parts)


def main(argv=None):
    parser = argparse.ArgumentParser(prog=PROG,
                                     description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("predictions", nargs="+", help="predictions-<dataset>.tsv files")
    parser.add_argument("--manifest", help="aster-synth-words manifest.json (font families)")
    args = parser.parse_args(argv)
    try:
        families = families_by_font(args.manifest) if args.manifest else None
        print("\n\n".join(report(p, families) for p in args.predictions))
    except (OSError, ValueError) as e:
        return cli.fail(PROG, e, cli.CONFIG_ERROR_STATUS)
    return cli.OK_STATUS


if __name__ == "__main__":
    sys.exit(main())
