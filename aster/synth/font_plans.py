"""Which fonts each split of aster-synth-words draws, and how a split draws a family.

`split_for_run` extends font_families.split_families with the rules that hold whatever flags
are given:
  * reserved families (reserved_fonts.py) are never in the training split; a reserved family
    of a font library is in no split at all (it belongs to outside evaluation);
  * a font library's families (FontInfo.library) are training families, except the ones
    font_categories.VAL_OOD_FAMILIES holds out per category: those make the splits
    `val_ood_<category>` (CATEGORY_SPLITS), each rendered in the `val_ood` style;
  * the automatic val / val_ood choice (crc32 of the family name) runs over the fonts found on
    the machine only, so adding a library leaves `val` and `val_ood` as they were.

`draw_family` picks a family for one image: uniformly over the split's families, or, when the
split has library fonts, a category with font_categories.CATEGORY_WEIGHTS first and then a family
uniformly within it.
"""

from aster.synth import font_categories, font_families, reserved_fonts
from aster.synth.vocabulary import weighted_index

CATEGORY_SPLITS = tuple(f"val_ood_{c}" for c in font_categories.CATEGORIES)


def split_for_run(fonts, heldout=None, disjoint=True):
    """Splits the run's fonts: {split: [FontInfo]} for font_families.SPLITS and, when a library
    holds them, CATEGORY_SPLITS.

    Args:
      fonts: FontInfo list.
      heldout: optional {"val": [family, ...], "val_ood": [...]} of named held-out families.
      disjoint: False: every split draws from every font (training still without reserved
        families and library val_ood families).

    Returns:
      ({split: [FontInfo]}, note str).

    Raises:
      ValueError: when no training font is left (reserved families removed), or for the
        reasons of font_families.split_families.
    """
    kept = [f for f in fonts if not (f.library and reserved_fonts.is_reserved(f.family))]
    held_by_category = {family: category for category, families in
                        font_categories.VAL_OOD_FAMILIES.items() for family in families}
    by_category = {f"val_ood_{c}": [] for c in font_categories.CATEGORIES}
    pool = []
    for font in kept:
        if font.library and font.family in held_by_category:
            by_category[f"val_ood_{held_by_category[font.family]}"].append(font)
        else:
            pool.append(font)
    if not pool:
        raise ValueError(f"no font left for training: {len(fonts)} fonts found, all reserved "
                         "(aster/synth/reserved_fonts.py) or held out for val_ood")
    if disjoint:
        library = {f.family for f in pool if f.library}
        splits, note = font_families.split_families(pool, heldout, train_only=library)
    else:
        splits = {split: pool for split in font_families.SPLITS}
        note = "train and validation share all fonts"
    reserved = reserved_fonts.reserved_among(f.family for f in splits["train"])
    splits["train"] = [f for f in splits["train"] if not reserved_fonts.is_reserved(f.family)]
    if not splits["train"]:
        raise ValueError(f"no font left for training: the training families {reserved} are "
                         "reserved for outside evaluation (aster/synth/reserved_fonts.py)")
    if reserved:
        note += f"; reserved families left out of training: {reserved}"
    splits.update({k: v for k, v in by_category.items() if v})
    return splits, note


def category_table(families, weights=None):
    """How a split draws a category: ((category, weight, (family index, ...)), ...).

    Args:
      families: the split's ((family, (FontInfo, ...)), ...).
      weights: {category: weight} (font_categories.parse_weights); None: CATEGORY_WEIGHTS.

    Returns:
      () when no family comes from a font library (draw_family is then uniform over families),
      else one entry per category present, weights from font_categories.split_weights.
    """
    if not any(fs[0].library for _, fs in families):
        return ()
    indices = {}
    for index, (_, members) in enumerate(families):
        category = members[0].category or "sans-serif"
        indices.setdefault(category, []).append(index)
    shares = font_categories.split_weights(indices, weights)
    return tuple((c, w, tuple(indices[c])) for c, w in shares.items())


def draw_family(families, categories, rng):
    """The members of one family of a split (see the module docstring).

    Args:
      families: ((family, (FontInfo, ...)), ...).
      categories: category_table(families).
      rng: numpy Generator.

    Returns:
      (FontInfo, ...) of the family drawn.
    """
    if not categories:
        return families[int(rng.integers(len(families)))][1]
    cumulative = []
    for _, weight, _ in categories:
        cumulative.append(weight + (cumulative[-1] if cumulative else 0.0))
    indices = categories[weighted_index(rng, cumulative)][2]
    return families[indices[int(rng.integers(len(indices)))]][1]
