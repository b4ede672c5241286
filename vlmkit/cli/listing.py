"""`vlmkit list datasets|models`: what the catalogs know, filtered. Part of the command line (top floor).

Reading the lists imports no dataset or model class, no pandas and no torch: the dataset catalog is parsed by
datasets_tsv.catalog.entries (csv + json), the model registry by vlm.registry. `vlmkit list datasets` prints, per
benchmark, its VLMEvalKit name, kind, scorer (vlmkit's, or `judge: ...` / `not yet: ...` with VLMEvalKit's scorer
when vlmkit cannot score it), whether VLMEvalKit uses an LLM judge, the TSV's size in rows when known, and a
description; then one summary line. Filters combine: `--kind mcq`, `--search ocr` (case-insensitive, over name
and description), `--scorable` (only what vlmkit scores). `--kind text` lists the text-only benchmarks instead
(MMLU, GSM8K, ARC, ...: datasets_tsv/catalog/text_benchmarks.tsv, names that are not VLMEvalKit's, run from a local
snapshot).

Lines fit the terminal (`shutil.get_terminal_size`, which honours $COLUMNS), or NOT_A_TERMINAL_WIDTH columns when
stdout is no terminal (a pipe, a file): the description and scorer columns are cut with an ellipsis, the name column
never; the summary and legend are wrapped. `--wide` prints whole lines whatever the width.
"""

from __future__ import annotations

import argparse
import itertools
import shutil
import sys
import textwrap
from collections.abc import Iterable, Sequence
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from datasets_tsv.catalog.entries import CatalogRow

HEADER = ("NAME", "KIND", "SCORER", "JUDGE", "ROWS", "DESCRIPTION")
CUT_COLUMNS = (2, 5)  # of HEADER: the scorer label and the description may be cut to fit; the others never
NOT_A_TERMINAL_WIDTH = 100  # the width fitted when stdout is not a terminal
MIN_CUT_WIDTH = 12  # a column is never cut narrower than this (lines overflow instead)
ELLIPSIS = "…"
JUDGE_LEGEND = (
    "judge: optional = VLMEvalKit asks an LLM only for answers its rules cannot parse (vlmkit too with --judge; "
    "rules alone without); required = only an LLM judge can score it (run with --judge MODEL --judge-api-base URL; "
    "`not yet` ones run with --mode infer only, where a prompt exists)"
)


def add_list_parser(sub: argparse._SubParsersAction) -> None:
    """The `list` subcommand (its function is `cmd_list`)."""
    p = sub.add_parser(
        "list", help="list known datasets or models",
        description="List the benchmarks vlmkit knows by name (VLMEvalKit's catalog) or the models it knows.",
    )  # fmt: skip
    p.add_argument("what", choices=("datasets", "models"))
    p.add_argument("--kind", default=None, help="datasets of this kind: mcq, yorn, vqa, caption, shortqa, video, ...; "
                   "text: the text-only benchmarks (MMLU, GSM8K, ...)")
    p.add_argument("--search", default=None, metavar="TEXT", help="case-insensitive text in the name or description")
    p.add_argument("--scorable", action="store_true", help="datasets vlmkit scores only")
    p.add_argument("--wide", action="store_true",
                   help="whole lines: descriptions are not cut to fit the terminal (or 100 columns off a terminal)")
    p.set_defaults(func=cmd_list)


def output_width() -> int:
    """The columns to fit: the terminal's when stdout is one, else NOT_A_TERMINAL_WIDTH."""
    if sys.stdout.isatty():
        return shutil.get_terminal_size((NOT_A_TERMINAL_WIDTH, 24)).columns
    return NOT_A_TERMINAL_WIDTH


def cmd_list(args: argparse.Namespace) -> int:
    from vlmkit.core.errors import ConfigError

    width = None if args.wide else output_width()
    if args.what == "models":
        if args.kind or args.scorable:
            raise ConfigError("--kind and --scorable apply to `vlmkit list datasets`")
        lines = model_lines(args.search, width=width)
    else:
        lines = dataset_lines(kind=args.kind, search=args.search, scorable=args.scorable, width=width)
    print("\n".join(lines))
    return 0


def filter_rows(
    rows: Iterable[CatalogRow], *, kind: str | None = None, search: str | None = None, scorable: bool = False
) -> list[CatalogRow]:
    """The rows of that kind, whose name or description contains search (any case), scorable ones if asked."""
    rows = list(rows)
    if kind is not None:
        kinds = sorted({r.kind for r in rows if r.kind} | {"text"})  # text: the text-only table (dataset_lines)
        if kind not in kinds:
            from vlmkit.core.errors import ConfigError

            raise ConfigError(f"--kind {kind}: no such kind in the catalog; kinds: {', '.join(kinds)}")
        rows = [r for r in rows if r.kind == kind]
    if search:
        needle = search.casefold()
        rows = [r for r in rows if needle in r.name.casefold() or needle in r.description.casefold()]
    if scorable:
        rows = [r for r in rows if r.scorable]
    return rows


