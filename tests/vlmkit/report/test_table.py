"""The leaderboard on a work dir of hand-made runs: latest run per pair, marks for partial and failed runs, each
figure on its own scale (recorded or inferred), best per dataset, filters, and the csv / markdown files."""

from __future__ import annotations

import csv
import io
import json
from pathlib import Path

import pytest

from tests.support.workdirs import FRACTION, PERCENT, points, record, scoring, write_run
from vlmkit.report.export import console, csv_text, markdown
from vlmkit.report.runs import ReportInputError, collect_runs, load_run
from vlmkit.report.table import grid, leaderboard


def _rows(work: Path, **kwargs):
    return {(r.run.model, r.run.dataset, r.run.stale): r for r in leaderboard(collect_runs([work], **kwargs))}


def test_latest_run_of_each_pair_with_marks_and_scales(work: Path) -> None:
    rows = _rows(work)
    assert len(rows) == 6  # the set-aside MCQ run of model-b is left out
    assert not any(stale for _, _, stale in rows)
    partial = rows[("model-b", "MCQBench", False)]
    assert partial.run.status == "partial" and partial.display == "0.7500*"  # never a plain number
    failed = rows[("model-b", "YNBench", False)]
    assert failed.run.value is None and failed.display == "" and failed.run.status == "failed"
    assert rows[("model-a", "YNBench", False)].display == "90.00"  # percent: two decimals, never 0.9
    assert rows[("model-a", "MCQBench", False)].display == "0.5000"  # fraction: never 50
    old = rows[("model-a", "MMEBench", False)]
    assert old.run.scale_source == "inferred" and old.run.scale.kind == "points"
    assert old.scale_label == "points (inferred)" and old.display == "1500.50"
    assert rows[("model-c", "VQABench", False)].run.scale_source == "recorded"


def test_best_per_dataset_only_among_finished_runs(work: Path) -> None:
    rows = _rows(work)
    # model-b's partial 0.75 is higher than model-a's 0.5, but a partial run is never the best
    assert rows[("model-a", "MCQBench", False)].best and not rows[("model-b", "MCQBench", False)].best
    assert rows[("model-a", "YNBench", False)].best and not rows[("model-b", "YNBench", False)].best


def test_lower_is_better_marks_the_lowest(tmp_path: Path) -> None:
    lower = {"scale": "percent", "higher_is_better": False}
    for model, value in (("m1", 12.0), ("m2", 7.5), ("m3", 30.0)):
        write_run(tmp_path, model, "ErrRate", block=scoring("custom", value, scale=lower), records=[])
    best = [r.run.model for r in leaderboard(collect_runs([tmp_path])) if r.best]
    assert best == ["m2"]


def test_all_lists_every_run_and_marks_the_latest(work: Path) -> None:
    runs = collect_runs([work], every_run=True)
    assert len(runs) == 7
    pair = [r for r in runs if (r.model, r.dataset) == ("model-b", "MCQBench")]
    assert [(r.path.name, r.latest) for r in pair] == [("results.stale1.json", False), ("results.json", True)]
    assert pair[0].value == 0.25 and pair[0].predictions.name == "predictions.stale1.jsonl"
    # the grid shows the latest run of each pair only
    table = grid(leaderboard(runs))
    cell = table.cells[("model-b", "MCQBench (Overall, fraction)")]
    assert cell.run.path.name == "results.json"
    text = console(leaderboard(runs), with_file=True)
    assert "results.stale1.json" in text


def test_latest_is_by_completed_at_not_by_file_name(tmp_path: Path) -> None:
    """A set-aside run that finished later than results.json (the later run wrote nothing of its own) wins."""
    write_run(tmp_path, "m", "D", block=scoring("mcq", 0.4, scale=FRACTION), completed_at="2026-01-01T00:00:00+00:00")
    write_run(tmp_path, "m", "D", block=scoring("mcq", 0.6, scale=FRACTION), stale=1,
              completed_at="2026-02-01T00:00:00+00:00")
    (run,) = collect_runs([tmp_path])
    assert run.stale and run.value == 0.6


def test_filters_take_names_and_shell_patterns(work: Path) -> None:
    assert {k[0] for k in _rows(work, models=["model-a"])} == {"model-a"}
    assert {k[1] for k in _rows(work, datasets=["MCQ*", "YNBench"])} == {"MCQBench", "YNBench"}
    assert _rows(work, models=["nobody"]) == {}


