"""results.json through vlmkit.outputs.schema: the document the writer builds (keys, order, version), read back and
written again byte for byte, and the tolerant reader on hand-edited and damaged files."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pytest

from vlmkit.outputs.json_files import write_json
from vlmkit.outputs.run_files import better_results, results_document
from vlmkit.outputs.schema import (
    SCHEMA_VERSION,
    Results,
    UnreadableFile,
    read_predictions,
    read_results,
)
from vlmkit.scoring.result import EvalResult
from vlmkit.scoring.scales import Scale

# docs/outputs.md, in the file's order
DOCUMENTED_KEYS = [
    "schema_version", "status", "started_at", "completed_at", "duration_s", "argv", "packages", "git", "host",
    "model", "dataset", "run", "counts", "errors_by_kind", "scoring", "scoring_failures", "usage", "judge",
    "message", "notes", "files",
]


@dataclass
class Outcome:
    """The attributes results_document reads of the runner's DatasetRun."""

    status: str = "partial"
    n_total: int = 4
    n_completed: int = 3
    n_errors: int = 1
    evaluation: EvalResult | None = None
    message: str | None = None
    errors: dict[str, Any] = field(default_factory=dict)
    scoring_failures: dict[str, Any] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)
    files: dict[str, str] = field(default_factory=dict)


def _evaluation() -> EvalResult:
    table = pd.DataFrame([{"split": "dev", "Overall": 0.75, "colour": np.float64(0.5), "shape": float("nan")}])
    return EvalResult(
        scorer="mcq", metrics={"Overall": np.float64(0.75), "colour": 0.5, "shape": float("nan")}, primary="Overall",
        per_sample=pd.DataFrame({"index": [0, 1, 2, 3]}), table=table,
        counts={"total": 4, "unparsed": np.int64(1)}, notes=["one note", "ünïcode note"], scale=Scale("fraction"),
    )


def _document(outcome: Outcome) -> dict[str, Any]:
    records = {"0": {"usage": {"input_tokens": 10, "output_tokens": 2}}, "1": {"usage": {"input_tokens": 5}},
               "2": {"usage": None}, "3": {}}
    return results_document(
        outcome, {"name": "MCQBench", "md5": "0" * 32, "kind": "mcq"}, records, ["0", "1", "2", "3"],
        started="2026-11-27T10:00:00+00:00", duration=1.23456, truncated_cells=0, argv=["vlmkit", "run"],
        model={"name": "m", "target": "pkg:Cls", "kwargs": {}, "settings": None, "probe": None},
        run={"mode": "all", "nproc": 4, "limit": 2}, judge={"name": None, "note": "rules only"},
    )


def test_the_writer_builds_the_documented_keys_in_order() -> None:
    outcome = Outcome(evaluation=_evaluation(), errors={"timeout": {"count": 1, "first_index": 0,
                                                                    "first_message": "slow", "status": None}},
                      notes=["asked again: 1"], files={"results": "x/results.json"})
    document = _document(outcome)
    assert list(document) == DOCUMENTED_KEYS
    assert document["schema_version"] == SCHEMA_VERSION == 1
    assert document["counts"] == {"total": 4, "completed": 3, "inference_errors": 1, "not_run": 0,
                                  "xlsx_cells_truncated": 0}
    assert document["usage"] == {"requests": 2, "input_tokens": 15, "output_tokens": 2, "reasoning_tokens": 0}
    assert document["dataset"] == {"name": "MCQBench", "md5": "0" * 32, "kind": "mcq", "limit": 2, "n_evaluated": 4}
    assert document["run"] == {"mode": "all", "nproc": 4} and document["duration_s"] == 1.235


@pytest.mark.parametrize("scored", [True, False])
def test_a_written_results_json_reads_back_and_writes_the_same_bytes(tmp_path: Path, scored: bool) -> None:
    outcome = Outcome(evaluation=_evaluation() if scored else None, status="partial" if scored else "stopped",
                      message=None if scored else "m x MCQBench: the server refused")
    first, second = tmp_path / "results.json", tmp_path / "again.json"
    write_json(first, _document(outcome))
    warnings: list[str] = []
    results = read_results(first, warnings)
    assert warnings == []
    write_json(second, results.to_dict())
    assert second.read_bytes() == first.read_bytes()
    assert isinstance(results, Results) and results.status == outcome.status
    assert (results.model_name, results.dataset_name) == ("m", "MCQBench")
    if scored:
        assert results.primary_metric == {"name": "Overall", "value": 0.75, "scale": "fraction",
                                          "higher_is_better": True}
        assert results.scoring["metrics"]["shape"] is None  # NaN was written as null
    else:
        assert results.primary_metric is None and results.scoring is None


def _damaged(tmp_path: Path, edit: dict[str, Any]) -> Path:
    """A valid results.json with `edit` applied: `a.b` keys reach into blocks."""
    document = _document(Outcome(evaluation=_evaluation(), notes=["kept note"]))
    for where, value in edit.items():
        *parents, last = where.split(".")
        block = document
        for name in parents:
            block = block[name]
        block[last] = value
    path = tmp_path / "m" / "MCQBench" / "results.json"
    path.parent.mkdir(parents=True)
    path.write_text(json.dumps(document, indent=2, default=str), encoding="utf-8")
    return path


