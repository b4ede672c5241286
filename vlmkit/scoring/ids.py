"""One table of scorer ids (`scorer_ids.tsv`, beside this module): every scorer vlmkit has, and how each place spells it.

Users' scripts read catalog.tsv and results.json, so the spellings those files use never change; the table says
them once, and the catalog reader (datasets_tsv.catalog.entries), `scorer_id` (datasets_tsv.catalog.registry), the
rules a user gives (datasets_tsv.catalog.user_rules) and the scales (vlmkit.scoring.scales) all read it. Columns:

- `id`: the catalog's spelling in snake case (`mcq_circular`, `mmmu_pro`), or the results spelling for a scorer
  the catalog does not name.
- `catalog`: the `scorer` column of an `ok` row of datasets_tsv/catalog/catalog.tsv (`mcq-circular`, `mme`); `-` for
  a scorer no catalog row names that way (judge-scored rows name VLMEvalKit's scorer there in words; custom data).
- `results`: `scoring.scorer` of results.json, as the scorer's EvalResult writes it (`mcq_circular`, `yorn_mme`,
  `vqa_anls`). MMMU and MMMU-Pro write `mcq`, as the plain MCQ scorer does (they are MCQ scoring of rewritten rows).
- `kind`: the task kind it scores (the catalog's `kind` column; `qa` for custom free-text data).
- `scale`: the scale of its figures (fraction, percent, points: vlmkit.scoring.scales); `-` where it differs by
  dataset (regex_mcq) or where the scorer always records it (the video scorers).
- `metric`: the name `vlmkit run --metric` and a `<name>.scoring.json` take (`circular`, `anls`; `acc` for plain MCQ
  and Y/N); `-` for a scorer only a catalog row or a dataset class chooses.
A fifth spelling is a dataset's `scorer_params()` (results.json `dataset.scorer`): `{"scorer": "mcq", "circular":
true}`, `{"scorer": "yorn", "metric": "mme"}`; `id_from_params` reads the id from it.

A scorer of one benchmark needs no row: an id no row names is registered by its module when
vlmkit/scoring/benchmarks/<id>.py defines `score_<id>` (`module_scorer`); it is spelled `<id>` everywhere (catalog,
results, params) and its EvalResult sets its scale. Rows are kept for the scorers whose spellings differ, and for
those whose results.json files may predate recorded scales (the report reads those scales from here).

The table is read on first use. Nothing here imports pandas: the report reads the scales through this table.
"""

from __future__ import annotations

import csv
import importlib
import importlib.util
import io
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from functools import lru_cache
from importlib import resources
from pathlib import Path
from typing import Any

# The scale names (vlmkit.scoring.scales re-exports them with the Scale type that reads them).
FRACTION, PERCENT, POINTS = "fraction", "percent", "points"
COLUMNS = ("id", "catalog", "results", "kind", "scale", "metric")
BENCHMARK_SCORERS = "vlmkit.scoring.benchmarks"
_NOT_NAMED = "-"


class ScorerIdError(ValueError):
    """A malformed row of the scorer-id table; the text names the source, the line and the field."""


@dataclass(frozen=True)
class ScorerId:
    id: str
    catalog: str | None  # catalog.tsv's `scorer` column
    results: str  # results.json's `scoring.scorer`
    kind: str  # the task kind it scores
    scale: str | None  # fraction, percent or points; None where it differs by dataset
    metric: str | None  # the name --metric / .scoring.json take


def parse_scorer_ids(text: str, source: str = "scorer_ids.tsv") -> tuple[ScorerId, ...]:
    """The table's rows in order; a malformed row is a ScorerIdError naming its line and field."""
    lines = [(no, line) for no, line in enumerate(text.splitlines(), start=1) if line.strip() and line[0] != "#"]
    records = list(csv.reader(io.StringIO("\n".join(line for _, line in lines)), delimiter="\t",
                              quoting=csv.QUOTE_NONE))
    if not records or tuple(records[0]) != COLUMNS:
        raise ScorerIdError(f"{source}: the header must be {', '.join(COLUMNS)}")
    rows: list[ScorerId] = []
    seen: dict[str, set[str]] = {"id": set(), "catalog": set()}
    for (line_no, _), record in zip(lines[1:], records[1:], strict=True):
        if len(record) != len(COLUMNS):
            raise ScorerIdError(f"{source}: line {line_no}: {len(record)} fields, the header has {len(COLUMNS)}")
        cells = dict(zip(COLUMNS, (c.strip() for c in record), strict=True))
        for column in ("id", "results", "kind"):
            if cells[column] in ("", _NOT_NAMED):
                raise ScorerIdError(f"{source}: line {line_no}, field {column}: empty")
        if cells["scale"] not in (FRACTION, PERCENT, POINTS, _NOT_NAMED):
            raise ScorerIdError(f"{source}: line {line_no}, field scale: {cells['scale']!r} is not a scale")
        for column, names in seen.items():
            if cells[column] != _NOT_NAMED and cells[column] in names:
                raise ScorerIdError(f"{source}: line {line_no}, field {column}: {cells[column]} repeats")
            names.add(cells[column])
        named = {k: None if v == _NOT_NAMED else v for k, v in cells.items()}
        rows.append(ScorerId(cells["id"], named["catalog"], cells["results"], cells["kind"], named["scale"],
                             named["metric"]))
    return tuple(rows)


