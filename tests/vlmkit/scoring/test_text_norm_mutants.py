"""vlmkit.scoring.common.text_norm against second implementations written in this file from the rules' own texts:
the official VQA evaluation's processPunctuation (GT-Vision-Lab, quirks included: the mistyped look-behind and
`re.UNICODE` passed as the count, so at most 32 periods go), VLMEvalKit's copy (vlmeval/smp/misc.py at e8e78f05,
look-behind right), and _process_digit_article with a hand-written part of its contraction map; plus hand-worked
cells and answer lists (issue 31, mutation testing)."""

from __future__ import annotations

import random
import re

import pytest

from vlmkit.scoring.common.text_norm import (
    VLMEVALKIT_FAIL_MARKER,
    cell_text,
    parse_answer_list,
    process_digit_article,
    process_punctuation,
    vlmevalkit_punctuation,
)

# the marks of both rules, in their order (the period is handled apart)
MARKS = [";", "/", "[", "]", '"', "{", "}", "(", ")", "=", "+", "\\", "_", "-", ">", "<", "@", "`", ",", "?", "!"]


def official_punctuation(in_text: str, *, vlmevalkit: bool = False) -> str:
    """processPunctuation as written: each mark deleted when `p + ' '` or `' ' + p` is in the *input* or the input
    has a digit,digit comma, else replaced by a space; then the period pattern, count re.UNICODE (32)."""
    out_text = in_text
    comma_strip = re.compile(r"(\d)(,)(\d)")
    period_strip = re.compile(r"(?<!\d)\.(?!\d)") if vlmevalkit else re.compile(r"(?!<=\d)(\.)(?!\d)")
    for p in MARKS:
        if (p + " " in in_text or " " + p in in_text) or (re.search(comma_strip, in_text) is not None):
            out_text = out_text.replace(p, "")
        else:
            out_text = out_text.replace(p, " ")
    return period_strip.sub("", out_text, 32)


# a part of the official contraction map (keys as reachable after lower-casing), written out by hand
CONTRACTIONS = {
    "aint": "ain't", "arent": "aren't", "cant": "can't", "dont": "don't", "isnt": "isn't", "maam": "ma'am",
    "oclock": "o'clock", "twas": "'twas", "wont": "won't", "yall": "y'all", "yall'll": "y'all'll",
    "y'allll": "y'all'll", "yall'd've": "y'all'd've", "y'alld've": "y'all'd've", "y'all'dve": "y'all'd've",
    "hed've": "he'd've", "he'dve": "he'd've", "ow's'at": "'ow's'at", "'ows'at": "'ow's'at", "'ow'sat": "'ow's'at",
    "somebody'd": "somebodyd", "somebodyd've": "somebody'd've", "couldnt've": "couldn't've",
    "couldn'tve": "couldn't've", "youve": "you've", "whyre": "why're",
}  # fmt: skip
NUMBERS = {"none": "0", "zero": "0", "one": "1", "two": "2", "three": "3", "four": "4", "five": "5", "six": "6",
           "seven": "7", "eight": "8", "nine": "9", "ten": "10"}  # fmt: skip


def official_digit_article(in_text: str) -> str:
    """_process_digit_article as written: lower, split, number words, drop articles, then contractions."""
    out = []
    for word in in_text.lower().split():
        word = NUMBERS.get(word, word)
        if word not in ("a", "an", "the"):
            out.append(word)
    return " ".join(CONTRACTIONS.get(w, w) for w in out)


@pytest.mark.parametrize("mark", MARKS)
def test_each_mark_is_spaced_alone_and_deleted_beside_a_space(mark: str) -> None:
    for rule in (process_punctuation, vlmevalkit_punctuation):
        assert rule(f"x{mark}y") == "x y"
        assert rule(f"x {mark}y") == "x y"  # touches a space before it
        assert rule(f"x{mark} y") == "x y"  # touches a space after it
        assert rule(f"1,5 x{mark}y") == "15 xy"  # a digit,digit comma anywhere deletes every mark
        assert rule(f"{mark}{mark}") == "  "


def test_marks_outside_the_list_stay() -> None:
    for rule in (process_punctuation, vlmevalkit_punctuation):
        assert rule("it's #1: 50% & ~ok* 'q' $|") == "it's #1: 50% & ~ok* 'q' $|"


def test_a_mark_is_judged_on_the_input_not_on_what_earlier_marks_left() -> None:
    # `(` becomes a space first; `-` touched no space in the input, so it is spaced too (two spaces)
    assert process_punctuation("a(-b") == "a  b"
    # a mark touching a space only in the input is deleted wherever it is
    assert process_punctuation("a- b-c") == "a bc"


