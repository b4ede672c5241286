"""MCQ extraction and (circular) accuracy on small hand-computed tables."""

from __future__ import annotations

import json
import math

import pandas as pd
import pytest

from vlmkit.scoring.mcq import extract_choice, score_mcq, vlmevalkit_choice

OPTS = {"A": "cat", "B": "dog", "C": "bird", "D": "fish"}


@pytest.mark.parametrize(
    "prediction, expected, method",
    [
        # 1. exact
        ("B", "B", "exact"),
        ("  (C) ", "C", "exact"),
        ("D.", "D", "exact"),
        ("[A]", "A", "exact"),
        ("b", "B", "exact"),
        ("B) dog", "B", "exact"),
        ("C. Bird.", "C", "exact"),
        # 2. marker: English, Chinese, the LAST one wins, not followed by a letter does not count
        ("The answer is C.", "C", "marker"),
        ("Answer: (A) cat", "A", "marker"),
        ("Final answer: **D**", "D", "marker"),
        ("answer is: option B", "B", "marker"),
        ("答案是B", "B", "marker"),
        ("答案：D", "D", "marker"),
        ("答案为 C 选项", "C", "marker"),
        ("First I thought the answer is A. Re-checking the image, the answer is B.", "B", "marker"),
        ("The answer is A, not B", "A", "marker"),
        ("Answer: E is not an option here, so Answer: C", "C", "marker"),
        # 3. cue (VLMEvalKit option inference)
        ("I think it is B because", "B", "cue"),
        ("B) cat", "B", "cue"),  # letter with the text of another option: not exact, the letter still stands
        ("So we pick (C)!", "C", "cue"),
        # 4. option text (unique, short enough)
        ("the bird", "C", "option_text"),
        ("It is a fish.", "D", "option_text"),
    ],
)
def test_extraction_methods(prediction: str, expected: str, method: str) -> None:
    assert extract_choice(prediction, OPTS) == (expected, method)


@pytest.mark.parametrize(
    "prediction",
    [
        "not A but B",  # two letters, no marker
        "The answer is not A but B",  # the marker is followed by a word, not a letter
        "Apple Banana Cherry",  # letters inside words never count
        "A B C D",  # every letter
        "a cat and a dog",  # two option texts
        "I have no idea what this image shows, sorry.",
        "",
        "   ",
        "Cannot determine the answer",  # VLMEvalKit refusal phrase
        "answer: e",  # lower-case letter after a marker is not an option letter
        "A is a letter that appears early in this long sentence about nothing",  # letter not near the end
    ],
)
def test_unparsed(prediction: str) -> None:
    assert extract_choice(prediction, OPTS) == (None, "unparsed")


def test_long_prediction_is_not_matched_by_option_text() -> None:
    long = "the " + "very " * 20 + "bird"  # longer than twice the total option text (15 chars)
    assert extract_choice(long, OPTS) == (None, "unparsed")


def test_missing_letters_do_not_count() -> None:
    opts = {"A": "red", "B": "green", "C": float("nan"), "D": "blue", "E": ""}
    assert extract_choice("C", opts) == (None, "unparsed")
    assert extract_choice("The answer is C", opts) == (None, "unparsed")
    assert extract_choice("E", opts) == (None, "unparsed")  # empty option text
    assert extract_choice("D", opts) == ("D", "exact")
    # "Answer: C" is skipped because C is absent; the earlier valid marker is used
    assert extract_choice("Answer: D. Hmm, or Answer: C", opts) == ("D", "marker")


def test_fuzzy_only_when_asked() -> None:
    assert extract_choice("dgo", OPTS) == (None, "unparsed")
    assert extract_choice("dgo", OPTS, fuzzy=True) == ("B", "fuzzy")
    # tie (distance 1 to every letter) goes to the alphabetically first letter
    assert extract_choice("X", {"B": "kiwi", "A": "plum"}, fuzzy=True) == ("A", "fuzzy")
    # fuzzy never maps an empty answer or a refusal
    assert extract_choice("", OPTS, fuzzy=True) == (None, "unparsed")
    assert extract_choice("Cannot determine the answer", OPTS, fuzzy=True) == (None, "unparsed")
    # earlier steps still win
    assert extract_choice("B", OPTS, fuzzy=True) == ("B", "exact")


