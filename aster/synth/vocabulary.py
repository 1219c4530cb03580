"""The words synthetic images show: dictionary words, generated strings and punctuation templates.

Dictionary words come from the `english-words` package (pinned in setup.py): the union of its
`web2` (Webster's Second International, ~236k words) and `gcide` (~115k) lists, letters only,
lower-cased and de-duplicated: ~270k words of 1 to 20+ letters, common and rare alike. It was
chosen over a frequency list (wordfreq) because a recognizer must read words it has never seen:
a list without frequencies lets the sampler draw rare and long words as often as we ask, and the
package is pure data with no dependencies. `--word_list FILE` replaces it with a user's own list.

Sampling (`Vocabulary.draw`): a word's length is drawn first, with the weights LENGTH_WEIGHTS
over the lengths the split has (long words far more often than in running text), then a word of
that length uniformly (rare words as often as common ones); its case is lower (50%), Capitalised
(30%) or UPPER (20%) (CASE_WEIGHTS). A `random_fraction` of the texts are random strings
instead: letters, letters and digits, or digit strings shaped like dates, times, prices, phone
numbers and plain numbers.

What is drawn (`aster-synth-words --text`, TEXTS):
  * `words` (the default, `make train`'s data): 70% dictionary words, 30% generated strings (the
    --random_fraction), at most 16 characters. Labels keep their case and the few marks of the
    generated strings ($ . % - / :); a 36-class model's string filtering folds them away.
  * `ascii94`: 40% dictionary words, 30% generated strings, 30% punctuation templates
    (templates.py: prices, times, dates, percentages, abbreviations with dots, contractions,
    hyphenated words, #42, domains, e-mail-like tokens, quoted and bracketed words, words followed
    by , . ! ? : ;), cased with the same mix, at most 25 characters: the 94 printable ASCII
    characters for a 94-class model. A --random_fraction R leaves 70% - R dictionary words.
The manifest states these shares (`text_mix`).

Splits: a text belongs to the split given by crc32(lower-cased text) % 20 (0: val, 1: val_ood,
else train), for list words, generated strings and templates alike, so the three splits never
share a text; a template's words are also its split's words (`(gruis)` in val: gruis is a val word).
Single characters are the exception: every split has all of them (`in_split`). There are only 36,
so hashing them gave val two ("o" and "6") and val_ood two ("b", "k") that training never showed
alone, and 4% of val was 87 images of a lone "o" or "6" (a lone "o" is read as the digit 0). A
generated one-character string is kept with the split's share of the hash buckets (SPLIT_SHARES)
instead, so every split keeps the same length mix.
"""

import collections
import dataclasses
import functools
import os
import string
import zlib

import numpy as np

from aster.synth import templates

SPLITS = ("train", "val", "val_ood")
# text_split's hash buckets: 0 is val, 1 val_ood, the others train; the share each split gets.
_BUCKETS = 20
SPLIT_SHARES = {"val": 1 / _BUCKETS, "val_ood": 1 / _BUCKETS, "train": (_BUCKETS - 2) / _BUCKETS}
# Case of a dictionary word: (lower, Capitalised, UPPER) probabilities.
CASE_WEIGHTS = (0.5, 0.3, 0.2)
# Kinds of generated string and their weights.
RANDOM_KINDS = (("letters", 0.35), ("alphanumeric", 0.3), ("number", 0.1), ("date", 0.06),
                ("time", 0.04), ("price", 0.08), ("phone", 0.07))
# How often a list word of each length is drawn (lengths past the end take the last weight):
# shaped like words in running text (most 4-9 letters) with a long tail, so a 12-16 letter word
# is still ~1 in 8, far more than in a frequency list (mean ~7 letters). Within a length, words
# are drawn uniformly, so rare words are as likely as common ones.
# Past 16 letters (--max_length > 16) the tail thins out: the dictionary has 6 words of 25 letters.
LENGTH_WEIGHTS = (3, 5, 8, 10, 11, 11, 10, 9, 8, 7, 5, 4, 3, 2, 2, 2,
                  1, 1, 1, 0.5, 0.5, 0.5, 0.2, 0.2, 0.2)


@dataclasses.dataclass(frozen=True)
class Text:
    """What `aster-synth-words --text NAME` draws: the share of punctuation templates and the
    longest text unless --max_length says otherwise."""

    template_fraction: float
    max_length: int


