"""Font categories: what kind of typeface a font is, how often each kind is drawn, and the
families each kind holds out for `val_ood`.

Categories are Google Fonts' five. A family of the Google Fonts library (fontsource.py) has its
category in metadata.json. A font found on the machine (Debian's, PyPI's) is classified by a
simple rule on its own tables (`classify`):

  * monospace: post.isFixedPitch, or PANOSE proportion 9 (monospaced);
  * handwriting: PANOSE family kind 3 (Latin hand written);
  * display: PANOSE family kind 4 (Latin decorative);
  * serif: PANOSE family kind 2 (Latin text) with a serif style 2-10 (cove ... rounded serifs);
  * sans-serif: everything else (sans serif styles 11-13, flared, rounded, or no PANOSE).

Sampling (generator.py, when the run uses the Google Fonts library): a category is drawn with
CATEGORY_WEIGHTS or aster-synth-words --category_weights (parse_weights; renormalised over the
categories the split has), then a family uniformly within it, then one of its files. Without the
library every family is equally likely, as before.
"""

CATEGORIES = ("serif", "sans-serif", "display", "handwriting", "monospace")
# Display and handwriting faces are what signs, packaging, menus and posters are set in, and
# what a model trained on book faces reads worst (issue 44): a fifth of the images each.
CATEGORY_WEIGHTS = {"sans-serif": 0.25, "serif": 0.20, "display": 0.20, "handwriting": 0.20,
                    "monospace": 0.15}
# Google Fonts families held out of training for `val_ood`, per category (none reserved, none
# a sibling of a family of the shipped model's training set or of another library family);
# aster-synth-words renders them as categories/val_ood_<category>.tfrecord.
VAL_OOD_FAMILIES = {
    "serif": ("Lora", "Spectral", "Zilla Slab"),
    "sans-serif": ("Work Sans", "Kumbh Sans", "Questrial"),
    "display": ("Titan One", "Rammetto One", "Knewave"),
    "handwriting": ("Handlee", "Marck Script", "Rock Salt"),
    "monospace": ("Space Mono", "Azeret Mono", "Victor Mono"),
}
_PANOSE_KINDS = {3: "handwriting", 4: "display"}


def check_category(category, where):
    """Returns `category` when it is one of CATEGORIES.

    Raises:
      ValueError: naming `where` (a file and field) and the bad value.
    """
    if category not in CATEGORIES:
        raise ValueError(f"{where}: category {category!r} is not one of {list(CATEGORIES)}")
    return category


def classify(font):
    """The category of a font by the module docstring's rule.

    Args:
      font: a fontTools TTFont.

    Returns:
      One of CATEGORIES.
    """
    post = font["post"] if "post" in font else None
    panose = font["OS/2"].panose if "OS/2" in font else None
    if (post is not None and post.isFixedPitch) or (panose is not None and
                                                    panose.bProportion == 9):
        return "monospace"
    if panose is None:
        return "sans-serif"
    if panose.bFamilyType in _PANOSE_KINDS:
        return _PANOSE_KINDS[panose.bFamilyType]
    if panose.bFamilyType == 2 and 2 <= panose.bSerifStyle <= 10:
        return "serif"
    return "sans-serif"


def parse_weights(text):
    """{category: weight} of "display=0.3,handwriting=0.3": CATEGORY_WEIGHTS with the named
    categories' weights replaced ("" gives CATEGORY_WEIGHTS).

    Raises:
      ValueError: naming the entry: not category=weight, an unknown category, a negative or
        non-finite weight, or every weight 0.
    """
    weights = dict(CATEGORY_WEIGHTS)
    for entry in filter(None, (e.strip() for e in text.split(","))):
        name, equals, value = entry.partition("=")
        name = name.strip()
        if not equals or name not in CATEGORIES:
            raise ValueError(f"--category_weights: {entry!r}: expected <category>=<weight> with "
                             f"a category of {', '.join(CATEGORIES)}")
        try:
            weight = float(value)
        except ValueError:
            weight = -1.0
        if not 0 <= weight < float("inf"):
            raise ValueError(f"--category_weights: {entry!r}: the weight must be a number >= 0")
        weights[name] = weight
    if not any(weights.values()):
        raise ValueError("--category_weights: every weight is 0")
    return weights


def split_weights(categories, weights=None):
    """{category: weight} for the categories a split has (weights: CATEGORY_WEIGHTS unless
    given), renormalised to sum to 1; a split whose categories all weigh 0 draws them evenly."""
    weights = CATEGORY_WEIGHTS if weights is None else weights
    present = {c: weights[c] for c in CATEGORIES if c in set(categories)}
    total = sum(present.values())
    if total <= 0:
        return {c: 1 / len(present) for c in present}
    return {c: w / total for c, w in present.items()}
