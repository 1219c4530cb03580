"""Every probability and strength of the synthetic-word renderer, in one place.

`RenderStyle` holds the mix; STYLES names the presets `aster-synth-words` uses: "train" (also the
in-distribution `val` split) and "ood", the style of the `val_ood` split, which differs on
purpose: light paper-like backgrounds of kinds training never draws (fibres, wood grain), thin
strokes more often, and stronger curves. Probabilities are per image; "kinds" tuples are
(name, weight) pairs drawn with the weights normalised.
"""

import dataclasses
import functools


@dataclasses.dataclass(frozen=True)
class RenderStyle:
    """The style mix of the renderer (aster/synth/render.py)."""

    # Output size; with keep_aspect, width is the maximum and the image follows the text.
    height: int = 32
    width: int = 100
    keep_aspect: bool = False
    # Share of clean images: every optional effect off, plain / solid / gradient backgrounds, so
    # a model from scratch finds the characters early (the attention decoders lock on).
    clean_prob: float = 0.2
    # Font size relative to the rendering height (ink ~ 0.7-1.0 of it).
    font_scale: tuple = (0.8, 1.25)
    # Strokes and spacing.
    bold_prob: float = 0.12
    thin_prob: float = 0.08
    outline_prob: float = 0.08
    shadow_prob: float = 0.12
    spacing_prob: float = 0.15
    max_spacing: float = 0.35  # of the font size
    slant_prob: float = 0.15
    max_slant: float = 0.3  # x shift per pixel of height
    # Neighbouring text clipped at the left/right edges of the crop.
    neighbour_prob: float = 0.1
    # Geometry.
    curve_prob: float = 0.35
    arc_share: float = 0.6  # of the curved images; the others follow a sine
    max_arc: float = 2.4  # total arc angle in radians (a half circle is 3.14)
    min_arc: float = 0.3
    max_sine: float = 0.45  # sine amplitude as a fraction of the ink height
    rotate_prob: float = 0.35
    max_rotation: float = 8.0  # degrees
    perspective_prob: float = 0.25
    max_perspective: float = 0.3  # corner shift as a fraction of the ink height
    # Crop margins around the ink, as fractions of the ink height: (low, high) uniform.
    margin_x: tuple = (-0.03, 0.35)
    margin_y: tuple = (-0.02, 0.3)
    loose_prob: float = 0.1  # a loose crop: margins up to 3x
    # Colours: luminance contrast between text and background.
    low_contrast_prob: float = 0.12
    low_contrast: tuple = (35.0, 70.0)
    contrast: tuple = (60.0, 235.0)
    # Backgrounds: (kind, weight), kinds of aster/synth/backgrounds.py. A quarter are
    # patterned (stripes, clutter, fractal): without them the demo model read 59.5% of val_ood's
    # straight words on its fibre and wood-grain backgrounds and 76.5% of the same words on
    # these plain ones (docs/history, "Patterned backgrounds").
    backgrounds: tuple = (("plain_light", 0.16), ("plain_dark", 0.06), ("solid", 0.09),
                          ("gradient", 0.10), ("noise", 0.09), ("paper", 0.12), ("photo", 0.12),
                          ("stripes", 0.10), ("clutter", 0.10), ("fractal", 0.06))
    # Legibility floor: an image whose finished text stands out from the background around it
    # by less than this (render.legibility: |ink - surround| luminance over the surround's
    # spread + 5) is drawn again, up to `legibility_tries` times, then in the clean style. At
    # the defaults ~5% of images fell below it: text no reader could make out (label noise in
    # training, a ceiling under validation accuracy). 0 turns the check off.
    min_legibility: float = 1.5
    legibility_tries: int = 4
    # Photometric.
    blur_prob: float = 0.3
    max_blur: float = 1.2  # Gaussian radius in output pixels
    motion_blur_prob: float = 0.08
    downscale_prob: float = 0.15
    min_downscale: float = 0.4
    noise_prob: float = 0.4
    max_noise: float = 12.0
    jpeg_prob: float = 0.25
    jpeg_quality: tuple = (15, 75)

    def replace(self, **changes):
        return dataclasses.replace(self, **changes)


TRAIN_STYLE = RenderStyle()
OOD_STYLE = RenderStyle(
    clean_prob=0.0, thin_prob=0.3, bold_prob=0.05, outline_prob=0.0, shadow_prob=0.05,
    min_arc=1.0, max_sine=0.45, max_rotation=8.0,
    low_contrast_prob=0.15,
    backgrounds=(("fibres", 0.5), ("wood", 0.5)),
    blur_prob=0.3, noise_prob=0.4, jpeg_prob=0.3)
STYLES = {"train": TRAIN_STYLE, "ood": OOD_STYLE}
_CLEAN_BACKGROUNDS = (("plain_light", 0.4), ("plain_dark", 0.15), ("solid", 0.25),
                      ("gradient", 0.2))


@functools.lru_cache(maxsize=16)
def clean(style):
    """`style` with every optional effect off and plain backgrounds (sizes and fonts kept);
    cached per style (RenderStyle is frozen, so the result can be shared)."""
    off = {f.name: 0.0 for f in dataclasses.fields(style) if f.name.endswith("_prob")}
    return dataclasses.replace(style, **off, backgrounds=_CLEAN_BACKGROUNDS)


def check(style):
    """Raises ValueError naming the first field of `style` that is out of range."""
    for field in dataclasses.fields(style):
        value = getattr(style, field.name)
        if field.name.endswith("_prob") or field.name == "arc_share":
            if not 0.0 <= value <= 1.0:
                raise ValueError(f"RenderStyle.{field.name} must be in [0, 1], got {value}")
    if style.min_legibility < 0 or style.legibility_tries < 1:
        raise ValueError(f"RenderStyle.min_legibility must be >= 0 and legibility_tries >= 1, "
                         f"got {style.min_legibility} and {style.legibility_tries}")
    if style.height < 8 or style.width < 8:
        raise ValueError(f"RenderStyle height/width must be >= 8, got {style.height}x"
                         f"{style.width}")
    if not style.backgrounds or any(w < 0 for _, w in style.backgrounds):
        raise ValueError(f"RenderStyle.backgrounds needs kinds with weights >= 0, got "
                         f"{style.backgrounds}")