def test_the_official_period_rule_removes_periods_unless_a_digit_follows_at_most_32() -> None:
    assert process_punctuation("5.") == "5" and vlmevalkit_punctuation("5.") == "5."
    assert process_punctuation("3.5 a.b .7") == "3.5 ab .7" == vlmevalkit_punctuation("3.5 a.b .7")
    assert process_punctuation("x." * 40) == "x" * 32 + "x." * 8
    assert vlmevalkit_punctuation("x." * 40) == "x" * 32 + "x." * 8
    assert vlmevalkit_punctuation("1. 2.a") == "1. 2.a"


def test_punctuation_equals_the_rules_as_written_on_random_texts() -> None:
    rng = random.Random(31)
    alphabet = MARKS + [" ", " ", ".", ".", "1", "2", "a", "b", ",", "'", "#"]
    for _ in range(3000):
        text = "".join(rng.choice(alphabet) for _ in range(rng.randint(0, 14)))
        assert process_punctuation(text) == official_punctuation(text), text
        assert vlmevalkit_punctuation(text) == official_punctuation(text, vlmevalkit=True), text


@pytest.mark.parametrize("word, expected", sorted(CONTRACTIONS.items()))
def test_contractions_of_the_official_map(word: str, expected: str) -> None:
    assert process_digit_article(word) == expected
    assert process_digit_article(f"The {word.upper()} two") == f"{expected} 2"


def test_words_that_are_no_contraction_or_number_stay() -> None:
    # `im`, `ive` are keys only with a capital in the official map, unreachable after lower-casing
    for word in ("im", "ive", "let's", "she's", "don't", "eleven", "nothing", "'", "''"):
        assert process_digit_article(word) == word


def test_digit_article_equals_the_rule_as_written_on_random_word_lists() -> None:
    rng = random.Random(7)
    vocabulary = [*CONTRACTIONS, *NUMBERS, "a", "an", "the", "An", "THE", "cat", "Two", "NONE", "1", "x"]
    for _ in range(500):
        text = (" " * rng.randint(0, 2)).join(rng.choice(vocabulary) + rng.choice([" ", "\t", "\n ", "  "])
                                              for _ in range(rng.randint(0, 8)))
        assert process_digit_article(text) == official_digit_article(text), text


def test_articles_numbers_and_spacing() -> None:
    assert process_digit_article("  A  an\tTHE the\n") == ""
    assert process_digit_article("None zero TEN eleven Three") == "0 0 10 eleven 3"
    assert process_digit_article("theater another at") == "theater another at"  # whole words only


def test_cell_text() -> None:
    assert cell_text(None) is None and cell_text(float("nan")) is None
    assert cell_text(3.0) == "3" and cell_text(-2.0) == "-2" and cell_text(3.5) == "3.5"
    assert cell_text(7) == "7" and cell_text("3.0") == "3.0" and cell_text("") == ""
    assert cell_text(True) == "True"


def test_parse_answer_list_reads_lists_and_keeps_other_text() -> None:
    assert parse_answer_list(None) is None and parse_answer_list(float("nan")) is None
    assert parse_answer_list(["a", None, 2.0, 2.5]) == ["a", "2", "2.5"]
    assert parse_answer_list(("x", float("nan"))) == ["x"]
    assert parse_answer_list('["a", 1, null, 2.0]') == ["a", "1", "2"]  # JSON
    assert parse_answer_list(" ['a', \"b\", None] ") == ["a", "b"]  # a Python literal, spaces around
    assert parse_answer_list("[]") == []
    assert parse_answer_list("[a, b]") == ["[a, b]"]  # neither JSON nor a literal: the text itself
    assert parse_answer_list("[1, 2") == ["[1, 2"]
    assert parse_answer_list("1, 2]") == ["1, 2]"]
    assert parse_answer_list("[__import__('os')]") == ["[__import__('os')]"]  # never evaluated
    assert parse_answer_list("[1] [2]") == ["[1] [2]"]
    assert parse_answer_list("['a'] # a note") == ["['a'] # a note"]  # a literal, but the text ends otherwise
    assert parse_answer_list("['a'] + ['b']") == ["['a'] + ['b']"]
    assert parse_answer_list('{"a": [1]}') == ['{"a": [1]}']
    assert parse_answer_list("['unclosed]") == ["['unclosed]"]
    assert parse_answer_list(4.0) == ["4"] and parse_answer_list(" cat ") == [" cat "]
    assert parse_answer_list("[" * 5000 + "]" * 5000) == ["[" * 5000 + "]" * 5000]  # too deep: text


def test_the_failure_marker_is_vlmevalkits_text() -> None:
    assert VLMEVALKIT_FAIL_MARKER == "Failed to obtain answer via API"
