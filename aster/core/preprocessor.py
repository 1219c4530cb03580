"""Preprocessing dispatcher: applies (function, kwargs) steps to one example's tensor dict.

    steps = [preprocessor_builder.build(step) for step in train_config.data_augmentation_options]
    tensor_dict = preprocessor.preprocess(tensor_dict, steps)   # inside tf.data.Dataset.map

The ops live by concern in preprocessor_geometry.py, preprocessor_color.py and
preprocessor_text.py; this module says which tensor-dict entries each op reads and writes
(FUNC_ARG_MAP). Images are [H, W, C] float32 in [0, 255] throughout.
"""

from aster.core import preprocessor_color as color
from aster.core import preprocessor_geometry as geometry
from aster.core import preprocessor_text as text
from aster.core.standard_fields import InputDataFields as F

_IMAGE = (F.image,)
_IMAGE_AND_KEYPOINTS = (F.image, F.groundtruth_keypoints)

# Function -> the tensor-dict keys passed as its leading positional arguments, in order. The
# function returns the new values of the same keys (a tuple when more than one); a key missing
# from the dict is passed as None and its output ignored.
FUNC_ARG_MAP = {
    geometry.resize_image: _IMAGE,
    geometry.resize_image_random_method: _IMAGE,
    geometry.random_rotation: _IMAGE_AND_KEYPOINTS,
    geometry.random_perspective: _IMAGE_AND_KEYPOINTS,
    geometry.random_curve_warp: _IMAGE_AND_KEYPOINTS,
    geometry.random_crop_pad: _IMAGE_AND_KEYPOINTS,
    color.normalize_image: _IMAGE,
    color.random_pixel_value_scale: _IMAGE,
    color.random_rgb_to_gray: _IMAGE,
    color.rgb_to_gray: _IMAGE,
    color.random_adjust_brightness: _IMAGE,
    color.random_adjust_contrast: _IMAGE,
    color.random_adjust_hue: _IMAGE,
    color.random_adjust_saturation: _IMAGE,
    color.random_distort_color: _IMAGE,
    color.image_to_float: _IMAGE,
    color.subtract_channel_mean: _IMAGE,
    color.random_gaussian_blur: _IMAGE,
    color.random_gaussian_noise: _IMAGE,
    color.random_jpeg_quality: _IMAGE,
    text.string_filtering: (F.groundtruth_text,),
}

# Ops whose output leaves [0, 255] (see keeps_pixel_range).
RANGE_CHANGING_OPS = frozenset({color.normalize_image, color.subtract_channel_mean})


def keeps_pixel_range(steps):
    """True when every step's output image stays in [0, 255] (no normalize / mean subtraction)."""
    return not any(function in RANGE_CHANGING_OPS for function, _ in steps)


def preprocess(tensor_dict, steps):
    """Applies the steps in order to one example.

    Args:
      tensor_dict: dict of InputDataFields keys -> tensors of one example (image [H, W, 3] float32
        in [0, 255], groundtruth_text string scalar, groundtruth_keypoints [2N] float32, ...).
      steps: list of (function, kwargs) pairs, functions from FUNC_ARG_MAP.

    Returns:
      A new dict with the same keys (the input dict is not modified).

    Raises:
      ValueError: a function not in FUNC_ARG_MAP, or a step needs a key the dict lacks.
    """
    out = dict(tensor_dict)
    for index, (function, kwargs) in enumerate(steps):
        keys = FUNC_ARG_MAP.get(function)
        if keys is None:
            name = getattr(function, "__name__", repr(function))
            raise ValueError(f"preprocessing step {index}: {name} is not a preprocessing op")
        if keys[0] not in out:
            raise ValueError(
                f"preprocessing step {index} ({function.__name__}) needs {keys[0]!r}, "
                f"which the example lacks (keys: {sorted(out)})"
            )
        args = [out.get(k) for k in keys]
        results = function(*args, **kwargs)
        if not isinstance(results, tuple):
            results = (results,)
        for key, value in zip(keys, results, strict=True):
            if value is not None:
                out[key] = value
    return out
