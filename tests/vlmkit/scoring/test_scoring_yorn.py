"""Yes/No extraction and the acc / MME / POPE / HallusionBench reports on hand-computed tables."""

from __future__ import annotations

import json

import pandas as pd
import pytest

from vlmkit.scoring.kinds.yorn import extract_yes_no, score_yorn


@pytest.mark.parametrize(
    "prediction, expected",
    [
        ("Yes", "Yes"),
        ("yes.", "Yes"),
        ("YES!", "Yes"),
        ("Yes, there is a dog in the image.", "Yes"),
        ("No", "No"),
        ("No, it's not.", "No"),
        ("The answer is no", "No"),
        ("yes, no", "Unknown"),
        ("Yes and no", "Unknown"),
        ("I don't know", "Unknown"),
        ("Noah and yesterday", "Unknown"),  # words, not substrings
        ("nope", "No"),
        ("**Yes**", "Yes"),
        ("The image shows a red car. There is no blue car.\n\nNo.", "No"),
        ("I see no cat, but there is a dog. Yes.", "Yes"),
        ("是的", "Yes"),
        ("<think>yes? no?</think>No", "No"),
        ("<think>Surely yes", "Unknown"),
        ("(yes)", "Yes"),
        ("", "Unknown"),
        (None, "Unknown"),
    ],
)
def test_extract_yes_no(prediction, expected) -> None:
    assert extract_yes_no(prediction) == expected


def test_acc_with_errors_and_invalid_targets() -> None:
    df = pd.DataFrame(
        {
            "index": [1, 2, 3, 4, 5, 6],
            "prediction": ["Yes", "no.", "maybe", None, "Yes", "Yes"],
            "answer": ["Yes", "No", "Yes", "No", "yes", "Perhaps"],
            "category": ["a", "a", "a", "b", "b", "b"],
        }
    )
    res = score_yorn(df)
    assert res.scorer == "yorn_acc" and res.table_suffix == "score"
    assert res.metrics["Overall"] == pytest.approx(50.0)  # rows 1, 2, 5 right (answer case ignored)
    assert res.metrics["a"] == pytest.approx(200 / 3)
    assert res.metrics["b"] == pytest.approx(100 / 3)
    assert res.counts["unparsed"] == 1 and res.counts["inference_errors"] == 1 and res.counts["invalid_target"] == 1
    assert "index 6" in res.notes[0]
    assert res.per_sample["extracted"].tolist() == ["Yes", "No", "Unknown", "Unknown", "Yes", "Yes"]
    assert res.per_sample["method"].tolist()[2:4] == ["unparsed", "inference_error"]
    assert list(res.table.columns) == ["split", "Overall", "a", "b"]
    json.dumps(res.to_dict())


def _mme_table(with_path: bool) -> pd.DataFrame:
    rows = [
        # OCR: image 1 both right, image 2 one right -> acc 75, acc+ 50 -> 125
        (0, "OCR", "ocr/1.jpg", "Yes", "Yes"),
        (1, "OCR", "ocr/1.jpg", "No", "No"),
        (2, "OCR", "ocr/2.jpg", "Yes", "Yes"),
        (3, "OCR", "ocr/2.jpg", "No", "Yes"),
        # code_reasoning: image 3 both wrong, image 4 both right -> acc 50, acc+ 50 -> 100
        (4, "code_reasoning", "code/3.jpg", "Yes", "No"),
        (5, "code_reasoning", "code/3.jpg", "No", "Yes"),
        (6, "code_reasoning", "code/4.jpg", "Yes", "Yes"),
        (7, "code_reasoning", "code/4.jpg", "No", "No"),
    ]
    df = pd.DataFrame(rows, columns=["index", "category", "image_path", "answer", "prediction"])
    return df if with_path else df.drop(columns=["image_path"])


@pytest.mark.parametrize("with_path", [True, False])
def test_mme(with_path: bool) -> None:
    df = _mme_table(with_path)
    if with_path:
        df = df.sample(frac=1.0, random_state=3)  # grouping by image_path does not depend on row order
    res = score_yorn(df, metric="mme")
    m = res.metrics
    assert m["OCR/acc"] == pytest.approx(75.0) and m["OCR/acc+"] == pytest.approx(50.0)
    assert m["OCR"] == pytest.approx(125.0)
    assert m["code_reasoning"] == pytest.approx(100.0)
    assert m["perception"] == pytest.approx(125.0) and m["reasoning"] == pytest.approx(100.0)
    assert res.primary == "Overall" and m["Overall"] == pytest.approx(225.0)
    assert list(res.table.columns)[:2] == ["perception", "reasoning"]
    assert any("absent" in n for n in res.notes)


