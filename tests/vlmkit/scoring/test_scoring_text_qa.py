"""vlmkit.scoring.kinds.text_qa: normalised exact match / contains, individual n-gram BLEU, ROUGE-1/2/L, and the table."""

from __future__ import annotations

import math

import pandas as pd
import pytest

from vlmkit.scoring.kinds.text_qa import (
    bare_words,
    bleu,
    contains_bare_words,
    exact_match_bare_words,
    jieba_available,
    rouge,
    score_text_qa,
    tokenize,
)


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("The Answer.", "answer"),
        ("  3448 ", "3448"),
        ("Copenhagen!", "copenhagen"),
        ("北京 。", "北京"),
        ("中国的首都是 北京", "中国的首都是北京"),
        ("ＡＢＣ１２３", "abc123"),  # NFKC folds full-width forms
        ("an apple, a pear", "apple pear"),
    ],
)
def test_bare_words(text, expected):
    assert bare_words(text) == expected


def test_exact_match_and_contains():
    assert exact_match_bare_words("3323.", ["3323"]) == 1.0
    assert exact_match_bare_words("It is 3323", ["3323"]) == 0.0
    assert contains_bare_words("It is 3323", ["3323"]) == 1.0
    assert contains_bare_words("It is 332", ["3323"]) == 0.0
    assert exact_match_bare_words("Dakota", ["nikon", "dakota"]) == 1.0  # any reference
    assert contains_bare_words("anything", ["", "  "]) == 0.0  # an empty reference never counts


def test_tokenize_splits_cjk_per_character_and_words_elsewhere():
    assert tokenize("Hello, World! 北京2024年") == ["hello", "world", "北", "京", "2024", "年"]
    assert tokenize("don't stop") == ["don", "t", "stop"]


def test_bleu_individual_ngrams_by_hand():
    pred = "the cat sat on the mat".split()
    ref = "the cat is on the mat".split()
    got = bleu(pred, [ref])
    assert got[1] == pytest.approx(5 / 6) and got[2] == pytest.approx(3 / 5)
    assert got[3] == pytest.approx(1 / 4) and got[4] == 0.0
    short = bleu("the cat".split(), ["the cat sat".split()])
    assert short[1] == pytest.approx(math.exp(1 - 3 / 2))  # brevity penalty
    assert bleu([], [ref]) == {1: 0.0, 2: 0.0, 3: 0.0, 4: 0.0}
    clipped = bleu("the the the".split(), ["the cat".split()])
    assert clipped[1] == pytest.approx(1 / 3)  # counts are clipped by the reference


def test_rouge_by_hand():
    got = rouge("the cat sat on the mat".split(), "the cat is on the mat".split())
    assert got["rouge-1"] == pytest.approx((5 / 6, 5 / 6, 5 / 6))
    assert got["rouge-2"] == pytest.approx((3 / 5, 3 / 5, 3 / 5))
    assert got["rouge-l"] == pytest.approx((5 / 6, 5 / 6, 5 / 6))
    zh = rouge(tokenize("北京是首都"), tokenize("中国的首都是北京"))
    assert zh["rouge-1"][:2] == pytest.approx((5 / 8, 1.0))
    assert zh["rouge-l"][:2] == pytest.approx((2 / 8, 2 / 5))
    assert rouge([], ["a"])["rouge-1"] == (0.0, 0.0, 0.0)


def predictions(preds, answers, **extra) -> pd.DataFrame:
    return pd.DataFrame({"index": list(range(len(preds))), "prediction": preds, "answer": answers, **extra})


def test_score_text_qa_default_metrics():
    df = predictions(["3448", "The answer is 1811.", "3323.", None], ["3448", "1811", "3323", "4519"])
    result = score_text_qa(df)
    assert result.primary == "exact_match" and result.scorer == "text_qa"
    assert result.metrics == {"exact_match": 50.0, "contains": 75.0}
    assert result.counts == {"total": 4, "scored": 4, "no_target": 0, "inference_errors": 1, "hits": 2}
    assert result.per_sample["exact_match"].tolist() == [1.0, 0.0, 1.0, 0.0]
    assert result.table.to_dict("records") == [{"split": "none", "exact_match": 50.0, "contains": 75.0}]


def test_rows_without_answer_are_not_scored():
    df = predictions(["a", "b", "c"], ["a", None, ["x", "c"]])
    result = score_text_qa(df, ["em"])
    assert result.metrics == {"exact_match": 100.0}
    assert result.counts["scored"] == 2 and result.counts["no_target"] == 1
    assert result.per_sample["index"].tolist() == [0, 2]
    assert any("no reference answer" in n and "index 1" in n for n in result.notes)


def test_nothing_to_score_gives_nan_and_a_note():
    result = score_text_qa(predictions(["a"], [None]))
    assert math.isnan(result.primary_value) and result.counts["scored"] == 0
    assert any("nothing scored" in n for n in result.notes)


def test_bleu_rouge_on_request_with_splits():
    df = predictions(
        ["the cat sat on the mat", "北京是首都"], ["the cat is on the mat", "中国的首都是北京"], split=["en", "zh"]
    )
    result = score_text_qa(df, ["em", "bleu", "rouge"], segmenter="char")
    assert result.metrics["bleu-1"] == pytest.approx((5 / 6 + 1.0 * math.exp(1 - 8 / 5)) / 2 * 100)  # zh: all 5 characters match, BP for 5 vs 8
    assert result.metrics["rouge-l-r"] == pytest.approx((5 / 6 + 2 / 8) / 2 * 100)
    assert {"bleu-4", "rouge-1-p", "rouge-2-f", "rouge-l-f"} <= set(result.metrics)
    assert result.table["split"].tolist() == ["en", "zh"]
    assert result.table.loc[1, "rouge-1-p"] == pytest.approx(100.0)
    assert any("one token per CJK character" in n for n in result.notes)


def test_bad_options():
    df = predictions(["a"], ["a"])
    with pytest.raises(ValueError, match="unknown metric"):
        score_text_qa(df, ["meteor"])
    with pytest.raises(ValueError, match="unknown segmenter"):
        score_text_qa(df, ["bleu"], segmenter="spaces")
    if not jieba_available():
        with pytest.raises(ValueError, match="jieba is not installed"):
            score_text_qa(df, ["rouge"], segmenter="jieba")
    with pytest.raises(ValueError, match="no `answer` column"):
        score_text_qa(df.drop(columns="answer"))


def test_the_honest_names_say_how_the_matches_differ():
    """text_qa's exact match compares bare words; VQA's `exact` ignores case only; MathVista's text comparison
    (casefold_trim) keeps the punctuation inside an answer. Each pair worked out by hand from the docstrings."""
    from vlmkit.scoring.common.math_answers import casefold_trim
    from vlmkit.scoring.kinds.vqa import exact_match_ignoring_case

    for prediction, reference in (("Paris.", "paris"), ("The cat", "cat"), ("a dog!", "Dog")):
        assert exact_match_bare_words(prediction, [reference]) == 1.0
        assert exact_match_ignoring_case(prediction, [reference]) == 0.0
    assert exact_match_ignoring_case(" PARIS ", ["paris"]) == exact_match_bare_words(" PARIS ", ["paris"]) == 1.0
    assert casefold_trim('"3.5 cm."') == "3.5 cm" and bare_words('"3.5 cm."') == "3 5 cm"
    assert casefold_trim("The cat") == "the cat" and bare_words("The cat") == "cat"
