"""vlmkit.scoring.kinds.yorn's whole results on small hand-made tables: the per-row record, every count and note,
the judge's rows (what it is asked, what its replies make of a row), and the MME, POPE and HallusionBench
reports with their scales. Each expected value is worked out by hand beside its table."""

from __future__ import annotations

import math

import pandas as pd
import pytest

from vlmkit.judging import FunctionJudge, JudgeRequest
from vlmkit.scoring.common.choice_judge import yorn_judge_prompt
from vlmkit.scoring.kinds.yorn import extract_yes_no, score_yorn
from vlmkit.scoring.scales import PERCENT, POINTS, Scale

FAIL = "Failed to obtain answer via API"


def test_the_sentence_rule_reads_an_answer_standing_alone() -> None:
    # "No." alone between two sentences that hold both words: no first/last word, no marker, VLMEvalKit sees both
    assert extract_yes_no("The sign says yes to parking. No. There is no car here") == "No"
    assert extract_yes_no("Well. Yes! But the sign says no parking there") == "Yes"
    # inside an answer tag, the careful reading first, then VLMEvalKit's rule on the tag's text
    assert extract_yes_no("<answer>Nope</answer>") == "No"
    assert extract_yes_no("Thinking aloud: no... <answer>I say yes</answer>") == "Yes"
    assert extract_yes_no("<answer>yes and no</answer>") == "Unknown"


@pytest.mark.parametrize(
    "reply, expected",
    [
        # each reply holds both words, so VLMEvalKit's rule reads nothing; one rule of the careful reader does
        ('The sign says yes to parking. "No". There is no car here', "No"),  # a quoted sentence alone
        ("The sign says yes to parking. So, no. There is no car here", "No"),  # an opening "so," dropped
        ("The sign says no parking. No doubt, yes. There is no car here", "Yes"),  # "no doubt" is no answer
        ("The sign says no parking. My answer is yes, there is a car here", "Yes"),  # the word after "answer is"
        ("The answer is no, also yes for the other one", "Unknown"),  # "also yes": a hedge
        ("I think yes is right here", "Yes"),  # no answer position: VLMEvalKit's rule on the whole reply
    ],
)
def test_each_answer_position_of_the_careful_reader(reply: str, expected: str) -> None:
    assert extract_yes_no(reply) == expected


def test_the_whole_record_of_plain_accuracy() -> None:
    df = pd.DataFrame({
        "index": [1, 2, 3, 4, 5, 6],
        "prediction": ["Yes", "Nope", None, f"x {FAIL}", "maybe", "Yes"],
        "answer": ["Yes", "no", "Yes", "No", "Yes", "Maybe"],
        "category": ["c1", "c1", "c2", "c2", "c1", "c2"],
    })
    res = score_yorn(df)
    ps = res.per_sample
    assert ps.columns.tolist() == ["index", "extracted", "method", "hit"]
    assert ps["extracted"].tolist() == ["Yes", "No", "Unknown", "Unknown", "Unknown", "Yes"]
    assert ps["method"].tolist() == ["parsed", "parsed", "inference_error", "inference_error", "unparsed", "parsed"]
    assert ps["hit"].tolist() == [True, True, False, False, False, False]
    assert res.counts == {
        "total": 6, "scored": 6, "hits": 2, "unparsed": 1, "inference_errors": 2, "invalid_target": 1,
        "by_rule": 3, "by_judge": 0, "unread": 1, "judge_errors": 0, "judge_asked": 0,
        "differs_from_vlmevalkit": 1,  # row 2: "Nope" is No to a careful reader, nothing to VLMEvalKit
    }
    assert res.notes == [
        "1 row(s) have an answer other than Yes/No (scored as misses): index 6",
        "vlmkit's rules read a different answer than VLMEvalKit's Y/N rule for 1 row(s) (vlmkit reads as a careful "
        "person would; see vlmkit.scoring.kinds.yorn.extract_yes_no)",
        "1 row(s) have an answer spelled other than `Yes`/`No` (e.g. `yes`): vlmkit compares case-insensitively; "
        "VLMEvalKit compares exactly here (only AMBER ignores case) and scores them as misses",
        "rules only (no --judge): 1 answers no rule could read count as misses",
    ]
    # Overall 2 of 6; c1 (rows 1, 2, 5) 2 of 3; c2 none
    assert res.metrics == pytest.approx({"Overall": 100 / 3, "c1": 200 / 3, "c2": 0.0})
    assert res.table.to_dict("records") == [pytest.approx({"split": "none", "Overall": 100 / 3, "c1": 200 / 3,
                                                           "c2": 0.0})]
    assert (res.scorer, res.primary, res.table_suffix) == ("yorn_acc", "Overall", "score")
    assert res.scale == Scale(PERCENT) and res.metric_scales == {}


