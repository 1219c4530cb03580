"""The machinery every dataset converter shares: read or crop images, encode, count, write.

A converter's only format-specific part is a generator of `Sample`s (and `Skip`s for lines or
entries it cannot parse). `convert_samples` turns them into TFRecords:

    samples = [Sample("hello", image_path="/data/a.png", filename="a.png")]
    stats = convert_samples(samples, "out.tfrecord", num_shards=1, name="folder")

- A whole-image sample keeps its PNG/JPEG bytes as they are (other formats, and modes other than
  RGB/L, are re-encoded as PNG); the image is fully decoded once so unreadable files are caught.
- A sample with a `box` is cropped from its source image: the box is rounded outwards and clamped
  to the image, the crop is encoded as `crop_format` (PNG by default), and `keypoints` given in
  source-image pixels are shifted into crop pixels. Consecutive crops of one image open it once.
- Unreadable images, empty crops, empty transcripts and malformed entries are skipped and counted;
  a progress line goes to stderr every `progress_every` items and the summary is printed at the end.
"""

import dataclasses
import io
import math
import sys
import time

from PIL import Image

from aster.tools import tfrecord_utils

_KEEP_FORMATS = {"PNG": "png", "JPEG": "jpeg"}


@dataclasses.dataclass
class Sample:
    """One word image to write.

    Attributes:
      transcript: str, the word.
      image_path: str, the file to read (unless image_bytes is given).
      image_bytes: bytes or None, the encoded image when it is already in memory (LMDB).
      box: None for the whole image, or (x0, y0, x1, y1) in source pixels to crop.
      filename: str stored as image/filename (unique per crop); defaults to image_path.
      lexicon: sequence of str.
      keypoints: flat [x0, y0, ...] in source-image pixels (top curve then bottom curve).
    """

    transcript: str
    image_path: str = ""
    image_bytes: bytes | None = None
    box: tuple | None = None
    filename: str = ""
    lexicon: tuple = ()
    keypoints: tuple = ()


@dataclasses.dataclass
class Skip:
    """A source entry that cannot become a sample (malformed line, missing field...)."""

    reason: str
    where: str = ""


@dataclasses.dataclass
class ConversionStats:
    """What a conversion wrote and skipped."""

    written: int = 0
    skipped: dict = dataclasses.field(default_factory=dict)
    paths: list = dataclasses.field(default_factory=list)

    @property
    def num_skipped(self):
        return sum(self.skipped.values())

    def skip(self, reason):
        self.skipped[reason] = self.skipped.get(reason, 0) + 1


class _SkipSample(Exception):
    """Raised inside the encoder when a sample cannot be written; the message is the reason."""


def crop_name(image_name, index):
    """The stored filename of the `index`-th crop of an image: unique per crop, e.g. `a.jpg#3`."""
    return f"{image_name}#{index}"


class _ImageSource:
    """Opens images (caching the last one, since crops of one image arrive together)."""

    def __init__(self):
        self._path = None
        self._image = None

    def load(self, sample):
        """Returns (encoded bytes, loaded PIL image); raises _SkipSample if unreadable."""
        key = sample.image_path if sample.image_bytes is None else None
        if key is None or key != self._path:
            self._path, self._image = key, None
            data = sample.image_bytes if sample.image_bytes is not None else _read(sample)
            try:
                image = Image.open(io.BytesIO(data))
                image.load()
            except Exception as err:  # PIL raises many exception types on bad data
                raise _SkipSample("unreadable image") from err
            self._image = (data, image)
        if self._image is None:
            raise _SkipSample("unreadable image")
        return self._image


def _read(sample):
    try:
        with open(sample.image_path, "rb") as f:
            return f.read()
    except OSError as err:
        raise _SkipSample("unreadable image") from err


def _encode(image, image_format, jpeg_quality=95):
    if image.mode not in ("RGB", "L"):
        image = image.convert("RGB")
    buffer = io.BytesIO()
    if image_format == "jpeg":
        image.save(buffer, format="JPEG", quality=jpeg_quality)
    else:
        image.save(buffer, format="PNG", compress_level=3)
    return buffer.getvalue()


def clamp_box(box, width, height):
    """Rounds (x0, y0, x1, y1) outwards to integers and clamps it to a width x height image."""
    xa, ya, xb, yb = box
    x0, y0 = max(0, math.floor(min(xa, xb))), max(0, math.floor(min(ya, yb)))
    x1, y1 = min(width, math.ceil(max(xa, xb))), min(height, math.ceil(max(ya, yb)))
    return x0, y0, x1, y1


