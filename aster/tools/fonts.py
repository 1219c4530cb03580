"""Finding usable fonts on the machine and splitting them into train / held-out families.

A model trained on one typeface family reads mostly that family (SPEC section 5), so the renderer
uses every font that can draw a-z, A-Z and 0-9, and a validation split that means "unseen fonts"
holds out whole families (a held-out file whose sibling weights are in training proves nothing).

Search order: explicit `font_dirs`, then /usr/share/fonts, /usr/local/share/fonts, ~/.fonts,
~/.local/share/fonts, then fonts shipped inside installed Python packages: known ones (matplotlib,
reportlab, ...) and every installed distribution named `font-*` / `fonts-*` on PyPI (font-lato,
font-roboto, ...; `pip install -e '.[fonts]'` installs a set of them, `make train` does so).
Debian packages such as fonts-dejavu, fonts-liberation, fonts-freefont-ttf and fonts-noto-core
add many families.
"""

import dataclasses
import glob
import importlib.metadata
import importlib.util
import os
import string

from PIL import Image, ImageDraw, ImageFont

SYSTEM_FONT_DIRS = ("/usr/share/fonts", "/usr/local/share/fonts", "~/.fonts",
                    "~/.local/share/fonts")
# (package, font folder inside it): Python packages known to ship TrueType fonts.
PACKAGE_FONT_DIRS = (("matplotlib", "mpl-data/fonts/ttf"), ("reportlab", "fonts"),
                     ("pygame", ""), ("kivy", "data/fonts"), ("cv2", "qt/fonts"))
REQUIRED_CHARS = string.ascii_letters + string.digits
_EXTENSIONS = (".ttf", ".otf", ".ttc")
# Words that name a width or weight inside a family name: "DejaVu Sans Condensed" and
# "Liberation Sans Narrow" belong to the families "DejaVu Sans" and "Liberation Sans".
_STYLE_WORDS = {"condensed", "semicondensed", "extracondensed", "narrow", "wide", "expanded",
                "light", "extralight", "ultralight", "thin", "medium", "semibold", "demibold",
                "bold", "extrabold", "black", "heavy", "book", "regular", "italic", "oblique"}


@dataclasses.dataclass(frozen=True)
class FontInfo:
    """A usable font file: path, its family (style words removed) and style name."""

    path: str
    family: str
    style: str


class NoFontsError(ValueError):
    """No font on the machine can render the required characters."""


def distribution_font_files():
    """Font files shipped by installed distributions named font-* or fonts-* (PyPI font packages).

    Returns:
      list of absolute paths of the .ttf/.otf/.ttc files those distributions installed.
    """
    paths = []
    for dist in importlib.metadata.distributions():
        name = (dist.metadata["Name"] or "").lower().replace("_", "-")
        if not name.startswith(("font-", "fonts-")):
            continue
        for file in dist.files or ():
            if str(file).lower().endswith(_EXTENSIONS):
                paths.append(str(dist.locate_file(file)))
    return paths


def candidate_files(font_dirs=()):
    """Returns sorted, de-duplicated font file paths found in font_dirs, system and package dirs."""
    dirs = [os.path.expanduser(d) for d in (*font_dirs, *SYSTEM_FONT_DIRS)]
    for package, sub in PACKAGE_FONT_DIRS:
        spec = importlib.util.find_spec(package) if importlib.util.find_spec else None
        if spec is not None and spec.submodule_search_locations:
            dirs.extend(os.path.join(loc, sub) for loc in spec.submodule_search_locations)
    found = {}
    for directory in dirs:
        for ext in _EXTENSIONS:
            for path in glob.glob(os.path.join(directory, "**", "*" + ext), recursive=True):
                found.setdefault(os.path.realpath(path), None)
    for path in distribution_font_files():
        if os.path.isfile(path):
            found.setdefault(os.path.realpath(path), None)
    return sorted(found)


def family_name(raw_family):
    """Strips trailing width/weight words: "DejaVu Sans Condensed" -> "DejaVu Sans"."""
    words = raw_family.split()
    while len(words) > 1 and words[-1].lower() in _STYLE_WORDS:
        words.pop()
    return " ".join(words)


