"""Dataset names -> classes: the catalog (package data `catalog.tsv`) and local TSVs of unknown names.

catalog.tsv columns: name, class ("module:Class"), url, md5, kwargs (JSON object), description. An empty url
with a `bundled` kwarg is a file shipped in this package (copied into `$LMUData` on first use); an empty md5 is
not checked. Nothing is read until `dataset_registry()` is first called.
"""

from __future__ import annotations

import csv
import io
import json
from functools import lru_cache
from importlib import resources
from pathlib import Path
from typing import TYPE_CHECKING

from vlmkit.config import lmu_data_root
from vlmkit.errors import DataError
from vlmkit.registry import Registry, RegistryError, import_target

if TYPE_CHECKING:  # the dataset classes (and pandas) load only when a dataset is built
    from .base import TSVDataset

CATALOG_COLUMNS = ("name", "class", "url", "md5", "kwargs", "description")
KIND_CLASSES = {
    "mcq": "datasets_tsv.image_mcq:ImageMCQDataset",
    "yorn": "datasets_tsv.image_yorn:ImageYORNDataset",
    "vqa": "datasets_tsv.image_vqa:ImageVQADataset",
}


def parse_catalog(text: str, source: str = "catalog.tsv") -> Registry:
    """A dataset Registry from catalog text; a malformed row is an error naming its line and field."""
    registry = Registry("dataset")
    reader = csv.DictReader(io.StringIO(text), delimiter="\t")
    if tuple(reader.fieldnames or ()) != CATALOG_COLUMNS:
        raise ValueError(f"{source}: columns must be {', '.join(CATALOG_COLUMNS)}; got {reader.fieldnames}")
    for line_no, row in enumerate(reader, start=2):
        try:
            kwargs = json.loads(row["kwargs"] or "{}")
        except ValueError as exc:
            raise ValueError(f"{source}: line {line_no}, field kwargs: not JSON ({exc})") from None
        if not isinstance(kwargs, dict):
            raise ValueError(f"{source}: line {line_no}, field kwargs: must be a JSON object")
        if row["url"]:
            kwargs["url"] = row["url"]
        if row["md5"]:
            kwargs["md5"] = row["md5"]
        registry.add(row["name"], row["class"], row["description"] or "", **kwargs)
    return registry


@lru_cache(maxsize=1)
def dataset_registry() -> Registry:
    """The catalog's datasets (read on first call, then cached)."""
    text = resources.files("datasets_tsv").joinpath("catalog.tsv").read_text(encoding="utf-8")
    return parse_catalog(text)


def build_dataset(
    name_or_path: str, *, root: Path | None = None, progress: bool = True, keep_local_tsv: bool = False
) -> TSVDataset:
    """A catalog name, a name with a TSV at root/<name>.tsv, or a path to a .tsv file -> its dataset.

    A file that is not in the catalog gets the class of its detected kind (see datasets_tsv.detect).
    keep_local_tsv: a catalog dataset's TSV already at root whose MD5 differs from the catalog's is evaluated as it
    is (recorded in info()) instead of being an error; it has no effect on other files.
    """
    registry = dataset_registry()
    root_path = Path(root).expanduser() if root is not None else lmu_data_root()
    if name_or_path in registry:
        return build_entry(registry, name_or_path, root=root_path, progress=progress, keep_local_tsv=keep_local_tsv)
    tsv = local_tsv(name_or_path, root_path)
    if tsv is None:
        if looks_like_path(name_or_path):
            stem = Path(name_or_path).stem
            hint = f"; the catalog's dataset is named {stem}" if stem in registry else ""
            raise DataError(_missing_path_message(name_or_path) + hint)
        raise RegistryError(
            f"{registry.unknown_message(name_or_path)}; no local file {root_path / (name_or_path + '.tsv')} either"
        )
    from .detect import detect

    kind, options = detect(tsv)
    cls = import_target(KIND_CLASSES[kind], what=f"dataset {name_or_path!r}")
    return cls(tsv.stem, root=root_path, tsv_path=tsv, progress=progress, **options)


def build_entry(
    registry: Registry, name: str, *, root: Path, progress: bool = True, keep_local_tsv: bool = False
) -> TSVDataset:
    """The catalog entry's class with the entry's url/md5/options (the dataset's name is the entry's name)."""
    entry = registry.get(name)
    cls = registry.load_class(name)
    return cls(name, **{**entry.kwargs, "root": root, "progress": progress, "keep_local_tsv": keep_local_tsv})


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
