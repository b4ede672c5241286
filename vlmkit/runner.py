"""`vlmkit run`: for each model and dataset, infer what is missing, then score, then write the result files.

Per (model, dataset) the work folder `<work_dir>/<model>/<dataset>/` holds `journal.jsonl` (appended as answers
arrive; a rerun resumes from it), `predictions.jsonl` (one line per sample in dataset order, scored fields added
after evaluation) and `results.json`. The VLMEvalKit files `<model>_<dataset>.xlsx` and `_acc.csv`/`_score.csv`
sit in `<work_dir>/<model>/` where its users' scripts look for them.
"""

from __future__ import annotations

import json
import logging
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pandas as pd

from vlmkit.errors import DataError
from vlmkit.distributed import barrier, local_rank_device, rank_world
from vlmkit.inference import Task, run_api, run_local
from vlmkit.journal import Journal, index_keys
from vlmkit.resolve import HF_TARGET, ModelOptions, ModelSpec, model_folder_name, resolve_model
from vlmkit.results import (
    format_table,
    git_state,
    host_info,
    now_iso,
    package_versions,
    write_json,
    write_prediction_table,
    write_summary_table,
)
from vlmkit.scoring.result import EvalResult

log = logging.getLogger("vlmkit")
MODES = ("all", "infer", "eval")


@dataclass
class RunOptions:
    work_dir: Path = Path("outputs")
    mode: str = "all"
    limit: int | None = None
    nproc: int = 4
    batch_size: int = 1
    reuse: bool = False
    fuzzy: bool = False
    root: Path | None = None  # $LMUData; None = vlmkit.config.lmu_data_root()
    progress: bool = True


@dataclass
class DatasetRun:
    """What one (model, dataset) pair ended with."""

    model: str
    dataset: str
    status: str  # success | partial | inferred | no_target | shard_done (a rank > 0 of a sharded run)
    n_total: int
    n_completed: int
    n_errors: int
    evaluation: EvalResult | None = None
    files: dict[str, str] = field(default_factory=dict)