def _mask(font, text):
    image = Image.new("L", (64, 64), 0)
    ImageDraw.Draw(image).text((8, 8), text, font=font, fill=255)
    return image.tobytes()


def inspect_font(path, chars=REQUIRED_CHARS):
    """Returns FontInfo when the font draws every char with its own glyph, else None."""
    try:
        font = ImageFont.truetype(path, 32)
        raw_family, style = font.getname()
        missing = _mask(font, "\U0010fffd")  # .notdef (or nothing) for a missing glyph
        masks = set()
        for char in chars:
            mask = _mask(font, char)
            if mask == missing or not any(mask):
                return None
            masks.add(mask)
    except Exception:  # unreadable or unsupported font files are simply not used
        return None
    if len(masks) < len(set(chars)) * 0.9:  # symbol fonts map letters to few shapes
        return None
    return FontInfo(path=path, family=family_name(raw_family or os.path.basename(path)),
                    style=style or "")


def find_fonts(font_dirs=(), font_files=()):
    """Returns the usable fonts (FontInfo, sorted by path).

    Args:
      font_dirs: extra folders searched first.
      font_files: explicit font files; when given, only these are used.

    Raises:
      NoFontsError: when no usable font is found (the message says what was searched and how to
        install fonts).
    """
    paths = sorted(os.path.realpath(p) for p in font_files) or candidate_files(font_dirs)
    fonts = [info for info in map(inspect_font, paths) if info is not None]
    if not fonts:
        raise NoFontsError(
            f"no usable font found ({len(paths)} candidate files in {list(font_dirs)} + "
            f"{list(SYSTEM_FONT_DIRS)} + package font folders can render {REQUIRED_CHARS!r}); "
            "install some, e.g. `apt-get install fonts-dejavu-core fonts-liberation`, or pass "
            "--font_dirs / --fonts")
    return sorted(fonts, key=lambda f: f.path)


def group_by_family(fonts):
    """{family: [FontInfo...]} in family-name order."""
    families = {}
    for font in fonts:
        families.setdefault(font.family, []).append(font)
    return dict(sorted(families.items()))


def split_fonts(fonts, heldout_families=(), heldout_fraction=0.2):
    """Splits fonts into (train, val, note) for a validation set of unseen fonts.

    With `heldout_families` those families are held out. Otherwise, with >= 2 families, the
    `heldout_fraction` of families (at least one, never all) with the fewest files are held out,
    so training loses the least. With one family, every 4th file (at least one, never all) is
    held out instead, and the note says so; with a single file, train and val share it.

    Returns:
      (train fonts, val fonts, note str describing the split).

    Raises:
      ValueError: when a named family is not among the fonts found, or holding it out leaves
        no training font.
    """
    families = group_by_family(fonts)
    if heldout_families:
        unknown = sorted(set(heldout_families) - set(families))
        if unknown:
            raise ValueError(f"--heldout_font_families {unknown} not found; families found: "
                             f"{sorted(families)}")
        held = set(heldout_families)
    elif len(families) >= 2:
        count = min(len(families) - 1, max(1, round(heldout_fraction * len(families))))
        held = set(sorted(families, key=lambda f: (len(families[f]), f))[:count])
    else:
        return _split_single_family(fonts)
    train = [f for f in fonts if f.family not in held]
    val = [f for f in fonts if f.family in held]
    if not train:
        raise ValueError(f"holding out {sorted(held)} leaves no font family for training")
    note = (f"validation font families (held out of training): {sorted(held)}; "
            f"training families: {sorted({f.family for f in train})}")
    return train, val, note


def _split_single_family(fonts):
    family = fonts[0].family
    if len(fonts) == 1:
        return fonts, fonts, (f"only one font file ({fonts[0].path}): training and validation "
                              "share it, so validation does not measure unseen fonts")
    val = fonts[3::4] or fonts[-1:]
    train = [f for f in fonts if f not in val]
    note = (f"only one font family ({family!r}): validation holds out font files (styles) "
            f"{[os.path.basename(f.path) for f in val]} instead of a whole family, so its "
            "unseen-font accuracy is optimistic; install more font families for a real test")
    return train, val, note
