"""VCR scoring (vlmkit.scoring.benchmarks.vcr) against a second implementation of VLMEvalKit's `find_best_match`
(vlmeval/dataset/vcr.py at e8e78f05) written here, and the table-level counts, notes and VLMEvalKit's figure worked
by hand. Texts are lowercase words and single spaces, whose tokens are the words in either tokenizer."""

from __future__ import annotations

import importlib.util
import random
from difflib import SequenceMatcher

import pandas as pd
import pytest

from vlmkit.core.errors import ConfigError
from vlmkit.scoring.benchmarks.vcr import best_match, score_vcr

WORDS = ["the", "cat", "dog", "red", "a", "big", "sat", "on", "mat", "ran"]


def reference_best(span: str, reply: str) -> tuple[str, float, float]:
    """VLMEvalKit's find_best_match on whitespace tokens: (best n-gram text, exact match, jaccard)."""
    needle, hay = span.split(" "), reply.split(" ")
    grams = [tuple(hay[i : i + len(needle)]) for i in range(len(hay) - len(needle) + 1)]
    best_val, best_text, best_gram = 0.0, "", ()
    for gram in grams:
        if set(gram).isdisjoint(needle):
            continue
        text = " ".join(gram)
        value = SequenceMatcher(None, text, span).ratio()
        if value > best_val:
            best_val, best_text, best_gram = value, text, gram
    if not best_gram:
        return "", 0.0, 0.0
    union = set(best_gram) | set(needle)
    return best_text, float(list(best_gram) == needle), len(set(best_gram) & set(needle)) / len(union)


def test_best_match_agrees_with_a_second_implementation_on_random_texts():
    rng = random.Random(31)
    for _ in range(300):
        reply = " ".join(rng.choice(WORDS) for _ in range(rng.randint(1, 7)))
        span = " ".join(rng.choice(WORDS) for _ in range(rng.randint(1, 3)))
        got = best_match(span, reply, "en")
        assert (got.best, got.exact_match, got.jaccard) == pytest.approx(reference_best(span, reply)), (span, reply)


def test_a_reply_exactly_as_long_as_the_span_is_searched_to_its_last_ngram():
    # one n-gram only, the whole reply: the span itself
    whole = best_match("red cat", "red cat", "en")
    assert (whole.best, whole.similarity, whole.exact_match, whole.jaccard) == ("red cat", 1.0, 1.0, 1.0)
    # the last 2-gram `the cat` is the span; earlier ones share `the` only
    last = best_match("the cat", "the dog the cat", "en")
    assert (last.best, last.exact_match) == ("the cat", 1.0)


def frame(predictions: list[object], answers: list[str]) -> pd.DataFrame:
    return pd.DataFrame({"index": list(range(len(answers))), "prediction": predictions, "answer": answers})


def test_counts_scores_and_notes_of_a_table_worked_by_hand():
    df = frame(["the red cat sat", "Sorry, I see nothing", None, "a dog", "a big dog"],
               ["['red cat', 'big dog']", "['on mat']", "['the cat']", "[]", "['big dog']"])  # fmt: skip
    result = score_vcr(df, language="en")
    # spans: row 0 `red cat` exact (1, 1); `big dog` shares no token: (0, 0); row 1 a refusal (0, 0); row 2 no
    # prediction (0, 0); row 3 no span; row 4 `big dog` exact (1, 1): 5 spans, 2 exact, Jaccard 2 of 5
    assert result.metrics == {"Exact_Match": pytest.approx(0.4), "Jaccard": pytest.approx(0.4)}
    assert result.counts == {"total": 5, "spans": 5, "exact_spans": 2, "refusals": 1, "inference_errors": 1,
                             "rows_without_spans": 1, "scored": 5}  # fmt: skip
    rows = result.per_sample
    assert rows["spans"].tolist() == [2, 1, 1, 0, 1]
    assert rows["score"].tolist() == [0.5, 0.0, 0.0, 0.0, 1.0]
    assert rows["jaccard"].tolist() == [0.5, 0.0, 0.0, 0.0, 1.0]
    assert rows["method"].tolist() == ["match", "refusal", "inference_error", "match", "match"]
    assert rows["matched"].tolist() == [["red cat", ""], [""], [""], [], ["big dog"]]
    assert result.notes == [
        "1 row(s) have no masked text in `answer` (they add no span): index 3",
        "1 row(s) have no prediction (inference failed); their spans score 0 (VLMEvalKit stops on such a row)",
    ]
    assert result.scorer == "vcr" and result.table_suffix == "score"
    assert result.table.to_dict("records") == [result.metrics]


