"""VLMEvalKit's figure beside vlmkit's (issue 23): results.json `scoring.vlmevalkit` shown as a `vlmevalkit` column in
the console table, report.md, report.csv and the HTML page, on the scale of the metric it names, blank where a run
has no such block (an older results.json still reads), and a damaged file is one warning."""

from __future__ import annotations

import csv
import io
import json
import re
from pathlib import Path

import pytest

from tests.support.browser import dump_dom, find_browser, parse
from tests.support.workdirs import FRACTION, PERCENT, points, record, scoring, write_run
from vlmkit.report.cli import main
from vlmkit.report.export import console, csv_text, markdown
from vlmkit.report.runs import collect_runs
from vlmkit.report.table import leaderboard


def vlmevalkit_block(name: str, value: float | None, *, rows: list[dict] | None = None, differing: int | None = None,
                     metrics: dict | None = None, notes: list[str] | None = None) -> dict:
    """`scoring.vlmevalkit` as vlmkit.scoring.vlmevalkit_figure.VlmevalkitFigure.to_dict writes it."""
    rows = rows or []
    return {"repo": "open-compass/VLMEvalKit", "commit": "e8e78f05", "primary_metric": {"name": name, "value": value},
            "metrics": metrics if metrics is not None else {name: value},
            "differing_rows": len(rows) if differing is None else differing, "rows": rows, "notes": notes or []}


def with_block(block: dict, figure: dict | None) -> dict:
    block["vlmevalkit"] = figure
    return block


@pytest.fixture
def mixed(tmp_path: Path) -> Path:
    """m1 x MCQ with VLMEvalKit's figure; m2 x MCQ partial with one; m1 x Old an older file without the key;
    m1 x OCR whose VLMEvalKit headline is another metric on another scale; m1 x Broken not JSON."""
    work = tmp_path / "outputs"
    hits = [record(i, "A", "A", hit=True, method="exact") for i in range(3)] + [record(3, "B", "A", hit=False)]
    write_run(work, "m1", "MCQ", records=hits, block=with_block(
        scoring("mcq", 0.75, scale=FRACTION), vlmevalkit_block("Overall", 0.5, rows=[
            {"index": 1, "vlmkit": "A", "vlmevalkit": "Z"}, {"index": 2, "vlmkit": "A", "vlmevalkit": None}])))
    write_run(work, "m2", "MCQ", status="partial", errors=1, block=with_block(
        scoring("mcq", 0.6, scale=FRACTION), vlmevalkit_block("Overall", 0.4)), records=hits)
    write_run(work, "m1", "Old", block=scoring("yorn_acc", 80.0, scale=PERCENT), records=hits)  # no `vlmevalkit` key
    ocr = scoring("ocrbench", 815.0, metric="Final Score", scale=points(1000.0),
                  metric_scales={"Final Score": points(1000.0), "Final Score Norm": PERCENT})
    ocr["metrics"]["Final Score Norm"] = 81.5
    write_run(work, "m1", "OCR", block=with_block(ocr, vlmevalkit_block("Final Score Norm", 81.0)), records=hits)
    broken = work / "m1" / "Broken" / "results.json"
    broken.parent.mkdir(parents=True)
    broken.write_text('{"status": "success", "scoring": ', encoding="utf-8")
    return work


def _columns(table: str) -> list[dict[str, str]]:
    """A fixed-width console table as dicts: the dashes line gives each column's span."""
    lines = table.splitlines()
    spans = [m.span() for m in re.finditer(r"-+", lines[1])]
    names = [lines[0][a:b].strip() or lines[0][a:].split()[0] for a, b in spans]

    def cells(line: str) -> list[str]:
        return [line[a:b].strip() if i < len(spans) - 1 else line[a:].strip() for i, (a, b) in enumerate(spans)]

    return [dict(zip(names, cells(line))) for line in lines[2:] if line.strip()]


def _by_pair(rows: list[dict[str, str]]) -> dict[tuple[str, str], dict[str, str]]:
    return {(r["model"], r["dataset"]): r for r in rows}


def test_console_shows_the_column_beside_value_on_the_named_metrics_scale(mixed: Path) -> None:
    warnings: list[str] = []
    rows = leaderboard(collect_runs([mixed], warnings=warnings))
    assert len(warnings) == 1 and str(mixed / "m1" / "Broken" / "results.json") in warnings[0]
    table = console(rows).split("\n\n")[0]
    header = table.splitlines()[0].split()
    assert header[header.index("value") + 1] == "vlmevalkit"
    cells = _by_pair(_columns(table))
    assert (cells[("m1", "MCQ")]["value"], cells[("m1", "MCQ")]["vlmevalkit"]) == ("0.7500", "0.5000")
    assert (cells[("m2", "MCQ")]["value"], cells[("m2", "MCQ")]["vlmevalkit"]) == ("0.6000*", "0.4000*")  # partial
    assert (cells[("m1", "Old")]["value"], cells[("m1", "Old")]["vlmevalkit"]) == ("80.00", "")
    # VLMEvalKit's headline is Final Score Norm, a percent: 81.00, not the points headline's "81"
    assert (cells[("m1", "OCR")]["value"], cells[("m1", "OCR")]["vlmevalkit"]) == ("815", "81.00")
    assert "VLMEvalKit (open-compass/VLMEvalKit @ e8e78f05) would print" in console(rows)


