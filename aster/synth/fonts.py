"""Finding usable fonts on the machine (`find_fonts`, `font_report`).

The renderer uses every font that can draw a-z, A-Z and 0-9 (a model trained on one typeface
family reads mostly that family); aster/synth/font_checks.py decides what "can draw" means, and
aster/synth/font_families.py splits the fonts found into train / held-out families.

Search order: explicit `font_dirs`, then /usr/share/fonts, /usr/local/share/fonts, the TeX fonts
folder Debian's fonts-texgyre installs into, ~/.fonts, ~/.local/share/fonts, then fonts shipped
inside installed Python packages: known ones (matplotlib, reportlab, ...) and every installed
distribution named `font-*` / `fonts-*` on PyPI (font-lato, font-roboto, ...; `pip install -e
'.[fonts]'` installs a set of them, `make train` does so). `make system-fonts` installs the Debian
font packages for Latin text that give >= 40 families (as root, where apt-get exists).

Files with identical bytes (sha1) are used once: the first by sorted path; so are usable files
that name the same face (the font's own family and style names: one face as .otf and .ttf, or
from PyPI and Debian). `font_report` returns the usable fonts with the counts of candidates,
duplicates and rejected files (with reasons); `find_fonts` returns only the fonts.

A font library (`library_dirs`: the folder `make fonts-google` fills, read by fontsource.py)
adds its .woff2 faces to the candidates; their family, category and license come from the
library's metadata.json instead of the font's name table and the PANOSE rule.
"""

import collections
import dataclasses
import glob
import hashlib
import importlib.metadata
import importlib.util
import os

from aster.synth import fontsource
from aster.synth.font_checks import NO_CMAP, REQUIRED_CHARS, UNREADABLE, check_font
from aster.synth.font_families import group_by_family

SYSTEM_FONT_DIRS = ("/usr/share/fonts", "/usr/local/share/fonts", "/usr/share/texmf/fonts/opentype",
                    "~/.fonts", "~/.local/share/fonts")
# (package, font folder inside it): Python packages known to ship TrueType fonts.
PACKAGE_FONT_DIRS = (("matplotlib", "mpl-data/fonts/ttf"), ("reportlab", "fonts"),
                     ("pygame", ""), ("kivy", "data/fonts"), ("cv2", "qt/fonts"))
_EXTENSIONS = (".ttf", ".otf", ".ttc")
# The reason for a library family skipped for its metadata.json (fontsource.read_metadata).
BAD_METADATA = "bad library metadata"


class NoFontsError(ValueError):
    """No font on the machine can render the required characters."""


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
      rejected: {path: (reason, detail)}; reason is one of font_checks' reason constants.
      fonts: the usable fonts (FontInfo, sorted by path).
    """

    candidates: list
    duplicates: dict
    rejected: dict
    fonts: list
    same_face: dict = dataclasses.field(default_factory=dict)
    required: str = REQUIRED_CHARS  # the characters every usable font draws

    def reasons(self):
        """{reason: number of rejected files}, most frequent first."""
        return dict(collections.Counter(r for r, _ in self.rejected.values()).most_common())

    def families(self):
        """{family: [FontInfo...]} of the usable fonts."""
        return group_by_family(self.fonts)

    def category_counts(self):
        """{category: number of families} of the usable fonts (a family's first file's)."""
        return dict(collections.Counter(fs[0].category for fs in self.families().values())
                    .most_common())

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
                f"{self.required!r}); install some, e.g. `make system-fonts` or `apt-get install "
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


def font_report(font_dirs=(), font_files=(), required=REQUIRED_CHARS, library_dirs=(),
                keep_caps_only=False):
    """Finds the usable fonts and says what was found.

    Args:
      font_dirs: extra folders searched first (each must exist and hold a font file).
      font_files: explicit font files; when given, only these are used (each must be a font file
        fontTools and FreeType can read; one that is readable but fails the checks is rejected).
      required: the characters a usable font must draw (default a-z, A-Z, 0-9; a language's
        languages.Language.font_chars for aster-synth-words --language).
      library_dirs: fontsource library folders (fontsource.library_faces) whose faces are added
        to the candidates (not when font_files are given) with their metadata.
      keep_caps_only: keep faces whose lower case draws like their upper case (FontInfo.caps_only)
        instead of rejecting them.

    Returns:
      FontReport (`.summary()` is one printable line; `.fonts` may be empty).

    Raises:
      FontPathError: naming an explicit font file that is missing or unreadable as a font, or
        an explicit font folder that does not exist or holds no font file.
      ValueError: a library folder that is missing or holds no face (a family whose
        metadata.json is malformed is rejected with reason BAD_METADATA).
    """
    library, bad_metadata = {}, {}
    for directory in library_dirs:
        faces, skipped = fontsource.library_faces(directory)
        library.update(faces)
        bad_metadata.update(skipped)
    if font_files:
        paths = sorted({os.path.realpath(p) for p in font_files})
        for path in paths:
            if not os.path.isfile(path):
                raise FontPathError(path, f"font file {path!r} does not exist")
    else:
        paths = sorted(set(candidate_files(font_dirs)) | set(library))
    unique, duplicates = _drop_duplicates(paths)
    fonts, same_face, faces = [], {}, {}
    rejected = {path: (BAD_METADATA, why) for path, why in bad_metadata.items()}
    for path in unique:
        check = check_font(path, required, keep_caps_only)
        if check.usable:
            kept = faces.setdefault(check.face.casefold(), path)
            if kept == path:
                fonts.append(_with_metadata(check.info, library.get(path)))
            else:
                same_face[path] = kept
            continue
        if font_files and check.reason in (UNREADABLE, NO_CMAP):
            raise FontPathError(path, f"font file {path!r} is not a readable font "
                                f"({check.detail})")
        rejected[path] = (check.reason, check.detail)
    return FontReport(candidates=paths, duplicates=duplicates, rejected=rejected,
                      fonts=sorted(fonts, key=lambda f: f.path), same_face=same_face,
                      required=required)


def _with_metadata(info, meta):
    """The FontInfo with a library face's family, category and license (unchanged if None)."""
    if meta is None:
        return info
    return dataclasses.replace(info, family=meta.family, category=meta.category,
                               license=meta.license, library=True)


def find_fonts(font_dirs=(), font_files=(), required=REQUIRED_CHARS, library_dirs=(),
               keep_caps_only=False):
    """Returns the usable fonts (FontInfo, sorted by path; identical files only once).

    Args:
      font_dirs: extra folders searched first.
      font_files: explicit font files; when given, only these are used.
      required: the characters a usable font must draw (see font_report).
      library_dirs, keep_caps_only: see font_report.

    Raises:
      FontPathError: for an explicit font file or folder that cannot be used (see font_report).
      NoFontsError: when no usable font is found (the message says what was searched and how to
        install fonts).
    """
    return font_report(font_dirs, font_files, required, library_dirs,
                       keep_caps_only).require_fonts()


