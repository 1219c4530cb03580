"""Word-recognition metrics: accuracy, 1 - normalized edit distance and lexicon accuracy.

Protocols. Before comparing, both the prediction and the ground truth are
filtered to the protocol's characters:

* 36: digits and letters, case-insensitive (both sides lower-cased first). The paper's protocol.
* 62: digits and letters, case-sensitive.
* 94: every printable ASCII character except whitespace, case-sensitive.
* 1 (CHARSET): the model's own character set. Both sides are Unicode NFKC-normalised (and
  case-folded with ``fold_case``), then filtered to the characters of the character set under the
  same normalisation, so no character the model can output is dropped: the protocol for Greek,
  CJK, accented Latin and every other set the ASCII protocols would empty. The unknown-class text
  U+FFFD is dropped unless the set holds it.

``eval_config.protocol`` also accepts 0 (AUTO, the default): 36 when every character of the
model's character set is ASCII (the sets the paper's protocols were made for, so existing configs
keep their numbers), else CHARSET. ``resolve_protocol`` makes that choice; ``SETTINGS`` is the one
list of accepted config values (aster-config validate and the evaluator both check against it).

Normalized edit distance of one example: ``editdistance(gt, pred) / max(len(gt), len(pred))``
on the filtered strings (character-level Levenshtein on Unicode code points). The reported figure
is ``1 - mean(NED)``.

Lexicon accuracy: the prediction is replaced by the lexicon word nearest to it by edit distance,
compared case-insensitively (both lower-cased). Ties go to the word that comes first in the
record's lexicon, so the result depends only on the record. The chosen word then counts as correct
when it equals the ground truth under the protocol. Only records that carry a non-empty lexicon
enter this figure.

Examples are kept per record, in the order they were added, and never merged by file name (the
original collapsed SVT's duplicate file names into one example). A ground truth that is empty
after filtering cannot be scored: such examples are counted in ``num_empty_groundtruth`` and left
out of every ratio; a ratio with no examples is ``None``, never a division by zero.
"""

import dataclasses
import unicodedata

import editdistance

from aster.core import charsets

AUTO = 0
CHARSET = 1
# The one table of the ASCII protocols: protocol -> (description, the built-in character set it
# keeps, whether both sides are lower-cased first).
_ASCII = {
    36: ("case-insensitive digits and letters", frozenset(charsets.LOWERCASE), True),
    62: ("case-sensitive digits and letters", frozenset(charsets.ALLCASES), False),
    94: ("printable ASCII", frozenset(charsets.ALLCASES_SYMBOLS), False),
}
ASCII_PROTOCOLS = tuple(_ASCII)
PROTOCOLS = ASCII_PROTOCOLS + (CHARSET,)  # what RecognitionEvaluation scores
SETTINGS = (AUTO, CHARSET) + ASCII_PROTOCOLS  # what eval_config.protocol accepts (AUTO resolves)

PROTOCOL_NAMES = {
    AUTO: "auto: 36 for an ASCII character set, else 1",
    CHARSET: "the model's character set, NFKC",
    **{protocol: name for protocol, (name, _, _) in _ASCII.items()},
}


def expected(values=SETTINGS):
    """'expected one of [...] (what each means)', the tail of every bad-protocol message."""
    return f"expected one of {list(values)} (" + "; ".join(
        f"{p} {PROTOCOL_NAMES[p]}" for p in values) + ")"


def check_setting(value):
    """Raises ValueError unless `value` is in SETTINGS (an accepted eval_config.protocol)."""
    if value not in SETTINGS:
        raise ValueError(f"eval_config.protocol is {value!r}; {expected(SETTINGS)}")
    return value


def _check_protocol(protocol):
    if protocol not in PROTOCOLS:
        raise ValueError(f"eval_config.protocol is {protocol!r}; {expected(PROTOCOLS)}")
    return protocol


def is_ascii_charset(charset):
    """True when every character of `charset` is ASCII (the sets protocols 36/62/94 cover)."""
    return all(ord(c) < 128 for c in charset)


