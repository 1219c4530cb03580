"""Font families reserved for outside evaluation: never in a training split.

The project evaluates its models, as a user would, on word crops set in families it never
trained on (issue 44). These families are therefore kept out of every training split that
aster-synth-words plans (generator.make_plans, whatever flags are given), and a model card
whose training families include one cannot be written (aster/tools/package_model.py calls
`check_training_families`). The project's own `val` / `val_ood` splits may keep the families
they used before (Lato, from the `fonts` extra).

A family matches when its name, or its name without trailing style words, equals a reserved
name or an alias, or such a name without trailing style words, ignoring case
(font_families.family_name: a machine font's family "Playfair Display" is "Playfair", so
"Playfair" is reserved too, as is "Aller" twice over).
"""

from aster.synth.font_families import family_name

RESERVED_FAMILIES = (
    "Aller", "Aller Display", "Amatic SC", "Capture it", "Droid Sans", "Lato", "Raleway",
    "Sansation", "Walkway", "EB Garamond", "Lobster", "Oxygen", "Dancing Script", "Pacifico",
    "Caveat", "Satisfy", "Great Vibes", "Kalam", "Indie Flower", "Shadows Into Light",
    "Permanent Marker", "Patrick Hand", "Gloria Hallelujah", "Architects Daughter", "Courgette",
    "Sacramento", "Kaushan Script", "Yellowtail", "Abril Fatface", "Alfa Slab One", "Righteous",
    "Bungee", "Press Start 2P", "Black Ops One", "Fredericka the Great", "Special Elite",
    "Creepster", "Orbitron", "Audiowide", "Bebas Neue", "Staatliches", "Luckiest Guy",
    "Merriweather", "Playfair Display", "Montserrat", "Poppins", "Nunito", "Libre Baskerville",
)
# Other names of a reserved family: the issue names Oxygen as "Oxygen (Oxygen Sans)".
ALIASES = {"Oxygen Sans": "Oxygen"}
_KEYS = {key.casefold() for name in (*RESERVED_FAMILIES, *ALIASES)
         for key in (name, family_name(name))}


def is_reserved(family):
    """True when `family` (a font family name) is a reserved family or an alias of one."""
    return family.casefold() in _KEYS or family_name(family).casefold() in _KEYS


def reserved_among(families):
    """The reserved names among `families`, sorted."""
    return sorted(f for f in set(families) if is_reserved(f))


def check_training_families(families, where):
    """Raises when a training family list holds a reserved family.

    Args:
      families: font family names a model trained on.
      where: what the list is (named in the message), e.g. "the card of models/aster_base".

    Raises:
      ValueError: naming the reserved families found and this module.
    """
    found = reserved_among(families)
    if found:
        raise ValueError(f"{where}: training font families {found} are reserved for outside "
                         "evaluation (aster/synth/reserved_fonts.py) and must not be trained on")