def test_accuracy_by_split_and_l2_category() -> None:
    df = pd.DataFrame({"index": [1, 2, 3, 4], "prediction": ["Yes", "No", "Yes", "Yes"],
                       "answer": ["Yes", "Yes", "Yes", "No"], "split": ["dev", "dev", "test", "test"],
                       "l2-category": ["p", "q", "p", "q"]})
    res = score_yorn(df)
    assert res.metrics == pytest.approx({"Overall": 50.0, "p": 100.0, "q": 0.0})
    assert res.table["split"].tolist() == ["dev", "test"] and res.table["Overall"].tolist() == [50.0, 50.0]
    assert res.notes == [] and res.counts["differs_from_vlmevalkit"] == 0
    # with both grouping columns: category values first, then l2-category values, in metrics and table alike
    both = score_yorn(df.assign(category=["z", "z", "y", "y"]))
    assert list(both.metrics) == ["Overall", "y", "z", "p", "q"]
    assert both.table.columns.tolist() == ["split", "Overall", "y", "z", "p", "q"]


def test_amber_ignores_the_answers_case_without_a_note() -> None:
    df = pd.DataFrame({"index": [1, 2], "prediction": ["yes", "no"], "answer": ["yes", "NO"],
                       "category": ["relation", "relation"]})
    res = score_yorn(df, "amber")
    assert res.metrics["Avg ACC"] == 100.0
    assert not any("spelled other than" in note for note in res.notes)


def _keyed(replies: dict[str, str | Exception]) -> FunctionJudge:
    def answer(request: JudgeRequest) -> str:
        reply = replies[request.row or ""]
        if isinstance(reply, Exception):
            raise reply
        return reply

    return FunctionJudge(answer, name="keyed")


def test_what_the_judge_is_asked_and_what_its_replies_make_of_a_row() -> None:
    df = pd.DataFrame({
        "index": [1, 2, 3, 4, 5, 6, 7],
        "question": ["Is it red?", "Is it big?", None, "Is it old?", "Q5", "Q6", "Q7"],
        "prediction": ["<think>hmm, yes</think>It might be", "Hard to say", "Perhaps", "Unclear", "Yes",
                       "<think>no</think>", "Who knows"],
        "answer": ["Yes", "Yes", "No", "No", "Yes", "No", "Maybe"],
    })
    # row 5 is read by rule; row 6 has no answer after its reasoning; row 7's target is invalid: none is asked
    judge = _keyed({"1": "Yes.", "2": "No", "3": "no doubt about it, no", "4": RuntimeError("HTTP 500")})
    res = score_yorn(df, "acc", judge=judge)
    prompts = {r.row: r.prompt for r in judge.asked}
    # rows 1-4 for vlmkit; for VLMEvalKit's figure also row 7, which its rule leaves Unknown (VLMEvalKit asks its
    # judge whatever the answer cell holds); its rule reads rows 1 (`yes` inside the reasoning) and 6 (`no`) itself
    assert sorted(prompts) == ["1", "2", "3", "4", "7"]
    assert prompts["7"] == yorn_judge_prompt("Q7", "Who knows")
    assert prompts["1"] == yorn_judge_prompt("Is it red?", "It might be")  # the answer after the reasoning
    assert prompts["2"] == yorn_judge_prompt("Is it big?", "Hard to say")
    assert prompts["3"] == yorn_judge_prompt("", "Perhaps")  # a missing question is empty text
    ps = res.per_sample
    assert ps.columns.tolist() == ["index", "extracted", "method", "hit", "judge"]
    assert ps["extracted"].tolist() == ["Yes", "No", "No", "Unknown", "Yes", "Unknown", "Unknown"]
    assert ps["method"].tolist() == ["judge", "judge", "judge", "judge_error", "parsed", "unparsed", "unparsed"]
    assert ps["hit"].tolist() == [True, False, True, False, True, False, False]  # row 2: the judge read No, not Yes
    assert ps["judge"].tolist() == ["Yes.", "No", "no doubt about it, no", None, None, None, None]
    c = res.counts
    assert (c["unparsed"], c["by_rule"], c["by_judge"], c["unread"], c["judge_errors"], c["judge_asked"]) == (
        6, 1, 3, 2, 1, 4)
    assert "1 judge call(s) failed: those rows count as misses this run and are asked again on the next run" in (
        res.notes)
    with pytest.raises(ValueError, match=r"^Y/N judge: the predictions table has no `question` column"):
        score_yorn(df.drop(columns="question"), "acc", judge=judge)


