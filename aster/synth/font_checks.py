"""Whether a font file can draw ordinary text: its Unicode cmap, its glyphs, the symbol and
all-caps filters (used by aster/synth/fonts.py's search).

A file is used when (`check_font`):
  * fontTools reads its Unicode cmap (font number 0 of a .ttc collection, as PIL does; .woff2
    needs the brotli package) and the cmap maps every required character (REQUIRED_CHARS, or
    the run's charset) to a non-empty glyph;
  * PIL draws each of them with its own glyph (not .notdef, not blank) and the letters do not
    collapse onto a few shapes (symbol fonts);
  * its lowercase letters do not draw like its uppercase ones (all-caps / small-caps display
    fonts, keycap fonts), unless the search keeps such caps-only faces (`keep_caps_only`): then
    the face is used with FontInfo.caps_only set, and its words are drawn and labelled in upper
    case (FontInfo.drawn_text);
  * a word draws something.
The check also gives the font's category (font_categories.classify: PANOSE and fixed pitch).
"""

import dataclasses
import logging
import os
import string

import numpy as np
from fontTools.misc import sstruct
from fontTools.ttLib import TTFont
from fontTools.ttLib.woff2 import WOFF2Reader, woff2GlyfTableFormat, woff2GlyfTableFormatSize
from PIL import Image, ImageDraw, ImageFont

from aster.synth import font_categories
from aster.synth.font_families import family_name

REQUIRED_CHARS = string.ascii_letters + string.digits
# All-caps filter: lowercase letters whose shape differs from their capital in ordinary fonts.
# A letter "draws like its capital" when the normalised correlation of the two glyph images,
# each cropped to its ink and shrunk to _CAPS_GRID x _CAPS_GRID, reaches _CAPS_CORRELATION
# (small caps: 0.85-0.99); a font is rejected when at least _CAPS_MAJORITY of the 10 letters do.
# Measured on 414 fonts (Debian packages of `make system-fonts` + the `fonts` extra): usable ones
# have at most 2 such letters; Go Smallcaps 10, Irianis ADF Style 9, Biolinum Keyboard 6.
_CAPS_LETTERS = "abdeghnqrt"
_CAPS_GRID = 8
_CAPS_CORRELATION = 0.75
_CAPS_MAJORITY = 6
# The same filter's second test: lower case without ascenders. In a text face b, d and h rise
# above a, e, n and r (the median ink heights' ratio, 1.16-3.0 over 2,247 files of the machine's
# fonts, make pretrain-fonts and make fonts-google); in a face that draws its lower case as
# smaller or hand-drawn capitals it does not: Rock Salt 1.00 (its capitals drawn anew, which the
# correlation misses), small caps, Bebas Neue, Monoton, Nosifer 0.95-1.11.
_X_LETTERS = "aenr"
_ASCENDER_LETTERS = "bdh"
_MIN_ASCENDER_RATIO = 1.12
_WORD = "Hamburgefonstiv 42"
# fontTools warns about odd 'head' timestamps of many well-formed fonts; those say nothing here.
logging.getLogger("fontTools.ttLib.tables._h_e_a_d").setLevel(logging.ERROR)
logging.getLogger("fontTools.ttLib.tables._p_o_s_t").setLevel(logging.ERROR)  # padded names
# Reasons a candidate file is rejected (keys of FontReport.rejected values).
UNREADABLE = "unreadable"
NO_CMAP = "no unicode cmap"
MISSING_CHARS = "cmap lacks required characters"
NOTDEF = "draws .notdef or blank glyphs"
SYMBOL = "symbol font"
ALL_CAPS = "lowercase draws like uppercase"
EMPTY_WORD = "draws an empty word"
# Type 2 charstring operators that draw (moveto, lineto, curveto, flex: 12 x) or call a
# subroutine (10 callsubr, 29 callgsubr), which usually draws.
_CFF_DRAWING_OPS = {4, 5, 6, 7, 8, 10, 21, 22, 24, 25, 26, 27, 29, 30, 31, 1234, 1235, 1236, 1237}
# Bytes taken by a charstring number, by its first byte (32-246: one byte).
_CFF_NUMBER_BYTES = {28: 3, 255: 5, **{b: 2 for b in range(247, 255)}}


