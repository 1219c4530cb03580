"""The limits of one request and the check of each image, before anything reaches the model.

    limits = Limits(max_request_bytes=20 << 20, max_images=64)
    data = check_image(raw_bytes, limits.max_pixels)   # bytes the model's graph decodes
                                                        # or raises ImageError(why)

An image is opened with Pillow, its size read from the header and refused above max_pixels before
any pixel is decoded (the data pipeline's decompression-bomb rule: MAX_PIXELS of
aster/data_decoders/tf_example_decoder.py, which the serving graph also enforces), then decoded
whole, so that a truncated file is refused here and not inside a batch shared with other requests.
PNG, GIF, BMP and RGB or gray JPEG go to the model as they came; any other format Pillow reads
(WebP, TIFF, CMYK JPEG, ...) is re-encoded as PNG, since the graph decodes only those four.
"""

import dataclasses
import io
import warnings

from PIL import Image

# What tf.io.decode_image reads as it is (PNG, GIF, BMP always; JPEG in these modes).
_PASSED_AS_IS = {"PNG", "GIF", "BMP"}
_JPEG_MODES = {"RGB", "L"}


class ImageError(ValueError):
    """An image that cannot be recognized: the message says why (for the per-image error)."""


@dataclasses.dataclass(frozen=True)
class Limits:
    """What one request may hold and how long it may take.

    Attributes:
      max_request_bytes: largest request body; a larger one gets 413.
      max_images: most images in one request; more get 413.
      max_pixels: most pixels (width x height) of one image; None for (and at most) the data
        pipeline's MAX_PIXELS, which the serving graph enforces for every image of a batch.
      timeout_secs: longest time to read a request's body (408 past it) and, separately, to wait
        for the model's answer (503 past it).
    """

    max_request_bytes: int = 20 << 20
    max_images: int = 64
    max_pixels: int | None = None
    timeout_secs: float = 30.0

    def __post_init__(self):
        limit = max_pixels_limit()
        if self.max_pixels is None:
            object.__setattr__(self, "max_pixels", limit)
        for name in ("max_request_bytes", "max_images", "max_pixels"):
            if getattr(self, name) < 1:
                raise ValueError(f"{name} must be >= 1, got {getattr(self, name)}")
        if self.max_pixels > limit:
            raise ValueError(f"max_pixels must be <= {limit} (the serving graph refuses larger "
                             f"images), got {self.max_pixels}")
        if not self.timeout_secs > 0:
            raise ValueError(f"timeout_secs must be > 0, got {self.timeout_secs}")


def max_pixels_limit():
    """The data pipeline's decompression-bomb limit (tf_example_decoder.MAX_PIXELS), which the
    serving graph enforces; imported here so that the command's flags parse without TensorFlow."""
    from aster.data_decoders.tf_example_decoder import MAX_PIXELS

    return MAX_PIXELS


def check_image(data, max_pixels):
    """The bytes to give the model for one uploaded image, or why it cannot be read.

    Args:
      data: the uploaded bytes.
      max_pixels: most pixels allowed (width x height, from the header): Limits.max_pixels.

    Returns:
      Encoded image bytes that tf.io.decode_image reads: `data` itself, or a PNG of it.

    Raises:
      ImageError: empty, not an image Pillow knows, more than max_pixels pixels, or damaged
        (truncated, bad data).
    """
    if not data:
        raise ImageError("empty file")
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("error", Image.DecompressionBombWarning)
            with Image.open(io.BytesIO(data)) as image:
                width, height = image.size
                if width * height > max_pixels:  # from the header: nothing decoded yet
                    raise ImageError(f"{width}x{height} is {width * height} pixels, more than "
                                     f"the {max_pixels} allowed")
                image.load()
                if image.format in _PASSED_AS_IS or (image.format == "JPEG"
                                                     and image.mode in _JPEG_MODES):
                    return data
                buffer = io.BytesIO()
                image.convert("RGB").save(buffer, "PNG")
                return buffer.getvalue()
    except ImageError:
        raise
    except Image.UnidentifiedImageError:
        raise ImageError("not an image (no format Pillow reads)") from None
    except (Image.DecompressionBombError, Image.DecompressionBombWarning) as e:
        # Pillow's own guard, from the header too, for the largest images (> 2 x 89 M pixels).
        raise ImageError(f"more than the {max_pixels} pixels allowed ({e})") from None
    except (OSError, ValueError, SyntaxError, EOFError) as e:
        raise ImageError(f"damaged image ({e})") from None