def test_csv_and_markdown_carry_it(mixed: Path) -> None:
    rows = leaderboard(collect_runs([mixed], warnings=[]))
    table = {(r["model"], r["dataset"]): r for r in csv.DictReader(io.StringIO(csv_text(rows)))}
    mcq = table[("m1", "MCQ")]
    assert (mcq["vlmevalkit"], mcq["vlmevalkit_display"], mcq["vlmevalkit_differing_rows"],
            mcq["vlmevalkit_commit"]) == ("0.5", "0.5000", "2", "e8e78f05")
    assert float(table[("m1", "OCR")]["vlmevalkit"]) == 81.0 and table[("m2", "MCQ")]["vlmevalkit_display"] == "0.4000*"
    old = table[("m1", "Old")]
    assert (old["vlmevalkit"], old["vlmevalkit_display"], old["vlmevalkit_differing_rows"]) == ("", "", "")
    md = markdown(rows)
    runs_header = next(line for line in md.splitlines() if line.startswith("| model | dataset | metric"))
    assert "| value | vlmevalkit | scale |" in runs_header
    assert any(line.startswith("| m1 | MCQ |") and "| 0.7500 | 0.5000 |" in line for line in md.splitlines())


def test_a_work_dir_without_any_figure_has_no_console_column_but_a_blank_csv_one(tmp_path: Path) -> None:
    write_run(tmp_path, "m", "D", block=scoring("mcq", 0.5, scale=FRACTION), records=[])
    write_run(tmp_path, "m", "E", block=with_block(scoring("mcq", 0.5, scale=FRACTION), None), records=[])  # null
    rows = leaderboard(collect_runs([tmp_path]))
    assert "vlmevalkit" not in console(rows) and "vlmevalkit" not in markdown(rows)
    table = list(csv.DictReader(io.StringIO(csv_text(rows))))
    assert [r["vlmevalkit"] for r in table] == ["", ""]


def test_a_figure_of_the_wrong_type_is_left_out_with_a_warning(tmp_path: Path) -> None:
    write_run(tmp_path, "m", "D", block=with_block(scoring("mcq", 0.5, scale=FRACTION), "0.4"), records=[])
    warnings: list[str] = []
    [run] = collect_runs([tmp_path], warnings=warnings)
    assert run.vlmevalkit is None and run.value == 0.5
    assert len(warnings) == 1 and "scoring.vlmevalkit" in warnings[0]


def _payload(page: Path) -> dict:
    text = page.read_text(encoding="utf-8")
    return json.loads(re.search(r'id="vlmkit-data">(.*?)</script>', text, re.S).group(1))


def test_the_page_carries_it(mixed: Path, tmp_path: Path) -> None:
    page = tmp_path / "page.html"
    assert main(["report", str(mixed), "--out", str(tmp_path / "t"), "--html", str(page)]) == 0
    runs = {(r["model"], r["dataset"]): r for r in _payload(page)["runs"]}
    figure = runs[("m1", "MCQ")]["vlmevalkit"]
    assert (figure["value"], figure["display"], figure["differing"], figure["metric"]) == (0.5, "0.5000", 2, "Overall")
    assert figure["source"] == "open-compass/VLMEvalKit @ e8e78f05"
    assert runs[("m1", "Old")]["vlmevalkit"] is None
    if find_browser() is None:
        pytest.skip("no Chromium on PATH: the page's data is checked, its runs table is not rendered")
    dom = parse(dump_dom(find_browser(), page.as_uri(), tmp_path / "profile"))
    table = dom.by_id("runs-table")
    heads = [th.text() for th in table.find_all("th")]
    at = next(i for i, text in enumerate(heads) if text.startswith("vlmevalkit"))
    assert heads[at - 1].startswith("value")
    shown = {(tds[0].text(), tds[1].text()): tds[at].text()
             for tds in (tr.find_all("td") for tr in table.find_all("tbody")[0].find_all("tr"))}
    assert shown[("m1", "MCQ")] == "0.5000" and shown[("m1", "Old")] == "" and shown[("m1", "OCR")] == "81.00"
