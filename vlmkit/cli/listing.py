"""`vlmkit list datasets|models`: what the catalogs know, filtered. Part of the command line (top floor).

Reading the lists imports no dataset or model class, no pandas and no torch: the dataset catalog is parsed by
datasets_tsv.catalog.entries (csv + json), the model registry by vlm.registry. `vlmkit list datasets` prints, per
benchmark, its VLMEvalKit name, kind, scorer (vlmkit's, or `judge: ...` / `not yet: ...` with VLMEvalKit's scorer
when vlmkit cannot score it), whether VLMEvalKit uses an LLM judge, the TSV's size in rows when known, and a
description; then one summary line. Filters combine: `--kind mcq`, `--search ocr` (case-insensitive, over name
and description), `--scorable` (only what vlmkit scores).
"""

from __future__ import annotations

import argparse
from collections.abc import Iterable, Sequence
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from datasets_tsv.catalog.entries import CatalogRow

HEADER = ("NAME", "KIND", "SCORER", "JUDGE", "ROWS", "DESCRIPTION")
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
    p.add_argument("--kind", default=None, help="datasets of this kind: mcq, yorn, vqa, caption, shortqa, video, ...")
    p.add_argument("--search", default=None, metavar="TEXT", help="case-insensitive text in the name or description")
    p.add_argument("--scorable", action="store_true", help="datasets vlmkit scores only")
    p.set_defaults(func=cmd_list)


def cmd_list(args: argparse.Namespace) -> int:
    from vlmkit.core.errors import ConfigError

    if args.what == "models":
        if args.kind or args.scorable:
            raise ConfigError("--kind and --scorable apply to `vlmkit list datasets`")
        lines = model_lines(args.search)
    else:
        lines = dataset_lines(kind=args.kind, search=args.search, scorable=args.scorable)
    print("\n".join(lines))
    return 0


def filter_rows(
    rows: Iterable[CatalogRow], *, kind: str | None = None, search: str | None = None, scorable: bool = False
) -> list[CatalogRow]:
    """The rows of that kind, whose name or description contains search (any case), scorable ones if asked."""
    rows = list(rows)
    if kind is not None:
        kinds = sorted({r.kind for r in rows if r.kind})
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


def dataset_lines(*, kind: str | None = None, search: str | None = None, scorable: bool = False) -> list[str]:
    """The lines `vlmkit list datasets` prints: a header, one line per benchmark, a summary line, a legend."""
    from datasets_tsv.catalog.entries import catalog_rows

    rows = filter_rows(catalog_rows().values(), kind=kind, search=search, scorable=scorable)
    table = [HEADER, *((r.name, r.kind, r.scorer_label(), r.judge, str(r.rows or "-"), r.description) for r in rows)]
    lines = _aligned(table)
    counts = {s: sum(r.status == s for r in rows) for s in ("ok", "judge", "prompt", "todo")}
    lines.append(
        f"{len(rows)} benchmark(s): {counts['ok']} scored by rules, {counts['judge']} scored with --judge, "
        f"{counts['prompt'] + counts['todo']} not scorable by vlmkit yet ({counts['prompt']} of them run for inference)"
    )
    lines.append(JUDGE_LEGEND)
    return lines


def model_lines(search: str | None = None) -> list[str]:
    """The lines `vlmkit list models` prints: one per registered model name."""
    from vlm.registry import model_registry

    entries = list(model_registry())
    if search:
        needle = search.casefold()
        entries = [e for e in entries if needle in e.name.casefold() or needle in (e.description or "").casefold()]
    return _aligned([(e.name, e.description or e.target) for e in entries])


def _aligned(table: Sequence[Sequence[str]]) -> list[str]:
    """Rows padded to column widths (the last column is not padded)."""
    if not table:
        return []
    widths = [max(len(row[i]) for row in table) for i in range(len(table[0]) - 1)]
    lines = []
    for row in table:
        cells = [*(cell.ljust(width) for cell, width in zip(row, widths, strict=False)), row[-1]]
        lines.append("  ".join(cells).rstrip())
    return lines