def test_a_clean_table_has_no_notes_and_an_empty_one_is_refused():
    result = score_vcr(frame(["the cat"], ["['the cat']"]), language="en")
    assert result.notes == []
    assert result.vlmevalkit.notes == [
        "the reply as VLMEvalKit reads it: reasoning included; tokens as vlmkit's (spaCy's rules)"]
    with pytest.raises(ValueError, match="VCR: the predictions table has no rows"):
        score_vcr(frame([], []), language="en")
    with pytest.raises(ValueError, match="answer"):
        score_vcr(pd.DataFrame({"index": [0], "prediction": ["x"]}), language="en")


def test_vlmevalkits_figure_rescored_where_its_reading_differs():
    df = frame([
        "<think>sorry</think>the dog",  # vlmkit: `the dog` for `the cat`: exact 0, Jaccard 1/3; VLMEvalKit: refusal
        "<think>hmm</think>red cat",  # vlmkit `red cat` (1, 1); VLMEvalKit `<think>hmm</think>red cat`: 2-grams
        None,  # a failed call: (0, 0) on both sides
        "<think>x</think>a dog",  # no span: nothing to compare
    ], ["['the cat']", "['red cat']", "['on mat', 'big dog']", "[]"])  # fmt: skip
    result = score_vcr(df, language="en")
    assert result.metrics == {"Exact_Match": pytest.approx(1 / 4), "Jaccard": pytest.approx((1 / 3 + 1) / 4)}
    figure = result.vlmevalkit
    # VLMEvalKit's tokens for row 1 end in `red cat`: the same (1, 1); row 0 scores (0, 0) on its refusal
    assert figure.metrics == {"Exact_Match": pytest.approx(1 / 4), "Jaccard": pytest.approx(1 / 4)}
    # row 0 differs in Jaccard only (its exact match is 0 on both sides): it is listed
    assert [(d.index, d.vlmkit, d.vlmevalkit, d.vlmkit_score, d.vlmevalkit_score) for d in figure.differing] == [
        (0, ["the dog"], [""], 0.0, 0.0)]
    assert figure.primary == "Exact_Match"


def test_vlmevalkits_figure_lists_a_row_whose_exact_match_differs():
    df = frame(["<think>I cannot</think>red cat", "big dog"], ["['red cat']", "['big dog']"])
    figure = score_vcr(df, language="en").vlmevalkit
    assert figure.metrics == {"Exact_Match": 0.5, "Jaccard": 0.5}
    assert [(d.index, d.vlmkit, d.vlmevalkit, d.vlmkit_score, d.vlmevalkit_score) for d in figure.differing] == [
        (0, ["red cat"], [""], 1.0, 0.0)]


def test_vlmevalkits_figure_counts_a_failed_call_as_zero_spans():
    figure = score_vcr(frame([None, "big dog"], ["['red cat', 'on mat']", "['big dog']"]), language="en").vlmevalkit
    assert figure.metrics == {"Exact_Match": pytest.approx(1 / 3), "Jaccard": pytest.approx(1 / 3)}
    assert figure.differing == []


