"""The custom-QA kind, second round (issue 31): the best reference is chosen by F1 even against a higher recall,
metrics asked together keep each other's figures, the primary metric follows `exact_match` wherever it is asked,
numeric reference cells, failed calls and the table's split order, the one-line errors and the empty result (values
worked by hand)."""

from __future__ import annotations

import math

import pandas as pd
import pytest

from vlmkit.scoring.kinds.text_qa import references, score_text_qa
from vlmkit.scoring.scales import PERCENT, Scale
from vlmkit.scoring.common.text_norm import VLMEVALKIT_FAIL_MARKER

BLEU = [f"bleu-{n}" for n in (1, 2, 3, 4)]
ROUGE = [f"rouge-{k}-{m}" for k in ("1", "2", "l") for m in ("r", "p", "f")]


def test_a_higher_recall_does_not_beat_a_better_f1():
    # prediction a b c d; against "a": r 1, p 1/4, F 0.4; against "a b c d e": r 4/5, p 1, F 8/9 -> the second
    df = pd.DataFrame({"index": [0], "prediction": ["a b c d"], "answer": [["a", "a b c d e"]]})
    row = score_text_qa(df, ("rouge",)).per_sample.iloc[0]
    assert (row["rouge-1-r"], row["rouge-1-p"], row["rouge-1-f"]) == pytest.approx((0.8, 1.0, 8 / 9))
    # bigrams: "a" has none; "a b c d e" has 4, the prediction 3, all shared -> r 3/4, p 1, F 6/7
    assert (row["rouge-2-r"], row["rouge-2-p"], row["rouge-2-f"]) == pytest.approx((0.75, 1.0, 6 / 7))
    assert (row["rouge-l-r"], row["rouge-l-p"], row["rouge-l-f"]) == pytest.approx((0.8, 1.0, 8 / 9))


@pytest.mark.parametrize(
    ("metrics", "names", "primary"),
    [
        (("em", "bleu"), ["exact_match", *BLEU], "exact_match"),
        (("contains", "em"), ["contains", "exact_match"], "exact_match"),
        (("bleu",), BLEU, "bleu-1"),
        (("rouge", "contains"), [*ROUGE, "contains"], "rouge-1-r"),
        (("contains", "bleu", "rouge"), ["contains", *BLEU, *ROUGE], "contains"),
    ],
)
def test_metrics_asked_together_and_the_primary(metrics, names, primary):
    df = pd.DataFrame({"index": [0], "prediction": ["the cat sat on the mat"], "answer": ["the cat sat on the mat"]})
    result = score_text_qa(df, metrics)
    assert list(result.metrics) == names
    assert result.primary == primary
    assert result.also == tuple(n for n in names if n != primary)
    assert result.per_sample.columns.tolist() == ["index", *names]
    assert all(result.metrics[name] == pytest.approx(100.0) for name in names)  # an identical reply: 100 on each


def test_hits_count_exact_matches_only():
    df = pd.DataFrame({"index": [0, 1, 2], "prediction": ["Paris", "paris!", "Lyon"], "answer": ["paris"] * 3})
    assert score_text_qa(df, ("bleu",)).counts == {"total": 3, "scored": 3, "no_target": 0, "inference_errors": 0,
                                                   "hits": 0}
    assert score_text_qa(df).counts["hits"] == 2


@pytest.mark.parametrize(("cell", "refs"), [(42, ["42"]), (3.0, ["3"]), (2.5, ["2.5"]), (float("nan"), [])])
def test_numeric_reference_cells(cell, refs):
    assert references(cell) == refs


def test_an_integer_answer_column_is_scored():
    df = pd.DataFrame({"index": [0, 1], "prediction": ["1999", "seven"], "answer": [1999, 7]})
    result = score_text_qa(df)
    assert result.per_sample["exact_match"].tolist() == [1.0, 0.0]
    assert result.counts["scored"] == 2 and result.metrics["exact_match"] == pytest.approx(50.0)