def test_vlmevalkit_comparison_function() -> None:
    assert vlmevalkit_choice("The answer is C.", OPTS) == "C"
    assert vlmevalkit_choice("The answer is A, not B", OPTS) is None
    assert vlmevalkit_choice("答案是B", OPTS) is None
    assert vlmevalkit_choice("the bird", OPTS) == "C"


def _row(index, pred, answer, opts=("cat", "dog", "bird", "fish"), **extra):
    row = {"index": index, "prediction": pred, "answer": answer}
    for letter, text in zip("ABCD", opts, strict=False):
        row[letter] = text
    row.update(extra)
    return row


def test_vanilla_accuracy_and_counts() -> None:
    df = pd.DataFrame(
        [
            _row(1, "A", "A", category="x"),  # exact, hit
            _row(2, "The answer is B.", "B", category="x"),  # marker, hit
            _row(3, "I would go with D", "C", category="x"),  # cue, miss
            _row(4, "a bird", "C", category="y"),  # option text, hit
            _row(5, "no idea", "D", category="y"),  # unparsed, miss
            _row(6, None, "A", category="y"),  # inference error, miss
            _row(7, float("nan"), "A", category="y"),  # inference error, miss
            _row(8, "答案是 E", "E", opts=("cat", "dog", "bird", float("nan")), category="y"),  # invalid target
        ]
    )
    res = score_mcq(df, circular=False)
    assert res.scorer == "mcq"
    assert res.primary == "Overall"
    assert res.metrics["Overall"] == pytest.approx(3 / 8)
    assert res.metrics["x"] == pytest.approx(2 / 3)
    assert res.metrics["y"] == pytest.approx(1 / 5)
    c = res.counts
    assert (c["exact"], c["marker"], c["cue"], c["option_text"]) == (1, 1, 1, 1)
    assert (c["unparsed"], c["inference_errors"], c["invalid_target"], c["fuzzy"]) == (2, 2, 1, 0)
    assert c["total"] == c["scored"] == 8 and c["hits"] == 3
    assert any("index 8" in n for n in res.notes)
    assert list(res.per_sample.columns) == ["index", "extracted", "method", "hit"]
    assert res.per_sample["method"].tolist()[4:7] == ["unparsed", "inference_error", "inference_error"]
    assert res.per_sample["hit"].tolist() == [True, True, False, True, False, False, False, False]
    # no split column: one row "none", like VLMEvalKit's report_acc
    assert res.table["split"].tolist() == ["none"]
    assert list(res.table.columns) == ["split", "Overall", "x", "y"]
    json.dumps(res.to_dict())


def test_invalid_targets_counted_and_listed() -> None:
    df = pd.DataFrame(
        [
            _row(1, "A", "A"),
            _row(2, "E", "E"),  # E is not among the options
            _row(3, "B", float("nan")),  # no answer
            _row(4, "(c)", "(C)"),  # answer normalised to C
        ]
    )
    res = score_mcq(df, circular=False)
    assert res.counts["invalid_target"] == 2
    assert res.metrics["Overall"] == pytest.approx(2 / 4)
    assert "index 2, 3" in res.notes[0]


def test_fuzzy_counted_separately() -> None:
    df = pd.DataFrame([_row(1, "dgo", "B"), _row(2, "cta", "B"), _row(3, "B", "B")])
    plain = score_mcq(df, circular=False)
    assert plain.metrics["Overall"] == pytest.approx(1 / 3)
    assert plain.counts["fuzzy"] == 0 and plain.counts["unparsed"] == 2
    fuzzy = score_mcq(df, circular=False, fuzzy=True)
    assert fuzzy.metrics["Overall"] == pytest.approx(2 / 3)
    assert fuzzy.counts["fuzzy"] == 2 and fuzzy.counts["unparsed"] == 0
    assert fuzzy.per_sample["extracted"].tolist() == ["B", "A", "B"]
    assert any("fuzzy" in n for n in fuzzy.notes)