class Runner:
    def __init__(self, options: RunOptions, model_options: ModelOptions | None = None) -> None:
        if options.mode not in MODES:
            raise ValueError(f"--mode must be one of {', '.join(MODES)}, got {options.mode!r}")
        self.options = options
        self.model_options = model_options or ModelOptions()
        self._models: dict[str, Any] = {}

    def run(self, datasets: list[str], models: list[str], custom: list[dict[str, Any]] | None = None) -> list[DatasetRun]:
        """Every model on every dataset: catalog/TSV names, and custom files (entries as vlmkit.run_config makes)."""
        specs = [resolve_model(name, self.model_options) for name in models]  # fail fast on unknown names
        built = self.build_datasets(datasets, custom or [])
        return [self.run_one(spec, dataset) for spec in specs for dataset in built]

    def build_datasets(self, datasets: list[str], custom: list[dict[str, Any]]) -> list[Any]:
        return build_datasets(datasets, custom, root=self.options.root, progress=self.options.progress)

    # One (model, dataset) ----------------------------------------------------------------------------------
    def run_one(self, spec: ModelSpec, dataset: Any) -> DatasetRun:
        started = now_iso()
        began = time.perf_counter()
        model_dir = self.options.work_dir / model_folder_name(spec.name)
        run_dir = model_dir / dataset.name
        rows = dataset.data if self.options.limit is None else dataset.data.head(self.options.limit)
        keys = index_keys(rows["index"])

        rank, world = rank_world()
        journal = Journal(run_dir / ("journal.jsonl" if world == 1 else f"journal.rank{rank}.jsonl"), self._fingerprint(spec, dataset))
        self._check_fingerprint(journal)
        done = {k for k, rec in self._all_records(run_dir, journal).items() if rec.get("error") is None}
        # Rank r owns rows r, r+world, ...: a partition of positions, the same on every rank whatever is done.
        mine = range(rank, len(keys), world)
        pending = [pos for pos in mine if keys[pos] not in done]

        if self.options.mode in ("all", "infer") and pending:
            model = self._model(spec)
            tasks = [self._task(model, dataset, rows.iloc[pos].to_dict()) for pos in pending]
            desc = f"{spec.name} x {dataset.name}"
            with journal:
                if getattr(model, "is_api", False):
                    run_api(model, tasks, journal, dataset=dataset.name, nproc=self.options.nproc, desc=desc)
                else:
                    run_local(model, tasks, journal, dataset=dataset.name, batch_size=self.options.batch_size, desc=desc)

        if world > 1:
            barrier()  # every rank has journalled its share
            if rank != 0:  # rank 0 merges the journals and scores
                ok = sum(1 for rec in journal.records.values() if rec.get("error") is None)
                return DatasetRun(spec.name, dataset.name, "shard_done", len(mine), ok, len(journal.records) - ok)
        records = self._all_records(run_dir, journal)
        predictions = [records.get(k, {}).get("prediction") if records.get(k, {}).get("error") is None else None for k in keys]
        n_completed = sum(p is not None for p in predictions)
        n_errors = sum(1 for k in keys if records.get(k, {}).get("error") is not None)
        table = rows.copy()
        table["prediction"] = predictions

        files = {"journal": str(journal.path) if world == 1 else str(run_dir / "journal.rank*.jsonl")}
        xlsx = model_dir / f"{model_folder_name(spec.name)}_{dataset.name}.xlsx"
        truncated = write_prediction_table(xlsx, table)
        files["predictions_xlsx"] = str(xlsx)

        evaluation = None
        status = "inferred"
        if self.options.mode in ("all", "eval"):
            if "answer" in table and table["answer"].notna().any():
                evaluation = dataset.evaluate(table, fuzzy=self.options.fuzzy)
                evaluation.counts.setdefault("inference_errors", len(keys) - n_completed)
                if evaluation.table is not None:
                    summary = model_dir / f"{model_folder_name(spec.name)}_{dataset.name}_{evaluation.table_suffix}.csv"
                    write_summary_table(summary, evaluation.table)
                    files["summary_csv"] = str(summary)
                status = "success" if n_completed == len(keys) else "partial"
            else:
                status = "no_target"

        files["predictions"] = str(run_dir / "predictions.jsonl")
        self._write_predictions(run_dir / "predictions.jsonl", keys, rows, records, evaluation)
        files["results"] = str(run_dir / "results.json")
        outcome = DatasetRun(spec.name, dataset.name, status, len(keys), n_completed, n_errors, evaluation, files)
        write_json(
            run_dir / "results.json",
            self._results(spec, dataset, outcome, records, keys, started, time.perf_counter() - began, truncated),
        )
        return outcome

    # Helpers ------------------------------------------------------------------------------------------------
    def _model(self, spec: ModelSpec) -> Any:
        if spec.name not in self._models:
            run_kwargs: dict[str, Any] = {}
            if spec.target == HF_TARGET:
                run_kwargs["batch_size"] = self.options.batch_size
                if rank_world()[1] > 1 and "device" not in spec.kwargs:
                    run_kwargs["device"] = local_rank_device()
            elif spec.is_api:
                run_kwargs["pool_size"] = max(64, self.options.nproc)
            self._models[spec.name] = spec.build(**run_kwargs)
        return self._models[spec.name]

    @staticmethod
    def _task(model: Any, dataset: Any, line: dict[str, Any]) -> Task:
        if model.use_custom_prompt(dataset.name):
            msgs = model.build_prompt(line, dataset.name)
        else:
            msgs = dataset.build_prompt(line)
        params = dataset.generation_params(line) if hasattr(dataset, "generation_params") else None
        return Task(index=line["index"], msgs=msgs, target=line.get("answer"), params=params or None)

    @staticmethod
    def _fingerprint(spec: ModelSpec, dataset: Any) -> dict[str, Any]:
        return {
            "model": spec.name,
            "target": spec.target,
            "model_kwargs": json.loads(json.dumps(spec.public_kwargs(), default=str)),
            "dataset": dataset.name,
            "dataset_md5": dataset.file_md5,
        }

    def _all_records(self, run_dir: Path, own: Journal) -> dict[str, dict[str, Any]]:
        """Records of every journal in run_dir written under the same settings (all ranks of a sharded run, or an
        earlier run with another world size); a successful record wins over an error for the same index."""
        merged: dict[str, dict[str, Any]] = {}
        for path in sorted(run_dir.glob("journal*.jsonl")):
            if ".stale" in path.name:
                continue
            journal = Journal(path, own.fingerprint)
            if journal.stored_fingerprint() != own.fingerprint and not self.options.reuse:
                continue
            for key, record in journal.load().items():
                if key not in merged or merged[key].get("error") is not None:
                    merged[key] = record
        return merged

    def _check_fingerprint(self, journal: Journal) -> None:
        stored = journal.stored_fingerprint()
        if stored is None or stored == journal.fingerprint:
            return
        if self.options.reuse:
            log.warning("%s was written under other settings; --reuse keeps its answers", journal.path)
            return
        aside = journal.set_aside()
        log.warning("%s was written under other settings; moved to %s and starting afresh", journal.path, aside.name)

    @staticmethod
    def _write_predictions(
        path: Path, keys: list[str], rows: pd.DataFrame, records: dict[str, dict], evaluation: EvalResult | None
    ) -> None:
        scored: dict[str, dict[str, Any]] = {}
        if evaluation is not None:
            for row in evaluation.per_sample.to_dict(orient="records"):
                key = index_keys([row.pop("index")])[0]
                scored[key] = row
        passthrough = [c for c in rows.columns if c not in ("index", "answer")]
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp = path.with_name(f".{path.name}.tmp")
        with open(tmp, "w", encoding="utf-8") as handle:
            for key, row in zip(keys, rows.to_dict(orient="records")):
                record = dict(records.get(key) or {"index": row["index"], "prediction": None, "error": {"kind": "not_run"}})
                record["metadata"] = {c: _plain(row[c]) for c in passthrough}
                record.update({k: _plain(v) for k, v in scored.get(key, {}).items()})
                handle.write(json.dumps(record, ensure_ascii=False, default=str) + "\n")
        tmp.replace(path)

    def _results(
        self,
        spec: ModelSpec,
        dataset: Any,
        outcome: DatasetRun,
        records: dict[str, dict],
        keys: list[str],
        started: str,
        duration: float,
        truncated_cells: int,
    ) -> dict[str, Any]:
        usage = {"requests": 0, "input_tokens": 0, "output_tokens": 0, "reasoning_tokens": 0}
        for key in keys:
            rec_usage = (records.get(key) or {}).get("usage")
            if rec_usage:
                usage["requests"] += 1
                for name in ("input_tokens", "output_tokens", "reasoning_tokens"):
                    usage[name] += int(rec_usage.get(name) or 0)
        model = self._models.get(spec.name)
        return {
            "schema_version": 1,
            "status": outcome.status,
            "started_at": started,
            "completed_at": now_iso(),
            "duration_s": round(duration, 3),
            "argv": sys.argv,
            "packages": package_versions(),
            "git": git_state(Path(__file__).resolve().parent.parent),
            "host": host_info(),
            "model": {
                "name": spec.name,
                "target": spec.target,
                "kwargs": spec.public_kwargs(),
                "settings": model.settings() if model is not None else None,
            },
            "dataset": {**dataset.info(), "limit": self.options.limit, "n_evaluated": outcome.n_total},
            "run": {"mode": self.options.mode, "nproc": self.options.nproc, "batch_size": self.options.batch_size},
            "counts": {
                "total": outcome.n_total,
                "completed": outcome.n_completed,
                "inference_errors": outcome.n_errors,
                "not_run": outcome.n_total - outcome.n_completed - outcome.n_errors,
                "xlsx_cells_truncated": truncated_cells,
            },
            "scoring": outcome.evaluation.to_dict() if outcome.evaluation is not None else None,
            "usage": usage,
            "files": outcome.files,
        }


