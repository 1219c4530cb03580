"""Punctuation templates: tokens as people write them (`aster-synth-words --text ascii94`).

A template is one kind of token with digits and punctuation, drawn by `draw` (weights KINDS,
before the length limit rejects the longer ones):

    punctuated    word, word. word! word? word: word; word... word?!      (18%)
    quoted        "word" 'word' (word) [word] {word} <word> `word` *word* _word_, half-open
                  ("Hello) and followed by a mark ((word).)                 (12%)
    hyphenated    well-known, e-mail, T-shirt, re-enter, one-to-one, 24-hour (10%)
    contraction   don't, it's, I'm, anna's, O'Brien-like, '90s             (8%)
    abbreviation  U.S.A., e.g., Dr., Ph.D., initials (J.R.R.), Approx.     (7%)
    price         $12.99, $1,299.00, -$4.50, $3.49/lb, $9.99*               (8%)
    time          10:45, 9:05pm, 9am, 10:45:30, 21h30                      (6%)
    date          12/03/2024, 2024-03-12, 3.12.24, 12-Mar-2024, Mar.12      (6%)
    percent       50%, 12.5%, -3%, +2.4%, ~40%, >90%, 50%OFF                (4%)
    tag           #42, #word, @word_42                                     (5%)
    domain        example.com-like, www.word-word.org, https://word.io/word (5%)
    email         anna@mail.org-like, j.smith_2@word.net                   (4%)
    symbols       R&D, C++, x^2, ~5, a+b=c, 3*4, x<=y, a|b, C:\\word, ~/word, snake_case
                  (7%)

Together they draw every one of the 94 printable ASCII characters (0x21-0x7E) and nothing else
(no em dash or curly quotes: they are not ASCII).
Words come from the caller's `pick(rng, longest)` (the split's dictionary words, lower case) and
are cased by its `recase(rng, text)` (the vocabulary's casing mix); the fixed lists below
(contractions, abbreviations, prefixes, top-level domains, months) are shared by every split, and
a whole token is split like any text, by its hash (vocabulary.text_split).
"""

import functools
import string

import numpy as np

KINDS = (("punctuated", 0.18), ("quoted", 0.12), ("hyphenated", 0.10), ("contraction", 0.08),
         ("abbreviation", 0.07), ("price", 0.08), ("time", 0.06), ("date", 0.06),
         ("percent", 0.04), ("tag", 0.05), ("domain", 0.05), ("email", 0.04),
         ("symbols", 0.07))

MARKS = ((",", 5), (".", 5), ("!", 3), ("?", 3), (":", 2), (";", 2), ("...", 1), ("!!", 0.5),
         ("?!", 0.5))
QUOTES = (('"', '"', 4), ("'", "'", 2), ("(", ")", 4), ("[", "]", 1.5), ("{", "}", 1),
          ("<", ">", 1), ("`", "`", 0.5), ("*", "*", 1), ("_", "_", 0.5))
CONTRACTIONS = (
    "don't", "doesn't", "didn't", "can't", "won't", "isn't", "aren't", "wasn't", "weren't",
    "hasn't", "haven't", "hadn't", "wouldn't", "couldn't", "shouldn't", "mustn't", "needn't",
    "it's", "that's", "what's", "there's", "here's", "let's", "he's", "she's", "who's", "where's",
    "I'm", "I've", "I'll", "I'd", "you're", "you've", "you'll", "you'd", "we're", "we've",
    "we'll", "they're", "they've", "they'll", "o'clock", "y'all", "ma'am", "rock'n'roll", "'til")
