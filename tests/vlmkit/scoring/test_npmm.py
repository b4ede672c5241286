"""NPMM as VLMEvalKit scores it (NPMM.py and utils/NPMM/*.py at e8e78f05): each task's feasibility and value worked
by hand on small graphs, the per-task SR/AR, group and overall figures, and the name built from the catalog."""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest

from datasets_tsv.catalog.registry import build_dataset
from tests.support.tsvs import b64, image_bytes, write_tsv
from vlmkit.scoring.benchmarks.npmm import score_npmm, validate

TRIANGLE_DIST = {"0": {"1": 1, "2": 4}, "1": {"0": 1, "2": 2}, "2": {"0": 4, "1": 2}}
TRIANGLE = {"0": [1, 2], "1": [0, 2], "2": [0, 1]}
PATH3 = {"0": [1], "1": [0, 2], "2": [1]}
K4_CUT = {"0": {"1": 3, "2": 1, "3": 1}, "1": {"0": 3, "2": 1, "3": 1}, "2": {"0": 1, "1": 1, "3": 3},
          "3": {"0": 1, "1": 1, "2": 3}}  # fmt: skip
MAXCUT = {"num_vertices": 3, "edges": {"0-1": 2, "1-2": 3, "0-2": 1}}

ROWS = [
    # (task, graph, optimum, reply, (feasible, value), ratio)
    ("NpTsp", TRIANGLE_DIST, 7, "Answer: [0, 1, 2, 0]", (True, 7.0), 1.0),
    ("NpTsp", TRIANGLE_DIST, 7, "Answer: [0, 1, 0]", (False, 0.0), 0.0),  # not every city
    ("NpHamiltonianCycle", TRIANGLE, 4, "Answer: 0 -> 1 -> 2 -> 0", (True, 4.0), 1.0),
    ("NpVertexCover", PATH3, 1, "Answer: [0, 2]", (True, 2.0), 0.5),  # minimise: 1 / 2
    ("NpDominatingSet", PATH3, 1, "Answer: [1]", (True, 1.0), 1.0),
    ("NpMaximumCliqueProblem", {**TRIANGLE, "3": []}, 3, "Answer: [0, 1, 2]", (True, 3.0), 1.0),
    ("NpMaximumSet", {"0": ["1"], "1": ["0"], "2": []}, 2, None, (False, 0.0), 0.0),  # a failed call
    ("NpGcpD", PATH3, 2, "Answer: [1, 2, 1]", (True, 2.0), 1.0),
    ("NpGcpD", PATH3, 2, "Answer: [1, 1, 2]", (False, 0.0), 0.0),  # 0 and 1 share a colour
    ("NpFeedbackVertexSet", TRIANGLE, 1, "Answer: [2]", (True, 1.0), 1.0),
    ("NpMinimumCut", K4_CUT, 4, "Answer: [[0, 1], [2, 3]]", (True, 4.0), 1.0),
    ("NpMaximumCut", MAXCUT, 5, "Answer: [[0], [1, 2]]", (True, 3.0), 0.6),  # edges 0-1 and 0-2 cross
]


@pytest.mark.parametrize(("task", "graph", "reply", "expected"),
                         [(t, g, r, e) for t, g, _, r, e, _ in ROWS if r is not None])  # fmt: skip
def test_each_validator_by_hand(task, graph, reply, expected):
    assert validate(task, graph, reply) == expected


def test_vlmevalkit_quirks_kept():
    square = {"0": [1, 3], "1": [0, 2], "2": [1, 3], "3": [2, 0]}
    # a closed walk through two of four vertices passes: VLMEvalKit does not ask for every vertex
    assert validate("NpHamiltonianCycle", square, "Answer: [0, 1, 0]") == (True, 3.0)
    # adjacency is looked up as text: with integer neighbour lists no two vertices look adjacent
    assert validate("NpMaximumSet", {"0": [1], "1": [0]}, "Answer: [0, 1]") == (True, 2.0)
    assert validate("NpMaximumSet", {"0": ["1"], "1": ["0"]}, "Answer: [0, 1]") == (False, 0.0)
    # the answer after the last `Answer:`; no `Answer:` is infeasible
    assert validate("NpDominatingSet", PATH3, "Answer: [0]\nso\nAnswer: [1]") == (True, 1.0)
    assert validate("NpVertexCover", PATH3, "[1]") == (False, 0.0)
    # vlmkit reads literals only (VLMEvalKit eval()s this one)
    assert validate("NpMaximumSet", {"0": [], "1": [], "2": []}, "Answer: [1+1]") == (False, 0.0)


def frame(rows=ROWS) -> pd.DataFrame:
    return pd.DataFrame({"index": range(len(rows)), "data_source": [f"npmm/{r[0]}" for r in rows],
                         "graph": [repr(r[1]) for r in rows], "ground_truth": [str(r[2]) for r in rows],
                         "prediction": [r[3] for r in rows]})  # fmt: skip


def test_figures_by_hand():
    result = score_npmm(frame())
    m = result.metrics
    # tasks (SR, AR): Tsp (.5, .5), Hamiltonian (1, 1) -> path (.75, .75); VertexCover (1, .5), Dominating (1, 1) ->
    # covering (1, .75); MCP (1, 1), MaximumSet (0, 0) -> subgraph (.5, .5); Gcp (.5, .5), FVS (1, 1) -> constraint
    # (.75, .75); MinimumCut (1, 1), MaximumCut (1, .6) -> partitioning (1, .8)
    assert m == {
        "constraint_success_rate": 75.0, "constraint_avg_ratio": 75.0,
        "covering_success_rate": 100.0, "covering_avg_ratio": 75.0,
        "partitioning_success_rate": 100.0, "partitioning_avg_ratio": 80.0,
        "subgraph_success_rate": 50.0, "subgraph_avg_ratio": 50.0,
        "path_success_rate": 75.0, "path_avg_ratio": 75.0,
        "SR": 80.0, "AR": 71.0,
    }  # fmt: skip
    assert result.primary == "AR" and result.counts["inference_errors"] == 1
    assert result.per_sample["ratio"].tolist() == pytest.approx([r[5] for r in ROWS])


def test_rows_of_other_tasks_are_left_out_and_a_bad_graph_is_one_line():
    rows = [*ROWS[:1], ("NpOther", {}, 1, "Answer: []", None, None)]
    result = score_npmm(frame(rows))
    assert result.metrics["SR"] == 100.0 and result.counts["scored"] == 1
    bad = frame(ROWS[:1]).assign(graph=["{'0': "])
    with pytest.raises(ValueError, match="row index 0, field graph: not a Python literal"):
        score_npmm(bad)


def test_by_catalog_name(lmu_root: Path):
    image = b64(image_bytes())
    write_tsv(lmu_root / "npmm.tsv", [
        {"index": i, "image": image, "question": f"Solve {r[0]}.", "data_source": f"npmm/{r[0]}", "graph": repr(r[1]),
         "ground_truth": r[2]} for i, r in enumerate(ROWS)])  # fmt: skip
    ds = build_dataset("npmm", root=lmu_root, progress=False, keep_local_tsv=True)
    msgs = ds.build_prompt(0)
    assert [p["type"] for p in msgs] == ["image", "text"] and msgs[1]["value"] == "Solve NpTsp."
    result = ds.evaluate(ds.data.assign(prediction=[r[3] for r in ROWS]))
    assert result.metrics["AR"] == 71.0 and result.metrics["SR"] == 80.0
