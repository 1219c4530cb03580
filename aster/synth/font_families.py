"""Font families: the family of a font's name, and splitting fonts by family into train /
validation / unseen-font validation sets.

A validation split that means "unseen fonts" holds out whole families: a held-out file whose
sibling weights are in training proves nothing.
"""

import os
import zlib

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


def family_name(raw_family):
    """Strips trailing width/weight/edition words: "DejaVu Sans Condensed" -> "DejaVu Sans"."""
    words = raw_family.split()
    while len(words) > 1 and words[-1].lower() in _STYLE_WORDS:
        words.pop()
    return " ".join(words)


def group_by_family(fonts):
    """{family: [FontInfo...]} in family-name order."""
    families = {}
    for font in fonts:
        families.setdefault(font.family, []).append(font)
    return dict(sorted(families.items()))


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


def split_families(fonts, heldout=None, fractions=None, train_only=()):
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
    family and val_ood shares them. The note says so in either case.
    `train_only` names families the automatic choice never holds out and does not count (a font
    library's families, whose held-out ones are chosen per category by the caller); when every
    family is train_only, the automatic choice takes them all into account.

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
    named, fractions = _split_request(families, heldout, fractions)
    if len(families) == 1 and not any(named.values()):
        train, val, note = _split_single_family(fonts)
        return ({"train": train, "val": val, "val_ood": val},
                "WARNING: " + note + "; val_ood shares val's files")
    chosen = {k: set(v) for k, v in named.items()}
    free = sorted((f for f in families if f not in chosen["val"] | chosen["val_ood"]),
                  key=family_rank)
    if not free:
        raise ValueError(f"holding out {sorted(chosen['val'] | chosen['val_ood'])} leaves no "
                         "font family for training")
    candidates = [f for f in free if f not in set(train_only)] or free
    counted = len([f for f in families if f not in set(train_only)]) or len(families)
    _choose_automatic(chosen, candidates, fractions, counted)
    notes = _share_empty_splits(chosen)
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


def _split_request(families, heldout, fractions):
    """Checks split_families' arguments; returns ({split: named families}, fractions)."""
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
    return named, fractions


def _choose_automatic(chosen, free, fractions, num_families):
    """Fills the splits of `chosen` given no names from `free` (family_rank order)."""
    automatic = [k for k in ("val_ood", "val") if not chosen[k]]
    spare = len(free) - 1  # families that automatic splits may take: training keeps one
    if not automatic or spare <= 0:
        return
    automatic = automatic[:spare]  # one spare family for two splits: val_ood takes it
    counts = {k: max(1, round(fractions[k] * num_families)) for k in automatic}
    while sum(counts.values()) > spare:
        counts[max(counts, key=lambda k: (counts[k], k == "val_ood"))] -= 1
    start = 0
    for k in automatic:
        chosen[k] = set(free[start:start + counts[k]])
        start += counts[k]


def _share_empty_splits(chosen):
    """A split still without families shares the other's; returns the notes saying so."""
    notes = []
    for k, other in (("val", "val_ood"), ("val_ood", "val")):
        if not chosen[k]:
            if not chosen[other]:
                raise ValueError("only one font family besides training: nothing to hold out")
            chosen[k] = chosen[other]
            notes.append(f"too few font families for disjoint validation splits: {k} shares "
                         f"{other}'s families {sorted(chosen[other])}")
    return notes