def _plain(value: Any) -> Any:
    """JSON-friendly scalars (NaN -> None, numpy -> Python)."""
    if value is None:
        return None
    try:
        if pd.isna(value):
            return None
    except (TypeError, ValueError):
        pass
    return value.item() if hasattr(value, "item") else value


def summary_rows(outcomes: list[DatasetRun]) -> str:
    rows = []
    for o in outcomes:
        ev = o.evaluation
        rows.append(
            {
                "model": o.model,
                "dataset": o.dataset,
                "metric": ev.primary if ev else "-",
                "value": ev.primary_value if ev else None,
                "n": o.n_total,
                "done": o.n_completed,
                "errors": o.n_errors,
                "unparsed": ev.counts.get("unparsed") if ev else None,
                "status": o.status,
            }
        )
    return format_table(rows, ["model", "dataset", "metric", "value", "n", "done", "errors", "unparsed", "status"])


def build_datasets(datasets: list[str], custom: list[dict[str, Any]], *, root: Path | None = None,
                   progress: bool = True) -> list[Any]:
    """Catalog/TSV names and custom-file entries (as vlmkit.run_config makes them) -> dataset objects; an
    EvalScope directory gives one dataset per subset. Two datasets of one name are refused (one results folder)."""
    from datasets_tsv.registry import build_dataset

    built = [build_dataset(name, root=root, progress=progress) for name in datasets]
    if custom:
        from datasets_tsv.custom import build_custom_dataset, list_subsets

        for entry in custom:
            options = dict(entry)
            path = Path(options.pop("path")).expanduser()
            subsets = options.pop("subsets", None) or (list_subsets(path) if path.is_dir() else [None])
            built += [build_custom_dataset(path, subset=subset, **options) for subset in subsets]
    names = [d.name for d in built]
    twice = sorted({n for n in names if names.count(n) > 1})
    if twice:
        raise DataError(f"two datasets are named {twice[0]!r} (their results would share a folder); rename one")
    return built
