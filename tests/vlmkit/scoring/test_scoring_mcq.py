"""MCQ extraction and (circular) accuracy on small hand-computed tables."""

from __future__ import annotations

import json
import math

import pandas as pd
import pytest

from vlmkit.scoring.common.choice_reading import ChoiceReader
from vlmkit.scoring.kinds.mcq import extract_choice, score_mcq, vlmevalkit_choice

OPTS = {"A": "cat", "B": "dog", "C": "bird", "D": "fish"}


@pytest.mark.parametrize(
    "prediction, expected, method",
    [
        # 1. exact: the whole reply is the letter, the letter with its text, or an option's text
        ("B", "B", "exact"),
        ("  (C) ", "C", "exact"),
        ("D.", "D", "exact"),
        ("[A]", "A", "exact"),
        ("b", "B", "exact"),
        ("Ｂ", "B", "exact"),
        ("B) dog", "B", "exact"),
        ("C. Bird.", "C", "exact"),
        ("the bird", "C", "exact"),
        ("dog (B)", "B", "exact"),
        # 2. tagged
        ("<answer>C</answer>", "C", "tagged"),
        ("so \\boxed{D}", "D", "tagged"),
        ('{"answer": "dog"}', "B", "tagged"),
        # 3. marker: English, Chinese, the LAST one wins, not followed by a letter does not count
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
        ("I think it is B because", "B", "marker"),
        ("So we pick (C)!", "C", "marker"),
        ("It is a fish.", "D", "marker"),
        ("B is correct, the others are not.", "B", "marker"),
        # 4. final line
        ("The animal has floppy ears.\nIt barks.\n\nB", "B", "final_line"),
        # 5. leading letter
        ("B) cat", "B", "leading"),  # the letter with another option's text: the letter is what was chosen
        ("D, since fish live in water.", "D", "leading"),
        # 6. cue: one letter named outside negations
        ("not A but B", "B", "cue"),
        ("The answer is not A but B", "B", "cue"),
        # 7. option text
        ("I can see a fish swimming.", "D", "option_text"),
        ("the " + "very " * 20 + "bird", "C", "option_text"),  # longer than VLMEvalKit's limit: still one option
    ],
)
def test_extraction_methods(prediction: str, expected: str, method: str) -> None:
    assert extract_choice(prediction, OPTS) == (expected, method)


@pytest.mark.parametrize(
    "prediction",
    [
        "Apple Banana Cherry",  # letters inside words never count
        "A B C D",  # every letter
        "a cat and a dog",  # two option texts
        "I have no idea what this image shows, sorry.",
        "",
        "   ",
        "Cannot determine the answer",  # VLMEvalKit refusal phrase
        "answer: e",  # lower-case letter after a marker is not an option letter
        "A is a letter that appears early in this long sentence about nothing",  # letter not near the end
        "A red animal.",  # the article, and no option text
        "Not C.",
        "It is not a cat.",
        "The answer is A or B.",
        "<think>The answer is B.</think>",  # reasoning is never read as the answer
        "<think>It is surely B, because",  # cut off while reasoning: no answer
        "Failed to obtain answer via API.",
    ],
)
def test_unparsed(prediction: str) -> None:
    assert extract_choice(prediction, OPTS) == (None, "unparsed")


def test_only_the_text_after_the_reasoning_is_read() -> None:
    assert extract_choice("<think>A? or C?</think>\n\nB", OPTS) == ("B", "exact")
    assert extract_choice("Let me think, maybe A.</think>The answer is D.", OPTS) == ("D", "marker")


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


