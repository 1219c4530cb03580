import pytest
from google.protobuf import text_format

from aster.builders import preprocessor_builder
from aster.core import charsets, preprocessor
from aster.core import preprocessor_color as color
from aster.core import preprocessor_geometry as geometry
from aster.core import preprocessor_text as text
from aster.protos import preprocessor_pb2


def _build(snippet):
    return preprocessor_builder.build(
        text_format.Parse(snippet, preprocessor_pb2.PreprocessingStep())
    )


CASES = [
    (
        "resize_image_random_method { target_height: 64 target_width: 256 }",
        geometry.resize_image_random_method,
        {"target_height": 64, "target_width": 256},
    ),
    (
        "resize_image { target_height: 32 target_width: 100 method: AREA }",
        geometry.resize_image,
        {"target_height": 32, "target_width": 100, "method": "area", "antialias": True},
    ),
    (
        "resize_image { method: NEAREST_NEIGHBOR }",
        geometry.resize_image,
        {"target_height": 512, "target_width": 512, "method": "nearest", "antialias": True},
    ),
    (
        "resize_image { method: BICUBIC }",
        geometry.resize_image,
        {"target_height": 512, "target_width": 512, "method": "bicubic", "antialias": True},
    ),
    (
        "resize_image { }",
        geometry.resize_image,
        {"target_height": 512, "target_width": 512, "method": "bilinear", "antialias": True},
    ),
    (
        "resize_image { antialias: false }",
        geometry.resize_image,
        {"target_height": 512, "target_width": 512, "method": "bilinear", "antialias": False},
    ),
    (
        "normalize_image { original_minval: 0 original_maxval: 255 target_minval: -1 }",
        color.normalize_image,
        {"original_minval": 0, "original_maxval": 255, "target_minval": -1, "target_maxval": 1},
    ),
    (
        "random_pixel_value_scale { minval: 0.8 }",
        color.random_pixel_value_scale,
        {"minval": pytest.approx(0.8), "maxval": pytest.approx(1.1)},
    ),
    ("random_rgb_to_gray { probability: 0.25 }", color.random_rgb_to_gray, {"probability": 0.25}),
    (
        "random_adjust_brightness { max_delta: 0.5 }",
        color.random_adjust_brightness,
        {"max_delta": 0.5},
    ),
    (
        "random_adjust_contrast { min_delta: 0.5 max_delta: 1.5 }",
        color.random_adjust_contrast,
        {"min_delta": 0.5, "max_delta": 1.5},
    ),
    ("random_adjust_hue { max_delta: 0.25 }", color.random_adjust_hue, {"max_delta": 0.25}),
    (
        "random_adjust_saturation { min_delta: 0.5 max_delta: 2 }",
        color.random_adjust_saturation,
        {"min_delta": 0.5, "max_delta": 2.0},
    ),
    (
        "random_distort_color { color_ordering: 1 }",
        color.random_distort_color,
        {"color_ordering": 1},
    ),
    ("image_to_float { }", color.image_to_float, {}),
    (
        "subtract_channel_mean { means: 1 means: 2 means: 3 }",
        color.subtract_channel_mean,
        {"means": [1.0, 2.0, 3.0]},
    ),
    ("rgb_to_gray { three_channels: true }", color.rgb_to_gray, {"three_channels": True}),
    (
        "random_rotation { max_angle: 4 probability: 0.5 }",
        geometry.random_rotation,
        {"max_angle": 4.0, "probability": 0.5},
    ),
    (
        "random_perspective { max_shift: 0.125 }",
        geometry.random_perspective,
        {"max_shift": 0.125, "probability": 1.0},
    ),
    (
        "random_curve_warp { max_amplitude: 0.25 min_periods: 0.5 max_periods: 2 }",
        geometry.random_curve_warp,
        {"max_amplitude": 0.25, "min_periods": 0.5, "max_periods": 2.0, "probability": 1.0},
    ),
    (
        "random_gaussian_blur { min_sigma: 0.5 max_sigma: 1 probability: 0.25 }",
        color.random_gaussian_blur,
        {"min_sigma": 0.5, "max_sigma": 1.0, "probability": 0.25},
    ),
    (
        "random_gaussian_noise { max_stddev: 4 }",
        color.random_gaussian_noise,
        {"min_stddev": 0.0, "max_stddev": 4.0, "probability": 0.5},
    ),
    (
        "random_jpeg_quality { min_quality: 40 max_quality: 90 probability: 1 }",
        color.random_jpeg_quality,
        {"min_quality": 40, "max_quality": 90, "probability": 1.0},
    ),
    (
        "random_crop_pad { max_crop: 0.125 max_pad: 0.25 }",
        geometry.random_crop_pad,
        {"max_crop": 0.125, "max_pad": 0.25, "probability": 1.0},
    ),
]


@pytest.mark.parametrize("snippet,function,kwargs", CASES, ids=[c[0].split()[0] for c in CASES])
def test_build_maps_each_step(snippet, function, kwargs):
    built_function, built_kwargs = _build(snippet)
    assert built_function is function and built_function in preprocessor.FUNC_ARG_MAP
    assert built_kwargs == kwargs


def test_build_string_filtering_resolves_charset():
    function, kwargs = _build(
        "string_filtering { lower_case: true include_charset { built_in_set: ALLCASES } }"
    )
    assert function is text.string_filtering
    assert kwargs == {"lower_case": True, "include_charset": list(charsets.ALLCASES),
                      "case_fold": False}


def test_build_string_filtering_passes_case_fold():
    function, kwargs = _build(
        "string_filtering { case_fold: true include_charset { text_string: 'α σ' } }")
    assert function is text.string_filtering
    assert kwargs == {"lower_case": False, "include_charset": ["α", "σ"], "case_fold": True}


def test_build_string_filtering_utf8_text_string():
    _, kwargs = _build('string_filtering { include_charset { text_string: "中 文 é" } }')
    assert kwargs["include_charset"] == ["中", "文", "é"]


def test_every_oneof_member_has_a_builder():
    members = {f.name for f in preprocessor_pb2.PreprocessingStep.DESCRIPTOR.oneofs[0].fields}
    built = {snippet.split()[0] for snippet, _, _ in CASES} | {"string_filtering"}
    assert built == members


def test_build_empty_oneof_raises():
    with pytest.raises(ValueError, match="preprocessing_step: preprocessing_step is not set"):
        _build("")


def test_build_wrong_message_raises():
    with pytest.raises(ValueError, match="expected a PreprocessingStep"):
        preprocessor_builder.build(preprocessor_pb2.ResizeImage())


def test_build_steps_keeps_order():
    config = preprocessor_pb2.PreprocessingStep()
    config.image_to_float.SetInParent()
    other = preprocessor_pb2.PreprocessingStep()
    other.rgb_to_gray.SetInParent()
    steps = preprocessor_builder.build_steps([config, other])
    assert [f for f, _ in steps] == [color.image_to_float, color.rgb_to_gray]
