"""The base of the text-only benchmarks: rows read from a local snapshot folder, a text prompt, a rule scorer.

Where the files are (never downloaded at run time):
- `--data-root DIR` (`data_root=`): the snapshot folder itself, or a folder holding it as `DIR/<name>/` (the
  benchmark's vlmkit name, e.g. `DIR/MMLU/`) or `DIR/<repo>/` (the hub repository's name, e.g. `DIR/mmlu/`), so that one
  DIR can serve `--data MMLU GSM8K ...`;
- else the Hugging Face cache (`vlmkit.core.config.hf_hub_cache()`), `datasets--<org>--<name>/snapshots/<commit>` of the
  family's usual hub repository (`repo_id`), found without network.
Each family lists the file layouts it reads (`test_patterns`, globs tried in order): the hub repository's and the
original release's (the CSV / JSON Lines files OpenCompass reads). A missing snapshot is one DatasetError line naming
the repository, where it was looked for and what to put where.

File formats (`read_file`): .csv (with or without a header), .jsonl, .json, .parquet. Parquet needs pyarrow, which
vlmkit does not depend on: without it, one line says to install it or to use the original CSV/JSONL layout.

The rows become a table without an image column: `index` (0..n-1 in the snapshot's order), the text fields the
prompt needs, `answer` (an option letter, Yes/No, or the reference answer) and a grouping column (`subject`, `task`)
where the benchmark reports one. `kind` is what the run needs to know: `mcq` (option columns A, B, ...: the
likelihood modes score them), `yorn` (BoolQ) or `vqa` (free answers: generation only). A row's prompt is one text part
(`prompt_text`), few-shot examples included; scoring is `vlmkit.scoring.benchmarks.<rule_scorer>`.
"""

from __future__ import annotations

import hashlib
import io
import json
from pathlib import Path
from typing import Any, ClassVar

import pandas as pd

from datasets_tsv.io.table import TableRows
from datasets_tsv.io.tsv_read import DatasetError
from datasets_tsv.kinds.video_snapshot import find_snapshot
from vlmkit.core.config import hf_hub_cache, lmu_data_root
from vlmkit.judging import Judge
from vlmkit.scoring.ids import load_benchmark_scorer
from vlmkit.scoring.result import EvalResult

__all__ = ["TextSnapshotDataset", "find_split", "read_file", "option_letters"]

LETTERS = "ABCDEFGHIJKLMNOPQRSTUVWXYZ"


def option_letters(n: int) -> str:
    """The first n option letters (A, B, ...); ValueError past Z."""
    if n > len(LETTERS):
        raise ValueError(f"{n} options: more than the letters A-Z")
    return LETTERS[:n]


def find_split(folder: Path, patterns: tuple[str, ...]) -> list[Path]:
    """The files of the first glob pattern that matches anything under folder (sorted); [] when none does."""
    for pattern in patterns:
        found = sorted(p for p in folder.glob(pattern) if p.is_file())
        if found:
            return found
    return []


def read_file(path: Path, *, header: bool = True, columns: tuple[str, ...] = ()) -> pd.DataFrame:
    """A snapshot file as a table of its records (cells kept as written: text stays text).

    .csv: with a header row, or (`header=False`) named by `columns`; .jsonl: one object a line; .json: a list of
    objects or an object with `examples` (BIG-Bench-Hard's files); .parquet: through pandas (needs pyarrow)."""
    suffix = path.suffix.lower()
    try:
        if suffix == ".csv":
            if header:
                return pd.read_csv(path, dtype=str, keep_default_na=False)
            return pd.read_csv(path, header=None, names=list(columns), dtype=str, keep_default_na=False)
        if suffix == ".jsonl":
            lines = [line for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]
            return pd.DataFrame([json.loads(line) for line in lines])
        if suffix == ".json":
            data = json.loads(path.read_text(encoding="utf-8"))
            records = data.get("examples") if isinstance(data, dict) else data
            if not isinstance(records, list):
                raise DatasetError(f"{path}: expected a list of records (or an object with `examples`)")
            return pd.DataFrame(records)
        if suffix == ".parquet":
            try:
                return pd.read_parquet(path)
            except ImportError:
                raise DatasetError(f"{path}: reading parquet needs pyarrow (pip install pyarrow), which vlmkit does "
                                   "not install; or give the original release's CSV/JSONL files") from None
    except (ValueError, pd.errors.ParserError) as exc:
        raise DatasetError(f"{path}: not readable as {suffix[1:]} ({str(exc).splitlines()[0]})") from None
    raise DatasetError(f"{path}: a {suffix or 'suffix-less'} file; expected .csv, .jsonl, .json or .parquet")


