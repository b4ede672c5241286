"""Dataset names -> dataset objects: the catalog (package data `catalog.tsv`, and the text-only benchmarks' table
`text_benchmarks.tsv`, see datasets_tsv.catalog.entries) and TSVs
the catalog does not know (see datasets_tsv.catalog.user_rules), each built with the scorer the catalog or the user asks
for, and one line saying which scorer and why (`dataset.scorer_reason`, also logged at INFO).

- A catalog name builds its entry's class with the entry's options, URL and MD5. An entry vlmkit cannot score is
  refused in one line (NotScorableError): `todo` always, `prompt` unless `inference_only`, `judge` unless a judge
  is given or `inference_only`.
  Rules given with a catalog name (kind/metric/like, or a sidecar beside its TSV) must agree with the catalog's.
- Any other name is `$LMUData/<name>.tsv` (or a .tsv path): scored by the rules given (kind/metric/like), else by
  its `<name>.scoring.json`, else by the kind its columns show (the reason line says it was detected). A path
  whose file name is a catalog benchmark's needs rules: it is the user's copy, and no rule is assumed for it.
Nothing is read until the catalog is first needed; dataset classes (and pandas) load only to build a dataset.
"""

from __future__ import annotations

import logging
from functools import lru_cache
from pathlib import Path
from typing import TYPE_CHECKING, Any

from vlmkit.core.config import lmu_data_root
from vlmkit.core.errors import ConfigError, DataError
from vlmkit.core.registry import Registry, RegistryError, import_target
from vlmkit.scoring.ids import by_catalog, catalog_name, id_from_params

from datasets_tsv.catalog.entries import CatalogRow, catalog_rows, parse_rows, text_rows
from datasets_tsv.catalog.user_rules import (
    KIND_CLASSES,
    Rules,
    kind_metric_options,
    read_sidecar,
    rules_from,
)

if TYPE_CHECKING:  # the dataset classes (and pandas) load only when a dataset is built
    from datasets_tsv.kinds.base import TSVDataset

__all__ = [
    "KIND_CLASSES", "NotScorableError", "build_dataset", "build_entry", "catalog_rows", "dataset_registry",
    "parse_catalog", "scorer_id",
]  # fmt: skip

logger = logging.getLogger(__name__)
_NOT_INHERITED_BY_LIKE = ("bundled", "image_folder")


class NotScorableError(ConfigError):
    """A catalog benchmark vlmkit cannot build (its scorer or judge is not in vlmkit yet); the text says why."""


def parse_catalog(text: str, source: str = "catalog.tsv") -> Registry:
    """A Registry of the buildable entries (those with a class) of catalog text, with url/md5 in their kwargs."""
    registry = Registry("dataset")
    for row in parse_rows(text, source):
        if row.cls:
            registry.add(row.name, row.cls, row.description, **row.build_kwargs())
    return registry


@lru_cache(maxsize=1)
def dataset_registry() -> Registry:
    """The catalog's buildable datasets (read on first call, then cached)."""
    registry = Registry("dataset")
    for row in catalog_rows().values():
        if row.cls:
            registry.add(row.name, row.cls, row.description, **row.build_kwargs())
    return registry


def unknown_message(name: str) -> str:
    """`unknown dataset 'X'. Did you mean: ...?` over every catalog name, buildable or not."""
    names = Registry("dataset")
    for row in (*catalog_rows().values(), *text_rows().values()):
        names.add(row.name, row.cls or f"{__name__}:CatalogRow")  # for the message only: never imported
    return names.unknown_message(name)


