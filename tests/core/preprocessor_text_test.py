import pytest

from aster.core import charsets
from aster.core import preprocessor_text as text
from aster.tf_setup import tf


def _run(value, *args, **kwargs):
    with tf.Graph().as_default():
        out = text.string_filtering(tf.constant(value), *args, **kwargs)
        with tf.Session() as sess:
            return sess.run(out).decode("utf-8")


def test_filtering_keeps_only_the_set_in_order():
    assert _run("Hello, World!", include_charset=charsets.ALLCASES) == "HelloWorld"
    assert _run("Hello, World!", include_charset=charsets.ALLCASES_SYMBOLS) == "Hello,World!"


def test_lower_case_then_filter():
    assert _run("AbC-9", lower_case=True, include_charset=charsets.LOWERCASE) == "abc9"


def test_lower_case_is_unicode_aware():
    assert _run("ÉCOLE Ω", lower_case=True) == "école ω"


def test_multibyte_characters_kept_whole_when_in_the_set():
    chars = list(charsets.LOWERCASE) + ["中", "文", "é"]
    assert _run("中文ab é!字", include_charset=chars) == "中文abé"


def test_multibyte_characters_dropped_whole_when_not_in_the_set():
    assert _run("caf\u00e9中", include_charset=charsets.LOWERCASE) == "caf"


def test_invalid_utf8_bytes_are_dropped_not_raised():
    with tf.Graph().as_default():
        out = text.string_filtering(tf.constant(b"ab\xff\xfecd"), False, charsets.LOWERCASE)
        with tf.Session() as sess:
            assert sess.run(out) == b"abcd"


def test_empty_charset_gives_empty_text():
    assert _run("abc", include_charset=[]) == ""


def test_no_charset_keeps_everything():
    assert _run("a b!") == "a b!"


def test_non_character_entries_raise():
    with tf.Graph().as_default(), pytest.raises(ValueError, match="non-characters"):
        text.string_filtering(tf.constant("a"), include_charset=["ab", "c"])


def test_batched_input_raises():
    with tf.Graph().as_default(), pytest.raises(ValueError, match="scalar"):
        text.string_filtering(tf.constant(["a", "b"]), include_charset=["a"])


def test_length_and_truncation_count_characters_not_bytes():
    with tf.Graph().as_default():
        value = tf.constant("中文éa")
        out = [text.label_length(value), text.truncate_label(value, 2)]
        with tf.Session() as sess:
            length, cut = sess.run(out)
    assert length == 4 and cut.decode("utf-8") == "中文"