ABBREVIATIONS = (
    "U.S.A.", "U.S.", "U.K.", "E.U.", "U.N.", "D.C.", "e.g.", "i.e.", "etc.", "vs.", "a.m.",
    "p.m.", "A.M.", "P.M.", "Dr.", "Mr.", "Mrs.", "Ms.", "Jr.", "Sr.", "St.", "Mt.", "Ave.",
    "Rd.", "Blvd.", "Inc.", "Ltd.", "Co.", "Corp.", "Dept.", "Univ.", "Prof.", "Gov.", "Sgt.",
    "Capt.", "No.", "Nos.", "Vol.", "Fig.", "Ch.", "pp.", "ed.", "approx.", "est.", "min.",
    "max.", "Ph.D.", "M.D.", "B.A.", "M.A.", "R.I.P.", "a.k.a.", "P.S.", "Fwd.", "Tel.", "Apt.")
PREFIXES = ("re", "co", "non", "pre", "anti", "self", "ex", "post", "semi", "multi", "mid", "pro",
            "sub", "over", "under", "half", "all", "well", "low", "high")
NUMBER_WORDS = ("hour", "day", "year", "star", "page", "inch", "foot", "mile", "week", "minute",
                "point", "way", "door", "piece", "step", "bit")
TLDS = ("com", "org", "net", "io", "co", "edu", "gov", "info", "de", "fr", "uk", "co.uk", "app",
        "dev", "ai", "us", "ca", "eu", "biz", "tv")
MONTHS = ("Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Sept", "Oct", "Nov",
          "Dec")
UNITS = ("/lb", "/kg", "/mo", "/hr", "/ea", "/day", "*", "+")
MATH_OPS = ("+", "-", "*", "/", "=", "<", ">", "^", "<=", ">=", "!=", "==", "->", "=>")


def _choice(rng, items):
    return items[int(rng.integers(len(items)))]


def _weighted(rng, items):
    """An item of ((value..., weight), ...): the values (one value: itself) by weight."""
    cumulative = _cumulative(items)
    index = int(np.searchsorted(cumulative, rng.random() * cumulative[-1], side="right"))
    item = items[min(index, len(items) - 1)]
    return item[0] if len(item) == 2 else item[:-1]


@functools.cache
def _cumulative(items):
    return np.cumsum([item[-1] for item in items])


def _digits(rng, low, high):
    """A number of low..high digits, no leading zero (one digit: 0-9)."""
    count = int(rng.integers(low, high + 1))
    first = str(int(rng.integers(1 if count > 1 else 0, 10)))
    return first + "".join(str(d) for d in rng.integers(10, size=count - 1))


def _capital_letters(rng, count):
    return "".join(_choice(rng, string.ascii_uppercase) for _ in range(count))


def _punctuated(rng, pick, recase):
    return recase(rng, pick(rng, 14)) + _weighted(rng, MARKS)


def _quoted(rng, pick, recase):
    opening, closing = _weighted(rng, QUOTES)
    word = recase(rng, pick(rng, 14))
    shape = rng.random()
    if shape < 0.1:
        return opening + word
    if shape < 0.2:
        return word + closing
    text = opening + word + closing
    return text + _weighted(rng, MARKS) if shape > 0.8 else text


def _hyphenated(rng, pick, recase):
    form = rng.random()
    if form < 0.45:
        text = f"{pick(rng, 9)}-{pick(rng, 9)}"
    elif form < 0.6:
        letter = _choice(rng, string.ascii_lowercase)
        text = f"{letter.upper() if rng.random() < 0.3 else letter}-{pick(rng, 8)}"
    elif form < 0.8:
        text = f"{_choice(rng, PREFIXES)}-{pick(rng, 10)}"
    elif form < 0.9:
        text = "-".join(pick(rng, 5) for _ in range(3))
    else:
        text = f"{_digits(rng, 1, 3)}-{_choice(rng, NUMBER_WORDS)}"
    return recase(rng, text)


def _contraction(rng, pick, recase):
    form = rng.random()
    if form < 0.4:
        return recase(rng, _choice(rng, CONTRACTIONS))
    if form < 0.8:
        word = pick(rng, 12)
        return recase(rng, word + ("'" if word.endswith("s") and len(word) > 1 else "'s"))
    if form < 0.9:
        word = pick(rng, 10)
        return f"{_choice(rng, 'ODL')}'{word[:1].upper()}{word[1:]}"
    return f"'{int(rng.integers(100)):02d}{'s' if rng.random() < 0.5 else ''}"