def test_vlmevalkits_figure_is_not_computed_where_its_scorer_stops():
    result = score_vcr(frame(["", "N/A", "red cat"], ["['red cat']"] * 3), language="en")
    assert result.vlmevalkit is None
    assert result.notes[-1] == ("VLMEvalKit's figure not computed: 2 reply(ies) come back from its xlsx as NaN or a "
                                "number (empty, 'None', 'N/A'...) and its scorer stops on them; index 0, 1")


def test_a_span_that_cannot_be_matched_reports_nothing_matched():
    # a reply shorter than the span, a span sharing no token, an empty span: (span, "", 0, 0, 0)
    for span, reply in [("red cat sat", "red cat"), ("big dog", "the cat"), ("", "the cat")]:
        got = best_match(span, reply, "en")
        assert (got.span, got.best, got.similarity, got.exact_match, got.jaccard) == (span, "", 0.0, 0.0, 0.0)
    one = best_match("cat", "the cat", "en")  # a one-token span
    assert (one.span, one.best, one.similarity, one.exact_match, one.jaccard) == ("cat", "cat", 1.0, 1.0, 1.0)


def test_chinese_ngrams_join_without_spaces_in_the_table_and_in_vlmevalkits_figure():
    df = frame(["<think>北京大学</think>北京大字", "他在北京大字读书"], ['["北京大学"]', '["北京大学"]'])
    result = score_vcr(df, language="zh")
    # vlmkit: 北京大字 (the only 4-gram) and 在北京大 (the first of two at 6/8): exact 0, Jaccard 3 of 5 each
    assert result.per_sample["matched"].tolist() == [["北京大字"], ["在北京大"]]
    assert result.metrics == {"Exact_Match": 0.0, "Jaccard": pytest.approx(0.6)}
    # VLMEvalKit reads the reasoning too: 北京大学 is there, row 0 scores (1, 1)
    figure = result.vlmevalkit
    assert figure.metrics == {"Exact_Match": pytest.approx(0.5), "Jaccard": pytest.approx(0.8)}
    assert [(d.index, d.vlmkit, d.vlmevalkit, d.vlmkit_score, d.vlmevalkit_score) for d in figure.differing] == [
        (0, ["北京大字"], ["北京大学"], 0.0, 1.0)]


def test_vlmevalkits_figure_lists_a_row_it_scores_higher():
    # the span is only in the reasoning: vlmkit reads `red dog` (0, 1/3), VLMEvalKit finds `red cat` (1, 1)
    figure = score_vcr(frame(["<think>\nred cat\n</think>\nred dog"], ["['red cat']"]), language="en").vlmevalkit
    assert figure.metrics == {"Exact_Match": 1.0, "Jaccard": 1.0}
    assert [(d.vlmkit, d.vlmevalkit, d.vlmkit_score, d.vlmevalkit_score) for d in figure.differing] == [
        (["red dog"], ["red cat"], 0.0, 1.0)]


def test_the_one_line_errors_name_vcr():
    with pytest.raises(ValueError) as err:
        score_vcr(frame(["x"], ["['x']"]), language="fr")
    assert str(err.value) == "VCR: language 'fr'; choose one of en, zh"
    with pytest.raises(ValueError, match=r"^VCR: the predictions table has no rows$"):
        score_vcr(frame([], []), language="en")
    with pytest.raises(ValueError, match=r"^VCR: the predictions table has no `answer` column"):
        score_vcr(pd.DataFrame({"index": [0], "prediction": ["x"]}), language="en")
    with pytest.raises(ValueError, match=r"^VCR: no row has a masked text in `answer`; nothing to score$"):
        score_vcr(frame(["x"], ["[]"]), language="en")


@pytest.mark.skipif(importlib.util.find_spec("spacy") is not None, reason="spaCy is installed here")
def test_best_match_with_the_spacy_backend_needs_spacy():
    with pytest.raises(ConfigError, match="pip install spacy"):
        best_match("the cat", "the cat", "en", tokenizer_backend="spacy")