def _circular_table() -> pd.DataFrame:
    texts = ["cat", "dog", "bird", "fish"]
    rows = []

    def group(base, answer_text, preds, split, cat, l2, n_opt=4):
        opts = texts[:n_opt]
        for k, pred in enumerate(preds):
            rotated = opts[k:] + opts[:k]
            letter = "ABCD"[rotated.index(answer_text)]
            # copies carry a bogus category: the main row's must be reported
            cat_k = cat if k == 0 else "copy"
            rows.append(
                _row(
                    base + k * 1_000_000,
                    pred(letter),
                    letter,
                    opts=tuple(rotated),
                    split=split,
                    category=cat_k,
                    **{"l2-category": l2},
                )
            )

    right = lambda letter: f"Answer: {letter}"  # noqa: E731
    wrong = lambda letter: "A" if letter != "A" else "B"  # noqa: E731
    group(1, "dog", [right, right, right, right], "dev", "x", "coarse_perception")  # hit
    group(2, "cat", [right, right, wrong, right], "dev", "x", "coarse_perception")  # one wrong rotation: miss
    group(3, "bird", [right, lambda _: None, right], "dev", "y", "logic_reasoning", n_opt=3)  # failed inference
    group(4, "dog", [right, right], "test", "y", "logic_reasoning", n_opt=2)  # hit
    return pd.DataFrame(rows)


def test_circular_groups() -> None:
    df = _circular_table()
    res = score_mcq(df, circular=True)
    assert res.scorer == "mcq_circular"
    assert res.counts["total"] == 13 and res.counts["groups"] == 4 and res.counts["scored"] == 4
    assert res.counts["inference_errors"] == 1
    assert res.metrics["Overall"] == pytest.approx(0.5)
    assert res.metrics["x"] == pytest.approx(0.5) and res.metrics["y"] == pytest.approx(0.5)
    assert res.metrics["CP"] == pytest.approx(0.5) and res.metrics["LR"] == pytest.approx(0.5)
    assert "copy" not in res.metrics
    table = res.table.set_index("split")
    assert list(res.table.columns) == ["split", "Overall", "CP", "LR", "x", "y"]
    assert table.loc["dev", "Overall"] == pytest.approx(1 / 3)
    assert table.loc["test", "Overall"] == pytest.approx(1.0)
    assert table.loc["dev", "x"] == pytest.approx(0.5)
    assert math.isnan(table.loc["test", "x"])
    ps = res.per_sample.set_index("index")
    assert ps.loc[2_000_002, "hit"] == False  # noqa: E712 - the wrong rotation
    assert ps.loc[2, "hit"] == True and ps.loc[2, "group_hit"] == False  # noqa: E712
    assert ps.loc[1_000_001, "group_hit"] == True  # noqa: E712
    assert set(ps["group"]) == {1, 2, 3, 4}
    # vanilla on the same rows scores every row
    vanilla = score_mcq(df, circular=False)
    assert vanilla.metrics["Overall"] == pytest.approx(11 / 13)


def test_circular_orphans_duplicates_and_bad_index() -> None:
    df = _circular_table()
    orphan = pd.concat([df, pd.DataFrame([_row(1_000_009, "A", "A")])], ignore_index=True)
    res = score_mcq(orphan, circular=True)
    assert res.counts["orphan_rows"] == 1 and res.counts["groups"] == 4
    assert any("group 9" in n for n in res.notes)
    dup = pd.concat([df, df.iloc[[0]]], ignore_index=True)
    with pytest.raises(ValueError, match="duplicate `index`"):
        score_mcq(dup, circular=True)
    bad = df.astype({"index": object})
    bad.loc[3, "index"] = "q-7"
    with pytest.raises(ValueError, match=r"row 3, field `index`: 'q-7'"):
        score_mcq(bad, circular=True)
    # vanilla accepts non-integer indices
    assert score_mcq(bad, circular=False).counts["total"] == 13


def test_missing_column_error_names_it() -> None:
    with pytest.raises(ValueError, match="no `answer` column"):
        score_mcq(pd.DataFrame({"index": [1], "prediction": ["A"], "A": ["x"]}), circular=False)