def _abbreviation(rng, pick, recase):
    form = rng.random()
    if form < 0.4:
        return _choice(rng, ABBREVIATIONS)
    if form < 0.7:
        letters = _capital_letters(rng, int(rng.integers(2, 5)))
        text = "".join(f"{c}." for c in letters)
        return text.lower() if rng.random() < 0.15 else text
    word = pick(rng, 12)
    return recase(rng, word[:int(rng.integers(2, 6))]) + "."


def _price(rng, pick, recase):
    whole = _digits(rng, 1, 4)
    if rng.random() < 0.15:
        whole = f"{_digits(rng, 1, 3)},{_digits(rng, 3, 3)}"
    cents = f".{int(rng.integers(100)):02d}" if rng.random() < 0.6 else ""
    symbol = "$" if rng.random() < 0.85 else ""
    sign = _choice(rng, "-+") if rng.random() < 0.05 else ""
    unit = _choice(rng, UNITS) if rng.random() < 0.12 else ""
    return f"{sign}{symbol}{whole}{cents}{unit}"


def _time(rng, pick, recase):
    hour, minute = int(rng.integers(24)), int(rng.integers(60))
    form = rng.random()
    if form < 0.35:
        return f"{hour:02d}:{minute:02d}"
    twelve = hour % 12 or 12
    suffix = _choice(rng, ("am", "pm", "AM", "PM", "a.m.", "p.m.", "", ""))
    if form < 0.75:
        return f"{twelve}:{minute:02d}{suffix}"
    if form < 0.85:
        return f"{twelve}{suffix or 'am'}"
    if form < 0.95:
        return f"{hour:02d}:{minute:02d}:{int(rng.integers(60)):02d}"
    return f"{hour}h{minute:02d}"


def _date(rng, pick, recase):
    day, month, year = int(rng.integers(1, 29)), int(rng.integers(1, 13)), int(
        rng.integers(1950, 2040))
    form = rng.random()
    if form < 0.2:
        return f"{year}-{month:02d}-{day:02d}"
    if form < 0.75:
        sep = _choice(rng, "/.-")
        short_year = f"{year % 100:02d}" if rng.random() < 0.4 else str(year)
        if rng.random() < 0.5:
            return f"{day:02d}{sep}{month:02d}{sep}{short_year}"
        return f"{month}{sep}{day}{sep}{short_year}"
    name = MONTHS[month - 1] if month != 9 or rng.random() < 0.5 else "Sept"
    name = name.upper() if rng.random() < 0.2 else name
    if form < 0.9:
        return f"{day:02d}-{name}-{year}"
    return f"{name}.{day}"


def _percent(rng, pick, recase):
    number = str(int(rng.integers(0, 101)))
    if rng.random() < 0.25:
        number = f"{int(rng.integers(0, 100))}.{int(rng.integers(10))}"
    sign = _choice(rng, "-+~<>") if rng.random() < 0.2 else ""
    suffix = _choice(rng, ("OFF", "off")) if rng.random() < 0.05 else ""
    return f"{sign}{number}%{suffix}"


def _tag(rng, pick, recase):
    form = rng.random()
    if form < 0.4:
        return f"#{_digits(rng, 1, 5)}"
    if form < 0.7:
        return "#" + recase(rng, pick(rng, 12))
    handle = pick(rng, 10)
    if rng.random() < 0.4:
        handle += _choice(rng, ("", "_", ".")) + _digits(rng, 1, 3)
    return f"@{handle}"


def _host(rng, pick):
    form = rng.random()
    if form < 0.5:
        name = pick(rng, 10)
    elif form < 0.8:
        name = pick(rng, 7) + pick(rng, 7)
    elif form < 0.9:
        name = f"{pick(rng, 7)}-{pick(rng, 7)}"
    else:
        name = pick(rng, 8) + _digits(rng, 1, 2)
    return f"{name}.{_choice(rng, TLDS)}"