def build_dataset(
    name_or_path: str,
    *,
    root: Path | None = None,
    progress: bool = True,
    keep_local_tsv: bool = False,
    kind: str | None = None,
    metric: str | None = None,
    like: str | None = None,
    inference_only: bool = False,
    judge: bool = False,
    data_root: Path | None = None,
    coords: str | None = None,
) -> TSVDataset:
    """A catalog name, a name with a TSV at root/<name>.tsv, or a path to a .tsv file -> its dataset.

    kind/metric/like: how to score a TSV the catalog does not know (see datasets_tsv.catalog.user_rules).
    keep_local_tsv: a catalog dataset's TSV already at root whose MD5 differs from the catalog's is evaluated as it
    is (recorded in info()) instead of being an error; it has no effect on other files.
    inference_only: the caller will not score it (`--mode infer`, perf): a judge-scored catalog benchmark whose
    prompt vlmkit has is built instead of refused.
    judge: the run has an LLM judge: a judge-scored catalog benchmark is built.
    data_root: a local snapshot folder, given to catalog classes built from one (`takes_data_root = True`:
    MVBench, Video-MME); other datasets ignore it.
    coords: the model's coordinate convention for the classes that read coordinates (`takes_coords = True`: GUI
    grounding; `abs`, `norm1000`, `norm1`, `auto`); other datasets ignore it. None: the class's default.
    """
    rows = _named_rows()
    root_path = Path(root).expanduser() if root is not None else lmu_data_root()
    given = rules_from(kind, metric, like)
    if name_or_path in rows:
        row = rows[name_or_path]
        sidecar = read_sidecar(root_path / f"{row.name}.tsv")
        for rules in (given, sidecar):
            _check_agrees(row, rules)
        dataset = build_row(row, root=root_path, progress=progress, keep_local_tsv=keep_local_tsv,
                            inference_only=inference_only, judge=judge, data_root=data_root, coords=coords)
        if row.kind == "text":
            return _explain(dataset, f"text benchmark {row.name} (text_benchmarks.tsv: its authors' metric)")
        return _explain(dataset, f"catalog entry {row.name} (VLMEvalKit's rules for it)")
    tsv = local_tsv(name_or_path, root_path)
    if tsv is None:
        if looks_like_path(name_or_path):
            stem = Path(name_or_path).stem
            hint = f"; the catalog's dataset is named {stem}" if stem in rows else ""
            raise DataError(_missing_path_message(name_or_path) + hint)
        missing = root_path / f"{name_or_path}.tsv"
        raise RegistryError(f"{unknown_message(name_or_path)}; no local file {missing} either")
    sidecar = read_sidecar(tsv)
    rules = given or sidecar
    overrides = f" (replacing {sidecar.source})" if given and sidecar else ""
    if rules is None and tsv.stem in rows:
        raise ConfigError(
            f"{tsv}: {tsv.stem} is a catalog benchmark and this file is your copy; say how to score it: "
            f"--like {tsv.stem} (its rules), or --kind/--metric, or a {tsv.stem}.scoring.json beside it"
        )
    if rules is not None and rules.like:
        target, options, why = _like(rules, rows, inference_only, judge)
    elif rules is not None:
        target, options, why = kind_metric_options(tsv, rules)
    else:
        from datasets_tsv.catalog.detect import detect_with_reason

        kind_found, options, found = detect_with_reason(tsv, root_path)
        target = KIND_CLASSES[kind_found]
        why = (
            f"detected from the file's columns ({found}); pass --kind/--metric (or write "
            f"{tsv.stem}.scoring.json beside it) to choose"
        )
    cls = import_target(target, what=f"dataset {name_or_path!r}")
    options = with_coords(cls, dict(options), coords)
    return _explain(cls(tsv.stem, root=root_path, tsv_path=tsv, progress=progress, **options), why + overrides)


def _named_rows() -> dict[str, CatalogRow]:
    """The catalog's rows and the text-only table's (datasets_tsv.catalog.entries.known_rows), the catalog read through
    this module's name (tests replace it with proposed rows)."""
    catalog, texts = catalog_rows(), text_rows()
    return {**catalog, **{name: row for name, row in texts.items() if name not in catalog}}


def with_coords(cls: type, options: dict[str, Any], coords: str | None) -> dict[str, Any]:
    """The options with `coords` added for a class that reads coordinates (`takes_coords`); unchanged otherwise."""
    if coords is not None and getattr(cls, "takes_coords", False):
        options["coords"] = coords
    return options


def build_row(
    row: CatalogRow, *, root: Path, progress: bool = True, keep_local_tsv: bool = False, inference_only: bool = False,
    judge: bool = False, data_root: Path | None = None, coords: str | None = None,
) -> TSVDataset:
    """A catalog row's dataset (refused in one line when vlmkit cannot build it); its notes join the dataset's, and
    it carries the row's VLMEvalKit TYPE and prompt owner (`vlmevalkit_type`, `vlmevalkit_prompt`), which
    vlmkit.core.contracts.dataset_info hands to the model families that decide who writes the prompt."""
    refusal = row.refusal(inference_only=inference_only, judge=judge)
    if refusal is not None:
        raise NotScorableError(refusal)
    cls = import_target(row.cls, what=f"dataset {row.name!r}")
    options = {**row.build_kwargs(), "root": root, "progress": progress, "keep_local_tsv": keep_local_tsv}
    if getattr(cls, "takes_data_root", False):
        options["data_root"] = data_root
    dataset = cls(row.name, **with_coords(cls, options, coords))
    if row.notes:
        dataset.notes = (*dataset.notes, *row.notes)
    if row.vlmevalkit_type:
        dataset.vlmevalkit_type = row.vlmevalkit_type
    dataset.vlmevalkit_prompt = row.vlmevalkit_prompt
    return dataset


