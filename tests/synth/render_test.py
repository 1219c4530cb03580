"""Tests for aster/synth/render.py, geometry.py, backgrounds.py, styles.py."""

import dataclasses
import io

import numpy as np
import pytest
from PIL import Image, ImageDraw, ImageFilter

from aster.synth import backgrounds, geometry, render, styles

# Every probability off: the knobs below are switched on one at a time.
QUIET = styles.RenderStyle(**{
    f.name: 0.0 for f in dataclasses.fields(styles.RenderStyle) if f.name.endswith("_prob")
}).replace(backgrounds=(("plain_light", 1.0),), margin_x=(0.1, 0.1), margin_y=(0.1, 0.1))


@pytest.fixture(scope="module")
def font_path(machine_fonts):
    found = machine_fonts
    sans = [f for f in found if "DejaVuSans.ttf" in f.path or "LiberationSans-Regular" in f.path]
    return (sans or found)[0].path


def _decode(png):
    return np.asarray(Image.open(io.BytesIO(png)).convert("RGB"))


def test_render_fixed_size_rgb_with_keypoints(font_path):
    for seed in range(20):
        out = render.render("Hello42", font_path, np.random.default_rng(seed))
        pixels = _decode(out.png)
        assert pixels.shape == (32, 100, 3) and (out.height, out.width) == (32, 100)
        assert pixels.std() > 3  # text is visible against the background
        assert len(out.keypoints) == 4 * render.KEYPOINTS_PER_CURVE
        points = np.reshape(out.keypoints, (-1, 2))
        assert (points[:, 0] >= 0).all() and (points[:, 0] <= 100).all()
        assert (points[:, 1] >= 0).all() and (points[:, 1] <= 32).all()


def test_render_keep_aspect_bounds_width(font_path):
    style = styles.TRAIN_STYLE.replace(height=64, width=256, keep_aspect=True)
    widths = set()
    for seed, text in enumerate(["a", "extraordinarily"]):
        out = render.render(text, font_path, np.random.default_rng(seed), style)
        assert _decode(out.png).shape == (64, out.width, 3) and 64 <= out.width <= 256
        widths.add(out.width)
    assert len(widths) == 2


def test_render_same_generator_state_same_image(font_path):
    for style in (styles.TRAIN_STYLE, styles.OOD_STYLE):
        first = render.render("word", font_path, np.random.default_rng(7), style)
        again = render.render("word", font_path, np.random.default_rng(7), style)
        other = render.render("word", font_path, np.random.default_rng(8), style)
        assert first == again and first.png != other.png


def _ink(out):
    """Boolean ink mask of a QUIET-style image (dark-ish text on a plain light background)."""
    grey = _decode(out.png).astype(float).mean(axis=2)
    background = np.median(grey)
    return np.abs(grey - background) > 0.5 * np.abs(grey - background).max()


