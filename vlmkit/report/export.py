"""The leaderboard as text: the console table, report.md and report.csv.

- Console: one line per run (model, dataset, metric, value, ci95, vlmevalkit, scale, n, done, errors, unparsed,
  status, completed; plus the file with --all), numbers right-aligned, then the models x datasets grid when there
  are at least two of each (a cell: the value and its `+-` where there is one), then the legend. `ci95` (the
  headline's 95% interval as +-half-width, vlmkit.report.table.display_interval) and `vlmevalkit` (VLMEvalKit's
  figure for the same replies) are there when some run has one, as in `vlmkit run`'s summary; `vs_best` (the
  p-value of the paired test against the dataset's best finished run, vlmkit.report.table.against_best) when some
  run has one.
- report.md: the grid (best figure per dataset in bold), the runs table and the legend, then any sections the caller
  adds (vlmkit.report.frame_curve, vlmkit.report.video_modes).
- report.csv: one row per run with raw values (value empty where there is none) and everything needed to read
  them: scale, higher_is_better, out_of, scale_source, status, the results file; `vlmevalkit` (raw),
  `vlmevalkit_display`, `vlmevalkit_differing_rows` and `vlmevalkit_commit` always, empty where absent; the interval
  as numbers (`ci95_low`, `ci95_high`, `se` on the value's scale, `interval_method`) and the paired test against
  the best run (`vs_best_p`, `vs_best_discordant`, `vs_best_test`), empty where there is none.
"""

from __future__ import annotations

import csv
import io
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from vlmkit.core.spreadsheet import csv_line_end, spreadsheet_text
from vlmkit.report.table import Row, display_vs_best, grid, has_interval, has_vlmevalkit, legend, run_interval

RUN_COLUMNS = (
    "model", "dataset", "metric", "value", "ci95", "vlmevalkit", "scale", "n", "done", "errors", "unparsed", "status",
    "vs_best", "completed",
)  # fmt: skip
NUMERIC = frozenset({"value", "ci95", "vlmevalkit", "n", "done", "errors", "unparsed"})
CSV_COLUMNS = (
    "model", "dataset", "metric", "value", "display", "ci95_low", "ci95_high", "se", "interval_method", "vlmevalkit",
    "vlmevalkit_display", "vlmevalkit_differing_rows",
    "vlmevalkit_commit", "scale", "higher_is_better", "out_of", "scale_source", "n", "done", "errors", "not_run",
    "unparsed", "status", "best", "latest", "completed_at", "results", "vs_best_p", "vs_best_discordant",
    "vs_best_test",
)  # fmt: skip


def _unparsed(row: Row) -> Any:
    counts = row.run.scoring.get("counts") or {}
    return counts.get("unread", counts.get("unparsed")) if isinstance(counts, dict) else None  # after any judge


def run_cells(row: Row, *, with_file: bool = False) -> dict[str, Any]:
    run = row.run
    cells = {
        "model": run.model,
        "dataset": run.dataset,
        "metric": run.metric or "-",
        "value": row.display,
        "ci95": row.ci95,
        "vlmevalkit": row.vlmevalkit,
        "scale": row.scale_label,
        "n": run.n,
        "done": run.counts.get("completed"),
        "errors": run.counts.get("inference_errors"),
        "unparsed": _unparsed(row),
        "status": run.status,
        "vs_best": display_vs_best(row.vs_best),
        "completed": (run.completed_at or "")[:19].replace("T", " "),
    }
    if with_file:
        cells["file"] = str(run.path)
    return cells


def _text(value: Any) -> str:
    return "" if value is None else str(value)


def fixed_width(header: list[str], rows: list[list[Any]], right: set[int]) -> str:
    """A console table; columns whose position is in `right` are right-aligned."""
    cells = [[_text(v) for v in row] for row in rows]
    widths = [max([len(h)] + [len(r[i]) for r in cells]) for i, h in enumerate(header)]

    def line(values: list[str]) -> str:
        out = [v.rjust(w) if i in right else v.ljust(w) for i, (v, w) in enumerate(zip(values, widths))]
        return "  ".join(out).rstrip()

    return "\n".join([line(header), line(["-" * w for w in widths]), *(line(r) for r in cells)])


def _run_table(rows: list[Row], with_file: bool) -> tuple[list[str], list[list[Any]]]:
    """The runs table's header and rows; `ci95` and `vlmevalkit` only where some run carries one."""
    shown = {"ci95": has_interval(rows), "vlmevalkit": has_vlmevalkit(rows), "vs_best": any(r.vs_best for r in rows)}
    columns = [c for c in RUN_COLUMNS if shown.get(c, True)] + (["file"] if with_file else [])
    cells = [run_cells(r, with_file=with_file) for r in rows]
    return columns, [[c[name] for name in columns] for c in cells]


def console(rows: list[Row], *, with_file: bool = False) -> str:
    columns, body = _run_table(rows, with_file)
    parts = [fixed_width(columns, body, {i for i, c in enumerate(columns) if c in NUMERIC})]
    table = grid(rows)
    if len(table.models) >= 2 and len(table.columns) >= 2:
        header = ["model", *table.columns]
        lines = [[m, *(_grid_cell(table.cells.get((m, c))) for c in table.columns)] for m in table.models]
        parts.append(fixed_width(header, lines, set(range(1, len(header)))))
    notes = legend(rows)
    if notes:
        parts.append("\n".join(notes))
    return "\n\n".join(parts)


