"""vlmkit.scoring.benchmarks.spatial_stare called directly on a hand-made table: per-category accuracy, the yes/no
categories' F1 through the letters the question names, and the macro of its six terms, all worked out by hand."""

from __future__ import annotations

import pandas as pd
import pytest

from vlmkit.scoring.benchmarks.spatial_stare import stare_metrics, yes_f1, yes_no_letters

YN = "Can the net fold into a cube? A. yes B. no"


def test_letters_named_in_the_question() -> None:
    assert yes_no_letters(YN) == {"a": "yes", "b": "no"}
    assert yes_no_letters("Options: (A) No (B) YES") == {"a": "no", "b": "yes"}
    assert yes_no_letters("A\u200b. yes B.\ufeffno") == {"a": "yes", "b": "no"}  # zero-width characters dropped
    assert yes_no_letters("Pick: A) red B) blue") == {}
    assert yes_no_letters(None) == {}


def test_yes_f1_by_hand() -> None:
    # TP 2, FP 1, FN 1: precision 2/3, recall 2/3 -> F1 2/3
    assert yes_f1(["yes", "yes", "no", "yes"], ["yes", "yes", "yes", "no"]) == pytest.approx(2 / 3)
    assert yes_f1(["no", "yes"], ["no", "no"]) == 0.0  # no true positive
    assert yes_f1(["yes"], ["yes"]) == 1.0


def test_stare_figures_by_hand() -> None:
    rows = [
        # category, question, answer, read letter, hit
        ("2D_trans ", "q", "A", "A", True),
        ("2d_trans", "q", "B", "C", False),  # 2d_trans: 1 of 2 -> 50
        ("2d_trans_vsim", "q", "A", "A", True),  # 100; term (0.5 + 1) / 2 = 0.75
        ("temporal", "q", "C", "C", True),  # 100
        ("folding_nets", YN, "A", "A", True),  # yes/yes: TP
        ("folding_nets", YN, "B", "A", False),  # no/yes: FP
        ("folding_nets", YN, "A", None, False),  # unread: left out of F1, in the accuracy
        ("folding_nets", YN, "A", "A", True),  # TP -> F1: precision 2/3, recall 2/2 -> 0.8; accuracy 2 of 4
    ]
    df = pd.DataFrame({"category": [r[0] for r in rows], "question": [r[1] for r in rows],
                       "answer": [r[2] for r in rows]})
    out = stare_metrics(df, [r[4] for r in rows], [r[3] for r in rows])
    assert out == pytest.approx({
        "2d_trans_accuracy": 50.0, "2d_trans_vsim_accuracy": 100.0, "temporal_accuracy": 100.0,
        "folding_nets_accuracy": 50.0, "folding_nets_f1": 80.0,
        # terms present: 2d (0.75), folding (F1 0.8), temporal (1.0) -> (0.75 + 0.8 + 1) / 3
        "macro": 100 * (0.75 + 0.8 + 1.0) / 3,
    })


def test_category_agg_wins_and_absent_categories_stay_out() -> None:
    df = pd.DataFrame({"category_agg": ["perspective", "perspective"], "category": ["temporal", "temporal"],
                       "answer": ["A", "B"]})
    out = stare_metrics(df, [True, False], ["A", "A"])
    assert out == pytest.approx({"perspective_accuracy": 50.0, "macro": 50.0})
    assert stare_metrics(pd.DataFrame({"answer": ["A"]}), [True], ["A"]) == {}  # no category: no figure


def test_vlmevalkits_figures_count_absent_categories_as_zero() -> None:
    df = pd.DataFrame({"category": ["perspective", "perspective", "folding_nets"], "question": ["q", "q", YN],
                       "answer": ["A", "B", "A"]})
    out = stare_metrics(df, [True, False, True], ["A", "A", "A"], vlmevalkit=True)
    # StareBench.evaluate: every one of the ten categories has an accuracy (0 without rows); the macro's terms:
    # 2d (0, 0) -> 0, 3d (0, 0) -> 0, folding (F1 1.0; folding_nets_vsim has none) -> 1.0, tangram: none (F1s of
    # absent yes/no categories are None) -> left out, temporal 0, perspective 0.5 -> (0 + 0 + 1 + 0 + 0.5) / 5.
    zero = {f"{c}_accuracy": 0.0 for c in ("2d_trans", "2d_trans_vsim", "3d_trans", "3d_trans_vsim", "temporal",
                                            "folding_nets_vsim", "tangram_puzzle", "tangram_puzzle_vsim")}
    assert out == pytest.approx({**zero, "perspective_accuracy": 50.0, "folding_nets_accuracy": 100.0,
                                 "folding_nets_f1": 100.0, "macro": 100 * 1.5 / 5})
    # vlmkit's own figures leave the absent categories out: perspective 0.5, folding 1.0 -> 75
    assert stare_metrics(df, [True, False, True], ["A", "A", "A"])["macro"] == pytest.approx(75.0)