@pytest.mark.parametrize(
    "prediction, expected",
    [
        ("B", "B"),
        ("The answer is C.", "C"),  # one letter among the last four tokens
        ("B is the one I would pick for this question", None),  # one letter, too early
        ("B is the one I would pick, the answer is B", "B"),  # the same letter twice: still one letter
        ("The answer is A, not B", "A"),  # two letters; its `answer is X` pattern (A-D only) decides
        ("the answer is b", "B"),  # that pattern ignores case
        ("Answer: C, not A", None),  # two letters and no `answer is`
        ("答案是B", None),  # `答案是B` is one token, not a letter
        ("the bird", "C"),  # text inference
        ("the " + "very " * 20 + "bird", None),  # longer than twice the options' length
        ("a cat and a dog", None),  # two option texts
        ("Z", "Z"),  # a stray Z: no option
        ("I'm sorry, but without the image provided I cannot answer. A", "Z"),  # a refusal phrase wins
        ("Failed to obtain answer via API.", None),
        ("I would choose B because it barks loudly at night", None),  # B too early, `dog` absent
    ],
)
def test_vlmevalkit_rule(prediction: str, expected: str | None) -> None:
    assert vlmevalkit_choice(prediction, OPTS) == expected


def test_vlmevalkit_answer_is_pattern_is_a_to_d_only() -> None:
    opts = {"A": "one", "B": "two", "C": "three", "D": "four", "E": "five", "F": "six"}
    assert vlmevalkit_choice("I think the answer is E, not F", opts) is None
    assert vlmevalkit_choice("I think the answer is D, not F", opts) == "D"


def test_differs_counts_only_rows_where_the_letters_differ() -> None:
    df = pd.DataFrame(
        [
            # a lone letter outside VLMEvalKit's window, whose option text VLMEvalKit's text rule finds: same letter
            _row(1, "B is my choice, the dog", "B"),
            # VLMEvalKit reads nothing, vlmkit reads B: a difference
            _row(2, "答案是B", "B"),
            # neither reads anything (VLMEvalKit's Z is no letter either): no difference
            _row(3, "Cannot determine the answer", "B"),
            _row(4, "Z", "B"),
            # both read the same letter
            _row(5, "The answer is C.", "C"),
            # VLMEvalKit reads A (its `answer is` pattern), vlmkit reads nothing (a hedge): a difference
            _row(6, "The answer is A or B", "A"),
        ]
    )
    res = score_mcq(df, circular=False)
    assert res.counts["differs_from_vlmevalkit"] == 2
    assert res.per_sample["extracted"].tolist() == ["B", "B", None, None, "C", None]


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
            _row(3, "not A but D", "C", category="x"),  # cue, miss
            _row(4, "I can see a bird.", "C", category="y"),  # option text, hit
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
    assert (c["by_rule"], c["by_judge"], c["unread"], c["judge_errors"], c["judge_asked"]) == (4, 0, 2, 0, 0)
    assert any("index 8" in n for n in res.notes)
    assert "rules only (no --judge): 2 answers no rule could read count as misses" in res.notes
    assert list(res.per_sample.columns) == ["index", "extracted", "method", "hit", "vlmevalkit", "vlmevalkit_hit"]
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


# --- one reader for a whole table: the same readings as each row alone -------------------------------------------

# Replies whose reading turns on the option texts: a text the reply is, names, or names after an answer phrase.
SHARED_REPLIES = [
    "B", "b", "(C)", "a dog", "the bird", "It is a fish.", "The answer is the big dog", "B. dog", "B) cat", "dog (B)",
    "A dog.", "I can see a fish swimming.", "not a cat, a dog", "I see a cat and a dog", "<answer>dog</answer>",
    "\\boxed{B}", "The animal barks.\n\ndog", "<think>It might be A.</think>The answer is B", "answer: e",
    "so it is fish", "A red circle.", "Point A", "The answer is A or B", "E", "It is not a cat.", "",
    "\\boxed{\\text{I see the big}\\text{ dog now}}",  # the tagged answer names "big dog", the reply does not
    "The animal barks.\n\nbig   dog",  # the last line is "big dog" once normalised; the reply does not hold that
]  # fmt: skip
SHARED_OPTIONS = [
    {"A": "cat", "B": "dog", "C": "bird", "D": "fish"},
    {"A": "dog", "B": "cat", "C": "fish", "D": "bird"},
    {"A": "cat", "B": "cow"},
    {"A": "big dog", "B": "dog", "C": "a dog"},
    {"A": "cat", "B": "dog", "C": "a dog"},
    {"A": "fish", "B": "bird", "C": "cat"},
    {"A": "red circle", "B": "blue square"},
    {"A": "Point A", "B": "Point B"},
    {"A": "Point B", "B": "Point A"},
    {"B": "dog", "C": "cat", "E": "fish"},
    {"A": "Dog.", "B": "The Cat", "C": "dogs"},
]


