"""VCR scoring: spaCy-like tokens, the best n-gram per masked span, exact match and Jaccard worked out by hand."""

from __future__ import annotations

import importlib.util

import pandas as pd
import pytest

from vlmkit.core.errors import ConfigError
from vlmkit.scoring.benchmarks.vcr import best_match, is_refusal, reply_text, score_vcr
from vlmkit.scoring.benchmarks.vcr_tokens import chinese_tokens, english_tokens, tokenize

REPLY = "It was founded in the United States. He moved to New York in 1990."


@pytest.mark.parametrize(
    ("text", "tokens"),
    [
        ("I don't know.", ["I", "do", "n't", "know", "."]),
        ("He said: \"can't\"", ["He", "said", ":", '"', "ca", "n't", '"']),
        ("Smith's car costs $5.50, 10km or 5%.",
         ["Smith", "'s", "car", "costs", "$", "5.50", ",", "10", "km", "or", "5", "%", "."]),
        ("The U.S. and USA. were", ["The", "U.S.", "and", "USA", ".", "were"]),
        ("e.g. Mr. Smith at 5pm", ["e.g.", "Mr.", "Smith", "at", "5", "pm"]),
        ('well-known "quotes" (here)', ["well", "-", "known", '"', "quotes", '"', "(", "here", ")"]),
        ("It's 1,000... The cat.The dog", ["It", "'s", "1,000", "...", "The", "cat", ".", "The", "dog"]),
        ("see http://x.com/a-b.", ["see", "http://x.com/a-b", "."]),
        ("a  b\nc ", ["a", " ", "b", "\n", "c"]),
        (" lead", [" ", "lead"]),
        ("well wed its", ["well", "we", "d", "its"]),
    ],
)  # fmt: skip
def test_english_tokens_follow_spacy_rules(text, tokens):
    assert english_tokens(text) == tokens


def test_chinese_tokens_are_characters_with_spacy_white_space():
    tokens = ["中", "华", "人", "民", " ", "共", "和", "国", "\n", "G", "D", "P"]
    assert chinese_tokens("中华 人民  共和国\nGDP") == tokens
    assert tokenize("北京", "zh") == ["北", "京"]


def test_best_ngram_exact_and_partial():
    exact = best_match("the United States", REPLY, "en")
    assert (exact.best, exact.exact_match, exact.jaccard) == ("the United States", 1.0, 1.0)
    # 3-grams sharing a token with {New, York, City}: "moved to New" 0.24, "to New York" 16/24, "New York in" 20/24
    # ("New York " and the "i" of "in"/"City"), "York in 1990" 12/25: the best is "New York in".
    partial = best_match("New York City", REPLY, "en")
    assert partial.best == "New York in"
    assert partial.similarity == pytest.approx(20 / 24)
    assert partial.exact_match == 0.0
    assert partial.jaccard == pytest.approx(2 / 4)  # {New, York} of {New, York, in, City}


def test_chinese_ties_go_to_the_first_ngram_and_text_joins_without_spaces():
    # 4-grams of 他在北京大字读书 sharing a character with 北京大学: 在北京大 and 北京大字 both ratio 6/8;
    # the first one wins.
    m = best_match("北京大学", "他在北京大字读书", "zh")
    assert (m.best, m.similarity, m.exact_match) == ("在北京大", 0.75, 0.0)
    assert m.jaccard == pytest.approx(3 / 5)
    assert best_match("人民共和国", "中华人民共和国成立于1949年", "zh").exact_match == 1.0


def test_no_shared_token_and_empty_span_score_zero():
    assert best_match("zebra", "a cat", "en").jaccard == 0.0
    assert best_match("", "a cat", "en").exact_match == 0.0
    assert best_match("a long span here", "a cat", "en").best == ""  # reply shorter than the span


def test_refusals_and_the_assistant_marker():
    for text in ("I can't read it", "I cannot say", "SORRY", "我无法识别", "抱歉"):
        assert is_refusal(text)
    assert not is_refusal("I can read it: the word is cannon")
    assert reply_text("User: restore\nAssistant: one\nAssistant: the fox") == "the fox"
    assert reply_text("<think>Assistant: no</think>the fox") == "the fox"


def test_score_vcr_means_over_spans():
    df = pd.DataFrame({
        "index": [0, 1, 2, 3],
        "prediction": [REPLY, "I cannot see the text.", None, "User: restore\nAssistant: the quick brown fox"],
        "answer": ["['the United States', 'New York City']", "['hello world']", "['1,000 people']", '["quick brown"]'],
    })  # fmt: skip
    result = score_vcr(df, language="en")
    # spans: row 0 exact [1, 0] jaccard [1, 1/2]; row 1 refusal [0]; row 2 no prediction [0]; row 3 [1]
    assert result.metrics == {"Exact_Match": pytest.approx(2 / 5), "Jaccard": pytest.approx(2.5 / 5)}
    assert result.primary == "Exact_Match" and result.scale.kind == "fraction"
    assert result.counts["spans"] == 5 and result.counts["refusals"] == 1 and result.counts["inference_errors"] == 1
    rows = result.per_sample.set_index("index")
    assert rows.loc[0, "score"] == pytest.approx(0.5) and rows.loc[0, "jaccard"] == pytest.approx(0.75)
    assert rows.loc[0, "matched"] == ["the United States", "New York in"]
    assert list(rows["method"]) == ["match", "refusal", "inference_error", "match"]
    assert any("no prediction" in note for note in result.notes)


def test_score_vcr_refuses_unknown_language_and_tables_without_spans():
    df = pd.DataFrame({"index": [0], "prediction": ["x"], "answer": ["[]"]})
    with pytest.raises(ValueError, match="language"):
        score_vcr(df, language="fr")
    with pytest.raises(ValueError, match="no row has a masked text"):
        score_vcr(df, language="en")


@pytest.mark.skipif(importlib.util.find_spec("spacy") is not None, reason="spaCy is installed here")
def test_spacy_backend_without_spacy_is_one_clear_line():
    df = pd.DataFrame({"index": [0], "prediction": ["x"], "answer": ["['x']"]})
    with pytest.raises(ConfigError, match="pip install spacy") as err:
        score_vcr(df, language="en", tokenizer_backend="spacy")
    assert "\n" not in str(err.value)
