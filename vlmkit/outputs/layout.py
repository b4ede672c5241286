"""The names of the files and folders in a work dir, in one place (docs/outputs.md says what each file holds).

    <work_dir>/<model folder>/<model folder>_<dataset>.xlsx            VLMEvalKit's predictions table
    <work_dir>/<model folder>/<model folder>_<dataset>_acc.csv         VLMEvalKit's summary (`_score.csv` for some)
    <work_dir>/<model folder>/<dataset>/journal.jsonl                  the answers as they arrive
                                        journal.rank<R>.jsonl          rank R's share under torchrun
                                        journal.shard<I>of<N>.jsonl    shard I of N (`vlmkit run --shard I/N`)
                                        merge.lock                     held while a shard or --merge scores
                                        judge.jsonl                    the judge's calls (--judge)
                                        attempts/attempt<K>/journal.jsonl   attempt K of --repeats N (K >= 2)
                                        retry_truncated/journal.jsonl       the rows re-asked by --retry-truncated
                                        predictions.jsonl              one line per sample
                                        results.json                   the pair's results (vlmkit.outputs.schema)
                                        ark_output.jsonl               Ark's records (conversation datasets)
                                        perf/                          `vlmkit run --mode perf`
    <name>.stale<N><suffix>      a file set aside when a later run used other settings (vlmkit.core.files.move_aside
                                 names it; never deleted): results.stale1.json beside predictions.stale1.jsonl

    <work_dir>/.vlmkit-ranks/<launch>/     torchrun's rank markers (start and per-pair arrival; vlmkit.run.distributed):
                                           small files, safe to delete once the run has ended
    <work_dir>/logs/data_parallel.shard<I>of<N>.log   each child's output under --data-parallel N (appended per start)

The model folder is the model name made safe for a path (`model_folder_name`); the dataset folder is the dataset's
name as it is.
"""

from __future__ import annotations

import re
from pathlib import Path

RESULTS = "results.json"
PREDICTIONS = "predictions.jsonl"
JOURNAL = "journal.jsonl"
JOURNALS = "journal*.jsonl"  # every journal of a pair: ranks and set-aside ones (glob)
RANK_JOURNALS = "journal.rank*.jsonl"  # what a sharded run's results.json names as its journal
MERGE_LOCK = "merge.lock"  # beside the journals: one scorer at a time (vlmkit.run.shards)
RANKS_DIR = ".vlmkit-ranks"  # under the work dir: torchrun's marker files, one folder per launch
JUDGE_JOURNAL = "judge.jsonl"
ARK_OUTPUT = "ark_output.jsonl"
SUMMARY_SUFFIXES = ("acc", "score")  # <model>_<dataset>_<suffix>.csv, as VLMEvalKit names them
STALE = ".stale"  # what move_aside puts before a set-aside file's suffix, with its number
PERF_DIR = "perf"  # `vlmkit run --mode perf` under the pair's folder
PERF_SUMMARY = "perf_summary.json"
PERF_SUMMARY_CSV = "perf_summary.csv"
PERF_REQUESTS = "perf_requests.jsonl"
PERF_PLOTS = "plots"

_RESULTS_RE = re.compile(r"results(?:\.stale(\d+))?\.json")


def model_folder_name(name: str) -> str:
    """A safe folder name for a model name or path (`Qwen/Qwen2.5-VL-7B-Instruct` -> `Qwen2.5-VL-7B-Instruct`)."""
    tail = name.rstrip("/\\").replace("\\", "/").split("/")[-1] or "model"
    return re.sub(r"[^A-Za-z0-9._+-]", "_", tail)


def model_dir(work_dir: Path, model: str) -> Path:
    """Where a model's VLMEvalKit tables and its run folders go."""
    return work_dir / model_folder_name(model)


def run_dir(work_dir: Path, model: str, dataset: str) -> Path:
    """The folder of one (model, dataset) pair: journal, predictions, results."""
    return model_dir(work_dir, model) / dataset


def journal_name(rank: int = 0, world: int = 1) -> str:
    """journal.jsonl, or journal.rank<R>.jsonl for rank R of a sharded run."""
    return JOURNAL if world == 1 else f"journal.rank{rank}.jsonl"


def shard_journal_name(index: int, count: int) -> str:
    """journal.shard<I>of<N>.jsonl: the journal of shard I of N (`vlmkit run --shard I/N`)."""
    return f"journal.shard{index}of{count}.jsonl"


def ranks_dir(work_dir: Path, launch: str) -> Path:
    """The folder of one torchrun launch's rank markers (vlmkit.run.distributed)."""
    return work_dir / RANKS_DIR / launch


def xlsx_name(model: str, dataset: str) -> str:
    """`<model folder>_<dataset>.xlsx`: VLMEvalKit's predictions table, in the model folder."""
    return f"{model_folder_name(model)}_{dataset}.xlsx"


def summary_name(model: str, dataset: str, suffix: str) -> str:
    """`<model folder>_<dataset>_<suffix>.csv` (suffix: one of SUMMARY_SUFFIXES), in the model folder."""
    return f"{model_folder_name(model)}_{dataset}_{suffix}.csv"


def stale_name(name: str, n: int) -> str:
    """The name of the N-th set-aside copy of a file (`results.json` -> `results.stale1.json`), as
    vlmkit.core.files.move_aside gives it."""
    path = Path(name)
    return f"{path.stem}{STALE}{n}{path.suffix}"


def is_stale(name: str) -> bool:
    """Whether a file name is one set aside (`journal.stale2.jsonl`, `results.stale1.json`)."""
    return STALE in name


def stale_number(results_name: str) -> int | None:
    """N of a `results.staleN.json`; None for `results.json` (or any other name)."""
    m = _RESULTS_RE.fullmatch(results_name)
    return int(m.group(1)) if m and m.group(1) else None


def is_results_name(name: str) -> bool:
    """results.json or a set-aside results.staleN.json."""
    return _RESULTS_RE.fullmatch(name) is not None


def predictions_beside(results: Path) -> Path:
    """predictions.jsonl beside results.json; predictions.staleN.jsonl beside results.staleN.json."""
    stale = stale_number(results.name)
    return results.parent / (stale_name(PREDICTIONS, stale) if stale is not None else PREDICTIONS)


def find_results(roots: list[Path]) -> list[Path]:
    """Every results.json / results.staleN.json below the given folders, at any depth (a file given is taken as
    it is), sorted. FileNotFoundError (one line naming it) for a root that is neither."""
    found: set[Path] = set()
    for root in roots:
        if root.is_file():
            found.add(root)
        elif root.is_dir():
            found.update(p for p in root.rglob("results*.json") if is_results_name(p.name) and p.is_file())
        else:
            raise FileNotFoundError(f"{root}: no such folder")
    return sorted(found)
