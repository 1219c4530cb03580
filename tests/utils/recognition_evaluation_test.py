"""Tests for aster/utils/recognition_evaluation.py on hand-made cases."""

import pytest

from aster.utils import recognition_evaluation as re_eval


def test_filter_text_protocol36_lowercases_and_drops_symbols():
    assert re_eval.filter_text("Hello, World-2!", 36) == "helloworld2"


def test_filter_text_protocol62_keeps_case_drops_symbols():
    assert re_eval.filter_text("Hello, World-2!", 62) == "HelloWorld2"


def test_filter_text_protocol94_keeps_printable_drops_space_and_non_ascii():
    assert re_eval.filter_text("Héllo, W!", 94) == "Hllo,W!"


def test_filter_text_accepts_utf8_bytes():
    assert re_eval.filter_text("Café".encode(), 36) == "caf"


def test_filter_text_unknown_protocol_raises():
    with pytest.raises(ValueError, match="eval_config.protocol is 37"):
        re_eval.filter_text("a", 37)


def test_evaluation_unknown_protocol_raises():
    with pytest.raises(ValueError, match="expected one of"):
        re_eval.RecognitionEvaluation(protocol=10)


@pytest.mark.parametrize(
    "protocol,expected_correct",
    [(36, [True, True, True]), (62, [False, True, True]), (94, [False, False, True])],
)
def test_accuracy_per_protocol(protocol, expected_correct):
    gts = ["Hello", "don't", "a.b"]
    preds = ["HELLO", "dont", "a.b"]
    evaluation = re_eval.RecognitionEvaluation(protocol)
    evaluation.add_batch(preds, gts)
    assert [e.correct for e in evaluation.examples] == expected_correct
    result = evaluation.result()
    assert result["num_correct"] == sum(expected_correct)
    assert result["accuracy"] == pytest.approx(sum(expected_correct) / 3)
    assert result["protocol"] == protocol


def test_normalized_edit_distance_divides_by_longer_string():
    assert re_eval.normalized_edit_distance("abcd", "abxd") == pytest.approx(0.25)
    assert re_eval.normalized_edit_distance("ab", "abcdef") == pytest.approx(4 / 6)
    assert re_eval.normalized_edit_distance("abc", "") == pytest.approx(1.0)
    assert re_eval.normalized_edit_distance("", "") == 0.0


def test_one_minus_ned_averages_over_examples():
    result = re_eval.evaluate(["abxd", "hello", ""], ["abcd", "hello", "xy"], protocol=36)
    # NEDs: 0.25, 0, 1 -> 1 - mean = 1 - 1.25 / 3
    assert result["one_minus_ned"] == pytest.approx(1 - 1.25 / 3)
    assert result["accuracy"] == pytest.approx(1 / 3)


def test_ned_uses_filtered_strings():
    result = re_eval.evaluate(["HEL-LO"], ["hello"], protocol=36)
    assert result["one_minus_ned"] == pytest.approx(1.0)


def test_empty_groundtruth_counted_separately_without_division_by_zero():
    result = re_eval.evaluate(["abc", "x"], ["!!!", ""], protocol=36)
    assert result["num_examples"] == 2
    assert result["num_empty_groundtruth"] == 2
    assert result["num_scored"] == 0
    assert result["accuracy"] is None
    assert result["one_minus_ned"] is None
    assert result["lexicon_accuracy"] is None


def test_empty_groundtruth_left_out_of_the_ratios():
    result = re_eval.evaluate(["abc", "x"], ["abc", "--"], protocol=36)
    assert result["num_empty_groundtruth"] == 1
    assert result["accuracy"] == pytest.approx(1.0)


def test_duplicate_filenames_are_separate_examples():
    evaluation = re_eval.RecognitionEvaluation(36)
    evaluation.add("sale", "sale", filename="img_1.jpg")
    evaluation.add("pub", "bar", filename="img_1.jpg")
    evaluation.add("bar", "bar", filename="img_1.jpg")
    assert [e.index for e in evaluation.examples] == [0, 1, 2]
    result = evaluation.result()
    assert result["num_examples"] == 3
    assert result["accuracy"] == pytest.approx(2 / 3)


def test_nearest_lexicon_word_is_case_insensitive():
    assert re_eval.nearest_lexicon_word("HOTEL", "motel\tHotel\tcafe") == "Hotel"


def test_nearest_lexicon_word_tie_goes_to_first_in_lexicon():
    # "bat" is at distance 1 from both "cat" and "bag".
    assert re_eval.nearest_lexicon_word("bat", ["cat", "bag"]) == "cat"
    assert re_eval.nearest_lexicon_word("bat", ["bag", "cat"]) == "bag"


def test_nearest_lexicon_word_empty_lexicon_is_none():
    assert re_eval.nearest_lexicon_word("abc", "") is None
    assert re_eval.nearest_lexicon_word("abc", None) is None


def test_lexicon_accuracy_only_over_records_with_lexicons():
    evaluation = re_eval.RecognitionEvaluation(36)
    evaluation.add("hotei", "hotel", lexicon="hotel\tmotel\tpub")  # snapped to hotel: correct
    evaluation.add("xub", "pub", lexicon="hotel\tsub\tpub")  # tie sub/pub -> sub: wrong
    evaluation.add("bar", "bar")  # no lexicon
    result = evaluation.result()
    assert result["num_with_lexicon"] == 2
    assert result["lexicon_accuracy"] == pytest.approx(0.5)
    assert result["accuracy"] == pytest.approx(1 / 3)
    assert evaluation.examples[1].lexicon_prediction == "sub"


def test_add_batch_decodes_bytes_and_keeps_scores():
    evaluation = re_eval.RecognitionEvaluation(62)
    evaluation.add_batch([b"Ab"], [b"Ab"], filenames=[b"f.png"], scores=[-0.5])
    example = evaluation.examples[0]
    assert example.correct and example.filename == "f.png" and example.score == -0.5


def test_add_batch_length_mismatch_raises():
    with pytest.raises(ValueError, match="2 predictions but 1 ground truths"):
        re_eval.RecognitionEvaluation().add_batch(["a", "b"], ["a"])