class TextSnapshotDataset(TableRows):
    """A text-only benchmark read from a local snapshot (module docstring). Subclasses set `repo_id`, `layout`,
    `test_patterns`, `kind`, `rule_scorer` and write `_read_table` (the rows) and `prompt_text` (one row's prompt).

    data_root: the snapshot folder (or a folder holding it); hub_cache: another Hugging Face cache; shots: the
    few-shot examples before each question (None: the family's usual number, `default_shots`).
    root, url, md5, keep_local_tsv, progress: taken because the catalog passes them to every class; unused."""

    kind: ClassVar[str] = "mcq"
    takes_data_root: ClassVar[bool] = True
    repo_id: ClassVar[str] = ""
    layout: ClassVar[str] = ""  # what the snapshot folder holds, for error messages
    test_patterns: ClassVar[tuple[str, ...]] = ()  # the evaluated split's files, first matching glob wins
    rule_scorer: ClassVar[str] = "text_choice"
    default_shots: ClassVar[int] = 0
    notes: tuple[str, ...] = ()

    def __init__(
        self,
        name: str,
        *,
        data_root: Path | str | None = None,
        root: Path | None = None,
        progress: bool = True,
        keep_local_tsv: bool = False,
        url: str | None = None,
        md5: str | None = None,
        hub_cache: Path | str | None = None,
        shots: int | None = None,
    ) -> None:
        self.name = name
        self.root = Path(root).expanduser() if root is not None else lmu_data_root()
        self.shots = self.default_shots if shots is None else int(shots)
        if self.shots < 0:
            raise DatasetError(f"{name}: shots must be 0 or more; got {shots!r}")
        self.snapshot = self._locate(data_root, Path(hub_cache).expanduser() if hub_cache else None)
        self.data = self._read_table()
        if self.data.empty:
            raise DatasetError(f"{self.snapshot}: {name} has no rows")
        self.file_md5 = hashlib.md5((self._table_text() + self._shots_text()).encode()).hexdigest()

    # -- the snapshot -------------------------------------------------------------------------------------------
    def _locate(self, data_root: Path | str | None, hub_cache: Path | None) -> Path:
        if data_root is not None:
            folder = Path(data_root).expanduser()
            if not folder.is_dir():
                raise DatasetError(f"--data-root {folder}: no such folder (expected the {self.repo_id} snapshot: "
                                   f"{self.layout})")
            repo_name = self.repo_id.rsplit("/", 1)[-1]
            for candidate in (folder, folder / self.name, folder / repo_name):
                if candidate.is_dir() and find_split(candidate, self.test_patterns):
                    return candidate
            raise DatasetError(f"--data-root {folder}: no {self.name} files in it, nor in {folder / self.name} or "
                               f"{folder / repo_name} (expected the {self.repo_id} snapshot: {self.layout})")
        found = find_snapshot(self.repo_id, "main", hub_cache)
        if found is None or not find_split(found, self.test_patterns):
            cache = hub_cache if hub_cache is not None else hf_hub_cache()
            where = f"{found} holds no {self.name} files" if found is not None else f"looked in {cache}"
            raise DatasetError(
                f"{self.name}: no local snapshot of {self.repo_id} ({where}); pass --data-root DIR (a folder holding "
                f"{self.layout}), or put it in the Hugging Face cache with `hf download {self.repo_id} --repo-type "
                "dataset` (vlmkit never downloads it)"
            )
        return found

    def split_files(self, patterns: tuple[str, ...], what: str) -> list[Path]:
        """The snapshot's files of one split (first matching glob); one line naming what is missing otherwise."""
        found = find_split(self.snapshot, patterns)
        if not found:
            raise DatasetError(f"{self.snapshot}: no {what} files ({' or '.join(patterns)}); expected {self.layout}")
        return found

    def _read_table(self) -> pd.DataFrame:
        raise NotImplementedError

    def prompt_text(self, line: dict[str, Any]) -> str:
        raise NotImplementedError

    def _shots_text(self) -> str:
        """What the few-shot examples are made of, as text (part of the MD5: other examples are another run)."""
        return ""

    def _table_text(self) -> str:
        buffer = io.StringIO()
        self.data.to_csv(buffer, sep="\t", index=False)
        return buffer.getvalue()

    # -- rows -----------------------------------------------------------------------------------------------------
    @property
    def source_file(self) -> Path:
        return self.snapshot

    def image_paths(self, line: dict[str, Any] | int) -> list[str]:
        """No images: a text-only benchmark."""
        return []

    def build_prompt(self, line: dict[str, Any] | int) -> list[Any]:
        row = self.line(int(line)) if isinstance(line, int) else dict(line)
        return [{"type": "text", "value": self.prompt_text(row)}]

    @staticmethod
    def cell(line: dict[str, Any], column: str) -> str:
        value = line.get(column)
        return "" if value is None or (isinstance(value, float) and value != value) else str(value)

    # -- scoring --------------------------------------------------------------------------------------------------
    def scorer_options(self) -> dict[str, Any]:
        """Keyword arguments of the rule scorer (`score_<rule_scorer>(df, **options)`)."""
        return {}

    def evaluate(self, predictions: pd.DataFrame, *, fuzzy: bool = False, judge: Judge | None = None) -> EvalResult:
        """Score predictions (this table plus `prediction`, None where inference failed) by the rule scorer; `fuzzy`
        has no effect and a judge is not asked (the notes say so)."""
        for column in ("index", "prediction", *self.answer_columns):
            if column not in predictions.columns:
                raise DatasetError(f"the predictions: missing column `{column}`, needed to evaluate {self.name}")
        try:
            result: EvalResult = load_benchmark_scorer(self.rule_scorer)(predictions.copy(), **self.scorer_options())
        except ValueError as exc:
            raise DatasetError(f"{self.snapshot}: {exc}") from None
        if judge is not None:
            result.notes.append(f"{self.name} is scored by its rule only; the judge given was not asked")
        return result

    def scorer_params(self) -> dict[str, Any]:
        options = self.scorer_options()
        return {"scorer": self.rule_scorer, **({"options": options} if options else {})}

    def info(self) -> dict[str, Any]:
        cls = type(self)
        return {
            "name": self.name,
            "kind": self.kind,
            "class": f"{cls.__module__}:{cls.__qualname__}",
            "source": f"Hugging Face dataset {self.repo_id} (or its original release), read locally",
            "snapshot": str(self.snapshot),
            "md5": self.file_md5,
            "md5_source": "table",  # the MD5 of the rows (and few-shot examples) as text
            "n_total": len(self),
            "shots": self.shots,
            "scorer": self.scorer_params(),
            "scorer_reason": self.scorer_reason,
            "notes": list(self.notes),
        }