def _mme(rows: list[tuple], image_path: bool = True) -> pd.DataFrame:
    data = {"index": [r[0] for r in rows], "category": [r[1] for r in rows], "prediction": [r[3] for r in rows],
            "answer": [r[4] for r in rows]}
    if image_path:
        data["image_path"] = [r[2] for r in rows]
    return pd.DataFrame(data)


def test_mme_sums_acc_and_acc_plus_with_their_scales() -> None:
    rows = [
        # index, category, image, prediction, answer
        (1, "existence", "e1", "Yes", "Yes"), (2, "existence", "e1", "No", "No"),  # e1 both right
        (3, "existence", "e2", "Yes", "Yes"), (4, "existence", "e2", "Yes", "No"),  # e2 one right
        (5, "code_reasoning", "r1", "No", "Yes"), (6, "code_reasoning", "r1", "No", "No"),
        (7, "artsy", "a1", "Yes", "Yes"),  # outside MME's lists, one question for its image
    ]
    res = score_yorn(_mme(rows), "mme")
    # existence: acc 3/4 = 75, acc+ 1/2 = 50 -> 125; code_reasoning: acc 50, acc+ 0 -> 50; artsy: 100 + 100 -> 200
    assert res.metrics == pytest.approx({
        "Overall": 175.0, "perception": 125.0, "reasoning": 50.0, "existence": 125.0, "code_reasoning": 50.0,
        "artsy": 200.0, "existence/acc": 75.0, "existence/acc+": 50.0, "code_reasoning/acc": 50.0,
        "code_reasoning/acc+": 0.0, "artsy/acc": 100.0, "artsy/acc+": 100.0,
    })
    assert list(res.metrics)[:3] == ["Overall", "perception", "reasoning"]
    assert res.table.to_dict("records") == [pytest.approx({"perception": 125.0, "reasoning": 50.0,
                                                           "existence": 125.0, "code_reasoning": 50.0,
                                                           "artsy": 200.0})]
    assert (res.scorer, res.primary, res.scale) == ("yorn_mme", "Overall", Scale(POINTS))
    # one perception and one reasoning category present: each sum out of 200 per category of its own
    assert res.metric_scales == {
        "perception": Scale(POINTS, out_of=200.0), "reasoning": Scale(POINTS, out_of=200.0),
        "Overall": Scale(POINTS, out_of=400.0),
        "existence": Scale(POINTS, out_of=200.0), "code_reasoning": Scale(POINTS, out_of=200.0),
        "artsy": Scale(POINTS, out_of=200.0),
        "existence/acc": Scale(PERCENT), "existence/acc+": Scale(PERCENT), "code_reasoning/acc": Scale(PERCENT),
        "code_reasoning/acc+": Scale(PERCENT), "artsy/acc": Scale(PERCENT), "artsy/acc+": Scale(PERCENT),
    }
    missing = [n for n in res.notes if n.startswith("MME categories absent")]
    assert missing == ["MME categories absent, left out of the perception/reasoning sums: OCR, artwork, celebrity, "
                       "color, count, landmark, position, posters, scene, commonsense_reasoning, "
                       "numerical_calculation, text_translation"]
    assert "categories outside MME's perception/reasoning lists (reported alone): artsy" in res.notes
    assert "1 MME image(s) do not have exactly 2 questions; acc+ needs all right" in res.notes
    assert not any(n.startswith("no `image_path` column") for n in res.notes)