def resolve_protocol(setting, charset=None):
    """The protocol eval_config.protocol `setting` means for a model with character set `charset`.

    Args:
      setting: an eval_config.protocol value (see SETTINGS).
      charset: the model's characters (sequence of str), or None when unknown.

    Returns:
      36, 62, 94 or CHARSET: `setting` itself unless it is AUTO, which gives CHARSET for a
      character set with a non-ASCII character and 36 otherwise (also without a character set).

    Raises:
      ValueError: an unknown setting, or CHARSET without a character set.
    """
    check_setting(setting)
    if setting == CHARSET and not charset:
        raise ValueError(f"eval_config.protocol is {CHARSET} (the model's character set) but the "
                         "model config has no decoded predictor with a label_map")
    if setting != AUTO:
        return setting
    return CHARSET if charset and not is_ascii_charset(charset) else 36


def describe(protocol, fold_case=False):
    """A short description of `protocol` for the reports."""
    name = PROTOCOL_NAMES.get(protocol, "?")
    return f"{name}, case-folded" if protocol == CHARSET and fold_case else name


def to_text(value):
    """Decodes bytes (as TensorFlow returns strings) to str; str passes through."""
    if isinstance(value, bytes):
        return value.decode("utf-8", errors="replace")
    return str(value)


def normalize_text(text, fold_case=False):
    """Unicode NFKC, then (with `fold_case`) case folding and NFKC again (NFKC_Casefold-like)."""
    text = unicodedata.normalize("NFKC", to_text(text))
    return unicodedata.normalize("NFKC", text.casefold()) if fold_case else text


def charset_characters(charset, fold_case=False):
    """The characters the CHARSET protocol keeps: those of `charset`, normalised like the text."""
    return frozenset("".join(normalize_text(c, fold_case) for c in charset))


def text_filter(protocol, charset=None, fold_case=False):
    """A function str/bytes -> str filtering text to `protocol`'s characters.

    Args:
      protocol: 36, 62, 94 or CHARSET.
      charset: the model's characters; required for CHARSET, ignored otherwise.
      fold_case: case-fold under CHARSET (36 always lower-cases; 62 and 94 never fold).

    Raises:
      ValueError: unknown protocol, or CHARSET without a character set.
    """
    _check_protocol(protocol)
    if protocol == CHARSET:
        if not charset:
            raise ValueError(f"protocol {CHARSET} (the model's character set) needs the "
                             "character set")
        keep = charset_characters(charset, fold_case)
        return lambda text: "".join(c for c in normalize_text(text, fold_case) if c in keep)
    _, keep, lower_case = _ASCII[protocol]
    if lower_case:
        return lambda text: "".join(c for c in to_text(text).lower() if c in keep)
    return lambda text: "".join(c for c in to_text(text) if c in keep)


def filter_text(text, protocol, charset=None, fold_case=False):
    """Filters `text` to the protocol's characters (lower-cased first for protocol 36).

    Args:
      text: str or UTF-8 bytes.
      protocol: 36, 62, 94 or CHARSET.
      charset, fold_case: see text_filter.

    Returns:
      The filtered str.

    Raises:
      ValueError: unknown protocol, or CHARSET without a character set.
    """
    return text_filter(protocol, charset, fold_case)(text)


def normalized_edit_distance(groundtruth, prediction):
    """Edit distance divided by the longer string's length; 0.0 when both are empty."""
    longest = max(len(groundtruth), len(prediction))
    if longest == 0:
        return 0.0
    return editdistance.eval(groundtruth, prediction) / longest


def parse_lexicon(lexicon):
    """Returns the lexicon words as a list of str.

    Args:
      lexicon: a tab-joined str/bytes (the TFRecord form), an iterable of words, or None.
    """
    if lexicon is None:
        return []
    if isinstance(lexicon, (str, bytes)):
        return [w for w in to_text(lexicon).split("\t") if w]
    return [to_text(w) for w in lexicon if to_text(w)]


def nearest_lexicon_word(prediction, lexicon):
    """The lexicon word with the smallest case-insensitive edit distance to `prediction`.

    Ties are broken by lexicon order (the first of the nearest words wins).

    Args:
      prediction: str or bytes.
      lexicon: see parse_lexicon.

    Returns:
      The chosen word (original case), or None for an empty lexicon.
    """
    words = parse_lexicon(lexicon)
    if not words:
        return None
    query = to_text(prediction).lower()
    distances = [editdistance.eval(query, w.lower()) for w in words]
    return words[distances.index(min(distances))]


@dataclasses.dataclass
class ExampleResult:
    """One evaluated record.

    index: position of the record in the evaluation (0-based); the key of the example.
    correct / ned / lexicon_correct are None when not scored (empty ground truth, no lexicon).
    """

    index: int
    filename: str
    groundtruth: str
    prediction: str
    score: float | None
    correct: bool | None
    ned: float | None
    lexicon_prediction: str | None
    lexicon_correct: bool | None

    @property
    def empty_groundtruth(self):
        return self.correct is None