def _to_example(sample, source, crop_format):
    transcript = sample.transcript.strip() if sample.transcript else ""
    if not transcript:
        raise _SkipSample("empty transcript")
    data, image = source.load(sample)
    keypoints = list(sample.keypoints)
    if sample.box is None:
        image_format = _KEEP_FORMATS.get(image.format)
        if image_format is None or image.mode not in ("RGB", "L"):
            image_format, data = "png", _encode(image, "png")
        height, width = image.height, image.width
    else:
        x0, y0, x1, y1 = clamp_box(sample.box, image.width, image.height)
        if x1 - x0 < 1 or y1 - y0 < 1:
            raise _SkipSample("empty crop box")
        image_format = crop_format
        data = _encode(image.crop((x0, y0, x1, y1)), crop_format)
        height, width = y1 - y0, x1 - x0
        keypoints = [v - (x0 if i % 2 == 0 else y0) for i, v in enumerate(keypoints)]
    filename = sample.filename or sample.image_path
    try:
        return tfrecord_utils.make_example(
            data, transcript, image_format=image_format, filename=filename,
            lexicon=sample.lexicon, keypoints=keypoints, height=height, width=width)
    except ValueError as err:
        raise _SkipSample("invalid fields") from err


class _Progress:
    def __init__(self, name, total, every, stream):
        self._name, self._total, self._every, self._stream = name, total, every, stream
        self._start = time.monotonic()

    def update(self, done, stats):
        if not self._every or done % self._every:
            return
        rate = done / max(time.monotonic() - self._start, 1e-6)
        of = f"/{self._total} ({100.0 * done / self._total:.0f}%)" if self._total else ""
        print(f"[{self._name}] {done}{of} entries, {stats.written} written, "
              f"{stats.num_skipped} skipped, {rate:.0f}/s", file=self._stream, flush=True)


def convert_samples(samples, output_path, num_shards=1, name="convert", total=None,
                    crop_format="png", progress_every=1000, limit=None, stream=None):
    """Writes `Sample`s to TFRecords, skipping and counting the ones that cannot be written.

    Args:
      samples: iterable of Sample or Skip.
      output_path: str, output file (see tfrecord_utils.write_tfrecords for sharded names).
      num_shards: int >= 1.
      name: str shown in progress and summary lines.
      total: int or None, the expected number of entries (for percentages).
      crop_format: "png" or "jpeg", the encoding of cropped images.
      progress_every: int, entries between progress lines on stderr (0: none).
      limit: int or None, stop after writing this many records.
      stream: where the summary is printed (default stdout).

    Returns:
      ConversionStats with the written count, skip counts by reason and the shard paths.

    Raises:
      ValueError: on a bad crop_format or num_shards.
    """
    if crop_format not in ("png", "jpeg"):
        raise ValueError(f"crop_format {crop_format!r}; expected 'png' or 'jpeg'")
    stats = ConversionStats()
    source = _ImageSource()
    progress = _Progress(name, total, progress_every, sys.stderr)

    def examples():
        for done, sample in enumerate(samples, 1):
            if isinstance(sample, Skip):
                stats.skip(f"malformed entry ({sample.reason})")
            else:
                try:
                    yield _to_example(sample, source, crop_format)
                    stats.written += 1
                except _SkipSample as err:
                    stats.skip(str(err))
            progress.update(done, stats)
            if limit is not None and stats.written >= limit:
                return

    stats.paths = tfrecord_utils.write_tfrecords(examples(), output_path, num_shards)
    skipped = ", ".join(f"{n} {reason}" for reason, n in sorted(stats.skipped.items()))
    print(f"[{name}] wrote {stats.written} records to {', '.join(stats.paths)}; "
          f"skipped {stats.num_skipped}{': ' + skipped if skipped else ''}",
          file=stream or sys.stdout, flush=True)
    return stats


def read_text_lines(path):
    """Yields (line_number, line) of a UTF-8 text file (BOM dropped, newline stripped), no blanks.

    Raises:
      ValueError: if the file cannot be opened.
    """
    try:
        f = open(path, encoding="utf-8-sig", errors="replace")
    except OSError as err:
        raise ValueError(f"cannot open {path!r}: {err}") from err
    with f:
        for number, line in enumerate(f, 1):
            line = line.rstrip("\r\n")
            if line.strip():
                yield number, line


def count_text_lines(path):
    """Returns the number of non-blank lines of a text file (0 if it cannot be read)."""
    try:
        return sum(1 for _ in read_text_lines(path))
    except ValueError:
        return 0


def unquote(text):
    """Strips surrounding double quotes and undoes \\" and \\\\ escapes (ICDAR label style)."""
    text = text.strip()
    if len(text) >= 2 and text[0] == '"' and text[-1] == '"':
        text = text[1:-1].replace('\\"', '"').replace("\\\\", "\\")
    return text