@pytest.mark.parametrize(
    "indices, right",
    [
        # numbers by value (as text "10" < "9"), before any text: 9, 10 | 11, 12
        ([12, 9, 11, 10], [False, True, False, True]),
        # numbers before text: 1, 2 | 3, "z"
        (["z", 3, 2, 1], [False, False, True, True]),
        # text sorted as text: "a", "b" | "c", "d"
        (["b", "c", "a", "d"], [True, False, True, False]),
    ],
)
def test_mme_without_image_paths_pairs_rows_in_index_order(indices: list, right: list[bool]) -> None:
    rows = [(i, "count", None, "Yes", "Yes" if ok else "No") for i, ok in zip(indices, right)]
    res = score_yorn(_mme(rows, image_path=False), "mme")
    # 2 of 4 right, and they are the first pair in index order: acc 50, acc+ 50 (the file's order pairs none)
    assert res.metrics["count/acc"] == 50.0 and res.metrics["count/acc+"] == 50.0
    assert "no `image_path` column: MME questions paired as consecutive rows (index order) per category" in res.notes
    assert not any("do not have exactly 2 questions" in n for n in res.notes)


def test_mme_scales_count_the_categories_present() -> None:
    rows = [(1, "color", "c", "Yes", "Yes"), (2, "count", "n", "Yes", "Yes"), (3, "art/design", "a", "No", "No"),
            (4, "zz", "z", "No", "No")]
    res = score_yorn(_mme(rows), "mme")
    scales = res.metric_scales
    assert scales["perception"] == Scale(POINTS, out_of=400.0)  # color and count: 2 x 200
    assert scales["reasoning"] == Scale(POINTS, out_of=0.0) and scales["Overall"] == Scale(POINTS, out_of=400.0)
    # a category whose name holds a slash is still a category: its acc is percent, its score points
    assert scales["art/design/acc"] == Scale(PERCENT) and scales["art/design"] == Scale(POINTS, out_of=200.0)
    assert "categories outside MME's perception/reasoning lists (reported alone): art/design, zz" in res.notes


def test_mme_needs_every_category() -> None:
    rows = [(1, "count", "i", "Yes", "Yes"), (2, None, "i", "Yes", "Yes")]
    with pytest.raises(ValueError, match=r"^MME scoring: row 1 \(index 2\), field `category` is empty$"):
        score_yorn(_mme(rows), "mme")
    with pytest.raises(ValueError, match=r"^MME scoring: the predictions table has no `category` column"):
        score_yorn(_mme(rows).drop(columns="category"), "mme")


def test_pope_f1_per_category_and_rows_in_several() -> None:
    df = pd.DataFrame({
        "index": [1, 2, 3, 4],
        "prediction": ["Yes", "Yes", "No", "maybe"],
        "answer": ["Yes", "No", "Yes", "No"],
        "category": ["adversarial, popular", "popular", "adversarial", math.nan],
    })
    res = score_yorn(df, "pope")
    # rows counted once per listed category: row 1 twice (TP), row 2 FP, row 3 FN, row 4 (Unknown = No) TN
    # all: TP 2, FP 1, FN 1, TN 1 -> precision 2/3, recall 2/3, F1 2/3; acc counts hits, and an unread row is a
    # miss (it is a "No" for F1 only): 2 of 5
    # adversarial (rows 1, 3): TP 1, FN 1 -> P 1, R 1/2, F1 2/3, acc 1/2; popular (1, 2): TP 1, FP 1 -> P 1/2, R 1
    expected = {
        "Overall": 200 / 3, "acc": 40.0, "precision": 200 / 3, "recall": 200 / 3,
        "adversarial/F1": 200 / 3, "adversarial/acc": 50.0, "adversarial/precision": 100.0,
        "adversarial/recall": 50.0,
        "popular/F1": 200 / 3, "popular/acc": 50.0, "popular/precision": 50.0, "popular/recall": 100.0,
    }
    assert res.metrics == pytest.approx(expected)
    assert res.table["split"].tolist() == ["Overall", "adversarial", "popular"]
    assert res.table.columns.tolist() == ["split", "Overall", "acc", "precision", "recall"]
    assert res.primary == "Overall" and res.scorer == "yorn_pope"
    assert "rows listing several POPE categories count once per category in Overall, as in VLMEvalKit" in res.notes
    single = score_yorn(df.assign(category=["a", "a", "b", "b"]), "pope")
    assert not any("several POPE categories" in n for n in single.notes)