def _domain(rng, pick, recase):
    text = _host(rng, pick)
    form = rng.random()
    if form < 0.2:
        text = "www." + text
    elif form < 0.3:
        text = _choice(rng, ("http://", "https://")) + text
    if rng.random() < 0.1:
        text += "/" + pick(rng, 8)
    return recase(rng, text) if rng.random() < 0.2 else text  # mostly lower case


def _email(rng, pick, recase):
    form = rng.random()
    if form < 0.45:
        local = pick(rng, 8)
    elif form < 0.65:
        local = f"{pick(rng, 6)}{_choice(rng, '._')}{pick(rng, 7)}"
    elif form < 0.85:
        local = pick(rng, 7) + _choice(rng, ("", "_", ".")) + _digits(rng, 1, 3)
    else:
        local = _choice(rng, string.ascii_lowercase) + pick(rng, 8)
    return f"{local}@{_host(rng, pick)}"


def _operand(rng):
    return _digits(rng, 1, 3) if rng.random() < 0.6 else _choice(rng, "abcnxyzXYZN")


def _symbols(rng, pick, recase):
    form = rng.random()
    if form < 0.15:
        if rng.random() < 0.5:
            return _choice(rng, ("C++", "C#", "F#", "A+", "B-", "AT&T", "Q&A", "R&D", "B&B"))
        return _capital_letters(rng, 1) + "&" + _capital_letters(rng, int(rng.integers(1, 3)))
    if form < 0.25:
        return recase(rng, f"{pick(rng, 7)}&{pick(rng, 7)}")
    if form < 0.5:
        text = _operand(rng) + _choice(rng, MATH_OPS) + _operand(rng)
        return text + "=" + _operand(rng) if rng.random() < 0.2 else text
    if form < 0.6:  # powers and approximations: ^ and ~ are rare elsewhere
        if rng.random() < 0.6:
            return f"{_operand(rng)}^{_operand(rng)}"
        return f"~{_operand(rng)}"
    if form < 0.8:
        path = rng.random()
        if path < 0.35:
            return f"{_capital_letters(rng, 1)}:\\{recase(rng, pick(rng, 10))}"
        if path < 0.7:
            return f"~/{pick(rng, 10)}"
        return f"{_choice(rng, ('/', './', '../'))}{pick(rng, 8)}"
    if form < 0.9:
        return f"{pick(rng, 7)}|{pick(rng, 7)}"
    text = f"{pick(rng, 8)}_{pick(rng, 8)}"
    return f"__{text}__" if rng.random() < 0.1 else text


_MAKERS = {"punctuated": _punctuated, "quoted": _quoted, "hyphenated": _hyphenated,
           "contraction": _contraction, "abbreviation": _abbreviation, "price": _price,
           "time": _time, "date": _date, "percent": _percent, "tag": _tag, "domain": _domain,
           "email": _email, "symbols": _symbols}
_KIND_CUMULATIVE = np.cumsum([w for _, w in KINDS])


def make(kind, rng, pick, recase):
    """One token of template `kind` (a name of KINDS).

    Args:
      kind: a name of KINDS.
      rng: numpy Generator.
      pick: callable(rng, longest) -> a word of 1 to `longest` characters (lower case).
      recase: callable(rng, text) -> `text` in the casing mix.

    Returns:
      str of printable ASCII characters (as long as the words `pick` gives).

    Raises:
      ValueError: an unknown kind.
    """
    if kind not in _MAKERS:
        raise ValueError(f"template kind {kind!r}; expected one of {sorted(_MAKERS)}")
    return _MAKERS[kind](rng, pick, recase)


def draw(rng, pick, recase):
    """A token of a kind drawn with the weights of KINDS (see `make`)."""
    index = int(np.searchsorted(_KIND_CUMULATIVE, rng.random() * _KIND_CUMULATIVE[-1],
                                side="right"))
    return make(KINDS[min(index, len(KINDS) - 1)][0], rng, pick, recase)