@dataclasses.dataclass(frozen=True)
class FontInfo:
    """A usable font file: path, its family (style words removed), style name and coverage.

    `chars` is the frozenset of characters the font's cmap maps to a non-empty glyph, plus the
    whitespace characters it maps (whose glyphs are blank by nature). It is left out of repr.
    The empty default means "coverage not measured" (a FontInfo built by hand): `can_draw` then
    assumes what every font `find_fonts` returns can draw, REQUIRED_CHARS and a space.
    `category` is one of font_categories.CATEGORIES ("" when not known), `license` the license
    named by a library's metadata ("" for fonts found on the machine), `library` whether the
    face comes from a font library (fontsource.py) and `caps_only` whether its lower case draws
    like its upper case.
    """

    path: str
    family: str
    style: str
    chars: frozenset = dataclasses.field(default=frozenset(), repr=False)
    category: str = ""
    license: str = ""
    library: bool = False
    caps_only: bool = False

    def drawn_text(self, text):
        """The text as this font draws it and as its label reads: upper case for a caps-only
        face, else unchanged."""
        return text.upper() if self.caps_only else text

    def can_draw(self, text):
        """True when the font has a real glyph for every character of `text` as it draws it."""
        chars = self.chars or _DEFAULT_CHARS
        return all(char in chars for char in self.drawn_text(text))


_DEFAULT_CHARS = frozenset(REQUIRED_CHARS + " ")


@dataclasses.dataclass(frozen=True)
class FontCheck:
    """The outcome of `check_font` for one file.

    Attributes:
      path: the file checked.
      info: the FontInfo when the font is usable, else None.
      reason: None when usable, else one of the reason constants (UNREADABLE, ...).
      detail: what failed (a rejected file), or a note on a usable one ("" when none).
      face: the font's own family and style name ("Lato Hairline Regular", before
        font_families.family_name strips style words); "" when the file could not be drawn.
    """

    path: str
    info: FontInfo = None
    reason: str = None
    detail: str = ""
    face: str = ""

    @property
    def usable(self):
        """True when the font passed every check."""
        return self.info is not None


class NoCmapError(ValueError):
    """A font file has no Unicode cmap (raised by `cmap_chars`)."""



def _render(font, text, size=(64, 64)):
    image = Image.new("L", size, 0)
    ImageDraw.Draw(image).text((8, 8), text, font=font, fill=255)
    return image


def _cff_glyph_is_blank(bytecode):
    """True when a CFF/CFF2 charstring draws nothing: only a width, stem hints and endchar.

    Tokenises the Type 2 bytecode without running it (running follows every subroutine and is
    ~100x slower). A glyph whose program is longer than a few bytes, or that calls a subroutine,
    uses a hint mask or a drawing operator, counts as drawing; so does endchar with >= 4
    arguments (seac: an accented composite).
    """
    if len(bytecode) > 16:
        return False
    i, args = 0, 0
    while i < len(bytecode):
        byte = bytecode[i]
        if byte >= 32 or byte == 28:  # a number
            i += _CFF_NUMBER_BYTES.get(byte, 1)
            args += 1
            continue
        op = byte if byte != 12 else 1200 + (bytecode[i + 1] if i + 1 < len(bytecode) else 0)
        i += 1 if byte != 12 else 2
        if op in _CFF_DRAWING_OPS or op in (19, 20):  # 19/20: hintmask/cntrmask
            return False
        if op == 14:  # endchar
            return args < 4
        args = 0
    return True


def cmap_chars(path):
    """Characters font number 0 of `path` maps to a non-empty glyph (plus mapped whitespace).

    Returns:
      frozenset of str.

    Raises:
      NoCmapError: when the font has no Unicode cmap; another Exception (from fontTools) for a
        file it cannot read.
    """
    return _read_tables(path)[0]


def _read_tables(path):
    """(cmap_chars of the font, its font_categories.classify category)."""
    font = TTFont(path, fontNumber=0, lazy=True)
    try:
        cmap = font.getBestCmap()
        if not cmap:
            raise NoCmapError(f"{path} has no Unicode cmap")
        blank = _blank_glyph_test(font)
        chars = frozenset(chr(code) for code, name in cmap.items()
                          if chr(code).isspace() or not blank(name))
        return chars, font_categories.classify(font)
    finally:
        font.close()