@lru_cache(maxsize=1)
def scorer_ids() -> tuple[ScorerId, ...]:
    """The packaged table (vlmkit/scoring/scorer_ids.tsv), read once."""
    text = resources.files("vlmkit.scoring").joinpath("scorer_ids.tsv").read_text(encoding="utf-8")
    return parse_scorer_ids(text, "vlmkit/scoring/scorer_ids.tsv")


@lru_cache(maxsize=1)
def by_id() -> dict[str, ScorerId]:
    return {s.id: s for s in scorer_ids()}


@lru_cache(maxsize=1)
def by_catalog() -> dict[str, ScorerId]:
    """Catalog spelling -> its row."""
    return {s.catalog: s for s in scorer_ids() if s.catalog is not None}


@lru_cache(maxsize=1)
def by_results() -> dict[str, ScorerId]:
    """results.json spelling -> the row that owns it. Several ids write `mcq` (MMMU, MMMU-Pro): it maps back to the
    row whose id it is (they share its scale and kind, see the test)."""
    return {s.results: s for s in reversed(scorer_ids())}


@lru_cache(maxsize=1)
def catalog_kinds() -> dict[str, str]:
    """Catalog spelling -> the kind it scores (the values an `ok` row's `scorer` column may take besides the
    scorers registered by their modules)."""
    return {s.catalog: s.kind for s in scorer_ids() if s.catalog is not None}


def kind_metrics() -> dict[str, tuple[str, ...]]:
    """Kind -> the names `--metric` takes for it, in table order."""
    out: dict[str, tuple[str, ...]] = {}
    for s in scorer_ids():
        if s.metric is not None:
            out[s.kind] = (*out.get(s.kind, ()), s.metric)
    return out


def results_scale(results: str) -> str | None:
    """The scale name of a results.json `scoring.scorer` (None: not in the table, or differs by dataset)."""
    row = by_results().get(results)
    return row.scale if row else None


def catalog_name(scorer_id: str) -> str:
    """How catalog.tsv (and the one line saying which scorer a dataset got) spells an id; an id the catalog does
    not name, or one outside the table, as it is."""
    row = by_id().get(scorer_id)
    return row.catalog if row is not None and row.catalog is not None else scorer_id


def benchmark_scorer(name: str) -> str | None:
    """`vlmkit.scoring.benchmarks.<name>:score_<name>` when that module defines that function (read as text, not
    imported), else None."""
    if not name.isidentifier():
        return None
    module = f"{BENCHMARK_SCORERS}.{name}"
    try:
        spec = importlib.util.find_spec(module)
    except (ImportError, ValueError):
        return None
    if spec is None or spec.origin is None:
        return None
    try:
        source = Path(spec.origin).read_text(encoding="utf-8")
    except OSError:
        return None
    return f"{module}:score_{name}" if f"def score_{name}(" in source else None


def require_benchmark_scorer(name: str) -> str:
    """`benchmark_scorer(name)`, or a ValueError naming the module and the function that are missing."""
    target = benchmark_scorer(name)
    if target is None:
        raise ValueError(f"scorer {name!r}: no module vlmkit/scoring/benchmarks/{name}.py defining score_{name}")
    return target


def load_benchmark_scorer(name: str) -> Callable[..., Any]:
    """The function `score_<name>` of vlmkit/scoring/benchmarks/<name>.py, imported (`require_benchmark_scorer`)."""
    module, _, function = require_benchmark_scorer(name).partition(":")
    return getattr(importlib.import_module(module), function)  # type: ignore[no-any-return]


def module_scorer(name: str) -> bool:
    """Whether `name` is a scorer registered by its module: no row of the table names it, and
    vlmkit/scoring/benchmarks/<name>.py defines `score_<name>` (`benchmark_scorer`)."""
    return name not in by_id() and benchmark_scorer(name) is not None


def id_from_params(params: Mapping[str, Any]) -> str | None:
    """The id of a dataset's `scorer_params()`: the params' `scorer`, qualified by `circular`, `open_questions`
    (MMMU) or `metric` (Y/N, VQA); None when it names no scorer. A name outside the table (a judge's scorer in
    words, a module-registered scorer) is returned as it is."""
    scorer = params.get("scorer")
    if not scorer:
        return None
    if scorer == "mcq":
        if "open_questions" in params:
            return "mmmu"
        return "mcq_circular" if params.get("circular") else "mcq"
    if scorer == "yorn":
        return "yorn" if params["metric"] == "acc" else str(params["metric"])
    if scorer == "vqa":
        return str(params["metric"])
    named = by_catalog().get(str(scorer))  # `mmmu-pro`
    return named.id if named else str(scorer)
