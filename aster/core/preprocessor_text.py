"""Transcript preprocessing, UTF-8 correct (code points, never bytes), in graph code.

Replaces the original's StringFiltering C++ op with tf.strings ops.
"""

from aster.core import charsets
from aster.tf_setup import tf


def fold_case(text):
    """Folds the case of every character as charsets.fold_case does to it alone (Σ, σ, ς -> σ);
    characters it would turn into several are lower-cased instead. string tensor -> same shape."""
    sources, targets = charsets.case_fold_table()
    sources = tf.constant(sources, tf.int32)
    codes = tf.strings.unicode_decode(tf.strings.lower(text, encoding="utf-8"), "UTF-8",
                                      errors="replace")
    flat = codes.flat_values if isinstance(codes, tf.RaggedTensor) else codes
    position = tf.minimum(tf.searchsorted(sources, flat), tf.size(sources) - 1)
    folded = tf.where(tf.equal(tf.gather(sources, position), flat),
                      tf.gather(tf.constant(targets, tf.int32), position), flat)
    if isinstance(codes, tf.RaggedTensor):
        folded = codes.with_flat_values(folded)
    return tf.strings.unicode_encode(folded, "UTF-8")


def string_filtering(text, lower_case=False, include_charset=None, case_fold=False):
    """Optionally lower-cases or case-folds a transcript, then keeps only the characters of a set.

    Args:
      text: string scalar tensor (UTF-8). Invalid UTF-8 bytes become U+FFFD, which is then dropped
        unless the set includes it.
      lower_case: lower-case first (Unicode-aware: "É" -> "é").
      case_fold: fold the case first, as protocol 1 does with charset_fold_case (see fold_case).
      include_charset: sequence of single characters to keep, or None to keep everything.

    Returns:
      string scalar tensor (UTF-8), the characters kept in their original order.

    Raises:
      ValueError: an entry of include_charset is not a single character, or text is not a
        scalar.
    """
    if case_fold:
        text = fold_case(text)
    elif lower_case:
        text = tf.strings.lower(text, encoding="utf-8")
    if include_charset is None:
        return text
    chars = list(include_charset)
    bad = [c for c in chars if not isinstance(c, str) or len(c) != 1]
    if bad:
        raise ValueError(f"string_filtering.include_charset has non-characters: {bad[:5]!r}")
    if text.shape.rank != 0:
        raise ValueError(f"string_filtering works on one transcript (a scalar), got {text.shape}")
    if not chars:
        return tf.constant("", tf.string)
    allowed = tf.constant(sorted({ord(c) for c in chars}), tf.int32)
    codes = tf.strings.unicode_decode(text, "UTF-8", errors="replace")
    # Membership by binary search in the sorted code points (any set size, no hash table).
    position = tf.minimum(tf.searchsorted(allowed, codes), tf.size(allowed) - 1)
    keep = tf.equal(tf.gather(allowed, position), codes)
    return tf.strings.unicode_encode(tf.boolean_mask(codes, keep), "UTF-8")


def label_length(text):
    """Number of characters (UTF-8 code points) of a string tensor, int32."""
    return tf.strings.length(text, unit="UTF8_CHAR")


def truncate_label(text, max_length):
    """The first max_length characters (UTF-8 code points) of a string tensor."""
    return tf.strings.substr(text, 0, max_length, unit="UTF8_CHAR")