@pytest.mark.parametrize(("edit", "field", "check"), [
    ({"notes": "a note typed by hand"}, "notes", lambda r: r.notes == []),
    ({"scoring": ["Overall", 0.75]}, "scoring", lambda r: r.scoring is None),
    ({"counts.total": "4"}, "counts.total", lambda r: "total" not in r.counts and r.counts["completed"] == 3),
    ({"scoring.primary_metric.value": "high"}, "scoring.primary_metric.value",
     lambda r: "value" not in r.scoring["primary_metric"] and r.scoring["primary_metric"]["name"] == "Overall"),
    ({"scoring.notes": "one"}, "scoring.notes", lambda r: "notes" not in r.scoring and r.notes == ["kept note"]),
    ({"model": "m"}, "model", lambda r: r.model == {}),
    ({"errors_by_kind": {"timeout": 3}}, "errors_by_kind.timeout", lambda r: r.errors_by_kind == {}),
    ({"completed_at": 20261127}, "completed_at", lambda r: r.completed_at is None),
    ({"counts.completed": True}, "counts.completed", lambda r: "completed" not in r.counts),
])
def test_a_field_of_the_wrong_type_is_left_out_in_one_line(tmp_path: Path, edit: dict, field: str, check) -> None:
    path = _damaged(tmp_path, edit)
    warnings: list[str] = []
    results = read_results(path, warnings)
    assert len(warnings) == 1 and str(path) in warnings[0] and f"`{field}`" in warnings[0], warnings
    assert check(results)
    assert results.status == "partial" and results.dataset["name"] == "MCQBench"  # the rest is read


def test_two_bad_fields_one_line(tmp_path: Path) -> None:
    path = _damaged(tmp_path, {"notes": "x", "counts": [1]})
    warnings: list[str] = []
    read_results(path, warnings)
    assert len(warnings) == 1 and "`notes`" in warnings[0] and "`counts`" in warnings[0]


@pytest.mark.parametrize(("text", "message"), [
    ("{not json", "not JSON"),
    ("[1, 2]", "no `status` field"),
    ('{"status": 3}', "no `status` field"),
    ('{"counts": {"total": 3}}', "no `status` field"),
])
def test_what_is_no_results_document_is_refused_in_one_line(tmp_path: Path, text: str, message: str) -> None:
    path = tmp_path / "results.json"
    path.write_text(text, encoding="utf-8")
    with pytest.raises(UnreadableFile, match=message) as caught:
        read_results(path)
    assert str(path) in str(caught.value) and "\n" not in str(caught.value)
    with pytest.raises(UnreadableFile, match="cannot be read"):
        read_results(tmp_path / "missing.json")


def test_a_results_json_without_a_version_predates_it(tmp_path: Path) -> None:
    path = tmp_path / "results.json"
    path.write_text('{"status": "success"}', encoding="utf-8")
    assert read_results(path).schema_version is None


def test_better_results_reads_counts_through_the_schema(tmp_path: Path) -> None:
    path = _damaged(tmp_path, {})
    assert better_results(path, 4, 1) == 3 and better_results(path, 4, 3) is None and better_results(path, 5, 1) is None
    path.write_text(path.read_text().replace('"completed": 3', '"completed": "3"'))
    assert better_results(path, 4, 1) is None  # a count that is no number holds nothing
    assert better_results(tmp_path / "none.json", 4, 1) is None


def test_prediction_records_keep_good_fields_and_say_which_were_left_out(tmp_path: Path) -> None:
    path = tmp_path / "predictions.jsonl"
    good = {"index": 0, "prompt": [{"role": "user", "content": [{"type": "text", "value": "Q"}]}],
            "prediction": "A", "error": None, "metadata": {"category": "c"}, "hit": True, "score": 1}
    bad = {"index": 1, "prompt": "Q as a string", "prediction": "B", "metadata": ["c"], "hit": "yes"}
    path.write_text("\n".join(json.dumps(r) for r in (good, bad)) + "\n\n", encoding="utf-8")
    warnings: list[str] = []
    records = list(read_predictions(path, warnings))
    assert records[0] == good
    assert records[1] == {"index": 1, "prediction": "B"}
    assert len(warnings) == 1 and str(path) in warnings[0]
    assert all(f"line 2: `{name}`" in warnings[0] for name in ("prompt", "metadata", "hit"))


def test_a_prediction_line_that_is_not_a_record_names_the_line(tmp_path: Path) -> None:
    path = tmp_path / "predictions.jsonl"
    path.write_text('{"index": 0}\n{"index": \n', encoding="utf-8")
    with pytest.raises(UnreadableFile, match=r"predictions.jsonl: line 2 is not JSON"):
        list(read_predictions(path))
    path.write_text('{"index": 0}\n{"prediction": "A"}\n', encoding="utf-8")
    with pytest.raises(UnreadableFile, match=r"line 2 has no `index` field"):
        list(read_predictions(path))
    path.write_bytes('{"index": 0, "prediction": "é"}\n'.encode("utf-8") + b'{"index": 1, "prediction": "\xe9"}\n')
    with pytest.raises(UnreadableFile, match=r"predictions.jsonl: line 2 is not JSON"):
        list(read_predictions(path))