def _grid_cell(row: Row | None, *, md: bool = False) -> str:
    """A grid cell: the value, the status of a run without one, `-` for a pair never run. md: escaped, the best
    in bold."""
    if row is None:
        return "-"
    text = row.display or row.run.status
    ci = f" {row.ci95}" if row.display and row.ci95 else ""
    if not md:
        return text + ci
    text = _md_escape(text)
    return (f"**{text}**" if row.best and row.display else text) + _md_escape(ci)


def _md_escape(value: Any) -> str:
    text = _text(value).replace("\\", "\\\\").replace("\n", " ")
    for char in "|*_`[]<>":
        text = text.replace(char, "\\" + char)
    return text


def _md_table(header: list[str], rows: list[list[Any]], right: set[int], *, escaped: bool = False) -> list[str]:
    """A GitHub-flavoured markdown table; cells are escaped unless `escaped` says they already are."""
    esc = (lambda v: _text(v)) if escaped else _md_escape
    align = ["---:" if i in right else "---" for i in range(len(header))]
    lines = ["| " + " | ".join(_md_escape(h) for h in header) + " |", "| " + " | ".join(align) + " |"]
    lines += ["| " + " | ".join(esc(v) for v in row) + " |" for row in rows]
    return lines


def markdown(rows: list[Row], *, title: str = "vlmkit report", with_file: bool = False,
             sections: Sequence[str] = ()) -> str:
    """report.md; `sections`: more lines after the legend (the frame-budget curves, the video modes)."""
    table = grid(rows)
    out = [f"# {title}", ""]
    if table.models:
        out += ["## Leaderboard", "",
                "Latest run of each model x dataset; **bold**: the best finished run of the dataset.", ""]
        header = ["model", *table.columns]
        lines = [[_md_escape(m), *(_grid_cell(table.cells.get((m, c)), md=True) for c in table.columns)]
                 for m in table.models]
        out += _md_table(header, lines, set(range(1, len(header))), escaped=True) + [""]
    columns, body = _run_table(rows, with_file)
    out += ["## Runs", ""]
    out += _md_table(columns, body, {i for i, c in enumerate(columns) if c in NUMERIC}) + [""]
    notes = legend(rows)
    if notes:
        out += ["Legend:", ""] + [f"- {_md_escape(n)}" for n in notes] + [""]
    out += list(sections)
    return "\n".join(out)


def csv_text(rows: list[Row]) -> str:
    """report.csv: a cell a spreadsheet would run as a formula (a model or dataset named `=HYPERLINK(...)`) is
    quoted (vlmkit.outputs.schema.spreadsheet_text); numbers and ordinary text are as they are."""
    table = []
    for row in rows:
        run, scale = row.run, row.run.scale
        ci = run_interval(run) or {}
        cells = {
            "model": run.model,
            "dataset": run.dataset,
            "metric": run.metric or "",
            "value": "" if run.value is None else repr(run.value),
            "display": row.display,
            "ci95_low": repr(ci["low"]) if ci else "",
            "ci95_high": repr(ci["high"]) if ci else "",
            "se": repr(ci["se"]) if ci else "",
            "interval_method": _text(ci.get("method")) if ci else "",
            "vlmevalkit": "" if run.vlmevalkit_value is None else repr(run.vlmevalkit_value),
            "vlmevalkit_display": row.vlmevalkit,
            "vlmevalkit_differing_rows": _text(run.vlmevalkit_differing),
            "vlmevalkit_commit": _text((run.vlmevalkit or {}).get("commit")),
            "scale": scale.kind if scale else "",
            "higher_is_better": "" if scale is None else str(scale.higher_is_better).lower(),
            "out_of": "" if scale is None or scale.out_of is None else f"{scale.out_of:g}",
            "scale_source": run.scale_source,
            "n": _text(run.n),
            "done": _text(run.counts.get("completed")),
            "errors": _text(run.counts.get("inference_errors")),
            "not_run": _text(run.counts.get("not_run")),
            "unparsed": _text(_unparsed(row)),
            "status": run.status,
            "best": str(row.best).lower(),
            "latest": str(run.latest).lower(),
            "completed_at": run.completed_at or "",
            "results": str(run.path),
            "vs_best_p": "" if row.vs_best is None else repr(row.vs_best.p_value),
            "vs_best_discordant": "" if row.vs_best is None else str(row.vs_best.discordant),
            "vs_best_test": "" if row.vs_best is None else row.vs_best.method,
        }
        table.append({name: spreadsheet_text(value) for name, value in cells.items()})
    buffer = io.StringIO()
    line_end = csv_line_end(value for cells in table for value in cells.values())  # CRLF only where a text holds a CR
    writer = csv.DictWriter(buffer, fieldnames=list(CSV_COLUMNS), lineterminator=line_end)
    writer.writeheader()
    writer.writerows(table)
    return buffer.getvalue()


def write_tables(rows: list[Row], out_dir: Path, *, with_file: bool = False,
                 sections: Sequence[str] = ()) -> tuple[Path, Path]:
    """report.csv and report.md in out_dir (created); returns their paths. sections: report.md's lines after the
    legend."""
    from vlmkit.core.files import write_text_atomic

    out_dir.mkdir(parents=True, exist_ok=True)
    csv_path, md_path = out_dir / "report.csv", out_dir / "report.md"
    write_text_atomic(csv_path, csv_text(rows))
    write_text_atomic(md_path, markdown(rows, with_file=with_file, sections=sections))
    return csv_path, md_path
