"""SynthText (`gt.mat` with imnames, wordBB, charBB, txt): word crops with curve keypoints.

Each word becomes the crop of its quadrilateral's axis-aligned bounding box (optionally enlarged by
`margin_ratio * sqrt(box area)`, as the original ASTER did with 0.1), clamped to the image. Its
keypoints are a top and a bottom curve in crop pixels: a degree-2 parametric polynomial (x(t), y(t),
t = normalised arc length) fitted through the top edges (corners 0, 1) and the bottom edges
(corners 3, 2) of its character boxes, sampled at `points_per_curve` evenly spaced t, left to right.
An image whose word or character count disagrees with its boxes is skipped (counted).
"""

import os
import sys

import numpy as np

from aster.tools import conversion
from aster.tools.converters import mat_utils


def fit_curve(points, num_points):
    """Fits x(t), y(t) (degree <= 2) through ordered [n, 2] points; returns [num_points, 2]."""
    steps = np.linalg.norm(np.diff(points, axis=0), axis=1)
    t = np.concatenate([[0.0], np.cumsum(steps)])
    t = t / t[-1] if t[-1] > 0 else np.linspace(0.0, 1.0, len(points))
    degree = min(2, len(np.unique(t)) - 1)
    samples = np.linspace(0.0, 1.0, num_points)
    if degree < 1:
        return np.repeat(points[:1], num_points, axis=0)
    return np.stack([np.polyval(np.polyfit(t, points[:, k], degree), samples) for k in (0, 1)],
                    axis=1)


def word_keypoints(char_quads, num_points):
    """[n, 4, 2] character corners (TL, TR, BR, BL) -> flat top-then-bottom curve points."""
    top = char_quads[:, [0, 1]].reshape(-1, 2)
    bottom = char_quads[:, [3, 2]].reshape(-1, 2)
    curves = [fit_curve(top, num_points), fit_curve(bottom, num_points)]
    return tuple(float(v) for v in np.concatenate(curves).ravel())


def _quads(boxes):
    """A loadmat [2, 4, n] (or [2, 4] for n = 1) box array -> [n, 4, 2] float."""
    boxes = np.asarray(boxes, dtype=np.float64)
    if boxes.ndim == 2:
        boxes = boxes[:, :, None]
    return np.transpose(boxes, (2, 1, 0))


def _image_samples(root, name, text, word_boxes, char_boxes, margin_ratio, num_points):
    words = [w for line in mat_utils.strings(text) for w in line.split()]
    word_quads, char_quads = _quads(word_boxes), _quads(char_boxes)
    if len(words) != len(word_quads) or sum(map(len, words)) != len(char_quads):
        yield conversion.Skip("word/box count mismatch", name)
        return
    offset = 0
    for index, (word, quad) in enumerate(zip(words, word_quads, strict=True)):
        chars = char_quads[offset:offset + len(word)]
        offset += len(word)
        (x0, y0), (x1, y1) = quad.min(axis=0), quad.max(axis=0)
        margin = margin_ratio * np.sqrt(max(x1 - x0, 0) * max(y1 - y0, 0))
        yield conversion.Sample(
            word, image_path=os.path.join(root, name), filename=conversion.crop_name(name, index),
            box=(x0 - margin, y0 - margin, x1 + margin, y1 + margin),
            keypoints=word_keypoints(chars, num_points))


def read_samples(gt_mat, image_dir=None, margin_ratio=0.0, points_per_curve=64, groundtruth=None):
    """Yields a Sample per word of every image in gt.mat (images relative to image_dir, default
    the gt.mat folder). `groundtruth` may pass an already loaded dict."""
    root = image_dir or os.path.dirname(os.path.abspath(gt_mat))
    gt = groundtruth if groundtruth is not None else mat_utils.load(gt_mat)
    for key in ("imnames", "wordBB", "charBB", "txt"):
        if key not in gt:
            raise ValueError(f"{gt_mat}: no {key!r} field; expected imnames, wordBB, charBB, txt")
    fields = [np.asarray(gt[k], dtype=object).ravel() for k in ("imnames", "txt", "wordBB",
                                                                 "charBB")]
    for name, text, word_boxes, char_boxes in zip(*fields, strict=True):
        yield from _image_samples(root, mat_utils.string(name), text, word_boxes, char_boxes,
                                  margin_ratio, points_per_curve)


def convert(gt_mat, output_path, image_dir=None, margin_ratio=0.0, points_per_curve=64,
            **options):
    """Converts SynthText; options go to conversion.convert_samples."""
    if points_per_curve < 2:
        raise ValueError(f"points_per_curve must be >= 2, got {points_per_curve}")
    print(f"[synthtext] loading {gt_mat} (the full gt.mat takes a while)", file=sys.stderr,
          flush=True)
    gt = mat_utils.load(gt_mat)
    total = sum(_quads(b).shape[0] for b in np.asarray(gt["wordBB"], dtype=object).ravel()) \
        if "wordBB" in gt else None
    samples = read_samples(gt_mat, image_dir, margin_ratio, points_per_curve, groundtruth=gt)
    return conversion.convert_samples(samples, output_path, name="synthtext", total=total,
                                      **options)


def add_arguments(parser):
    parser.add_argument("--gt_mat", required=True, help="SynthText gt.mat")
    parser.add_argument("--image_dir", help="image root (default: the gt.mat folder)")
    parser.add_argument("--margin_ratio", type=float, default=0.0,
                        help="enlarge each box by this times sqrt(box area) (original: 0.1)")
    parser.add_argument("--points_per_curve", type=int, default=64,
                        help="keypoints per curve (top and bottom; the original used 64)")


def run(args, options):
    return convert(args.gt_mat, args.output, image_dir=args.image_dir,
                   margin_ratio=args.margin_ratio, points_per_curve=args.points_per_curve,
                   **options)