@pytest.mark.parametrize("up", [True, False])
def test_keypoints_follow_a_known_arc(font_path, up):
    style = QUIET.replace(curve_prob=1.0, arc_share=1.0, min_arc=1.6, max_arc=1.6,
                          height=64, width=200, contrast=(150.0, 150.0))
    for seed in range(40):  # the arc direction is drawn: find a seed with the wanted one
        out = render.render("EEEEEEEEE", font_path, np.random.default_rng(seed), style)
        points = np.reshape(out.keypoints, (2, -1, 2))
        middle, ends = points[0, points.shape[1] // 2, 1], points[0, [0, -1], 1].mean()
        if (middle < ends) == up:
            break
    assert out.curve == "arc"
    assert abs(middle - ends) > 8  # the top line is really bent
    ink = _ink(out)
    for curve, (xs, ys) in zip(("top", "bottom"), (points[0].T, points[1].T), strict=True):
        for x, y in zip(xs, ys, strict=True):
            # Nothing drawn beyond the curve (outside the word) and ink right inside it.
            c, r = int(np.clip(x, 1, out.width - 2)), int(round(y))
            outside = ink[:max(0, r - 3), c - 1:c + 2] if curve == "top" else ink[r + 3:,
                                                                                  c - 1:c + 2]
            inside = ink[max(0, r - 2):r + 5, max(0, c - 4):c + 5] if curve == "top" else \
                ink[max(0, r - 5):r + 2, max(0, c - 4):c + 5]
            assert not outside.any() and inside.any(), (curve, x, y)


def test_straight_keypoints_are_the_ink_box(font_path):
    out = render.render("EEEE", font_path, np.random.default_rng(0),
                              QUIET.replace(contrast=(150.0, 150.0)))
    ink = _ink(out)
    rows, cols = np.flatnonzero(ink.any(axis=1)), np.flatnonzero(ink.any(axis=0))
    points = np.reshape(out.keypoints, (2, -1, 2))
    assert abs(points[0, :, 1].mean() - rows.min()) <= 1.5
    assert abs(points[1, :, 1].mean() - (rows.max() + 1)) <= 1.5
    assert abs(points[0, 0, 0] - cols.min()) <= 1.5
    assert abs(points[0, -1, 0] - (cols.max() + 1)) <= 1.5


KNOBS = ["bold_prob", "thin_prob", "outline_prob", "shadow_prob", "spacing_prob", "slant_prob",
         "neighbour_prob", "curve_prob", "rotate_prob", "perspective_prob", "loose_prob",
         "low_contrast_prob", "blur_prob", "motion_blur_prob", "downscale_prob", "noise_prob",
         "jpeg_prob"]


@pytest.mark.parametrize("knob", KNOBS)
def test_every_style_knob_changes_the_image(font_path, knob):
    changed = 0
    for seed in range(3):
        base = render.render("Sample", font_path, np.random.default_rng(seed), QUIET)
        on = render.render("Sample", font_path, np.random.default_rng(seed),
                                 QUIET.replace(**{knob: 1.0}))
        changed += base.png != on.png
    assert changed == 3


@pytest.mark.parametrize("kind", sorted(backgrounds.KINDS))
def test_every_background_kind_renders(font_path, kind):
    out = render.render("Sample", font_path, np.random.default_rng(0),
                              QUIET.replace(backgrounds=((kind, 1.0),)))
    assert out.background == kind and _decode(out.png).shape == (32, 100, 3)
    pixels = backgrounds.KINDS[kind](np.random.default_rng(1), 32, 100)
    assert pixels.shape == (3, 32, 100) and pixels.min() >= 0 and pixels.max() <= 255


def test_bold_and_thin_change_the_ink_area(font_path):
    style = QUIET.replace(contrast=(150.0, 150.0))
    area = {name: _ink(render.render("Sample", font_path, np.random.default_rng(0),
                                           style.replace(**{f"{name}_prob": 1.0}))).sum()
            for name in ("bold", "thin")}
    plain = _ink(render.render("Sample", font_path, np.random.default_rng(0), style)).sum()
    assert area["bold"] > plain


def test_train_style_draws_every_kind_but_the_ood_ones():
    kinds = {name for name, weight in styles.TRAIN_STYLE.backgrounds if weight > 0}
    assert kinds == set(backgrounds.KINDS) - set(backgrounds.OOD_ONLY)


@pytest.mark.parametrize("kind", ["stripes", "clutter", "fractal"])
def test_patterned_backgrounds_are_not_flat(kind):
    for seed in range(5):
        pixels = backgrounds.KINDS[kind](np.random.default_rng(seed), 32, 100)
        luminance = backgrounds.luminance(pixels.transpose(1, 2, 0))
        assert luminance.std() > 1.0, (kind, seed)


def test_stretched_noise_varies_less_along_its_long_axis():
    wide = backgrounds.smooth_noise(np.random.default_rng(0), 64, 64, (4, 32))[0]
    along_rows = np.abs(np.diff(wide, axis=1)).mean()
    across_rows = np.abs(np.diff(wide, axis=0)).mean()
    assert along_rows < across_rows / 3


def test_train_style_never_draws_ood_backgrounds():
    kinds = {name for name, _ in styles.TRAIN_STYLE.backgrounds}
    assert not kinds & set(backgrounds.OOD_ONLY)
    assert {name for name, _ in styles.OOD_STYLE.backgrounds} <= set(
        backgrounds.OOD_ONLY)


@pytest.mark.parametrize("changes, message", [
    ({"blur_prob": 1.5}, "blur_prob"), ({"height": 4}, "height"),
    ({"backgrounds": ()}, "backgrounds"), ({"min_legibility": -1.0}, "min_legibility"),
    ({"legibility_tries": 0}, "legibility_tries"),
])
def test_style_check_names_the_field(changes, message):
    with pytest.raises(ValueError, match=message):
        styles.check(styles.TRAIN_STYLE.replace(**changes))


@pytest.mark.parametrize("warp", [
    geometry.Shear(0.3, 20.0), geometry.Sine(5.0, 80.0, 0.4),
    geometry.Arc(50.0, 20.0, 40.0, up=True), geometry.Arc(50.0, 20.0, 40.0, up=False),
    geometry.Rotation(7.0, 50.0, 20.0),
    geometry.Perspective([(0, 0), (100, 0), (100, 40), (0, 40)],
                               [(3, -2), (96, 4), (104, 38), (-5, 43)]),
])
def test_warps_invert(warp):
    rng = np.random.default_rng(0)
    x, y = rng.uniform(0, 100, 50), rng.uniform(0, 40, 50)
    fx, fy = warp.forward(x, y)
    bx, by = warp.inverse(fx, fy)
    np.testing.assert_allclose(bx, x, atol=1e-6)
    np.testing.assert_allclose(by, y, atol=1e-6)


def test_arc_keeps_the_baseline_length():
    arc = geometry.Arc(50.0, 20.0, 40.0)
    xs = np.linspace(10, 90, 400)
    fx, fy = arc.forward(xs, np.full_like(xs, 20.0))
    assert np.hypot(np.diff(fx), np.diff(fy)).sum() == pytest.approx(80.0, rel=1e-4)
    assert fy[200] < fy[0]  # an arch: the middle is higher (smaller y) than the ends


def test_homography_identity():
    corners = [(0, 0), (10, 0), (10, 5), (0, 5)]
    np.testing.assert_allclose(geometry.homography(corners, corners), np.eye(3), atol=1e-9)


def test_clean_share_draws_plain_undistorted_images(font_path):
    style = styles.TRAIN_STYLE.replace(clean_prob=1.0, curve_prob=1.0, noise_prob=1.0)
    plain = {name for name, _ in styles.clean(style).backgrounds}
    for seed in range(10):
        out = render.render("Sample", font_path, np.random.default_rng(seed), style)
        assert out.curve == "" and out.background in plain
    noisy = render.render("Sample", font_path, np.random.default_rng(0),
                                style.replace(clean_prob=0.0))
    assert noisy.curve in ("arc", "sine")


# The shortcuts below must give exactly (bit for bit) what the plain NumPy / Pillow calls they
# replace give, so that images stay the same for a seed.

def _reference_mesh(warps, crop, size, curved):
    """The (box, quad) list for Image.transform(MESH), as the renderer built it before."""
    width, height = size
    cols, rows = (16, 2) if curved else (4, 1)
    xs, ys = np.linspace(0, width, cols + 1), np.linspace(0, height, rows + 1)
    gx, gy = np.meshgrid(crop[0] + xs * (crop[2] - crop[0]) / width,
                         crop[1] + ys * (crop[3] - crop[1]) / height)
    fx, fy = geometry.inverse(warps, gx, gy)
    return [((int(xs[c]), int(ys[r]), int(xs[c + 1]), int(ys[r + 1])),
             tuple(float(v) for v in (fx[r, c], fy[r, c], fx[r + 1, c], fy[r + 1, c],
                                      fx[r + 1, c + 1], fy[r + 1, c + 1], fx[r, c + 1],
                                      fy[r, c + 1])))
            for r in range(rows) for c in range(cols)]


@pytest.mark.parametrize("curved", [False, True])
def test_transform_mesh_is_pils_mesh_transform(curved):
    rng = np.random.default_rng(3)
    mask = Image.fromarray(rng.integers(0, 256, (90, 240), dtype=np.uint8))
    for warps in ([], [geometry.Arc(120.0, 45.0, 90.0, up=False),
                       geometry.Rotation(6.0, 120.0, 45.0)],
                  [geometry.Sine(6.0, 150.0, 0.3), geometry.Shear(0.2, 60.0)]):
        crop, size = (11.3, 4.7, 231.9, 83.2), (100, 32)
        expected = mask.transform(size, Image.MESH, _reference_mesh(warps, crop, size, curved),
                                  Image.BILINEAR)
        cells = geometry.mesh(warps, crop, size, curved)
        assert geometry.transform_mesh(mask, size, cells).tobytes() == expected.tobytes()


def test_draw_text_is_imagedraw_text(font_path):
    font = render._font(font_path, 31)
    for xy, text, stroke in (((31, 31), "Hello", 0), ((12.37, 31), "W", 2), ((-7.6, 3.2), "ab", 0),
                             ((40.5, 30), "Qj", 1)):
        expected, image = Image.new("L", (160, 100)), Image.new("L", (160, 100))
        ImageDraw.Draw(expected).text(xy, text, font=font, fill=255, stroke_width=stroke,
                                      stroke_fill=255)
        render._draw_text(ImageDraw.Draw(image), xy, text, font, stroke)
        assert image.tobytes() == expected.tobytes()
    assert render._char_length(font, "W") == font.getlength("W")


class _NoStroker:
    """A font whose FreeType stroker fails, as Rubik Pixels' does ("array allocation size too
    large" for any stroke width)."""

    def __init__(self, font):
        self._font = font

    def getmask2(self, text, mode, *args, **kwargs):
        if args[3]:  # stroke_width
            raise OSError("array allocation size too large")
        return self._font.getmask2(text, mode, *args, **kwargs)


def test_a_face_that_cannot_be_stroked_is_grown_instead(font_path):
    font = render._font(font_path, 31)
    for xy, text, stroke in (((31, 31), "Hello", 2), ((12.37, 30.5), "W", 1)):
        stroked, grown = Image.new("L", (160, 100)), Image.new("L", (160, 100))
        render._draw_text(ImageDraw.Draw(stroked), xy, text, font, stroke)
        render._draw_text(ImageDraw.Draw(grown), xy, text, _NoStroker(font), stroke)
        plain = Image.new("L", (160, 100))
        render._draw_text(ImageDraw.Draw(plain), xy, text, font, 0)
        # The same ink box as the stroke, and more ink than the plain text.
        assert grown.getbbox() == stroked.getbbox()
        ink = [np.asarray(im, np.float64).sum() for im in (plain, grown, stroked)]
        assert ink[0] < ink[1] and abs(ink[1] - ink[2]) < 0.25 * ink[2]
    with pytest.raises(OSError):  # an unstroked text that fails is not hidden
        render._draw_text(ImageDraw.Draw(plain), (3, 3), "x", _Failing(), 0)


class _Failing:
    def getmask2(self, *args, **kwargs):
        raise OSError("broken face")


def test_linspace_is_numpys():
    rng = np.random.default_rng(0)
    for _ in range(200):
        start, stop = rng.uniform(-300, 300, 2)
        num = int(rng.integers(2, 40))
        np.testing.assert_array_equal(geometry.linspace(start, stop, num),
                                      np.linspace(start, stop, num))
        np.testing.assert_array_equal(geometry.linspace(3, 97, num), np.linspace(3, 97, num))


def test_bounds_without_warps_is_the_box():
    for box in ((3, 5, 80, 40), (0, 0, 1, 1)):
        xs, ys = geometry.box_outline(box)
        assert geometry.bounds([], box) == (xs.min(), ys.min(), xs.max(), ys.max())


@pytest.mark.parametrize("size", [(32, 100), (64, 256), (7, 3)])
def test_mean_color_is_numpys_mean(size):
    rng = np.random.default_rng(size[0])
    for _ in range(20):
        pixels = (rng.uniform(0, 255, (3, *size)) + rng.normal(0, 9, size)).astype(np.float32)
        expected = backgrounds.interleave(pixels).reshape(-1, 3).mean(axis=0)
        np.testing.assert_array_equal(render._mean_color(pixels), expected)


def test_color_at_is_the_array_computation():
    for seed in range(300):
        level = float(np.random.default_rng(seed + 1000).uniform(-20, 275))
        rng, ref = np.random.default_rng(seed), np.random.default_rng(seed)
        tint = ref.uniform(-1, 1, 3) * ref.uniform(0, 70.0)
        tint -= backgrounds.luminance(tint)
        np.testing.assert_array_equal(backgrounds.color_at(rng, level),
                                      np.clip(level + tint, 0, 255))


def test_image_array_conversions_are_pils():
    rng = np.random.default_rng(0)
    for shape in ((32, 100, 3), (17, 5)):
        pixels = rng.integers(0, 256, shape, dtype=np.uint8)
        image = backgrounds.to_image(pixels)
        assert image.mode == Image.fromarray(pixels).mode
        assert image.tobytes() == Image.fromarray(pixels).tobytes()
        np.testing.assert_array_equal(backgrounds.to_array(image), np.asarray(image))
    channels = rng.uniform(0, 255, (3, 8, 9)).astype(np.float32)
    np.testing.assert_array_equal(backgrounds.interleave(channels),
                                  np.moveaxis(channels, 0, -1))
    np.testing.assert_array_equal(backgrounds.planar(np.moveaxis(channels, 0, -1)),
                                  channels)


def test_pick_and_clean_caches():
    kinds = styles.TRAIN_STYLE.backgrounds
    cumulative = np.cumsum([w for _, w in kinds])
    for seed in range(200):
        rng, ref = np.random.default_rng(seed), np.random.default_rng(seed)
        index = int(np.searchsorted(cumulative, ref.random() * cumulative[-1], side="right"))
        assert render._pick(rng, kinds) == kinds[min(index, len(kinds) - 1)][0]
    style = styles.TRAIN_STYLE.replace(height=48)
    assert styles.clean(style) is styles.clean(style)
    assert styles.clean(style) == styles.clean.__wrapped__(style)


def _block_alpha(height=32, width=100):
    """A filled block as the ink: (fill, no outline)."""
    fill = np.zeros((height, width), np.float32)
    fill[10:22, 20:80] = 1.0
    return fill, None


@pytest.mark.parametrize("ink, expected", [(128, 0.0), (0, 128 / 5), (255, 127 / 5)])
def test_legibility_is_the_ink_against_its_surround(ink, expected):
    alpha = _block_alpha()
    pixels = np.full((32, 100, 3), 128, np.uint8)
    pixels[alpha[0] > 0] = ink
    image = backgrounds.to_image(pixels)
    assert render.legibility(image, alpha) == pytest.approx(expected, rel=1e-4)


def test_legibility_counts_an_outline_as_ink_and_the_surround_spread():
    fill, _ = _block_alpha()
    ring = np.zeros_like(fill)
    ring[9:23, 19:81] = 1.0
    ring[fill > 0] = 0.0
    pixels = np.full((32, 100, 3), 128, np.uint8)
    pixels[ring > 0] = 0  # grey text drawn with a black outline: readable by the outline
    with_outline = render.legibility(backgrounds.to_image(pixels), (fill, ring))
    assert with_outline > styles.TRAIN_STYLE.min_legibility
    noisy = pixels.astype(np.int16) + np.random.default_rng(0).integers(-40, 40, pixels.shape)
    noisy = backgrounds.to_image(np.clip(noisy, 0, 255).astype(np.uint8))
    assert render.legibility(noisy, (fill, ring)) < with_outline


@pytest.mark.parametrize("shape, radius", [((32, 100), 2), ((7, 3), 2), ((1, 40), 1), ((20, 20), 3)])
def test_dilate_is_pillows_max_filter(shape, radius):
    """The legibility ring's dilation: the same masks as Pillow's MaxFilter, edges included."""
    mask = np.random.default_rng(radius).random(shape) < 0.1
    mask[0, 0] = mask[-1, -1] = True
    expected = np.asarray(Image.fromarray((mask * 255).astype(np.uint8)).filter(
        ImageFilter.MaxFilter(2 * radius + 1))) > 0
    np.testing.assert_array_equal(render.dilate(mask, radius), expected)


def test_legibility_without_ink_or_surround_is_not_judged():
    pixels = backgrounds.to_image(np.full((32, 100, 3), 128, np.uint8))
    assert render.legibility(pixels, (np.zeros((32, 100), np.float32), None)) == np.inf
    assert render.legibility(pixels, (np.ones((32, 100), np.float32), None)) == np.inf


def test_illegible_drafts_are_drawn_again_then_clean(font_path, monkeypatch):
    """Text the colour of its background fails every draft: the renderer tries
    legibility_tries times, then draws the clean style once and keeps it."""
    drafted = []
    draft = render._draft

    def recording_draft(text, path, rng, style):
        drafted.append(style)
        return draft(text, path, rng, style)

    monkeypatch.setattr(render, "_draft", recording_draft)
    invisible = QUIET.replace(contrast=(0.0, 0.0), legibility_tries=3)
    out = render.render("Sample", font_path, np.random.default_rng(0), invisible)
    assert out.redrawn == 3
    assert drafted == [invisible] * 3 + [styles.clean(invisible)]


def test_legible_drafts_are_kept_and_the_check_can_be_off(font_path):
    seen = QUIET.replace(contrast=(150.0, 150.0))
    out = render.render("Sample", font_path, np.random.default_rng(0), seen)
    assert out.redrawn == 0
    invisible = QUIET.replace(contrast=(0.0, 0.0), min_legibility=0.0)
    assert render.render("Sample", font_path, np.random.default_rng(0),
                               invisible).redrawn == 0


def test_default_styles_redraw_a_few_images_and_keep_all_above_the_floor(font_path,
                                                                         monkeypatch):
    scores = []
    score = render.legibility

    def recording(image, alpha):
        scores.append(score(image, alpha))
        return scores[-1]

    monkeypatch.setattr(render, "legibility", recording)
    for style in (styles.TRAIN_STYLE, styles.OOD_STYLE):
        redrawn = []
        for seed in range(150):
            del scores[:]
            out = render.render("Legible", font_path, np.random.default_rng(seed), style)
            redrawn.append(out.redrawn)
            assert scores[-1] >= style.min_legibility or out.redrawn == style.legibility_tries
        assert 0 < np.mean(np.array(redrawn) > 0) < 0.2