def _ratio(numerator, denominator):
    return None if denominator == 0 else numerator / denominator


class RecognitionEvaluation:
    """Accumulates predictions and ground truths of one dataset and computes its metrics."""

    def __init__(self, protocol=36, charset=None, fold_case=False):
        """Args:
          protocol: 36, 62, 94 or CHARSET.
          charset, fold_case: the model's characters (required for CHARSET) and whether CHARSET
            case-folds; see text_filter.

        Raises:
          ValueError: any other protocol, or CHARSET without a character set.
        """
        self._protocol = protocol
        self._filter = text_filter(protocol, charset, fold_case)
        self._examples = []

    @property
    def protocol(self):
        return self._protocol

    @property
    def examples(self):
        """The ExampleResults in insertion order (one per record)."""
        return list(self._examples)

    def add(self, prediction, groundtruth, lexicon=None, filename="", score=None):
        """Adds one record and returns its ExampleResult.

        Args:
          prediction: predicted text (str or UTF-8 bytes).
          groundtruth: true text (str or UTF-8 bytes).
          lexicon: optional lexicon (tab-joined string or list of words).
          filename: source file name, informational only (duplicates are separate examples).
          score: optional prediction score (log-probability).
        """
        prediction, groundtruth = to_text(prediction), to_text(groundtruth)
        gt, pred = self._filter(groundtruth), self._filter(prediction)
        correct = ned = lexicon_prediction = lexicon_correct = None
        if gt:
            correct = pred == gt
            ned = normalized_edit_distance(gt, pred)
            lexicon_prediction = nearest_lexicon_word(prediction, lexicon)
            if lexicon_prediction is not None:
                lexicon_correct = self._filter(lexicon_prediction) == gt
        result = ExampleResult(
            index=len(self._examples),
            filename=to_text(filename),
            groundtruth=groundtruth,
            prediction=prediction,
            score=None if score is None else float(score),
            correct=correct,
            ned=ned,
            lexicon_prediction=lexicon_prediction,
            lexicon_correct=lexicon_correct,
        )
        self._examples.append(result)
        return result

    def add_batch(self, predictions, groundtruths, lexicons=None, filenames=None, scores=None):
        """Adds parallel sequences of records (e.g. numpy arrays fetched from a batch).

        Returns:
          The list of ExampleResults added, in order.
        """
        n = len(predictions)
        if len(groundtruths) != n:
            raise ValueError(f"{n} predictions but {len(groundtruths)} ground truths")
        return [
            self.add(
                predictions[i],
                groundtruths[i],
                lexicon=None if lexicons is None else lexicons[i],
                filename="" if filenames is None else filenames[i],
                score=None if scores is None else scores[i],
            )
            for i in range(n)
        ]

    def result(self):
        """Returns the metrics as a JSON-ready dict.

        Keys: protocol, num_examples (records added), num_scored (non-empty ground truth),
        num_empty_groundtruth, num_correct, accuracy, one_minus_ned, num_with_lexicon,
        lexicon_accuracy. Ratios are None when their denominator is 0.
        """
        scored = [e for e in self._examples if not e.empty_groundtruth]
        with_lexicon = [e for e in scored if e.lexicon_correct is not None]
        num_correct = sum(e.correct for e in scored)
        return {
            "protocol": self._protocol,
            "num_examples": len(self._examples),
            "num_scored": len(scored),
            "num_empty_groundtruth": len(self._examples) - len(scored),
            "num_correct": num_correct,
            "accuracy": _ratio(num_correct, len(scored)),
            "one_minus_ned": _ratio(sum(1.0 - e.ned for e in scored), len(scored)),
            "num_with_lexicon": len(with_lexicon),
            "lexicon_accuracy": _ratio(sum(e.lexicon_correct for e in with_lexicon),
                                       len(with_lexicon)),
        }


def evaluate(predictions, groundtruths, protocol=36, lexicons=None, filenames=None, charset=None,
             fold_case=False):
    """One-shot helper: RecognitionEvaluation(protocol, charset, fold_case) over parallel
    sequences -> result()."""
    evaluation = RecognitionEvaluation(protocol, charset, fold_case)
    evaluation.add_batch(predictions, groundtruths, lexicons=lexicons, filenames=filenames)
    return evaluation.result()
