"""The alphabets aster-synth-words draws besides English: Greek (`el`) and Russian (`ru`).

A Language gives what the data engine needs for a script:
  * `charset`: the model's characters, one file line each in configs/charsets/<code>.txt: the
    digits and the lower-case letters after case folding (charsets.fold_case), which is also how
    the labels are folded (string_filtering's case_fold) and how protocol 1 scores
    (eval_config.charset_fold_case). Greek: the 24 letters with σ for both sigmas (fold_case maps
    Σ, σ and the final ς to σ), the seven vowels with tonos (ά έ ή ί ό ύ ώ) and the four with
    dialytika (ϊ ϋ ΐ ΰ): accents are read, case and the sigma's form are not. Russian: the 33
    letters, ё its own letter (the image shows its dots; write ё in labels where the crop has it).
  * `font_chars`: what a font must draw to be used (fonts.find_fonts' required characters):
    a-z, A-Z, 0-9 and the script's letters in both cases, including the final ς.
  * the words: the `wordfreq` package's list for the language (pinned in setup.py's `languages`
    extra), kept where every character folds into the charset: Greek 42,897 of the 46,808 listed,
    Russian 668,309 of the 712,849 of the `large` list. A user's --word_list replaces it.
  * `cased(word, case)`: how a word is written in lower, Capitalised or UPPER case. Greek: a
    word-final σ is drawn as ς (wordfreq folds it to σ), and UPPER drops the tonos as Greek
    capitals do (ΟΔΟΣ for οδός; the dialytika stays: ΪΟΝ).
"""

import dataclasses
import functools
import string
import unicodedata

from aster.core import charsets

ENGLISH = "en"


class LanguageError(ValueError):
    """An unknown --language or a word source that cannot be read."""


@dataclasses.dataclass(frozen=True)
class Language:
    """A script aster-synth-words can render (see the module docstring)."""

    code: str
    name: str
    letters: str  # lower-case letters, folded (the charset's letters)
    wordlist: str = "best"  # wordfreq's list name
    final_forms: tuple = ()  # (letter, its form at the end of a word): Greek ("σ", "ς")
    caps_drop: str = ""  # combining marks UPPER case leaves out: Greek's tonos

    @property
    def charset(self):
        """The model's characters: digits then letters (configs/charsets/<code>.txt)."""
        return string.digits + "".join(c for c in self.letters if c not in string.digits)

    @property
    def font_chars(self):
        """What a font must draw to be used for this language."""
        upper = "".join(dict.fromkeys("".join(self.upper(c) for c in self.letters)))
        finals = "".join(final for _, final in self.final_forms)
        return string.ascii_letters + string.digits + self.letters + finals + upper

    def upper(self, text):
        """UPPER case as the script writes it (Greek drops the tonos)."""
        text = text.upper()
        if self.caps_drop:
            marks = str.maketrans("", "", self.caps_drop)
            text = unicodedata.normalize(
                "NFC", unicodedata.normalize("NFD", text).translate(marks))
        return text

    def cased(self, word, case):
        """`word` (lower case) in case 0 lower, 1 Capitalised or 2 UPPER, as it is drawn."""
        for letter, final in self.final_forms:
            if word.endswith(letter) and len(word) > 1:
                word = word[:-1] + final
        if case == 1:
            return word[:1].upper() + word[1:]
        return self.upper(word) if case == 2 else word

    def folds_into_charset(self, word):
        """True when every character of `word` case-folds to a character of the charset."""
        keep = self._charset_set
        return all(c in keep for c in charsets.fold_case(word))

    @functools.cached_property
    def _charset_set(self):
        return frozenset(self.charset)

    def words(self):
        """The language's wordfreq words that fold into the charset (lower case, NFC, sorted).

        Raises:
          LanguageError: the wordfreq package is not installed, or a --charset language (its
            words come from --word_list).
        """
        if not self.wordlist:
            raise LanguageError(f"--charset {self.name}: give the words with --word_list FILE")
        return list(_words(self))


@functools.lru_cache(maxsize=4)
def _words(language):
    """Language.words, read once per process (the Russian list has 712,849 entries)."""
    try:
        import wordfreq  # setup.py's `languages` extra
    except ImportError as err:
        raise LanguageError(
            f"--language {language.code} takes its words from the wordfreq package: pip install "
            "-e '.[languages]' (or pass --word_list FILE)") from err
    listed = wordfreq.top_n_list(language.code, 10 ** 7, wordlist=language.wordlist)
    words = {unicodedata.normalize("NFC", w) for w in listed}
    return tuple(sorted(w for w in words if w.isalpha() and language.folds_into_charset(w)))


LANGUAGES = {
    "el": Language("el", "Greek", "αβγδεζηθικλμνξοπρστυφχψω" "άέήίόύώ" "ϊϋΐΰ",
                   final_forms=(("σ", "ς"),), caps_drop="\u0301"),
    "ru": Language("ru", "Russian", "абвгдеёжзийклмнопрстуфхцчшщъыьэюя", wordlist="large"),
}


def from_charset_file(path):
    """A Language for a user's character set file (aster-synth-words --charset FILE): its letters
    are the file's alphabetic characters, cased by Python's rules, words from --word_list.

    Raises:
      ValueError: an unreadable file, or a character case folding changes (list the folded,
        lower-case forms: the labels and protocol 1 fold every text).
    """
    chars = charsets.from_text_file(path)
    for char in chars:
        if charsets.fold_case(char) != char:
            raise ValueError(f"--charset {path}: {char!r} case-folds to "
                             f"{charsets.fold_case(char)!r}; list the folded (lower-case) "
                             "characters, as the labels are folded")
    letters = "".join(c for c in chars if c.isalpha())
    if not letters:
        raise ValueError(f"--charset {path}: no letter in it")
    return Language("custom", path, letters, wordlist="")


def get(code):
    """The Language of `code` ("el", "ru"), or None for English.

    Raises:
      LanguageError: an unknown code (the message lists the known ones).
    """
    if code in (None, "", ENGLISH):
        return None
    if code not in LANGUAGES:
        raise LanguageError(f"--language {code!r}: expected one of "
                            f"{[ENGLISH, *LANGUAGES]}")
    return LANGUAGES[code]