def _woff2_contour_counts(font):
    """The contour count of each glyph of a .woff2 font with a transformed glyf table, read
    from the table's nContour stream (int16 per glyph; 0: empty, -1: composite) without
    rebuilding the glyphs, which fontTools does in Python at ~0.5 s a face; else None."""
    reader = getattr(font, "reader", None)
    entry = getattr(reader, "tables", {}).get("glyf") if isinstance(reader, WOFF2Reader) else None
    if entry is None or not entry.transformed:
        return None
    data = entry.loadData(reader.transformBuffer)
    header = {}
    sstruct.unpack2(woff2GlyfTableFormat, data, header)
    start = woff2GlyfTableFormatSize
    return np.frombuffer(data, ">i2", header["numGlyphs"], start)


def _blank_glyph_test(font):
    """A function telling whether a glyph (by name) of the TTFont draws nothing."""
    contours = _woff2_contour_counts(font)
    if contours is not None:
        glyph_ids = font.getReverseGlyphMap()

        def blank(name):
            gid = glyph_ids.get(name, len(contours))
            return gid >= len(contours) or contours[gid] == 0
        return blank
    if "glyf" in font and "loca" in font:
        locations = font["loca"].locations
        glyph_ids = font.getReverseGlyphMap()

        def blank(name):
            gid = glyph_ids.get(name, len(locations))
            return gid + 1 >= len(locations) or locations[gid + 1] == locations[gid]
        return blank
    if "CFF " in font or "CFF2" in font:
        cff = font["CFF " if "CFF " in font else "CFF2"].cff
        charstrings = cff.topDictIndex[0].CharStrings

        def blank(name):
            if name not in charstrings:
                return True
            charstring = charstrings[name]
            bytecode = getattr(charstring, "bytecode", None)
            if bytecode is None:  # already decompiled: compile it back
                charstring.compile()
                bytecode = charstring.bytecode
            return _cff_glyph_is_blank(bytecode)
        return blank
    return lambda name: False  # bitmap / colour fonts: the rendering check decides


def _shape(image):
    """The glyph image cropped to its ink, shrunk and normalised (zero mean, unit norm)."""
    box = image.getbbox()
    array = np.asarray(image.crop(box).resize((_CAPS_GRID, _CAPS_GRID), Image.BOX), np.float32)
    array = array - array.mean()
    return array / (np.linalg.norm(array) + 1e-6)


def caps_like_count(lower_images, upper_images):
    """How many (lowercase, uppercase) glyph image pairs draw the same shape after scaling."""
    return sum(float(np.sum(_shape(a) * _shape(b))) >= _CAPS_CORRELATION
               for a, b in zip(lower_images, upper_images, strict=True))


def ascender_ratio(images):
    """The median ink height of b, d, h over that of a, e, n, r (glyph images drawn alike)."""
    def median_height(letters):
        boxes = [images[c].getbbox() for c in letters]
        return float(np.median([box[3] - box[1] for box in boxes]))
    return median_height(_ASCENDER_LETTERS) / max(median_height(_X_LETTERS), 1.0)


# In-process memo of the inspection by (path, chars, size, mtime): a second font search in the
# same process (the synth tool, tests) costs nothing. Nothing is cached on disk.
_INSPECTED = {}


def check_font(path, chars=REQUIRED_CHARS, keep_caps_only=False):
    """Checks whether the font at `path` draws `chars` (see the module docstring).

    Args:
      path: a font file (.ttf, .otf, .ttc, .woff2).
      chars: the characters it must draw.
      keep_caps_only: keep a face whose lower case draws like its upper case (FontInfo.caps_only
        set) instead of rejecting it (ALL_CAPS).

    Returns:
      FontCheck.
    """
    try:
        stat = os.stat(path)
    except OSError as err:
        return FontCheck(path, reason=UNREADABLE, detail=f"{type(err).__name__}: {err}")
    key = (path, chars, stat.st_size, stat.st_mtime_ns)
    if key not in _INSPECTED:
        _INSPECTED[key] = _inspect_file(path, chars)
    check = _INSPECTED[key]
    if check.usable and check.info.caps_only and not keep_caps_only:
        return dataclasses.replace(check, info=None, reason=ALL_CAPS)
    return check