def test_pope() -> None:
    df = pd.DataFrame(
        {
            "index": range(8),
            "category": ["adversarial"] * 4 + ["random"] * 4,
            "answer": ["Yes", "Yes", "No", "No", "Yes", "Yes", "No", "No"],
            # adversarial: TP 1, FN 1, FP 1, TN 1; random: TP 2, FP 1, TN 1 ("what?" is Unknown = a No)
            "prediction": ["yes", "no", "yes", "no", "Yes", "Yes", "Yes", "what?"],
        }
    )
    res = score_yorn(df, metric="pope")
    m = res.metrics
    assert m["precision"] == pytest.approx(60.0)  # 3 / 5
    assert m["recall"] == pytest.approx(75.0)  # 3 / 4
    assert m["Overall"] == pytest.approx(200 * 0.6 * 0.75 / 1.35)
    assert m["acc"] == pytest.approx(50.0)  # "what?" is a No for F1 but a miss for acc, as in VLMEvalKit
    assert m["random/acc"] == pytest.approx(50.0)
    assert m["adversarial/F1"] == pytest.approx(50.0)
    assert m["random/precision"] == pytest.approx(200 / 3) and m["random/recall"] == pytest.approx(100.0)
    assert m["random/F1"] == pytest.approx(80.0)
    assert res.table["split"].tolist() == ["Overall", "adversarial", "random"]
    assert list(res.table.columns) == ["split", "Overall", "acc", "precision", "recall"]


def test_pope_comma_categories_count_in_each() -> None:
    df = pd.DataFrame(
        {
            "index": [0, 1],
            "category": ["popular,random", "random"],
            "answer": ["Yes", "No"],
            "prediction": ["Yes", "Yes"],
        }
    )
    res = score_yorn(df, metric="pope")
    assert res.metrics["popular/acc"] == pytest.approx(100.0)
    assert res.metrics["random/acc"] == pytest.approx(50.0)
    assert res.metrics["acc"] == pytest.approx(200 / 3)  # the exploded rows, as VLMEvalKit
    assert any("several POPE categories" in n for n in res.notes)


def _hallusion_rows():
    # (l2, set, figure, question, hit)
    return [
        ("VD", "0", "0", "0", True),
        ("VD", "0", "0", "1", True),
        ("VD", "0", "1", "0", False),
        ("VD", "0", "1", "1", True),
        ("VS", "1", "0", "0", True),
        ("VS", "1", "0", "1", True),
    ]


def test_hallusion_with_columns() -> None:
    rows = _hallusion_rows()
    df = pd.DataFrame(
        {
            "index": range(len(rows)),
            "category": ["illusion"] * 4 + ["chart"] * 2,
            "l2-category": [r[0] for r in rows],
            "set_id": [r[1] for r in rows],
            "figure_id": [r[2] for r in rows],
            "question_id": [r[3] for r in rows],
            "answer": ["Yes"] * len(rows),
            "prediction": ["Yes" if r[4] else "No" for r in rows],
        }
    )
    res = score_yorn(df, metric="hallusion")
    m = res.metrics
    # questions: 5/6; figures: VD_0_0 ok, VD_0_1 not, VS_1_0 ok -> 2/3; question pairs: VD_0_0 not, VD_0_1 ok,
    # VS_1_0 ok, VS_1_1 ok -> 3/4
    assert m["aAcc"] == pytest.approx(500 / 6)
    assert m["fAcc"] == pytest.approx(200 / 3)
    assert m["qAcc"] == pytest.approx(75.0)
    assert m["Overall"] == pytest.approx((500 / 6 + 200 / 3 + 75.0) / 3)
    assert m["VD/aAcc"] == pytest.approx(75.0) and m["VD/fAcc"] == pytest.approx(50.0)
    assert m["VD/qAcc"] == pytest.approx(50.0)
    assert m["chart/qAcc"] == pytest.approx(100.0)
    assert res.table["split"].tolist() == ["Overall", "chart", "illusion", "VD", "VS"]