def test_points_with_out_of_and_an_unknown_scorer(tmp_path: Path) -> None:
    write_run(tmp_path, "m", "MME", block=scoring("yorn_mme", 1523.25, scale=points(2800)), records=[])
    write_run(tmp_path, "m", "Mystery", block=scoring("someone_elses", 0.3), records=[])
    rows = {r.run.dataset: r for r in leaderboard(collect_runs([tmp_path]))}
    assert rows["MME"].scale_label == "points /2800" and rows["MME"].display == "1523.25"
    assert rows["Mystery"].run.scale is None and rows["Mystery"].scale_label == "unknown"
    assert rows["Mystery"].display == "0.3"


def test_console_table_aligns_numbers_and_explains_marks(work: Path) -> None:
    text = console(leaderboard(collect_runs([work])))
    lines = text.splitlines()
    header = lines[0]
    value_end = header.index("value") + len("value")
    partial = next(line for line in lines if line.startswith("model-b  MCQBench"))
    assert partial[:value_end].endswith("0.7500*")  # right-aligned under its header
    failed = next(line for line in lines if line.startswith("model-b  YNBench"))
    assert "failed" in failed and not any(ch.isdigit() for ch in failed[header.index("metric"):value_end])
    assert "partial run" in text and "(inferred)" in text and "no value" in text
    assert "MCQBench (Overall, fraction)" in text  # the models x datasets grid


def test_csv_has_raw_values_and_their_scales(work: Path) -> None:
    rows = list(csv.DictReader(io.StringIO(csv_text(leaderboard(collect_runs([work]))))))
    by = {(r["model"], r["dataset"]): r for r in rows}
    assert by[("model-a", "YNBench")]["value"] == "90.0" and by[("model-a", "YNBench")]["scale"] == "percent"
    assert by[("model-b", "YNBench")]["value"] == "" and by[("model-b", "YNBench")]["status"] == "failed"
    assert by[("model-b", "MCQBench")]["display"] == "0.7500*"
    assert by[("model-a", "MMEBench")]["scale_source"] == "inferred"
    assert by[("model-a", "MCQBench")]["best"] == "true"


def test_markdown_bolds_the_best_and_escapes_marks(work: Path) -> None:
    text = markdown(leaderboard(collect_runs([work])))
    assert "| model-a | **0.5000** |" in text
    assert "0.7500\\*" in text  # the partial mark is not read as emphasis
    assert "## Runs" in text and "Legend:" in text


def test_a_file_that_is_not_results_is_reported_and_skipped(work: Path) -> None:
    bad = work / "model-x" / "Broken" / "results.json"
    bad.parent.mkdir(parents=True)
    bad.write_text("{not json", encoding="utf-8")
    warnings: list[str] = []
    runs = collect_runs([work], warnings=warnings)
    assert len(runs) == 6 and len(warnings) == 1 and str(bad) in warnings[0] and "not JSON" in warnings[0]
    with pytest.raises(ReportInputError, match="not JSON"):
        load_run(bad)


def test_names_come_from_results_json_not_folders(tmp_path: Path) -> None:
    path = write_run(tmp_path, "Qwen2.5-VL-7B-Instruct", "D", block=scoring("mcq", 0.5, scale=FRACTION),
                     records=[record(0, "A", "A", hit=True)])
    data = json.loads(path.read_text())
    data["model"]["name"] = "Qwen/Qwen2.5-VL-7B-Instruct"
    path.write_text(json.dumps(data))
    (run,) = collect_runs([tmp_path])
    assert run.model == "Qwen/Qwen2.5-VL-7B-Instruct"


def test_percent_run_written_by_a_real_scorer_reads_back(tmp_path: Path) -> None:
    """results.json's scoring block as EvalResult.to_dict writes it: the report reads scale and direction."""
    import pandas as pd

    from vlmkit.scoring.kinds.yorn import score_yorn

    result = score_yorn(pd.DataFrame({"index": [1, 2], "prediction": ["Yes", "No"], "answer": ["Yes", "Yes"]}))
    write_run(tmp_path, "m", "YN", block=json.loads(json.dumps(result.to_dict())), records=[])
    (row,) = leaderboard(collect_runs([tmp_path]))
    assert row.run.scale_source == "recorded" and row.scale_label == "percent" and row.display == "50.00"
    assert PERCENT.items() <= result.to_dict()["primary_metric"].items()
