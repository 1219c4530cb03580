"""Finding usable fonts on the machine and splitting them into train / held-out families.

A model trained on one typeface family reads mostly that family (SPEC section 5), so the renderer
uses every font that can draw a-z, A-Z and 0-9, and a validation split that means "unseen fonts"
holds out whole families (a held-out file whose sibling weights are in training proves nothing).

Search order: explicit `font_dirs`, then /usr/share/fonts, /usr/local/share/fonts, the TeX fonts
folder Debian's fonts-texgyre installs into, ~/.fonts, ~/.local/share/fonts, then fonts shipped
inside installed Python packages: known ones (matplotlib, reportlab, ...) and every installed
distribution named `font-*` / `fonts-*` on PyPI (font-lato, font-roboto, ...; `pip install -e
'.[fonts]'` installs a set of them, `make train` does so). `make system-fonts` installs the Debian
font packages for Latin text that give >= 40 families (as root, where apt-get exists).

A file is used when (`inspect_font`):
  * fontTools reads its Unicode cmap (font number 0 of a .ttc collection, as PIL does) and the
    cmap maps every required character (REQUIRED_CHARS) to a non-empty glyph;
  * PIL draws each of them with its own glyph (not .notdef, not blank) and the letters do not
    collapse onto a few shapes (symbol fonts);
  * its lowercase letters do not draw like its uppercase ones (all-caps / small-caps display
    fonts, keycap fonts: useless for reading ordinary text);
  * a word draws something.
Files with identical bytes (sha1) are used once: the first by sorted path; so are usable files
that name the same face (the font's own family and style names: one face as .otf and .ttf, or
from PyPI and Debian). `font_report` returns
the usable fonts with the counts of candidates, duplicates and rejected files (with reasons);
`find_fonts` returns only the fonts. `split_families` splits them three ways by family into
train / val / val_ood (see there).
"""

import collections
import dataclasses
import glob
import hashlib
import importlib.metadata
import importlib.util
import logging
import os
import string
import zlib

import numpy as np
from fontTools.ttLib import TTFont
from PIL import Image, ImageDraw, ImageFont

SYSTEM_FONT_DIRS = ("/usr/share/fonts", "/usr/local/share/fonts", "/usr/share/texmf/fonts/opentype",
                    "~/.fonts", "~/.local/share/fonts")
# (package, font folder inside it): Python packages known to ship TrueType fonts.
PACKAGE_FONT_DIRS = (("matplotlib", "mpl-data/fonts/ttf"), ("reportlab", "fonts"),
                     ("pygame", ""), ("kivy", "data/fonts"), ("cv2", "qt/fonts"))