def build_entry(
    registry: Registry, name: str, *, root: Path, progress: bool = True, keep_local_tsv: bool = False
) -> TSVDataset:
    """A Registry entry's class with the entry's url/md5/options (the dataset's name is the entry's name)."""
    entry = registry.get(name)
    cls = registry.load_class(name)
    return cls(name, **{**entry.kwargs, "root": root, "progress": progress, "keep_local_tsv": keep_local_tsv})


def scorer_id(dataset: Any) -> str:
    """The catalog's name for how a built dataset is scored (`mcq-circular`, `mme`, `anls`, ...): its
    `scorer_params()` read through the scorer-id table (vlmkit.scoring.ids); a scorer the table does not name (a
    judge's scorer in words) as the params say it, `none` when they name none."""
    found = id_from_params(dataset.scorer_params())
    return "none" if found is None else catalog_name(found)


def _explain(dataset: TSVDataset, why: str) -> TSVDataset:
    reason = f"{scorer_id(dataset)}: {why}"
    dataset.scorer_reason = reason
    logger.info("%s: scorer %s", dataset.name, reason)
    return dataset


def _row_metric(row: CatalogRow) -> str | None:
    """The `metric` (user_rules' vocabulary) that names a catalog row's scorer; None for scorers it has no name for."""
    known = by_catalog().get(row.scorer)
    return known.metric if known is not None else row.scorer


def _check_agrees(row: CatalogRow, rules: Rules | None) -> None:
    """Rules given with a catalog name must say what the catalog says; anything else is a one-line error."""
    if rules is None:
        return
    clash = (
        (rules.like is not None and rules.like != row.name)
        or (rules.kind is not None and rules.kind != row.kind)
        or (rules.metric is not None and rules.metric != _row_metric(row))
    )
    if clash:
        where = rules.source or "the arguments"
        raise ConfigError(
            f"{row.name} is a catalog benchmark scored by its own rules ({row.scorer_label()}); {rules.describe()} "
            f"({where}) applies to TSVs the catalog does not know: copy the file under another name to score it so"
        )


def _like(rules: Rules, rows: dict[str, CatalogRow], inference_only: bool, judge: bool = False
          ) -> tuple[str, dict[str, Any], str]:
    """(class target, options, why) for like=NAME: that catalog row's class and options, not its data source."""
    name = rules.like or ""
    if name not in rows:
        where = f" ({rules.source})" if rules.source else ""
        raise RegistryError(f"like{where}: {unknown_message(name)}")
    row = rows[name]
    if row.kind == "text":  # built from a snapshot folder, never from a TSV
        raise ConfigError(f"like={name}: {name} is a text-only benchmark read from its snapshot folder (--data-root); "
                          "like= takes a benchmark of the catalog, whose rows are a TSV")
    refusal = row.refusal(inference_only=inference_only, judge=judge)
    if refusal is not None:
        raise NotScorableError(f"like={name}: {refusal}")
    options = {k: v for k, v in row.kwargs.items() if k not in _NOT_INHERITED_BY_LIKE}
    source = f"from {rules.source} " if rules.source else "given "
    return row.cls, options, f"{source}like={name}: the catalog's rules for {name} (not its URL, MD5 or image folder)"


def looks_like_path(name_or_path: str) -> bool:
    """A value meant as a file path rather than a dataset name: it has a folder separator or a file suffix of the
    kinds vlmkit reads (.tsv, and the custom formats' .csv/.jsonl)."""
    return (
        "/" in name_or_path
        or "\\" in name_or_path
        or name_or_path.startswith("~")
        or Path(name_or_path).suffix.lower() in (".tsv", ".csv", ".jsonl")
    )


def _missing_path_message(given: str) -> str:
    path = Path(given).expanduser()
    if path.is_dir():
        return f"{given}: a directory, not a .tsv file (an EvalScope directory goes with --custom-dataset-path)"
    if path.is_file():
        return f"{given}: not a .tsv file; .csv/.jsonl files go with --custom-dataset-path"
    where = "" if path.is_absolute() else f" (looked for {path.resolve()})"
    return f"{given}: no such file{where}"


def local_tsv(name_or_path: str, root: Path) -> Path | None:
    """An existing .tsv path as given, or root/<name>.tsv for a plain name; else None."""
    given = Path(name_or_path).expanduser()
    if given.suffix.lower() == ".tsv" and given.is_file():
        return given
    if name_or_path and "/" not in name_or_path and "\\" not in name_or_path and name_or_path not in (".", ".."):
        candidate = root / f"{name_or_path}.tsv"
        if candidate.is_file():
            return candidate
    return None