TEXTS = {"words": Text(0.0, 16), "ascii94": Text(0.3, 25)}


class VocabularyError(ValueError):
    """A word list yields no usable word."""


def text_split(text):
    """The split a text belongs to: "val", "val_ood" or "train" (case-insensitive)."""
    bucket = zlib.crc32(text.lower().encode("utf-8")) % _BUCKETS
    return "val" if bucket == 0 else "val_ood" if bucket == 1 else "train"


def in_split(text, split):
    """Whether `text` may be drawn in `split`: its text_split, or any split for one character."""
    return len(text) == 1 or text_split(text) == split


def dictionary_words():
    """The english-words `web2` + `gcide` lists: sorted, unique, lower-case ASCII letters."""
    from english_words import get_english_words_set  # a pinned dependency (setup.py)

    words = get_english_words_set(["web2", "gcide"], lower=True, alpha=True)
    return sorted(w for w in words if w.isascii() and w.isalpha())


def read_word_list(path):
    """Words of a UTF-8 text file, one per line (blank lines and surrounding spaces ignored).

    Raises:
      VocabularyError: the file cannot be read or holds no word.
    """
    try:
        with open(path, encoding="utf-8") as f:
            words = sorted({line.strip() for line in f if line.strip()})
    except (OSError, UnicodeDecodeError) as err:
        raise VocabularyError(f"--word_list {path}: cannot read it ({err})") from err
    if not words:
        raise VocabularyError(f"--word_list {path}: no word in it (one word per line)")
    return words


@dataclasses.dataclass(frozen=True)
class Vocabulary:
    """The words of one split, grouped by length, and how texts are drawn from them.

    by_length: ((length, (word, ...)), ...) in length order.
    """

    split: str
    by_length: tuple
    random_fraction: float = 0.3
    max_length: int = 16
    keep_case: bool = False
    shared: bool = False  # every split's words (validation not word-disjoint)
    language: object = None  # languages.Language, or None for English
    template_fraction: float = 0.0  # share of punctuation templates (templates.py)

    @property
    def num_words(self):
        return sum(len(words) for _, words in self.by_length)

    def length_histogram(self):
        """{length: number of distinct words} of this split's list words."""
        return {length: len(words) for length, words in self.by_length}

    def draw(self, rng):
        """One text of this split: a list word in some case, a generated string or a template."""
        source = rng.random()
        if source < self.random_fraction or not self.by_length:
            for _ in range(1000):
                text = random_string(rng, self.max_length, self.language)
                if self.shared or self._keeps(text, rng):
                    return text
        elif source < self.random_fraction + self.template_fraction:
            for _ in range(1000):
                text = templates.draw(rng, self._pick, self._recase)
                if len(text) <= self.max_length and (self.shared or self._keeps(text, rng)):
                    return text
        words = self.by_length[weighted_index(rng, self._length_cumulative)][1]
        word = words[int(rng.integers(len(words)))]
        if self.keep_case:
            return word
        case = weighted_index(rng, _CASE_CUMULATIVE)
        if self.language is not None:
            return self.language.cased(word, case)
        return (word, word.capitalize(), word.upper())[case]

    def _pick(self, rng, longest):
        """A list word of this split of at most `longest` characters (the length weights)."""
        count = sum(1 for length, _ in self.by_length if length <= longest) or 1
        words = self.by_length[weighted_index(rng, self._length_cumulative[:count])][1]
        return words[int(rng.integers(len(words)))]

    def _recase(self, rng, text):
        """`text` in the casing mix (CASE_WEIGHTS); as written for a user's list (keep_case)."""
        if self.keep_case:
            return text
        case = weighted_index(rng, _CASE_CUMULATIVE)
        return text if case == 0 else text[:1].upper() + text[1:] if case == 1 else text.upper()

    def sources(self):
        """{source: share of the texts drawn}: dictionary (or list) words, generated strings,
        punctuation templates."""
        if not self.by_length:  # no list word in this split: generated strings only
            return {"dictionary words": 0.0, "generated strings": 1.0, "punctuation templates": 0.0}
        words = 1.0 - self.random_fraction - self.template_fraction
        return {"dictionary words": round(words, 6),
                "generated strings": round(self.random_fraction, 6),
                "punctuation templates": round(self.template_fraction, 6)}

    def _keeps(self, text, rng):
        """Whether a generated string or template is drawn in this split: by its hash, or, for
        a single character (in every split), with the split's share, as often as a longer
        text."""
        if len(text) == 1:
            return rng.random() < SPLIT_SHARES[self.split]
        return text_split(text) == self.split

    @functools.cached_property
    def _length_cumulative(self):
        return np.cumsum([LENGTH_WEIGHTS[min(length, len(LENGTH_WEIGHTS)) - 1]
                          for length, _ in self.by_length])