def dataset_lines(*, kind: str | None = None, search: str | None = None, scorable: bool = False,
                  width: int | None = None) -> list[str]:
    """The lines `vlmkit list datasets` prints: a header, one line per benchmark, a summary line, a legend.
    width: the columns to fit (None: whole lines), see `fit_table`."""
    from datasets_tsv.catalog.entries import catalog_rows, text_rows

    source = text_rows() if kind == "text" else catalog_rows()
    rows = filter_rows(source.values(), kind=kind, search=search, scorable=scorable)
    table = [HEADER, *((r.name, r.kind, r.scorer_label(), r.judge, str(r.rows or "-"), r.description) for r in rows)]
    lines = fit_table(table, width, cut=CUT_COLUMNS)
    counts = {s: sum(r.status == s for r in rows) for s in ("ok", "judge", "prompt", "todo")}
    summary = (
        f"{len(rows)} benchmark(s): {counts['ok']} scored by rules, {counts['judge']} scored with --judge, "
        f"{counts['prompt'] + counts['todo']} not scorable by vlmkit yet ({counts['prompt']} of them run for inference)"
    )
    legend = JUDGE_LEGEND
    if any(ELLIPSIS in line and ELLIPSIS not in "".join(row) for line, row in zip(lines, table)):
        legend += f"; {ELLIPSIS} = cut to fit {width} columns (--wide prints whole lines)"
    return [*lines, *_wrapped(summary, width), *_wrapped(legend, width)]


def model_lines(search: str | None = None, width: int | None = None) -> list[str]:
    """The lines `vlmkit list models` prints: one per registered model name (descriptions cut to fit width)."""
    from vlm.registry import model_registry

    entries = list(model_registry())
    if search:
        needle = search.casefold()
        entries = [e for e in entries if needle in e.name.casefold() or needle in (e.description or "").casefold()]
    return fit_table([(e.name, e.description or e.target) for e in entries], width, cut=(1,))


def fit_table(table: Sequence[Sequence[str]], width: int | None = None, cut: Sequence[int] = ()) -> list[str]:
    """Rows padded to column widths, two spaces apart (the last column is not padded). With a width, the columns
    in `cut` are narrowed so that lines fit it, hiding as little text as possible (a cell too long ends in an
    ellipsis); the other columns are never cut (a line overflows when they alone exceed the width)."""
    if not table:
        return []
    natural = [max(len(row[i]) for row in table) for i in range(len(table[0]))]
    widths = natural if width is None or not cut else _narrowed(table, natural, width, cut)
    lines = []
    for row in table:
        cells = [_cut(cell, w) if i in cut else cell for i, (cell, w) in enumerate(zip(row, widths, strict=True))]
        padded = [*(cell.ljust(w) for cell, w in zip(cells[:-1], widths[:-1], strict=True)), cells[-1]]
        lines.append("  ".join(padded).rstrip())
    return lines


def _narrowed(table: Sequence[Sequence[str]], natural: list[int], width: int, cut: Sequence[int]) -> list[int]:
    """Column widths whose lines fit width, hiding as little text as possible: each width of the cut columns but the
    last is tried (from MIN_CUT_WIDTH up), the last takes the room left, and the split that cuts the fewest
    characters in all wins (a tie: the wider last column, the description). When even MIN_CUT_WIDTH is too wide,
    the cut columns take it and lines overflow."""
    room = width - sum(w for i, w in enumerate(natural) if i not in cut) - 2 * (len(natural) - 1)
    lengths = {i: [len(row[i]) for row in table] for i in cut}

    def hidden(i: int, w: int) -> int:  # the characters a width w hides in column i (an ellipsis takes one)
        return sum(n - w + 1 for n in lengths[i] if n > w)

    *first, last = cut
    candidates = []
    for split in itertools.product(*(range(min(MIN_CUT_WIDTH, natural[i]), natural[i] + 1) for i in first)):
        chosen = (*split, min(natural[last], max(room - sum(split), MIN_CUT_WIDTH)))
        overflow = max(0, sum(chosen) - room)
        lost = sum(hidden(i, w) for i, w in zip(cut, chosen, strict=True))
        candidates.append((overflow, lost, -chosen[-1], chosen))
    widths = list(natural)
    for i, w in zip(cut, min(candidates)[-1], strict=True):
        widths[i] = w
    return widths


def _cut(cell: str, width: int) -> str:
    return cell if len(cell) <= width else cell[: width - 1].rstrip() + ELLIPSIS


def _wrapped(text: str, width: int | None) -> list[str]:
    return [text] if width is None else textwrap.wrap(text, width, break_on_hyphens=False) or [""]
