"""Builds (function, kwargs) preprocessing steps from PreprocessingStep messages."""

from aster.builders import character_set_builder
from aster.core import preprocessor_color as color
from aster.core import preprocessor_geometry as geometry
from aster.core import preprocessor_text as text
from aster.protos import preprocessor_pb2
from aster.utils import config_checks

_RESIZE_METHODS = {
    preprocessor_pb2.ResizeImage.AREA: "area",
    preprocessor_pb2.ResizeImage.BICUBIC: "bicubic",
    preprocessor_pb2.ResizeImage.BILINEAR: "bilinear",
    preprocessor_pb2.ResizeImage.NEAREST_NEIGHBOR: "nearest",
}


def _fields(config, names):
    return {name: getattr(config, name) for name in names}


def _build_resize_image_random_method(c):
    return geometry.resize_image_random_method, _fields(c, ["target_height", "target_width"])


def _build_resize_image(c):
    kwargs = _fields(c, ["target_height", "target_width", "antialias"])
    kwargs["method"] = _RESIZE_METHODS[c.method]
    return geometry.resize_image, kwargs


def _build_normalize_image(c):
    names = ["original_minval", "original_maxval", "target_minval", "target_maxval"]
    return color.normalize_image, _fields(c, names)


def _build_random_pixel_value_scale(c):
    return color.random_pixel_value_scale, _fields(c, ["minval", "maxval"])


def _build_random_rgb_to_gray(c):
    return color.random_rgb_to_gray, _fields(c, ["probability"])


def _build_random_adjust_brightness(c):
    return color.random_adjust_brightness, _fields(c, ["max_delta"])


def _build_random_adjust_contrast(c):
    return color.random_adjust_contrast, _fields(c, ["min_delta", "max_delta"])


def _build_random_adjust_hue(c):
    return color.random_adjust_hue, _fields(c, ["max_delta"])


def _build_random_adjust_saturation(c):
    return color.random_adjust_saturation, _fields(c, ["min_delta", "max_delta"])


def _build_random_distort_color(c):
    return color.random_distort_color, _fields(c, ["color_ordering"])


def _build_image_to_float(c):
    return color.image_to_float, {}


def _build_subtract_channel_mean(c):
    return color.subtract_channel_mean, {"means": list(c.means)}


def _build_rgb_to_gray(c):
    return color.rgb_to_gray, _fields(c, ["three_channels"])


def _build_string_filtering(c):
    charset = character_set_builder.build(
        c.include_charset, "preprocessing_step.string_filtering.include_charset"
    )
    return text.string_filtering, {"lower_case": c.lower_case, "include_charset": charset,
                                   "case_fold": c.case_fold}


def _build_random_rotation(c):
    return geometry.random_rotation, _fields(c, ["max_angle", "probability"])


def _build_random_perspective(c):
    return geometry.random_perspective, _fields(c, ["max_shift", "probability"])


def _build_random_curve_warp(c):
    names = ["max_amplitude", "min_periods", "max_periods", "probability"]
    return geometry.random_curve_warp, _fields(c, names)


def _build_random_gaussian_blur(c):
    return color.random_gaussian_blur, _fields(c, ["min_sigma", "max_sigma", "probability"])


def _build_random_gaussian_noise(c):
    return color.random_gaussian_noise, _fields(c, ["min_stddev", "max_stddev", "probability"])


def _build_random_jpeg_quality(c):
    return color.random_jpeg_quality, _fields(c, ["min_quality", "max_quality", "probability"])


def _build_random_crop_pad(c):
    return geometry.random_crop_pad, _fields(c, ["max_crop", "max_pad", "probability"])


_BUILDERS = {
    "resize_image_random_method": _build_resize_image_random_method,
    "resize_image": _build_resize_image,
    "normalize_image": _build_normalize_image,
    "random_pixel_value_scale": _build_random_pixel_value_scale,
    "random_rgb_to_gray": _build_random_rgb_to_gray,
    "random_adjust_brightness": _build_random_adjust_brightness,
    "random_adjust_contrast": _build_random_adjust_contrast,
    "random_adjust_hue": _build_random_adjust_hue,
    "random_adjust_saturation": _build_random_adjust_saturation,
    "random_distort_color": _build_random_distort_color,
    "image_to_float": _build_image_to_float,
    "subtract_channel_mean": _build_subtract_channel_mean,
    "rgb_to_gray": _build_rgb_to_gray,
    "string_filtering": _build_string_filtering,
    "random_rotation": _build_random_rotation,
    "random_perspective": _build_random_perspective,
    "random_curve_warp": _build_random_curve_warp,
    "random_gaussian_blur": _build_random_gaussian_blur,
    "random_gaussian_noise": _build_random_gaussian_noise,
    "random_jpeg_quality": _build_random_jpeg_quality,
    "random_crop_pad": _build_random_crop_pad,
}


def build(step_config, field_path="preprocessing_step"):
    """Returns (function, kwargs) for one PreprocessingStep, for preprocessor.preprocess.

    Args:
      step_config: preprocessor_pb2.PreprocessingStep.
      field_path: the message's path in the pipeline config, for error messages.

    Raises:
      ValueError: not a PreprocessingStep; ConfigError (a ValueError) for a step that breaks a
        rule of aster.utils.config_checks (unset oneof, a range, an invalid character set).
    """
    if not isinstance(step_config, preprocessor_pb2.PreprocessingStep):
        raise ValueError(f"expected a PreprocessingStep message, got {type(step_config)}")
    config_checks.check(step_config, field_path)
    name = step_config.WhichOneof("preprocessing_step")
    return _BUILDERS[name](getattr(step_config, name))


def build_steps(step_configs, field_path="train_config.data_augmentation_options"):
    """Builds a list of steps from a repeated PreprocessingStep field (at field_path)."""
    return [build(config, f"{field_path}[{i}]") for i, config in enumerate(step_configs)]