REQUIRED_CHARS = string.ascii_letters + string.digits
_EXTENSIONS = (".ttf", ".otf", ".ttc")
# Words that name a width, weight, optical size or edition inside a family name: "DejaVu Sans
# Condensed", "Liberation Sans Narrow", "PT Sans Caption", "TeX Gyre Heros Cn", "Gentium Book
# Plus", "Accanthis ADF Std No2" and "Linux Libertine Display O" (O: the OpenType edition)
# belong to the families "DejaVu Sans", "Liberation Sans", "PT Sans", "TeX Gyre Heros",
# "Gentium", "Accanthis ADF" and "Linux Libertine", so a held-out family has no sibling in
# training.
_STYLE_WORDS = {"condensed", "semicondensed", "extracondensed", "narrow", "wide", "expanded",
                "cn", "light", "extralight", "ultralight", "thin", "medium", "semibold",
                "demibold", "demi", "bold", "extrabold", "black", "heavy", "book", "regular",
                "italic", "oblique", "caption", "display", "text", "math", "code", "std", "pro",
                "plus", "o", *(f"no{n}" for n in range(2, 10))}
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
_WORD = "Hamburgefonstiv 42"
# fontTools warns about odd 'head' timestamps of many well-formed fonts; those say nothing here.
logging.getLogger("fontTools.ttLib.tables._h_e_a_d").setLevel(logging.ERROR)
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
    """

    path: str
    family: str
    style: str
    chars: frozenset = dataclasses.field(default=frozenset(), repr=False)

    def can_draw(self, text):
        """True when the font has a real glyph for every character of `text`."""
        chars = self.chars or _DEFAULT_CHARS
        return all(char in chars for char in text)


_DEFAULT_CHARS = frozenset(REQUIRED_CHARS + " ")


class NoFontsError(ValueError):
    """No font on the machine can render the required characters."""


class NoCmapError(ValueError):
    """A font file has no Unicode cmap (raised by `cmap_chars`)."""


class FontPathError(ValueError):
    """An explicitly given font file or font folder cannot be used; `path` names it."""

    def __init__(self, path, message):
        super().__init__(message)
        self.path = path


@dataclasses.dataclass
class FontReport:
    """What the font search found (see `font_report`).

    Attributes:
      candidates: font file paths examined (sorted, real paths).
      duplicates: {dropped path: kept path} for files with the same bytes as an earlier one.
      same_face: {dropped path: kept path} for usable files whose family and style names (the
        font's own, e.g. "Lato" "Bold") equal an earlier one's: the same face in another format
        or version (Lato from PyPI and from Debian, Source Sans Pro as .otf and .ttf).
      rejected: {path: (reason, detail)}; reason is one of the module's reason constants.
      fonts: the usable fonts (FontInfo, sorted by path).
    """

    candidates: list
    duplicates: dict
    rejected: dict
    fonts: list
    same_face: dict = dataclasses.field(default_factory=dict)

    def reasons(self):
        """{reason: number of rejected files}, most frequent first."""
        return dict(collections.Counter(r for r, _ in self.rejected.values()).most_common())

    def families(self):
        """{family: [FontInfo...]} of the usable fonts."""
        return group_by_family(self.fonts)

    def summary(self):
        """One line: "N candidate files, M duplicates (...), R rejected (...), U usable in F
        families"."""
        reasons = ", ".join(f"{count} {reason}" for reason, count in self.reasons().items())
        return (f"{len(self.candidates)} candidate font files, "
                f"{len(self.duplicates) + len(self.same_face)} duplicates "
                f"({len(self.duplicates)} identical files, {len(self.same_face)} same family and "
                f"style), {len(self.rejected)} rejected" + (f" ({reasons})" if reasons else "") +
                f", {len(self.fonts)} usable in {len(self.families())} families")

    def require_fonts(self):
        """Returns `fonts`, or raises NoFontsError when there is none."""
        if not self.fonts:
            raise NoFontsError(
                f"no usable font found ({self.summary()}; searched the given folders, "
                f"{list(SYSTEM_FONT_DIRS)} and package font folders for fonts that draw "
                f"{REQUIRED_CHARS!r}); install some, e.g. `make system-fonts` or `apt-get install "
                "fonts-dejavu-core fonts-liberation2`, or pass --font_dirs / --fonts")
        return self.fonts


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


def _glob_fonts(directory):
    return [path for ext in _EXTENSIONS
            for path in glob.glob(os.path.join(glob.escape(directory), "**", "*" + ext),
                                  recursive=True)]


def candidate_files(font_dirs=()):
    """Returns sorted, de-duplicated font file paths found in font_dirs, system and package dirs.

    Raises:
      FontPathError: when a folder of `font_dirs` does not exist or holds no font file.
    """
    found = {}
    for directory in font_dirs:
        directory = os.path.expanduser(directory)
        if not os.path.isdir(directory):
            raise FontPathError(directory, f"font folder {directory!r} does not exist or is not "
                                "a folder")
        paths = _glob_fonts(directory)
        if not paths:
            raise FontPathError(directory, f"font folder {directory!r} holds no "
                                f"{'/'.join(_EXTENSIONS)} file")
        for path in paths:
            found.setdefault(os.path.realpath(path), None)
    dirs = [os.path.expanduser(d) for d in SYSTEM_FONT_DIRS]
    for package, sub in PACKAGE_FONT_DIRS:
        spec = importlib.util.find_spec(package) if importlib.util.find_spec else None
        if spec is not None and spec.submodule_search_locations:
            dirs.extend(os.path.join(loc, sub) for loc in spec.submodule_search_locations)
    for directory in dirs:
        for path in _glob_fonts(directory):
            found.setdefault(os.path.realpath(path), None)
    for path in distribution_font_files():
        if os.path.isfile(path):
            found.setdefault(os.path.realpath(path), None)
    return sorted(found)


def family_name(raw_family):
    """Strips trailing width/weight/edition words: "DejaVu Sans Condensed" -> "DejaVu Sans"."""
    words = raw_family.split()
    while len(words) > 1 and words[-1].lower() in _STYLE_WORDS:
        words.pop()
    return " ".join(words)


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
    font = TTFont(path, fontNumber=0, lazy=True)
    try:
        cmap = font.getBestCmap()
        if not cmap:
            raise NoCmapError(f"{path} has no Unicode cmap")
        if "glyf" in font and "loca" in font:
            locations = font["loca"].locations
            glyph_ids = font.getReverseGlyphMap()

            def blank(name):
                gid = glyph_ids.get(name, len(locations))
                return gid + 1 >= len(locations) or locations[gid + 1] == locations[gid]
        elif "CFF " in font or "CFF2" in font:
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
        else:  # bitmap / colour fonts: the rendering check decides

            def blank(name):
                return False
        return frozenset(chr(code) for code, name in cmap.items()
                         if chr(code).isspace() or not blank(name))
    finally:
        font.close()


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


# In-process memo of _inspect results by (path, chars, size, mtime): a second font search in the
# same process (the synth tool, tests) costs nothing. Nothing is cached on disk.
_INSPECTED = {}


def _inspect(path, chars=REQUIRED_CHARS):
    """Returns (FontInfo, None, face name) for a usable font, else (None, reason, detail).

    The face name is the font's own family and style name ("Lato Hairline Regular"), before
    `family_name` strips style words from the family.
    """
    try:
        stat = os.stat(path)
    except OSError as err:
        return None, UNREADABLE, f"{type(err).__name__}: {err}"
    key = (path, chars, stat.st_size, stat.st_mtime_ns)
    if key not in _INSPECTED:
        _INSPECTED[key] = _inspect_file(path, chars)
    return _INSPECTED[key]


def _inspect_file(path, chars):
    try:
        coverage = cmap_chars(path)
    except NoCmapError:
        return None, NO_CMAP, "no Unicode cmap"
    except Exception as err:  # not a font fontTools can read
        return None, UNREADABLE, f"{type(err).__name__}: {err}"
    missing = "".join(sorted(set(chars) - coverage))
    if missing:
        return None, MISSING_CHARS, f"cmap lacks {missing!r}"
    try:
        font = ImageFont.truetype(path, 32)
        raw_family, style = font.getname()
        notdef = _render(font, "\U0010fffd").tobytes()  # .notdef (or nothing) for a missing glyph
        images = {}
        for char in dict.fromkeys(chars + _CAPS_LETTERS + _CAPS_LETTERS.upper()):
            images[char] = _render(font, char)
        word = _render(font, _WORD, (32 * len(_WORD), 64))
    except Exception as err:  # FreeType cannot load or draw it
        return None, UNREADABLE, f"{type(err).__name__}: {err}"
    masks = set()
    for char in chars:
        mask = images[char].tobytes()
        if mask == notdef or not any(mask):
            return None, NOTDEF, f"{char!r} draws .notdef or nothing"
        masks.add(mask)
    if len(masks) < len(set(chars)) * 0.9:  # symbol fonts map letters to few shapes
        return None, SYMBOL, f"{len(set(chars))} characters draw only {len(masks)} shapes"
    if not all(images[c].getbbox() for c in _CAPS_LETTERS + _CAPS_LETTERS.upper()):
        return None, NOTDEF, "a letter draws nothing"
    same = caps_like_count([images[c] for c in _CAPS_LETTERS],
                           [images[c.upper()] for c in _CAPS_LETTERS])
    if same >= _CAPS_MAJORITY:
        return None, ALL_CAPS, (f"{same} of {_CAPS_LETTERS!r} draw like their capitals "
                                "(all-caps or small-caps font)")
    if word.getbbox() is None:
        return None, EMPTY_WORD, f"{_WORD!r} draws nothing"
    raw_family = raw_family or os.path.basename(path)
    return (FontInfo(path=path, family=family_name(raw_family), style=style or "", chars=coverage),
            None, f"{raw_family} {style or ''}".strip())


def inspect_font(path, chars=REQUIRED_CHARS):
    """Returns FontInfo when the font draws every char with its own glyph, else None.

    The cmap must map every char to a non-empty glyph, PIL must draw each with its own glyph,
    and the font must not be a symbol font, an all-caps / small-caps font, or draw an empty word.
    """
    return _inspect(path, chars)[0]


def _file_digest(path):
    digest = hashlib.sha1()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def _drop_duplicates(paths):
    """(unique paths, {duplicate: kept}): identical bytes -> the first by sorted path is kept."""
    by_size = collections.defaultdict(list)
    for path in paths:
        by_size[os.path.getsize(path)].append(path)
    duplicates = {}
    for same_size in by_size.values():
        if len(same_size) < 2:
            continue
        kept = {}
        for path in same_size:  # sorted, since `paths` is
            first = kept.setdefault(_file_digest(path), path)
            if first != path:
                duplicates[path] = first
    return [p for p in paths if p not in duplicates], duplicates


def font_report(font_dirs=(), font_files=()):
    """Finds the usable fonts and says what was found.

    Args:
      font_dirs: extra folders searched first (each must exist and hold a font file).
      font_files: explicit font files; when given, only these are used (each must be a font file
        fontTools and FreeType can read; one that is readable but fails the checks is rejected).

    Returns:
      FontReport (`.summary()` is one printable line; `.fonts` may be empty).

    Raises:
      FontPathError: naming an explicit font file that is missing or unreadable as a font, or
        an explicit font folder that does not exist or holds no font file.
    """
    if font_files:
        paths = sorted({os.path.realpath(p) for p in font_files})
        for path in paths:
            if not os.path.isfile(path):
                raise FontPathError(path, f"font file {path!r} does not exist")
    else:
        paths = candidate_files(font_dirs)
    unique, duplicates = _drop_duplicates(paths)
    fonts, rejected, same_face, faces = [], {}, {}, {}
    for path in unique:
        info, reason, detail = _inspect(path)
        if info is not None:
            kept = faces.setdefault(detail.casefold(), path)
            if kept == path:
                fonts.append(info)
            else:
                same_face[path] = kept
            continue
        if font_files and reason in (UNREADABLE, NO_CMAP):
            raise FontPathError(path, f"font file {path!r} is not a readable font ({detail})")
        rejected[path] = (reason, detail)
    return FontReport(candidates=paths, duplicates=duplicates, rejected=rejected,
                      fonts=sorted(fonts, key=lambda f: f.path), same_face=same_face)


def find_fonts(font_dirs=(), font_files=()):
    """Returns the usable fonts (FontInfo, sorted by path; identical files only once).

    Args:
      font_dirs: extra folders searched first.
      font_files: explicit font files; when given, only these are used.

    Raises:
      FontPathError: for an explicit font file or folder that cannot be used (see font_report).
      NoFontsError: when no usable font is found (the message says what was searched and how to
        install fonts).
    """
    return font_report(font_dirs, font_files).require_fonts()


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


SPLITS = ("train", "val", "val_ood")
DEFAULT_FRACTIONS = {"val": 0.10, "val_ood": 0.15}


def family_rank(family):
    """Stable order for automatic held-out choices: (crc32 of the UTF-8 name, name)."""
    return zlib.crc32(family.encode("utf-8")), family


def split_families(fonts, heldout=None, fractions=None):
    """Splits fonts three ways by family: train, val (validation) and val_ood (unseen fonts).

    Every family goes to exactly one split. Named families: `heldout` = {"val": [families],
    "val_ood": [families]}; a split left out of it (or given no names) is chosen automatically
    among the families not named. Automatic choice: families ordered by `family_rank` (crc32 of
    the name, so it does not depend on file order, and adding a font family moves at most the
    families at the boundaries); val_ood takes the first round(fractions["val_ood"] * n)
    (default 15%), val the next round(fractions["val"] * n) (default 10%), each at least one
    when there are >= 3 families, and training always keeps at least one family.
    With 2 families (or when the names leave only one family besides training) val and val_ood
    share the one held-out family; with 1 family, files (styles) are held out instead of a
    family (as `split_fonts` does) and val_ood shares them. The note says so in either case.

    Returns:
      ({"train": [FontInfo], "val": [FontInfo], "val_ood": [FontInfo]} in input order,
       note str listing the families of each split).

    Raises:
      ValueError: no fonts; a named family not among the fonts (the message lists those found);
        a family named for both val and val_ood; names that leave no training family; bad
        fractions.
    """
    if not fonts:
        raise ValueError("no fonts to split")
    families = group_by_family(fonts)
    fractions = {**DEFAULT_FRACTIONS, **(fractions or {})}
    unknown_keys = sorted(set(fractions) - {"val", "val_ood"})
    if unknown_keys or not all(0 <= fractions[k] < 1 for k in ("val", "val_ood")) or \
            fractions["val"] + fractions["val_ood"] >= 1:
        raise ValueError(f"fractions {fractions} must be {{'val': f, 'val_ood': f}} with each "
                         "0 <= f < 1 and a sum below 1")
    heldout = {k: list(v or ()) for k, v in (heldout or {}).items()}
    unknown_keys = sorted(set(heldout) - {"val", "val_ood"})
    if unknown_keys:
        raise ValueError(f"heldout keys {unknown_keys} unknown: use 'val' and 'val_ood'")
    named = {k: heldout.get(k, []) for k in ("val", "val_ood")}
    unknown = sorted(set(named["val"] + named["val_ood"]) - set(families))
    if unknown:
        raise ValueError(f"held-out font families {unknown} not found; families found: "
                         f"{sorted(families)}")
    both = sorted(set(named["val"]) & set(named["val_ood"]))
    if both:
        raise ValueError(f"font families {both} are named for both val and val_ood")
    if len(families) == 1 and not any(named.values()):
        train, val, note = _split_single_family(fonts)
        return ({"train": train, "val": val, "val_ood": val},
                "WARNING: " + note + "; val_ood shares val's files")
    chosen = {k: set(v) for k, v in named.items()}
    free = sorted((f for f in families if f not in chosen["val"] | chosen["val_ood"]),
                  key=family_rank)
    notes = []
    if not free:
        raise ValueError(f"holding out {sorted(chosen['val'] | chosen['val_ood'])} leaves no "
                         "font family for training")
    automatic = [k for k in ("val_ood", "val") if not chosen[k]]
    spare = len(free) - 1  # families that automatic splits may take: training keeps one
    if automatic and spare > 0:
        automatic = automatic[:spare]  # one spare family for two splits: val_ood takes it
        counts = {k: max(1, round(fractions[k] * len(families))) for k in automatic}
        while sum(counts.values()) > spare:
            counts[max(counts, key=lambda k: (counts[k], k == "val_ood"))] -= 1
        start = 0
        for k in automatic:
            chosen[k] = set(free[start:start + counts[k]])
            start += counts[k]
    for k, other in (("val", "val_ood"), ("val_ood", "val")):
        if not chosen[k]:
            if not chosen[other]:
                raise ValueError("only one font family besides training: nothing to hold out")
            chosen[k] = chosen[other]
            notes.append(f"too few font families for disjoint validation splits: {k} shares "
                         f"{other}'s families {sorted(chosen[other])}")
    held = chosen["val"] | chosen["val_ood"]
    splits = {"train": [f for f in fonts if f.family not in held],
              "val": [f for f in fonts if f.family in chosen["val"]],
              "val_ood": [f for f in fonts if f.family in chosen["val_ood"]]}
    how = "named" if any(named.values()) else "chosen by crc32 of the family name"
    note = "; ".join(
        [f"font families ({how}): " + "; ".join(
            f"{k} {len({f.family for f in splits[k]})}: {sorted({f.family for f in splits[k]})}"
            for k in SPLITS)] + notes)
    return splits, note