def _shared_table() -> pd.DataFrame:
    rows = []
    pairs = [(pred, opts) for opts in SHARED_OPTIONS for pred in SHARED_REPLIES]  # each reply under every option set
    for k, (pred, opts) in enumerate(pairs):
        row = {"index": k, "prediction": pred, "answer": sorted(opts)[k % len(opts)]}
        row.update({letter: opts.get(letter, math.nan) for letter in "ABCDE"})
        rows.append(row)
    return pd.DataFrame(rows)


@pytest.mark.parametrize("fuzzy", [False, True])
def test_one_table_reads_every_row_as_extract_choice_alone(fuzzy: bool) -> None:
    """score_mcq reads a table with one ChoiceReader, which keeps what it worked out per distinct reply and each
    reading by the option texts the reply can see; a reply met before under other options must still read exactly
    as extract_choice reads it alone."""
    df = _shared_table()
    assert len(df) == len(SHARED_REPLIES) * len(SHARED_OPTIONS)
    res = score_mcq(df, circular=False, fuzzy=fuzzy)
    differs = 0
    for row, got in zip(df.to_dict("records"), res.per_sample.to_dict("records")):
        opts = {letter: row[letter] for letter in "ABCDE"}
        letter, method = extract_choice(row["prediction"], opts, fuzzy=fuzzy)
        assert (got["extracted"], got["method"]) == (letter, method), (row["prediction"], opts)
        assert got["hit"] == (letter == row["answer"])
        vlm = vlmevalkit_choice(row["prediction"], opts)
        differs += letter != (None if vlm == "Z" else vlm)
    assert res.counts["differs_from_vlmevalkit"] == differs
    # the readings do turn on the options: the same reply reads differently under different texts
    by_reply = res.per_sample.assign(prediction=df["prediction"]).groupby("prediction")["extracted"]
    assert by_reply.nunique(dropna=False).max() >= 3


def test_one_reader_keeps_readings_apart_by_the_texts_a_reply_names() -> None:
    reader = ChoiceReader()
    assert reader.read("a dog", {"A": "cat", "B": "dog"}) == ("B", "exact")
    assert reader.read("a dog", {"A": "cat", "B": "cow"}) == (None, "unparsed")
    assert reader.read("a dog", {"A": "dog", "B": "cow"}) == ("A", "exact")
    assert reader.read("It is a fish.", {"A": "cat", "B": "dog"}) == (None, "unparsed")
    assert reader.read("It is a fish.", {"A": "cat", "B": "fish"}) == ("B", "marker")
    assert reader.read("B. dog", {"A": "dog", "B": "cat"}) == ("B", "leading")
    assert reader.read("B. dog", {"A": "cat", "B": "dog"}) == ("B", "exact")
    boxed = "\\boxed{\\text{I see the big}\\text{ dog now}}"
    assert reader.read(boxed, {"A": "cat", "B": "dog"}) == ("B", "tagged")
    assert reader.read(boxed, {"A": "big dog", "B": "dog"}) == ("A", "tagged")
    # read_row: the reading, the answer part (what a judge is shown) and VLMEvalKit's reading
    assert reader.read_row("<think>A?</think> It is a fish.", {"A": "cat", "B": "fish"}) == (
        "B", "marker", "It is a fish.", None,
    )  # fmt: skip
    assert reader.read_row("It is a fish.", {"A": "cat", "B": "fish"}) == ("B", "marker", "It is a fish.", "B")


def test_float_and_integer_indices_make_the_same_circular_groups() -> None:
    df = _circular_table()
    as_int = score_mcq(df, circular=True)
    as_float = score_mcq(df.astype({"index": float}), circular=True)
    assert as_int.per_sample[["group", "group_hit", "hit"]].equals(as_float.per_sample[["group", "group_hit", "hit"]])
    assert as_int.metrics == as_float.metrics and as_int.counts == as_float.counts