def build(split, words, random_fraction=0.3, max_length=16, can_draw=None, source="word list",
          keep_case=False, language=None, template_fraction=0.0):
    """The Vocabulary of `split` from `words` (those of the split, at most max_length long).

    Args:
      split: one of SPLITS.
      words: iterable of str.
      random_fraction: share of generated strings in [0, 1].
      max_length: longest text.
      can_draw: optional callable(text) -> bool; words it rejects are left out.
      source: what `words` came from, for the error message.
      keep_case: draw list words as written (a user's list) instead of re-casing them.
      language: languages.Language of the words (its letters for generated strings, its case
        rules), or None for English.
      template_fraction: share of punctuation templates (templates.py; English only).

    Raises:
      VocabularyError: no word of the list is usable for any split.
      ValueError: an unknown split, a bad fraction / length, fractions over 1 together, or
        templates with a language.
    """
    if split not in SPLITS:
        raise ValueError(f"split {split!r}; expected one of {SPLITS}")
    _check_mix(random_fraction, template_fraction, language)
    if max_length < 1:
        raise ValueError(f"max_length must be >= 1, got {max_length}")
    usable = [w for w in words if 1 <= len(w) <= max_length and (can_draw is None or can_draw(w))]
    if not usable:
        raise VocabularyError(f"{source}: no usable word (1 to {max_length} characters that the "
                              "fonts can draw)")
    groups = collections.defaultdict(list)
    for word in usable:
        if in_split(word, split):
            groups[len(word)].append(word)
    by_length = tuple((length, tuple(groups[length])) for length in sorted(groups))
    return Vocabulary(split, by_length, random_fraction, max_length, keep_case,
                      language=language, template_fraction=template_fraction)


def _check_mix(random_fraction, template_fraction, language):
    """Raises ValueError for shares outside [0, 1] or over 1 together, or templates with a
    language."""
    if not 0.0 <= random_fraction <= 1.0:
        raise ValueError(f"random_fraction must be in [0, 1], got {random_fraction}")
    if not 0.0 <= template_fraction <= 1.0 - random_fraction + 1e-9:
        raise ValueError(f"random_fraction {random_fraction} + template_fraction "
                         f"{template_fraction} (punctuation templates, --text): each in [0, 1] "
                         "and together at most 1")
    if template_fraction and language is not None:
        raise ValueError(f"punctuation templates (--text) are English ASCII text, not language "
                         f"{language.code!r} ({language.name}): use --text words")


def build_all(word_list_path=None, random_fraction=0.3, max_length=None, can_draw=None,
              language=None, text="words"):
    """{split: Vocabulary} from the dictionary, the language's word list (languages.Language)
    or the file at word_list_path.

    Args:
      text: a name of TEXTS (aster-synth-words --text): the share of punctuation templates.
      max_length: longest text; None: the text's (TEXTS).
      (the others as in `build`)

    Raises:
      ValueError: an unknown text, or as `build`.
    """
    if text not in TEXTS:
        raise ValueError(f"text {text!r}; expected one of {sorted(TEXTS)}")
    _check_mix(random_fraction, TEXTS[text].template_fraction, language)
    if max_length is None:
        max_length = TEXTS[text].max_length
    if word_list_path:
        words, source, keep_case = read_word_list(word_list_path), word_list_path, True
        if language is not None:  # a user's list for a script: words it can label
            words = [w for w in words if language.folds_into_charset(w)]
    elif language is not None:
        words, source, keep_case = language.words(), source_name(None, language), False
    else:
        words, source, keep_case = dictionary_words(), "english-words web2+gcide", False
    return {split: build(split, words, random_fraction, max_length, can_draw, source, keep_case,
                         language, TEXTS[text].template_fraction) for split in SPLITS}


# ------------------------------------------------------------------------- generated strings

def weighted_index(rng, cumulative):
    """An index drawn with the weights whose cumulative sums are `cumulative` (one draw)."""
    index = int(np.searchsorted(cumulative, rng.random() * cumulative[-1], side="right"))
    return min(index, len(cumulative) - 1)