def test_failed_calls_score_zero_and_are_counted():
    df = pd.DataFrame({
        "index": [0, 1, 2],
        "prediction": [None, f"{VLMEVALKIT_FAIL_MARKER}: API", "API"],
        "answer": ["API", "API", "API"],
    })
    result = score_text_qa(df)
    # the marker's text holds the reference, but a failed call is never read as an answer
    assert result.per_sample["contains"].tolist() == [0.0, 0.0, 1.0]
    assert result.counts["inference_errors"] == 2 and result.counts["scored"] == 3
    assert result.metrics["contains"] == pytest.approx(100 / 3)


def test_the_split_table_is_sorted_by_split():
    df = pd.DataFrame({
        "index": [0, 1, 2, 3],
        "prediction": ["a", "b", "a", "x"],
        "answer": ["a", "a", "a", "a"],
        "split": ["test", "val", "dev", "test"],
    })
    table = score_text_qa(df, ("em",)).table
    assert table["split"].tolist() == ["dev", "test", "val"]
    assert table["exact_match"].tolist() == pytest.approx([100.0, 50.0, 0.0])


def test_one_line_errors():
    df = pd.DataFrame({"index": [0], "prediction": ["a"], "answer": ["a"]})
    with pytest.raises(ValueError, match=r"^QA scoring: unknown metric\(s\) \['bogus'\]; choose from em, contains, "
                                         r"bleu, rouge$"):
        score_text_qa(df, ("em", "bogus"))
    with pytest.raises(ValueError, match=r"^QA scoring: unknown metric\(s\) \(none given\); choose from em, contains, "
                                         r"bleu, rouge$"):
        score_text_qa(df, ())
    with pytest.raises(ValueError, match=r"^QA scoring: the predictions table has no `answer` column"):
        score_text_qa(df.drop(columns="answer"))


def test_the_segmenter_is_read_only_for_bleu_and_rouge():
    df = pd.DataFrame({"index": [0], "prediction": ["北京 大学"], "answer": ["北京大学"]})
    plain = score_text_qa(df, segmenter="no-such-segmenter")  # exact match and contains never tokenise
    assert plain.notes == [] and plain.metrics["exact_match"] == pytest.approx(100.0)
    tokens = score_text_qa(df, ("bleu",), segmenter="char")
    assert tokens.notes == ["BLEU/ROUGE tokens: one token per CJK character (jieba not used); BLEU-n is the "
                            "individual n-gram score, as EvalScope reports it"]
    # one token per character: 北 京 大 学 against itself -> every n-gram order matches
    assert [tokens.metrics[name] for name in BLEU] == pytest.approx([100.0] * 4)


def test_a_table_without_any_reference_scores_nothing():
    df = pd.DataFrame({"index": [0, 1], "prediction": ["a", "b"], "answer": [None, "  "]})
    result = score_text_qa(df, ("em", "contains"))
    assert result.scorer == "text_qa" and result.primary == "exact_match"
    assert all(math.isnan(result.metrics[name]) for name in ("exact_match", "contains"))
    assert list(result.metrics) == ["exact_match", "contains"]
    assert result.per_sample.columns.tolist() == ["index", "exact_match", "contains"] and result.per_sample.empty
    assert result.table is None and result.table_suffix == "acc" and result.scale == Scale(PERCENT)
    assert result.counts == {"total": 2, "scored": 0, "no_target": 2, "inference_errors": 0}
    assert result.notes == ["2 row(s) have no reference answer and are not scored: index 0, 1",
                            "no row has a reference answer: nothing scored"]


def test_a_scored_table_states_its_scale_and_suffix():
    df = pd.DataFrame({"index": [0], "prediction": ["a"], "answer": ["a"]})
    result = score_text_qa(df)
    assert result.scorer == "text_qa" and result.table_suffix == "acc" and result.scale == Scale(PERCENT)