def test_hallusion_question_figure_and_pair_accuracy() -> None:
    df = pd.DataFrame({
        "index": [1, 2, 3, 4],
        "prediction": ["Yes", "No", "Yes", "Yes"],
        "answer": ["Yes", "No", "No", "Yes"],
        "l2-category": ["VD", "VD", "VD", "VS"],
        "category": ["chart", "chart", "map", "map"],
        "set_id": [0, 0, 0, 0], "figure_id": [0, 0, 1, 0], "question_id": [0, 1, 0, 0],
    })
    res = score_yorn(df, "hallusion")
    # aAcc 3/4; figures VD_0_0 (rows 1, 2) right, VD_0_1 (row 3) wrong, VS_0_0 right -> 2/3;
    # questions VD_0_0 (rows 1, 3) wrong, VD_0_1 (row 2) right, VS_0_0 right -> 2/3
    overall = {"aAcc": 75.0, "fAcc": 200 / 3, "qAcc": 200 / 3}
    assert res.metrics["Overall"] == pytest.approx((75 + 400 / 3) / 3)
    assert {k: res.metrics[k] for k in overall} == pytest.approx(overall)
    assert res.metrics["chart/aAcc"] == 100.0 and res.metrics["map/aAcc"] == 50.0
    assert res.metrics["VD/fAcc"] == pytest.approx(50.0) and res.metrics["VS/qAcc"] == 100.0
    assert res.table["split"].tolist() == ["Overall", "chart", "map", "VD", "VS"]
    assert res.primary == "Overall" and res.scorer == "yorn_hallusion"
    # without a category column the l2-categories are still reported; values of any type sort as text
    no_category = score_yorn(df.drop(columns="category"), "hallusion")
    assert no_category.table["split"].tolist() == ["Overall", "VD", "VS"]
    mixed = score_yorn(df.assign(category=[10, 10, "map", 9]), "hallusion")
    assert mixed.table["split"].tolist() == ["Overall", "10", "9", "map", "VD", "VS"]
    # without the id columns they are read from the index, fields 3, 4, 5 of index.split("_")
    by_index = df.drop(columns=["set_id", "figure_id", "question_id"]).assign(
        index=["x_y_z_0_0_0", "x_y_z_0_0_1", "x_y_z_0_1_0", "x_y_z_0_0_0b"])
    res2 = score_yorn(by_index.assign(**{"l2-category": ["VD", "VD", "VD", "VS"]}), "hallusion")
    assert res2.metrics["aAcc"] == 75.0 and res2.metrics["fAcc"] == pytest.approx(200 / 3)
    with pytest.raises(ValueError, match=r"^HallusionBench scoring: the predictions table has no `l2-category`"):
        score_yorn(df.drop(columns="l2-category"), "hallusion")


def test_unknown_metric_and_empty_tables() -> None:
    df = pd.DataFrame({"index": [1], "prediction": ["Yes"], "answer": ["Yes"]})
    with pytest.raises(ValueError, match=r"^Y/N scoring: unknown metric 'f2'; choose one of acc, mme, pope, "
                                         r"hallusion, amber, vsr$"):
        score_yorn(df, "f2")
    with pytest.raises(ValueError, match=r"^Y/N scoring \(pope\): the predictions table has no rows$"):
        score_yorn(df.iloc[0:0], "pope")
    with pytest.raises(ValueError, match=r"^Y/N scoring \(acc\): the predictions table has no `answer` column"):
        score_yorn(df.drop(columns="answer"))
    assert score_yorn(df).metrics["Overall"] == 100.0  # one row is a table
