"""Every scorer writes the scale of each figure and its direction into results.json's scoring block; older
blocks without them are read by the scorer's name."""

from __future__ import annotations

import json

import pandas as pd
import pytest

from vlmkit.scoring.kinds.mcq import score_mcq
from vlmkit.scoring.result import EvalResult
from vlmkit.scoring.scales import FRACTION, PERCENT, POINTS, Scale, infer_scale
from vlmkit.scoring.kinds.text_qa import score_text_qa
from vlmkit.scoring.kinds.vqa import score_vqa
from vlmkit.scoring.kinds.yorn import score_yorn


def _block(result: EvalResult) -> dict:
    return json.loads(json.dumps(result.to_dict()))  # as results.json holds it


def _mcq() -> pd.DataFrame:
    return pd.DataFrame({"index": [0, 1], "prediction": ["A", "B"], "answer": ["A", "A"], "A": ["x", "x"],
                         "B": ["y", "y"], "category": ["c", "c"]})


@pytest.mark.parametrize(
    "make, kind",
    [
        (lambda: score_mcq(_mcq(), circular=False), FRACTION),
        (lambda: score_yorn(pd.DataFrame({"index": [1], "prediction": ["Yes"], "answer": ["Yes"]})), PERCENT),
        (lambda: score_yorn(pd.DataFrame({"index": [1], "prediction": ["Yes"], "answer": ["No"]}), "pope"), PERCENT),
        (lambda: score_vqa(pd.DataFrame({"index": [1], "prediction": ["cat"], "answer": ["cat"]})), PERCENT),
        (lambda: score_vqa(pd.DataFrame({"index": [1], "prediction": ["cat"], "answer": ["cat"]}), "anls"), PERCENT),
        (lambda: score_text_qa(pd.DataFrame({"index": [1], "prediction": ["a"], "answer": ["a"]})), PERCENT),
    ],
)
def test_each_scorer_records_its_scale(make, kind: str) -> None:
    block = _block(make())
    primary = block["primary_metric"]
    assert primary["scale"] == kind and primary["higher_is_better"] is True
    assert block["scale"] == {"scale": kind, "higher_is_better": True}
    assert set(block["metric_scales"]) == set(block["metrics"])
    assert all(s["scale"] == kind for s in block["metric_scales"].values())


def test_mme_sums_are_points_out_of_200_per_category_and_accuracies_percent() -> None:
    df = pd.DataFrame({
        "index": [1, 2, 3, 4], "prediction": ["Yes", "No", "Yes", "Yes"], "answer": ["Yes", "No", "No", "Yes"],
        "category": ["OCR", "OCR", "code_reasoning", "code_reasoning"], "image_path": ["a", "a", "b", "b"],
    })
    block = _block(score_yorn(df, "mme"))
    assert block["primary_metric"] == {"name": "Overall", "value": 250.0, "scale": POINTS, "higher_is_better": True,
                                       "out_of": 400.0}
    scales = block["metric_scales"]
    assert scales["perception"]["out_of"] == 200.0 and scales["reasoning"]["out_of"] == 200.0
    assert scales["OCR"] == {"scale": POINTS, "higher_is_better": True, "out_of": 200.0}
    assert scales["OCR/acc"]["scale"] == PERCENT and scales["code_reasoning/acc+"]["scale"] == PERCENT


def test_ocrbench_counts_points_out_of_its_rows() -> None:
    df = pd.DataFrame({"index": [1, 2, 3], "prediction": ["abc", "x", "y"], "answer": ["abc", "z", "y"],
                       "category": ["Doc-oriented VQA", "Regular Text Recognition", "Doc-oriented VQA"]})
    block = _block(score_vqa(df, "ocrbench"))
    assert block["primary_metric"]["scale"] == POINTS and block["primary_metric"]["out_of"] == 3.0
    assert block["metric_scales"]["Doc-oriented VQA"]["out_of"] == 2.0


def test_a_result_without_scales_is_read_from_its_scorer_name() -> None:
    """datasets_tsv's custom MCQ builds its EvalResult by position, without a scale: its block still says one."""
    result = EvalResult("custom_mcq", {"Overall": 0.5}, "Overall", pd.DataFrame({"index": [1]}))
    assert _block(result)["primary_metric"]["scale"] == FRACTION
    unknown = EvalResult("someone_elses", {"Overall": 3.0}, "Overall", pd.DataFrame({"index": [1]}))
    block = _block(unknown)
    assert "scale" not in block["primary_metric"] and block["scale"] is None and block["metric_scales"] == {}


@pytest.mark.parametrize(
    "scorer, metric, expected",
    [
        ("mcq_circular", "Overall", Scale(FRACTION)),
        ("vqa_anls", "Overall", Scale(PERCENT)),
        ("yorn_hallusion", "qAcc", Scale(PERCENT)),
        ("yorn_mme", "Overall", Scale(POINTS)),
        ("yorn_mme", "OCR", Scale(POINTS, out_of=200.0)),
        ("yorn_mme", "OCR/acc+", Scale(PERCENT)),
        ("ocrbench", "Final Score", Scale(POINTS)),
        ("nobody_knows", "Overall", None),
    ],
)
def test_infer_scale(scorer: str, metric: str, expected: Scale | None) -> None:
    assert infer_scale(scorer, metric) == expected


def test_scale_formats_and_round_trips() -> None:
    assert Scale(FRACTION).format(145 / 180) == "0.8056"
    assert Scale(PERCENT).format(100 * 145 / 180) == "80.56"
    assert Scale(POINTS).format(812.0) == "812" and Scale(POINTS).format(1523.456) == "1523.46"
    scale = Scale(POINTS, higher_is_better=False, out_of=2800.0)
    assert Scale.from_dict(scale.to_dict()) == scale and scale.label() == "points /2800"
    assert Scale.from_dict({"scale": "per mille"}) is None
    with pytest.raises(ValueError, match="unknown scale"):
        Scale("per mille")
