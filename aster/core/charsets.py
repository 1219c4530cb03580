"""Character sets: the built-in ones of the original ASTER and loading a set from text.

A character set is a list of distinct single characters (Unicode code points, UTF-8 in files).
The built-in sets are also what the evaluation protocols 36, 62 and 94 keep
(aster/utils/recognition_evaluation.py).
"""

import functools
import string
import sys
import unicodedata

LOWERCASE = string.digits + string.ascii_lowercase  # 36
ALLCASES = string.digits + string.ascii_letters  # 62
ALLCASES_SYMBOLS = string.printable[:-6]  # 94 printable ASCII characters, no whitespace

BUILT_IN = {"LOWERCASE": LOWERCASE, "ALLCASES": ALLCASES, "ALLCASES_SYMBOLS": ALLCASES_SYMBOLS}


def check_unique(chars, source):
    """Raises ValueError naming `source` if `chars` repeats a character or has a non-character.

    Args:
      chars: sequence of str.
      source: where the characters came from (field path or file), for the message.

    Returns:
      `chars` as a list.
    """
    chars = list(chars)
    seen = set()
    for i, c in enumerate(chars):
        if len(c) != 1:
            raise ValueError(f"{source}: entry {i} is {c!r}, not a single character")
        if c in seen:
            raise ValueError(f"{source}: character {c!r} appears more than once")
        seen.add(c)
    if not chars:
        raise ValueError(f"{source}: the character set is empty")
    return chars


def from_text_file(path):
    """Reads a UTF-8 file with one character per line (empty lines ignored)."""
    try:
        with open(path, encoding="utf-8") as f:
            lines = f.read().split("\n")
    except OSError as e:
        raise ValueError(f"character set file {path!r} cannot be read: {e.strerror}") from e
    except UnicodeDecodeError as e:
        raise ValueError(f"character set file {path!r} is not valid UTF-8: {e}") from e
    return check_unique([line.rstrip("\r") for line in lines if line.rstrip("\r")], path)


def from_text_string(text, source="text_string"):
    """Splits a whitespace-separated string of characters."""
    return check_unique(text.split(), source)


def from_config(charset, path="character_set"):
    """The characters of a label_map_pb2.CharacterSet message (text_string, text_file, or the
    built-in set; an unset oneof means the default built-in set, LOWERCASE, as in the original).

    Raises:
      ValueError: unreadable file, duplicate characters or an empty set; the message starts with
        the field path.
    """
    source = charset.WhichOneof("source_oneof")
    try:
        if source == "text_string":
            return from_text_string(charset.text_string, f"{path}.text_string")
        if source == "text_file":
            return from_text_file(charset.text_file)
        return list(BUILT_IN[charset.BuiltInSet.Name(charset.built_in_set)])
    except ValueError as e:
        message = str(e)
        raise ValueError(message if message.startswith(path) else f"{path}.{source}: {message}"
                         ) from None


def fold_case(text):
    """Unicode NFKC, case folding and NFKC again: what protocol 1 compares with
    eval_config.charset_fold_case and string_filtering's case_fold does to labels (Σ, σ, ς -> σ;
    Ά -> ά; Ё -> ё)."""
    return unicodedata.normalize("NFKC", unicodedata.normalize("NFKC", text).casefold())


@functools.lru_cache(maxsize=1)
def case_fold_table():
    """(from code points, to code points): the characters fold_case maps to one other character,
    sorted by code point (those it maps to several, like ß -> ss, are left out)."""
    pairs = []
    for code in range(sys.maxunicode + 1):
        if 0xD800 <= code <= 0xDFFF:
            continue
        folded = fold_case(chr(code))
        if len(folded) == 1 and folded != chr(code):
            pairs.append((code, ord(folded)))
    return [a for a, _ in pairs], [b for _, b in pairs]