def _inspect_file(path, chars):
    try:
        coverage, category = _read_tables(path)
    except NoCmapError:
        return FontCheck(path, reason=NO_CMAP, detail="no Unicode cmap")
    except Exception as err:  # not a font fontTools can read
        return FontCheck(path, reason=UNREADABLE, detail=f"{type(err).__name__}: {err}")
    missing = "".join(sorted(set(chars) - coverage))
    if missing:
        return FontCheck(path, reason=MISSING_CHARS, detail=f"cmap lacks {missing!r}")
    try:
        font = ImageFont.truetype(path, 32)
        raw_family, style = font.getname()
        notdef = _render(font, "\U0010fffd").tobytes()  # .notdef (or nothing) for a missing glyph
        images = {}
        for char in dict.fromkeys(chars + _CAPS_LETTERS + _CAPS_LETTERS.upper()):
            images[char] = _render(font, char)
        word = _render(font, _WORD, (32 * len(_WORD), 64))
    except Exception as err:  # FreeType cannot load or draw it
        return FontCheck(path, reason=UNREADABLE, detail=f"{type(err).__name__}: {err}")
    raw_family = raw_family or os.path.basename(path)
    face = f"{raw_family} {style or ''}".strip()
    same = None
    failure = _glyph_failure(images, notdef, chars)
    if failure is None:
        same = caps_like_count([images[c] for c in _CAPS_LETTERS],
                               [images[c.upper()] for c in _CAPS_LETTERS])
        ratio = ascender_ratio(images)
        caps_only = same >= _CAPS_MAJORITY or ratio < _MIN_ASCENDER_RATIO
        failure = _shape_failure(images, chars, word, caps_only)
    if failure is not None:
        return FontCheck(path, reason=failure[0], detail=failure[1], face=face)
    detail = ""
    if same >= _CAPS_MAJORITY:
        detail = (f"{same} of {_CAPS_LETTERS!r} draw like their capitals (all-caps or small-caps "
                  "font)")
    elif caps_only:
        detail = (f"b, d, h no taller than a, e, n, r (ratio {ratio:.2f}): its lower case draws "
                  "as capitals")
    info = FontInfo(path=path, family=family_name(raw_family), style=style or "", chars=coverage,
                    category=category, caps_only=caps_only)
    return FontCheck(path, info=info, detail=detail, face=face)


def _glyph_failure(images, notdef, chars):
    """(NOTDEF, detail) when a character draws .notdef or nothing, else None."""
    for char in chars:
        mask = images[char].tobytes()
        if mask == notdef or not any(mask):
            return NOTDEF, f"{char!r} draws .notdef or nothing"
    if not all(images[c].getbbox() for c in _CAPS_LETTERS + _CAPS_LETTERS.upper()):
        return NOTDEF, "a letter draws nothing"
    return None


def _shape_failure(images, chars, word, caps_only):
    """(SYMBOL or EMPTY_WORD, detail) when the glyphs collapse or a word draws nothing."""
    # Symbol fonts map letters to few shapes. Counted apart for a-z/A-Z/0-9 and for the other
    # characters: a Greek or Cyrillic capital may draw the same glyph as a Latin one (A and Α).
    # In a caps-only face a lower-case letter may draw its capital's glyph: counted as one.
    drawn = {c.upper() if caps_only and c.upper() in images else c for c in chars}
    for group in (drawn & set(REQUIRED_CHARS), drawn - set(REQUIRED_CHARS)):
        masks = {images[char].tobytes() for char in group}
        if len(masks) < len(group) * 0.9:
            return SYMBOL, f"{len(group)} characters draw only {len(masks)} shapes"
    if word.getbbox() is None:
        return EMPTY_WORD, f"{_WORD!r} draws nothing"
    return None


def inspect_font(path, chars=REQUIRED_CHARS):
    """Returns FontInfo when the font draws every char with its own glyph, else None.

    The cmap must map every char to a non-empty glyph, PIL must draw each with its own glyph,
    and the font must not be a symbol font, an all-caps / small-caps font, or draw an empty word.
    """
    return check_font(path, chars).info