_CASE_CUMULATIVE = np.cumsum(CASE_WEIGHTS)
_KIND_CUMULATIVE = np.cumsum([w for _, w in RANDOM_KINDS])


def _digits(rng, count):
    return "".join(str(d) for d in rng.integers(10, size=count))


def random_string(rng, max_length, language=None):
    """A random string of at most max_length characters, of a kind drawn from RANDOM_KINDS;
    letters are the language's (languages.Language; None: a-z, A-Z)."""
    kind = RANDOM_KINDS[weighted_index(rng, _KIND_CUMULATIVE)][0]
    if kind in ("letters", "alphanumeric"):
        text = _GENERATORS[kind](rng, max_length, _alphabets(language))
    else:
        text = _GENERATORS[kind](rng, max_length)
    return text[:max_length]


def _alphabets(language):
    """(lower, UPPER) letters of generated strings."""
    if language is None:
        return string.ascii_lowercase, string.ascii_uppercase
    return language.letters, "".join(dict.fromkeys(language.upper(language.letters)))


def _letters(rng, max_length, alphabets=(string.ascii_lowercase, string.ascii_uppercase)):
    alphabet = alphabets[int(rng.integers(2))]
    length = int(rng.integers(1, min(max_length, 12) + 1))
    return "".join(alphabet[i] for i in rng.integers(len(alphabet), size=length))


def _alphanumeric(rng, max_length, alphabets=(string.ascii_lowercase, string.ascii_uppercase)):
    lower, upper = alphabets
    alphabet = (lower + string.digits, upper + string.digits,
                lower + upper + string.digits)[int(rng.integers(3))]
    length = int(rng.integers(1, min(max_length, 12) + 1))
    return "".join(alphabet[i] for i in rng.integers(len(alphabet), size=length))


def _number(rng, max_length):
    return _digits(rng, int(rng.integers(1, min(max_length, 9) + 1)))


def _date(rng, max_length):
    day, month = int(rng.integers(1, 29)), int(rng.integers(1, 13))
    year = int(rng.integers(1950, 2040))
    sep = "/.-"[int(rng.integers(3))]
    short = rng.random() < 0.4
    y = f"{year % 100:02d}" if short else str(year)
    if rng.random() < 0.3:
        return f"{year}-{month:02d}-{day:02d}"
    return f"{day:02d}{sep}{month:02d}{sep}{y}"


def _time(rng, max_length):
    return f"{int(rng.integers(24)):02d}:{int(rng.integers(60)):02d}"


def _price(rng, max_length):
    whole = str(int(rng.integers(0, 10 ** int(rng.integers(1, 5)))))
    cents = f".{_digits(rng, 2)}" if rng.random() < 0.7 else ""
    symbol = "$" if rng.random() < 0.7 else ""
    return f"{symbol}{whole}{cents}" if rng.random() < 0.8 else f"{whole}{cents}%"


def _phone(rng, max_length):
    if rng.random() < 0.5:
        return f"{_digits(rng, 3)}-{_digits(rng, 4)}"
    return f"{_digits(rng, 3)}-{_digits(rng, 3)}-{_digits(rng, 4)}"


_GENERATORS = {"letters": _letters, "alphanumeric": _alphanumeric, "number": _number,
               "date": _date, "time": _time, "price": _price, "phone": _phone}


def text_mix(vocab):
    """Manifest entry: the share of each source, the casing mix and the template kinds."""
    case = ("as written" if vocab.keep_case else
            dict(zip(("lower", "Capitalised", "UPPER"), CASE_WEIGHTS, strict=True)))
    kinds = dict(templates.KINDS) if vocab.template_fraction else {}
    return {"sources": vocab.sources(), "case": case, "template_kinds": kinds}


def describe(vocabularies):
    """Manifest entry: distinct words, length histogram and text mix per split."""
    return {split: {"num_words": v.num_words,
                    "length_histogram": {str(k): n for k, n in v.length_histogram().items()},
                    "text_mix": text_mix(v)}
            for split, v in vocabularies.items()}


def source_name(word_list_path=None, language=None):
    """What the words came from, for the manifest and the model card."""
    if word_list_path:
        return os.path.abspath(word_list_path)
    if language is not None:
        return f"wordfreq==3.1.1 {language.code} ({language.wordlist} list)"
    return "english-words==2.0.2 web2+gcide"