def test_hallusion_ids_from_index_and_clear_error() -> None:
    rows = _hallusion_rows()
    df = pd.DataFrame(
        {
            "index": [f"{r[0]}_x_y_{r[1]}_{r[2]}_{r[3]}" for r in rows],
            "l2-category": [r[0] for r in rows],
            "answer": ["No"] * len(rows),
            "prediction": ["No" if r[4] else "Yes" for r in rows],
        }
    )
    res = score_yorn(df, metric="hallusion")
    assert res.metrics["fAcc"] == pytest.approx(200 / 3) and res.metrics["qAcc"] == pytest.approx(75.0)
    df.loc[2, "index"] = "short_index"
    with pytest.raises(ValueError, match=r"no `set_id` column and row 2's `index` 'short_index'"):
        score_yorn(df, metric="hallusion")
    with pytest.raises(ValueError, match="no `l2-category` column"):
        score_yorn(df.drop(columns=["l2-category"]), metric="hallusion")


def test_unknown_metric() -> None:
    with pytest.raises(ValueError, match="unknown metric"):
        score_yorn(pd.DataFrame({"index": [1], "prediction": ["Yes"], "answer": ["Yes"]}), metric="f1")


def test_amber_groups_categories_and_averages_them() -> None:
    df = pd.DataFrame(
        {
            "index": range(6),
            "category": [
                "discriminative-hallucination", "discriminative-attribute-number", "relation",
                "discriminative-attribute-state", "discriminative-hallucination", "generative",
            ],
            "answer": ["yes", "no", "Yes", "No", "no", "yes"],
            "prediction": ["Yes", "No", "yes", "Yes", "no", "maybe"],
        }
    )  # fmt: skip
    res = score_yorn(df, metric="amber")
    # Existence: rows 0, 4 right -> 100; Attribute: row 1 right, row 3 wrong -> 50; Relation: row 2 right -> 100;
    # generative (not an AMBER category: its own name, counted in the mean as VLMEvalKit): row 5 Unknown -> 0
    assert res.metrics == pytest.approx(
        {"Avg ACC": 250 / 4, "Existence": 100.0, "Attribute": 50.0, "Relation": 100.0, "generative": 0.0}
    )
    assert list(res.table.columns) == ["Existence", "Attribute", "Relation", "generative", "Avg ACC"]
    assert any("outside AMBER's discriminative ones" in n and "generative" in n for n in res.notes)
    assert not any("spelled other than" in n for n in res.notes)  # VLMEvalKit ignores case for AMBER too


def test_amber_needs_its_categories() -> None:
    df = pd.DataFrame({"index": [1, 2], "answer": ["yes", "no"], "prediction": ["Yes", "No"]})
    with pytest.raises(ValueError, match="AMBER scoring: the predictions table has no `category` column"):
        score_yorn(df, metric="amber")
    df["category"] = ["relation", None]
    with pytest.raises(ValueError, match=r"AMBER scoring: row 1 \(index 2\), field `category` is empty"):
        score_yorn(df, metric="amber")


def test_vsr_f1_is_a_fraction_the_rest_percent() -> None:
    df = pd.DataFrame(
        {
            "index": range(5),
            "answer": ["Yes", "Yes", "No", "No", "No"],
            # TP 1, FN 1 (Unknown), FP 1, TN 2 (one of them a failed inference, a miss for acc)
            "prediction": ["yes", "Perhaps", "Yes", "No", None],
        }
    )
    res = score_yorn(df, metric="vsr")
    # precision 1/2, recall 1/2, F1 0.5; acc 2/5
    assert res.metrics == pytest.approx({"precision": 50.0, "recall": 50.0, "acc": 40.0, "f1_score": 0.5})
    assert res.primary == "acc" and res.scorer == "yorn_vsr"
    scoring = res.to_dict()
    assert scoring["metric_scales"]["f1_score"]["scale"] == "fraction"
    assert scoring["metric_scales"]["precision"]["scale"] == "percent"
    assert any("f1_score is a fraction" in n for n in res.notes)


def test_answers_in_another_case_are_noted_outside_amber() -> None:
    df = pd.DataFrame({"index": [1, 2, 3], "answer": ["yes", "No", "NO"], "prediction": ["Yes", "No", "no"]})
    res = score_yorn(df, metric="vsr")
    assert res.metrics["acc"] == pytest.approx(100.0)
    assert any(n.startswith("2 row(s) have an answer spelled other than `Yes`/`No`") for n in res.notes)
