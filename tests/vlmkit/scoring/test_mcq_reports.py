"""vlmkit.scoring.kinds.mcq_reports on hand-made per-row hits: MMVP's pairs (rows 2i and 2i+1 in index order) and
MMSci's per-setting accuracies with their unweighted means. Each figure is worked out by hand beside its table."""

from __future__ import annotations

import pandas as pd
import pytest

from vlmkit.scoring.kinds.mcq_reports import paired_report, setting_report
from vlmkit.scoring.result import EvalResult


def _result(hits: list[bool]) -> EvalResult:
    """score_mcq's result as the reports read it: per-row hits in the table's row order."""
    per_sample = pd.DataFrame({"index": range(len(hits)), "hit": hits})
    return EvalResult("mcq", {"Overall": sum(hits) / len(hits)}, "Overall", per_sample, counts={"total": len(hits)})


def test_mmvp_pairs_follow_index_order_not_file_order() -> None:
    # file order 3, 1, 2, 0, 10, 11; index order 0 1 | 2 3 | 10 11
    df = pd.DataFrame({"index": [3, 1, 2, 0, 10, 11], "question": ["q2", "q1", "q2", "q1", "q3", "q3"]})
    hits = [True, True, False, True, True, False]  # by file row: 3 right, 1 right, 2 wrong, 0 right, 10 right, 11 wrong
    res = paired_report(_result(hits), df)
    # pairs: (0, 1) both right; (2, 3) one; (10, 11) one -> 1 of 3 pairs; rows 4 of 6
    assert res.metrics == pytest.approx({"Overall": 1 / 3, "Average": 4 / 6})
    assert res.primary == "Overall" and res.scorer == "mmvp"
    assert (res.counts["pairs"], res.counts["pair_hits"]) == (3, 1)
    assert res.table.to_dict("records") == [pytest.approx({"Average": 4 / 6, "Overall": 1 / 3})]


def test_mmvp_numeric_indices_sort_by_value() -> None:
    # as text "10" < "9"; by value 9 < 10: pairs (2, 9) and (10, 11)
    df = pd.DataFrame({"index": [10, 9, 11, 2], "question": ["b", "a", "b", "a"]})
    res = paired_report(_result([True, True, True, True]), df)
    assert res.metrics["Overall"] == 1.0 and res.counts["pairs"] == 2


def test_mmvp_bad_pairs_are_errors() -> None:
    with pytest.raises(ValueError, match=r"^MMVP pairs: 3 rows, an odd number"):
        paired_report(_result([True] * 3), pd.DataFrame({"index": [0, 1, 2], "question": ["a", "a", "b"]}))
    df = pd.DataFrame({"index": [0, 1, 2, 3], "question": ["a", "b", "c", "c"]})
    with pytest.raises(ValueError, match=r"^MMVP pairs: rows 0 and 1 \(consecutive in index order\) ask different "
                                         r"questions; 1 such pair\(s\)$"):
        paired_report(_result([True] * 4), df)


def test_mmsci_settings_subjects_and_categories_by_hand() -> None:
    rows = [
        # setting, subject, category, hit
        ("Fig2Cap", "bio", "x", True),
        ("Fig2Cap", "bio", "y", False),
        ("Fig2Cap", "chem", "x", True),
        ("SubFig2Cap", "bio", "x", True),
        ("SubFig2Cap", "chem", "y", False),
        ("SubCap2Fig", "chem", "x", False),
        ("Other", "bio", "x", True),  # another setting: left out
    ]
    df = pd.DataFrame([{"setting": s, "subject": b, "category": c} for s, b, c, _ in rows])
    res = setting_report(_result([h for *_, h in rows]), df)
    # Overall per setting: Fig2Cap 2/3, SubFig2Cap 1/2, SubCap2Fig 0/1 -> Avg (2/3 + 1/2 + 0) / 3
    overall_avg = (2 / 3 + 1 / 2 + 0) / 3
    # bio: Fig2Cap 1/2, SubFig2Cap 1/1, SubCap2Fig none -> 0 -> Avg 0.5; chem: 1/1, 0/1, 0/1 -> Avg 1/3
    # CATEGORY_x: Fig2Cap 2/2, SubFig2Cap 1/1, SubCap2Fig 0/1 -> Avg 2/3; CATEGORY_y: 0, 0, none -> 0
    assert res.metrics == pytest.approx({
        "Overall": overall_avg, "Fig2Cap": 2 / 3, "SubFig2Cap": 0.5, "SubCap2Fig": 0.0,
        "bio": 0.5, "chem": 1 / 3, "CATEGORY_x": 2 / 3, "CATEGORY_y": 0.0,
    })
    assert res.table["split"].tolist() == ["Fig2Cap", "SubFig2Cap", "SubCap2Fig", "Avg"]
    assert res.table["bio"].tolist() == pytest.approx([0.5, 1.0, 0.0, 0.5])
    assert res.table["Overall"].tolist() == pytest.approx([2 / 3, 0.5, 0.0, overall_avg])
    assert res.counts["setting_rows"] == 6 and res.scorer == "mmsci" and res.primary == "Overall"
    assert "1 row(s) of another `setting` are not in the figures (VLMEvalKit leaves them out)" in res.notes


def test_mmsci_a_setting_without_rows_is_left_out_of_avg() -> None:
    df = pd.DataFrame({"setting": ["Fig2Cap", "SubCap2Fig"], "subject": ["a", "a"], "category": ["c", "c"]})
    res = setting_report(_result([True, False]), df)
    assert res.metrics["Overall"] == pytest.approx(0.5)  # (1 + 0) / 2 settings, not / 3
    assert "SubFig2Cap" not in res.metrics
    assert any(n.startswith("no row of setting(s) SubFig2Cap: Avg is over the other settings") for n in res.notes)
    with pytest.raises(ValueError, match=r"^MMSci settings: no row has a `setting` of Fig2Cap, SubFig2Cap"):
        setting_report(_result([True]), pd.DataFrame({"setting": ["x"], "subject": ["a"], "category": ["c"]}))
    with pytest.raises(ValueError, match="no `subject` column"):
        setting_report(_result([True]), pd.DataFrame({"setting": ["Fig2Cap"], "category": ["c"]}))
