"""The custom-QA kind: each metric asked alone gives only its own figures, BLEU's brevity penalty takes the closest
reference length, ROUGE of a one-token reference has no bigrams, and reference cells are read as the docs say (values
worked by hand or properties: identical texts score 1, disjoint ones 0)."""

from __future__ import annotations

import math

import pandas as pd
import pytest

from vlmkit.scoring.kinds.text_qa import (
    SEGMENTERS,
    bleu,
    effective_segmenter,
    jieba_available,
    references,
    rouge,
    score_text_qa,
)

BLEU = [f"bleu-{n}" for n in (1, 2, 3, 4)]
ROUGE = [f"rouge-{k}-{m}" for k in ("1", "2", "l") for m in ("r", "p", "f")]


def _frame(pred: str, answer: object) -> pd.DataFrame:
    return pd.DataFrame({"index": [0, 1], "prediction": [pred, "zzz yyy xxx www"], "answer": [answer, answer]})


@pytest.mark.parametrize(
    ("metrics", "names"),
    [(("bleu",), BLEU), (("rouge",), ROUGE), (("em",), ["exact_match"]), (("contains",), ["contains"]),
     (("contains", "rouge"), ["contains", *ROUGE])],
)
def test_each_metric_alone_gives_its_own_figures(metrics, names):
    text = "the quick brown fox jumps over the lazy dog"
    result = score_text_qa(_frame(text, text), metrics)
    assert sorted(result.metrics) == sorted(names)
    row = result.per_sample.iloc[0]
    other = result.per_sample.iloc[1]
    for name in names:  # an identical reply scores 1 on every metric, a disjoint one 0
        assert row[name] == pytest.approx(1.0) and other[name] == pytest.approx(0.0), name


def test_the_brevity_penalty_takes_the_closest_reference_length():
    pred = ["a", "b", "c", "d", "e"]
    refs = [["a", "b"], ["a", "b", "c", "d", "e", "f"]]  # lengths 2 and 6: 6 is closer to 5
    assert bleu(pred, refs)[1] == pytest.approx(math.exp(1 - 6 / 5))
    assert bleu(pred, [["a", "b", "c", "d"], ["a", "b", "c", "d", "e", "f"]])[1] == pytest.approx(1.0)  # 4 is 1 off
    assert bleu(pred, [["a", "b", "c", "d", "e", "f"], ["a", "b", "c", "d"]])[1] == pytest.approx(1.0)  # ties: shorter
    short = bleu(["a"], [["a", "b"]])  # one token: no bigram at all, n > 1 score 0
    assert short[1] == pytest.approx(math.exp(1 - 2)) and short[2] == short[3] == short[4] == 0.0
    assert bleu([], [["a"]]) == {1: 0.0, 2: 0.0, 3: 0.0, 4: 0.0}


def test_rouge_of_a_one_token_reference_has_no_bigram_recall():
    scored = rouge(["a", "b"], ["a"])
    assert scored["rouge-2"] == (0.0, 0.0, 0.0)
    assert scored["rouge-1"] == pytest.approx((1.0, 0.5, 2 / 3))
    assert scored["rouge-l"] == pytest.approx((1.0, 0.5, 2 / 3))
    assert rouge(["x", "a", "y", "b"], ["a", "b", "c"])["rouge-l"] == pytest.approx((2 / 3, 0.5, 4 / 7))


def test_the_best_reference_is_the_one_with_the_best_f1():
    df = pd.DataFrame({"index": [0], "prediction": ["a b c d"], "answer": [["a b c d e f g h", "a b"]]})
    row = score_text_qa(df, ("rouge",)).per_sample.iloc[0]
    # against "a b c d e f g h": r 0.5, p 1, f 2/3; against "a b": r 1, p 0.5, f 2/3: equal F1, the higher recall wins
    assert (row["rouge-1-r"], row["rouge-1-p"]) == pytest.approx((1.0, 0.5))


@pytest.mark.parametrize(
    ("cell", "refs"),
    [("cat", ["cat"]), ("  ", []), (None, []), (["", "cat", "  ", "dog"], ["cat", "dog"]), (("a",), ["a"])],
)
def test_reference_cells(cell, refs):
    assert references(cell) == refs


def test_segmenters():
    assert effective_segmenter("char") == "char"
    assert effective_segmenter("auto") == ("jieba" if jieba_available() else "char")
    with pytest.raises(ValueError, match=r"^QA scoring: unknown segmenter 'AUTO'; choose one of auto, char, jieba$"):
        effective_segmenter("AUTO")
    assert SEGMENTERS == ("auto", "char", "jieba")
    if not jieba_available():
        with pytest.raises(ValueError, match=r"^QA scoring: segmenter 'jieba' asked for, but jieba is not installed"):
            effective_segmenter("jieba")
