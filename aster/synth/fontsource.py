"""Reading a fontsource font library (the folder `make fonts-google` fills, google_fonts.py).

One folder per family, as fontsource packages lay it out:

    <library>/<id>/metadata.json    {"family": "Lobster Two", "category": "display",
                                     "license": {"type": "OFL-1.1", ...}, ...} (4.x packages:
                                     "fontName", and "license" a URL)
    <library>/<id>/LICENSE
    <library>/<id>/files/<id>-latin-<weight>-<style>.woff2

`aster-synth-words --google_fonts DIR` takes each face's family, category and license from its
family's metadata.json (not from the font's name table); the faces then go through the same
checks as every other font (font_checks.py; fontTools reads .woff2 with the brotli package).
Of a family's weights and styles at most five are used (`chosen_faces`).
"""

import dataclasses
import glob
import json
import os
import re

from aster.synth import font_categories

METADATA = "metadata.json"


@dataclasses.dataclass(frozen=True)
class FamilyMeta:
    """What a library family's metadata.json says: its folder id, family, category, license."""

    font_id: str
    family: str
    category: str
    license: str


def read_metadata(path):
    """Reads one family's metadata.json.

    Args:
      path: the metadata.json file.

    Returns:
      FamilyMeta.

    Raises:
      ValueError: naming the file and field for unreadable JSON, a missing or empty family, a
        category outside font_categories.CATEGORIES or a missing license type.
    """
    try:
        with open(path, encoding="utf-8") as f:
            data = json.load(f)
    except (OSError, ValueError) as err:
        raise ValueError(f"{path}: not a readable metadata.json ({err})") from err
    family = data.get("family", data.get("fontName"))  # fontName: fontsource 4.x packages
    if not isinstance(family, str) or not family.strip():
        raise ValueError(f"{path}: field 'family' is {family!r}; expected a family name")
    category = font_categories.check_category(data.get("category"), f"{path} field 'category'")
    license_field = data.get("license")  # 4.x packages: a URL instead of {"type": ...}
    license_type = license_field.get("type") if isinstance(license_field, dict) else license_field
    if not isinstance(license_type, str) or not license_type:
        raise ValueError(f"{path}: field 'license' is {license_field!r}; expected "
                         "{'type': 'OFL-1.1', ...} or a license name")
    return FamilyMeta(os.path.basename(os.path.dirname(path)), family.strip(), category,
                      license_type)


def chosen_faces(paths):
    """The faces of one family the engine uses: at most five of `paths`.

    In normal style the weights nearest 400 and 700, the lightest and the heaviest; in italic
    the weight nearest 400. A family's other weights draw nearly what these draw, and each
    face costs its check (~0.1 s) in every font search. Files not named
    `<id>-latin-<weight>-<style>.woff2` are all kept.

    Args:
      paths: .woff2 paths of one family, sorted.

    Returns:
      The chosen paths, sorted.
    """
    faces, other = {}, []
    for path in paths:
        match = re.search(r"-(\d+)-(normal|italic)\.woff2$", path)
        if match:
            faces.setdefault(match.group(2), []).append((int(match.group(1)), path))
        else:
            other.append(path)
    chosen = set(other)
    for style, targets in (("normal", (400, 700, 0, 1000)), ("italic", (400,))):
        weights = faces.get(style, [])
        for target in targets if weights else ():
            chosen.add(min(weights, key=lambda wp: (abs(wp[0] - target), wp[0]))[1])
    return sorted(chosen)


def library_faces(directory):
    """The chosen .woff2 faces of a library folder with their family's metadata.

    Args:
      directory: the library folder (one sub-folder per family).

    Returns:
      ({face path: FamilyMeta} sorted by path, {metadata.json path: why it was skipped}): a
      family whose metadata.json is malformed (read_metadata) is skipped, not fatal.

    Raises:
      ValueError: when the folder does not exist or holds no family with a face.
    """
    if not os.path.isdir(directory):
        raise ValueError(f"--google_fonts {directory!r}: not a folder (run `make fonts-google`)")
    faces, skipped = {}, {}
    for path in sorted(glob.glob(os.path.join(glob.escape(directory), "*", METADATA))):
        try:
            meta = read_metadata(path)
        except ValueError as err:
            skipped[path] = str(err)
            continue
        files = os.path.join(glob.escape(os.path.dirname(path)), "files", "*.woff2")
        for face in chosen_faces(sorted(glob.glob(files))):
            faces[os.path.realpath(face)] = meta
    if not faces:
        raise ValueError(f"--google_fonts {directory!r}: no <family>/{METADATA} with "
                         f"files/*.woff2 faces (run `make fonts-google`); skipped: {skipped}")
    return dict(sorted(faces.items())), skipped
