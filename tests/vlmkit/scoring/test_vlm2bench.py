"""VLM2Bench as VLMEvalKit scores it (vlm2bench.py and utils/vlm2bench.py at e8e78f05): true/false pairs by group,
counting with its error penalty, grouping by option, worked by hand; the prompt by catalog name."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from datasets_tsv.catalog.registry import build_dataset
from tests.support.tsvs import b64, image_bytes, write_tsv
from vlmkit.scoring.benchmarks.vlm2bench import count_score, read_count, read_tf, score_vlm2bench


@pytest.mark.parametrize(("reply", "read"), [("T", "T"), ("TRUE", "T"), ("YES IT IS FALSE", "F"),
                                             ("TRUE OR FALSE? TRUE", None), ("IT'S RIGHT", None)])  # fmt: skip
def test_true_false_is_read_once(reply, read):
    assert read_tf(reply) == read


@pytest.mark.parametrize(("reply", "number"), [
    ("3", 3), ("There are three people", 3), ("2 or 3", None), ("twenty one", 21), ("I see 2 images, three cats", None),
    ("one thousand", None),  # `and` is cut out of `thousand` before the words are read (VLMEvalKit's replace)
])  # fmt: skip
def test_the_count_is_read(reply, number):
    assert read_count(reply) == number


def test_the_counting_penalty():
    assert count_score("2", 2, 2) == 100.0
    # n=4, answer 2, reply 3: worst error max(1, 2) = 2, weight 4/4, penalty 0.5 ** 0.1
    assert count_score("3", 2, 4) == pytest.approx(100 * (1 - 0.5 ** 0.1))
    # n=8, answer 4, reply 5: worst max(3, 4) = 4, weight 0.5, penalty 0.5 * 0.25 ** 0.1
    assert count_score("5", 4, 8) == pytest.approx(100 * (1 - 0.5 * 0.25 ** 0.1))
    assert count_score("3", 2, 2) == 0.0  # weight 2 * 1: penalty >= 1


def test_figures_per_category():
    rows = [
        ("pc-cpr_1_p", "pc-cpr", "T", "True"), ("pc-cpr_1_n", "pc-cpr", "F", "F"),  # group 1 right
        ("pc-cpr_2_p", "pc-cpr", "T", "T, F"), ("pc-cpr_2_n", "pc-cpr", "F", "F"),  # two answers: group 2 wrong
        ("pc-cpr_3_p", "pc-cpr", "T", "T"),  # a group of one counts as wrong
        ("oc-cnt_1", "oc-cnt", "2", "two"), ("oc-cnt_2", "oc-cnt", "2", "3"), ("oc-cnt_3", "oc-cnt", "n/a", "1"),
        ("oc-grp_1", "oc-grp", "(B)", "(B) the second group"), ("oc-grp_2", "oc-grp", "(B)", "(A) or (B)"),
        ("oc-grp_3", "oc-grp", "(C)", None),
    ]  # fmt: skip
    df = pd.DataFrame([{"index": i, "category": c, "answer": a, "prediction": p, "image_seq_len": 4}
                       for i, c, a, p in rows])
    result = score_vlm2bench(df)
    counting = (100 + 100 * (1 - 0.5 ** 0.1)) / 2  # oc-cnt_3's answer is no integer: left out
    assert result.metrics == pytest.approx({"pc-cpr": 100 / 3, "oc-cnt": counting, "oc-grp": 100 / 3,
                                            "Overall": (200 / 3 + counting) / 3})  # fmt: skip
    assert result.primary == "Overall" and result.counts["inference_errors"] == 1
    assert result.vlmevalkit.metrics == pytest.approx(result.metrics)


def test_vlmevalkits_xlsx_round_trip_reads_2_as_2_0():
    # replies `2` and ``: the column reads back as numbers with a NaN: `2.0` holds two numbers, so it scores 0
    df = pd.DataFrame([{"index": f"oc-cnt_{i}", "category": "oc-cnt", "answer": "2", "prediction": p,
                        "image_path": "['a.jpg', 'b.jpg']"} for i, p in enumerate(["2", ""])])  # fmt: skip
    result = score_vlm2bench(df)
    assert result.metrics["oc-cnt"] == 50.0 and result.vlmevalkit.metrics["oc-cnt"] == 0.0
    assert [d.index for d in result.vlmevalkit.differing] == ["oc-cnt_0"]


def test_the_prompt_by_catalog_name(lmu_root: Path):
    picture = b64(image_bytes())
    write_tsv(lmu_root / "VLM2Bench.tsv", [
        {"index": "pc-cpr_1_p", "image": str([picture, picture]), "question": "Is it the same person? T or F.",
         "answer": "T", "category": "pc-cpr"},
        {"index": "pc-cpr_1_n", "image": str([picture, picture]), "question": "Is it another person? T or F.",
         "answer": "F", "category": "pc-cpr"},
    ])  # fmt: skip
    ds = build_dataset("VLM2Bench", root=lmu_root, progress=False, keep_local_tsv=True)
    *images, text = ds.build_prompt(0)
    assert [p["type"] for p in images] == ["image", "image"]
    assert text["value"] == "Question: Is it the same person? T or F.\n"
    assert ds.evaluate(ds.data.assign(prediction=["T", "F"])).metrics["pc-cpr"] == 100.0


def _pairs_table(rng: np.random.Generator, pairs: int, rows: int) -> pd.DataFrame:
    """pc-cpr pairs (each right with chance 0.6: both replies right, else the second wrong) and oc-grp rows (right
    with chance 0.3)."""
    out = []
    for g in range(pairs):
        right = rng.random() < 0.6
        out += [{"index": f"pc-cpr_{g}_p", "category": "pc-cpr", "answer": "T", "prediction": "T"},
                {"index": f"pc-cpr_{g}_n", "category": "pc-cpr", "answer": "F", "prediction": "F" if right else "T"}]
    for r in range(rows):
        out.append({"index": f"oc-grp_{r}", "category": "oc-grp", "answer": "(A)",
                    "prediction": "(A)" if rng.random() < 0.3 else "(B)"})
    return pd.DataFrame(out)


def test_overall_interval_resamples_pairs_whole_within_each_category():
    """Overall is the mean of two category means (pairs, rows): its bootstrap SE is close to the closed form of a
    mean of independent stratum means, (1/2) sqrt(s1^2/n1 + s2^2/n2) over the pairs (not the rows) of pc-cpr."""
    df = _pairs_table(np.random.default_rng(7), pairs=120, rows=150)
    result = score_vlm2bench(df)
    pair_hits = np.array([100.0 if p == "F" else 0.0 for p in df[df["category"] == "pc-cpr"]["prediction"][1::2]])
    row_hits = np.array([100.0 if p == "(A)" else 0.0 for p in df[df["category"] == "oc-grp"]["prediction"]])
    assert result.metrics["Overall"] == pytest.approx((pair_hits.mean() + row_hits.mean()) / 2)
    closed = 0.5 * np.sqrt(pair_hits.var() / len(pair_hits) + row_hits.var() / len(row_hits))
    ci = result.interval
    assert ci is not None and ci.low <= result.metrics["Overall"] <= ci.high
    assert ci.se == pytest.approx(closed, rel=0.15)


def test_a_category_with_no_scored_row_adds_its_zero_to_every_resample():
    df = _pairs_table(np.random.default_rng(3), pairs=60, rows=0)
    df = pd.concat([df, pd.DataFrame([{"index": "oc-cnt_1", "category": "oc-cnt", "answer": "n/a", "prediction": "2"}])])
    result = score_vlm2bench(df.reset_index(drop=True))
    assert result.metrics["oc-cnt"] == 0.0
    assert result.metrics["Overall"] == pytest.approx(result.metrics["pc-cpr"] / 2)
    ci = result.interval
    assert ci is not None and ci.low <= result.metrics["Overall"] <= ci.high
    assert ci.high <= 50.0  # every resample halves pc-cpr's mean
