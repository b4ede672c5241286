"""`vlmkit run`: for each model and dataset, infer what is missing, then score, then write the result files.

Per (model, dataset) the work folder `<work_dir>/<model>/<dataset>/` holds `journal.jsonl` (appended as answers
arrive; a rerun resumes from it), `predictions.jsonl` (one line per sample in dataset order, scored fields added
after evaluation) and `results.json`. The VLMEvalKit files `<model>_<dataset>.xlsx` and `_acc.csv`/`_score.csv`
sit in `<work_dir>/<model>/` where its users' scripts look for them.

What a run trusts and refuses:
- Resume: a journal is reused when its fingerprint matches, and each journalled answer whose prompt or per-row
  parameters differ from what this run builds is asked again (a note); vlmkit.run.resume says what an answer's
  identity is, and sets aside a journal written under other settings.
- API models are probed once before their first inference; the first samples all failing the same way
  (vlmkit.run.failures) stop the pair, and the model's remaining datasets are skipped.
- A pair with no answer writes no xlsx and no score file; `--mode eval` never moves a journal and never replaces
  a results.json that holds more answers. Stopped and interrupted pairs write nothing but their journal.
- One model is held at a time: `close()` and dropped after its last dataset.
- Datasets and models are asked through their contracts (vlmkit.core.contracts): a dataset's optional members have
  their defaults on its base class; a model, which may be a user's class with only `generate`, is held as a
  ModelView that gives the optional members theirs.
- Several processes: `--shard I/N` infers shard I's rows alone into `journal.shard<I>of<N>.jsonl` and scores nothing;
  `--merge` scores when every row has a record in some journal, else names the missing shards (vlmkit.run.shards).
  Under torchrun rank R is shard R/W (`journal.rank<R>.jsonl`); only rank 0 waits for the others, at most
  --barrier-timeout, and scores (vlmkit.run.distributed). A shard or rank reads only the journals that can hold its
  rows; the scorer reads them all.
- Memory stays flat in the number of rows: the rows' prompts are built twice, once to find what to ask (only the
  positions are kept) and again as each request is sent (PendingTasks); the journals hold where each record is, not
  the records (vlmkit.run.journal.JournalRecords), and predictions.jsonl and the xlsx are written as they are made.
  What is held a row: the dataset's table, its index key, the prediction and a journal int (tools/bench_scale.py).
- `--mcq-mode logits|continuation` (vlmkit.run.likelihood): MCQ and Y/N rows are answered by the local model's
  likelihood methods in run_local's batches instead of generate; refused in one line before anything runs for
  another kind of dataset or a model without them; the mode is part of the journal's fingerprint.
- `--repeats N` (vlmkit.run.repeats): attempt k sends seed k, attempt 1 in the pair's journal and k >= 2 in
  `attempts/attempt<k>/`; every attempt scored, `scoring.repeats` beside attempt 1's headline. Every scored pair counts
  the replies cut by the token budget (`scoring.truncation`, vlmkit.run.truncation); `--retry-truncated N` asks them
  again with max_tokens N (`retry_truncated/`) and scores the retried answers. A scorer's result without an interval
  gets the generic one where its headline is a plain mean, else a rescored bootstrap that re-runs its scorer on
  resampled tables without asking the judge again (EvalResult.scored; docs/error_bars.md).
- With a judge (vlmkit.run.judge) its server is probed before any model is asked anything; each pair's judge
  calls are journalled in `judge.jsonl`; a judge that stops (unreachable, refusing) stops the pair in one line, and
  rows whose judge call failed make the pair partial (asked again on the next run).
"""

from __future__ import annotations

import gc
import json
import logging
import sys
import time
from array import array
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pandas as pd

from vlmkit.core import config
from vlmkit.outputs import layout
from vlmkit.outputs.ark import OUTPUT_FORMAT as ARK_FORMAT
from vlmkit.outputs.ark import write_ark_output
from vlmkit.core.cells import listed
from vlmkit.run.distributed import (DEFAULT_BARRIER_TIMEOUT_S, RankGroup, RanksMissing, local_rank_device, pair_step,
                                    rank_world)
from vlmkit.core.errors import ConfigError, DataError
from vlmkit.run.failures import (
    FirstFailures,
    RunStopped,
    errors_by_kind,
    scoring_failures,
    with_hint,
)
from vlmkit.run.resume import differences, run_fingerprint, same_request, same_settings, set_aside_stale
from vlmkit.core.model_calls import ModelCallError
from vlmkit.run.inference import Task, prompt_failure_record, run_api, run_local
from vlmkit.run import likelihood, repeats, truncation
from vlmkit.run.journal import Journal, JournalRecords, MergedRecords, index_keys
from vlmkit.run.pending import PROMPT_ERRORS, PendingTasks, row_lines
from vlmkit.run.judge import JudgeOptions, RunJudge
from vlmkit.judging import JudgeStopped
from vlmkit.core.contracts import Dataset, ModelView, dataset_info, model_view, owns_prompts
from vlmkit.core.registry import import_target
from vlmkit.run.resolve import ModelOptions, ModelSpec, resolve_model
from vlm.registry import vllm_target
from vlmkit.outputs.console_table import format_table
from vlmkit.outputs.json_files import write_json
from vlmkit.outputs.provenance import now_iso
from vlmkit.outputs.tables import write_prediction_table, write_summary_table
from vlmkit.outputs.run_files import add_usage, eval_refusal, results_document, write_predictions
from vlmkit.outputs.schema import Usage
from vlmkit.run.inputs import build_datasets, check_frames, dataset_for_model
from vlmkit.run.shards import Shard, may_overlap, missing_message, parse_shard, scoring_lock
from vlmkit.scoring.result import EvalResult
from vlmkit.core.secrets import redacted_argv, scrub

log = logging.getLogger("vlmkit")
MODES = ("all", "infer", "eval")
PROMPT_STYLES = ("model", "dataset")
# Default --batch-size: a local transformers model batches 8 messages per padded generate (batch_or_each answers a
# batch that fails as a whole, e.g. out of memory, one message at a time); the demo's 500 rows take 48 s at 1, about
# 10 s at 8 and at 16 on 2 CPU cores, the same answers. vLLM schedules a batch itself: 64 messages per LLM.chat call.
LOCAL_BATCH = 8
VLLM_BATCH = 64
Records = JournalRecords | MergedRecords  # journal records by index key, read from their files when asked for


@dataclass
class RunOptions:
    work_dir: Path = Path("outputs")
    mode: str = "all"
    limit: int | None = None
    nproc: int = 4
    batch_size: int | None = None  # local models; None: LOCAL_BATCH, or VLLM_BATCH on --backend vllm
    reuse: bool = False
    fuzzy: bool = False
    root: Path | None = None  # $LMUData; None = vlmkit.core.config.lmu_data_root()
    progress: bool = True
    keep_local_tsv: bool = False  # run a local TSV whose MD5 differs from the catalog's instead of refusing it
    kind: str | None = None  # how to score a TSV the catalog does not know (datasets_tsv.catalog.user_rules)
    metric: str | None = None
    like: str | None = None
    prompt_style: str = "model"  # model: a model's own prompts where it has them (VLMEvalKit's); dataset: never
    data_root: Path | None = None  # a local snapshot folder for benchmarks built from one (MVBench, Video-MME)
    coords: str | None = None  # GUI grounding: how a reply's coordinates are read (abs, norm1000, norm1, auto)
    shard: Shard | str | None = None  # --shard I/N: infer shard I of N alone, score nothing (vlmkit.run.shards)
    merge: bool = False  # --merge: score when every row has an answer in some journal (with --shard: if the last)
    barrier_timeout: float = DEFAULT_BARRIER_TIMEOUT_S  # torchrun: seconds rank 0 waits for the others after a pair
    mcq_mode: str = "generate"  # MCQ/Y/N by generation, or by likelihood: logits | continuation (vlmkit.run.likelihood)
    repeats: int = 1  # --repeats N: each sample asked N times, attempt k with seed k (vlmkit.run.repeats)
    retry_truncated: int | None = None  # --retry-truncated N: cut replies asked again with N tokens (run.truncation)

    def check(self) -> None:
        """ConfigError (one line naming the flag) for a value that cannot work."""
        if self.mode not in MODES:
            raise ConfigError(f"--mode must be one of {', '.join(MODES)}, got {self.mode!r}")
        if self.prompt_style not in PROMPT_STYLES:
            raise ConfigError(f"--prompt-style must be one of {', '.join(PROMPT_STYLES)}, got {self.prompt_style!r}")
        for flag, value in (("--limit", self.limit), ("--nproc", self.nproc), ("--batch-size", self.batch_size),
                            ("--repeats", self.repeats), ("--retry-truncated", self.retry_truncated)):
            if value is not None and (isinstance(value, bool) or not isinstance(value, int) or value < 1):
                raise ConfigError(f"{flag} must be a whole number, 1 or more; got {value!r}")
        likelihood.check_mode(self.mcq_mode)
        if isinstance(self.shard, str):
            self.shard = parse_shard(self.shard)
        if (isinstance(self.barrier_timeout, bool) or not isinstance(self.barrier_timeout, (int, float))
                or not self.barrier_timeout > 0):
            raise ConfigError(f"--barrier-timeout must be a number of seconds above 0; got {self.barrier_timeout!r}")
        if (self.shard is not None or self.merge) and self.mode != "all":
            what = "--shard" if self.shard is not None else "--merge"
            raise ConfigError(f"{what} goes with --mode all (a shard infers its rows; --merge scores them), "
                              f"not --mode {self.mode}")
        self._check_repeats()

    def _check_repeats(self) -> None:
        """--repeats and --retry-truncated: what they do not go with (vlmkit.run.repeats says why)."""
        asked = [flag for flag, on in (("--repeats", self.repeats > 1), ("--retry-truncated", self.retry_truncated))
                 if on]
        if len(asked) == 2:
            raise ConfigError("--repeats and --retry-truncated go one at a time: retry the cut replies of a single run")
        if not asked:
            return
        if self.shard is not None or self.merge:
            raise ConfigError(f"{asked[0]} goes with a whole run, not with --shard / --merge")
        if self.mcq_mode != "generate":
            raise ConfigError(f"{asked[0]} goes with generated answers, not --mcq-mode {self.mcq_mode} (its "
                              "likelihoods do not vary between attempts and have no token budget)")


@dataclass
class DatasetRun:
    """What one (model, dataset) pair ended with.

    status: success | partial (some samples failed) | failed (every sample failed: nothing scored) | inferred
    (--mode infer) | no_target (nothing to score against) | shard_done (every row of a --shard, or of a rank > 0
    under torchrun, answered; nothing scored) | incomplete (--merge: some row has no answer in any journal; nothing
    scored, `message` names the shards) | stopped (the
    probe failed or the first samples all failed the same way: `message` says why) | skipped (not run: the model
    stopped on an earlier dataset) | no_answers (--mode eval found no answer) | kept (--mode eval would have
    replaced results that hold more answers). vlmkit.cli.exit_codes maps each to an exit code.
    """

    model: str
    dataset: str
    status: str
    n_total: int
    n_completed: int
    n_errors: int
    evaluation: EvalResult | None = None
    files: dict[str, str] = field(default_factory=dict)
    message: str | None = None  # one line: why the pair stopped or wrote nothing
    errors: dict[str, dict[str, Any]] = field(default_factory=dict)  # vlmkit.run.failures.errors_by_kind
    scoring_failures: dict[str, dict[str, Any]] = field(default_factory=dict)  # vlmkit.run.failures.scoring_failures
    notes: list[str] = field(default_factory=list)
    judge: dict[str, Any] | None = None  # the judge's stats for this pair (JournalledJudge.stats), None: no judge
    # blocks added to results.json's `scoring` (truncation, repeats, retry_truncated) and the console lines about them
    scoring_extra: dict[str, Any] = field(default_factory=dict)
    lines: list[str] = field(default_factory=list)


class Runner:
    def __init__(self, options: RunOptions, model_options: ModelOptions | None = None,
                 judge_options: JudgeOptions | None = None) -> None:
        options.check()
        self.options = options
        self.model_options = model_options or ModelOptions()
        wants_judge = judge_options is not None and judge_options.name is not None and options.mode != "infer"
        self.judge = RunJudge(judge_options, progress=options.progress) if wants_judge else None  # type: ignore[arg-type]
        self._models: dict[str, ModelView] = {}
        self._probes: dict[str, dict[str, Any] | None] = {}
        self._secrets: set[str] = set()
        self._prompts_from: dict[tuple[str, str], str] = {}  # (model, dataset) -> "dataset" or the model's prompt owner
        self._vlmevalkit_prompts_from: dict[tuple[str, str], str] = {}  # the same as VLMEvalKit would decide it
        self._group: RankGroup | None = None  # the ranks of a torchrun launch (vlmkit.run.distributed)

    def run(self, datasets: list[str], models: list[str | ModelSpec], custom: list[dict[str, Any]] | None = None
            ) -> list[DatasetRun]:
        """Every model on every dataset: catalog/TSV names, and custom files (entries as vlmkit.run.config_file makes).

        Models are names (resolved here) or ModelSpecs. One model is held at a time: after its last dataset it is
        closed and dropped before the next one is built. A model that stops (probe, first samples) skips its
        remaining datasets; the other models still run."""
        scoring_only = self.options.mode == "eval"  # nothing is asked: a served name needs no --api-base
        specs = [m if isinstance(m, ModelSpec) else resolve_model(m, self.model_options, scoring_only=scoring_only)
                 for m in models]  # fail fast
        for spec in specs:
            self._remember_secret(spec)
            why = repeats.refusal(self.options.repeats, spec.name, spec.kwargs.get("temperature"),
                                  self.model_options.temperature is not None)
            if why and self.options.mode != "eval":
                raise ConfigError(why)
        world = rank_world()[1]
        if world > 1 and (self.options.repeats > 1 or self.options.retry_truncated):
            raise ConfigError("--repeats and --retry-truncated go with a single process, not under torchrun")
        if world > 1 and self.options.shard is not None:
            raise ConfigError("--shard runs one shard alone; under torchrun each rank already takes its share "
                              "(leave out --shard, or run the shards without torchrun)")
        if world > 1 and self._group is None:  # NotShared: one line when the work dir is not shared storage
            self._group = RankGroup.start(self.options.work_dir, self.options.barrier_timeout)
        if self.judge is not None and self.judge.secret:
            self._secrets.add(self.judge.secret)
        built = self.build_datasets(datasets, custom or [])
        if self.options.mode != "eval":
            self._check_mcq_mode(specs, built)  # one line before anything is asked
        if self.judge is not None:
            self.judge.start()  # JudgeStopped: a dead judge is found before any model is asked anything
            print(f"judge: {self.judge.name} at {self.judge.settings()['base_url']}", flush=True)
        for dataset in built:
            self._rows(dataset)  # an empty dataset is an error before anything is asked
            for spec in specs:
                check_frames(spec, dataset)
            why = dataset.scoring_problem() if self.options.mode != "infer" else None
            if why:  # e.g. a scorer's missing library: said before a long inference, not after it
                raise ConfigError(f"{dataset.name}: {why} (or run --mode infer now and --mode eval later)")
            if self.options.mode != "eval":
                dataset.prepare_images()  # a failed image pass is the dataset's problem: one line before any request
            if dataset.scorer_reason and self.options.mode != "infer":
                print(f"{dataset.name}: scorer {dataset.scorer_reason}", flush=True)  # which rules, and why
        outcomes: list[DatasetRun] = []
        for spec in specs:
            try:
                for i, dataset in enumerate(built):
                    outcome = self.run_one(spec, dataset)
                    outcomes.append(outcome)
                    if outcome.status == "stopped":
                        why = f"not run ({spec.name} stopped on {dataset.name})"
                        for d in built[i + 1 :]:
                            self._arrive(spec.name, d.name, "skipped")
                            outcomes.append(DatasetRun(spec.name, d.name, "skipped", len(self._rows(d)), 0, 0,
                                                       message=f"{spec.name} x {d.name}: {why}"))
                        break
            finally:
                self.release(spec)
        if self.judge is not None:
            self.judge.close()
        return outcomes

    def build_datasets(self, datasets: list[str], custom: list[dict[str, Any]]) -> list[Dataset]:
        return build_datasets(datasets, custom, root=self.options.root, progress=self.options.progress,
                              keep_local_tsv=self.options.keep_local_tsv, kind=self.options.kind,
                              metric=self.options.metric, like=self.options.like,
                              inference_only=self.options.mode == "infer", judge=self.judge is not None,
                              data_root=self.options.data_root, coords=self.options.coords)

    def release(self, spec: ModelSpec) -> None:
        """Close the model built for spec (weights, connections) and drop every reference the runner holds."""
        model = self._models.pop(spec.name, None)
        if model is None:
            return
        local = not model.is_api
        model.close()
        del model
        if local:  # weights held in reference cycles are freed now, before the next model loads
            gc.collect()

    # One (model, dataset) ----------------------------------------------------------------------------------
    def run_one(self, spec: ModelSpec, dataset: Dataset) -> DatasetRun:
        started = now_iso()
        began = time.perf_counter()
        self._remember_secret(spec)
        dataset = dataset_for_model(dataset, spec)  # the model family's reading of replies (GUI coordinates)
        model_dir = layout.model_dir(self.options.work_dir, spec.name)
        run_dir = layout.run_dir(self.options.work_dir, spec.name, dataset.name)
        rows = self._rows(dataset)
        keys = index_keys(rows["index"])
        label = f"{spec.name} x {dataset.name}"
        eval_only = self.options.mode == "eval"
        merge_only = self.options.merge and self.options.shard is None  # --merge: score the shards, ask nothing

        rank, world = rank_world()
        shard = self._shard()
        fingerprint = run_fingerprint(spec.name, spec.target, spec.kwargs, dataset, self.options.mcq_mode)
        journal = Journal(run_dir / self._journal_name(shard), fingerprint, secrets=self._secrets,
                          shard=shard.pair if shard is not None else None)
        notes: list[str] = []
        if not eval_only and not merge_only:
            set_aside_stale(journal, self._result_files(model_dir, run_dir, spec, dataset), reuse=self.options.reuse)
            try:
                notes += self._infer(spec, dataset, rows, keys, journal, shard,
                                     f"{label} [shard {shard}]" if self.options.shard is not None else label,
                                     extra=repeats.attempt_params(1, self.options.repeats))
                notes += self._infer_more(spec, dataset, rows, keys, journal, label)
            except RunStopped as stop:
                self._arrive(spec.name, dataset.name, "stopped")  # rank 0 does not wait for a rank that stopped
                records = self._all_records(run_dir, journal, overlapping=shard)
                errors = self._scrubbed(errors_by_kind(records, keys))
                n_ok = _answered(records, keys)
                outcome = DatasetRun(spec.name, dataset.name, "stopped", len(keys), n_ok,
                                     sum(e["count"] for e in errors.values()), message=self._scrub(f"{label}: {stop}"),
                                     errors=errors, notes=notes)
                scorer = shard is None or (world > 1 and rank == 0)  # a shard never writes the pair's results.json
                if scorer and not (run_dir / layout.RESULTS).exists():  # say why on disk too, where nothing is lost
                    outcome.files = {"journal": str(journal.path), "results": str(run_dir / layout.RESULTS)}
                    write_json(run_dir / layout.RESULTS,
                               self._results(spec, dataset, outcome, records, keys, started,
                                             time.perf_counter() - began, 0),
                               secrets=self._secrets)
                return outcome

        if world > 1:
            self._arrive(spec.name, dataset.name, "inferred")  # this rank's share is journalled
            if rank != 0:  # rank 0 alone waits, reads every journal and scores
                return self._shard_outcome(spec, dataset, keys, journal, shard, run_dir)
            try:
                statuses = self._group.wait_for_all(pair_step(spec.name, dataset.name), label) if self._group else {}
            except RanksMissing as missing:
                records = self._all_records(run_dir, journal)  # what the table shows as done: every rank's so far
                n_ok, n_errors = _answered(records, keys), sum(map(records.failed, keys))
                return DatasetRun(spec.name, dataset.name, "stopped", len(keys), n_ok, n_errors, message=str(missing),
                                  files={"journal": str(run_dir / layout.RANK_JOURNALS)})
            stopped = sorted(r for r, status in statuses.items() if status == "stopped")
            if stopped:
                notes.append(f"{label}: rank(s) {listed(stopped)} stopped before answering their share (their own "
                             "messages say why); their rows are counted as not run")
        elif shard is not None:  # --shard I/N: no score unless --merge and every row has an answer
            if not self.options.merge:
                print(f"{label}: shard {shard} journalled in {journal.path}; once every shard is done, score with the "
                      "same command with --merge instead of --shard", flush=True)
                return self._shard_outcome(spec, dataset, keys, journal, shard, run_dir)
        if self.options.merge:
            with scoring_lock(run_dir):
                seen: list[tuple[Path, tuple[int, int] | None]] = []
                records = self._all_records(run_dir, journal, seen=seen)
                missing = missing_message(keys, records, seen)
                if missing is not None:
                    if shard is not None:  # the last shard to finish scores; this one was not the last
                        outcome = self._shard_outcome(spec, dataset, keys, journal, shard, run_dir)
                        print(f"{label}: shard {shard} done; {missing}", flush=True)
                        return outcome
                    return DatasetRun(spec.name, dataset.name, "incomplete", len(keys), _answered(records, keys),
                                      sum(map(records.failed, keys)),
                                      message=f"{label}: {missing}",
                                      files={"journal": str(run_dir / layout.JOURNALS)})
                return self._score(spec, dataset, rows, keys, journal, records, notes, started, began,
                                   model_dir, run_dir, label)
        records = self._all_records(run_dir, journal, any_settings=eval_only, notes=notes if eval_only else None)
        if self.options.retry_truncated:  # the cut rows' retried answers stand in for the first ones
            retry = truncation.retry_dir(run_dir)
            records = truncation.Retried(records, self._all_records(retry, self._side_journal(retry, journal),
                                                                     any_settings=eval_only))
        return self._score(spec, dataset, rows, keys, journal, records, notes, started, began, model_dir, run_dir,
                           label)

    def _score(self, spec: ModelSpec, dataset: Dataset, rows: pd.DataFrame, keys: list[str], journal: Journal,
               records: dict[str, dict[str, Any]], notes: list[str], started: str, began: float, model_dir: Path,
               run_dir: Path, label: str) -> DatasetRun:
        """Score the records of every row and write the pair's files (xlsx, score csv, predictions, results)."""
        eval_only = self.options.mode == "eval"
        world = rank_world()[1]
        predictions, usage, states = _answers(records, keys)
        n_completed = sum(p is not None for p in predictions)
        n_errors = sum(map(records.failed, keys))
        errors = self._scrubbed(errors_by_kind(records, keys))

        if eval_only:
            refused = eval_refusal(run_dir, label, len(keys), n_completed)
            if refused is not None:
                return DatasetRun(spec.name, dataset.name, refused[0], len(keys), n_completed, n_errors,
                                  message=refused[1], errors=errors, notes=notes)

        table = rows.assign(prediction=predictions)  # copy-on-write: the dataset's columns are shared, not copied
        del predictions
        if self.options.merge:
            files = {"journal": str(run_dir / layout.JOURNALS)}
        else:
            files = {"journal": str(journal.path) if world == 1 else str(run_dir / layout.RANK_JOURNALS)}
        truncated = 0
        if n_completed:  # a table of nothing but empty predictions would read as a model that said nothing
            xlsx = model_dir / layout.xlsx_name(spec.name, dataset.name)
            truncated = write_prediction_table(xlsx, table)
            files["predictions_xlsx"] = str(xlsx)

        judge = self.judge.for_pair(run_dir, tuple(self._secrets)) if self.judge is not None else None
        try:
            if self.options.mcq_mode == "ppl" and self.options.mode != "infer" and n_completed:
                evaluation = likelihood.perplexity_result(records, keys)
                status = "success" if n_completed == len(keys) else "partial"
            else:
                evaluation, status = self._evaluate(dataset, table, len(keys), n_completed, notes, judge)
        except JudgeStopped as stop:
            return DatasetRun(spec.name, dataset.name, "stopped", len(keys), n_completed, n_errors,
                              message=self._scrub(f"{label}: {stop}"), errors=errors, notes=notes, files=files,
                              judge=judge.stats() if judge is not None else None)
        if evaluation is not None and evaluation.table is not None:
            summary = model_dir / layout.summary_name(spec.name, dataset.name, evaluation.table_suffix)
            write_summary_table(summary, evaluation.table)
            files["summary_csv"] = str(summary)
        scored_badly = self._scrubbed(scoring_failures(evaluation.per_sample if evaluation else None,
                                                       _ByKey(keys, table["prediction"])))

        files["predictions"] = str(run_dir / layout.PREDICTIONS)
        write_predictions(run_dir / layout.PREDICTIONS, keys, rows, records, evaluation, records.line)
        if dataset.output_format == ARK_FORMAT:  # Ark's output records beside predictions.jsonl
            write_ark_output(run_dir / layout.ARK_OUTPUT, rows, records, evaluation.per_sample if evaluation else None,
                             defaults=spec.public_kwargs(), secrets=tuple(self._secrets))
            files["ark_output"] = str(run_dir / layout.ARK_OUTPUT)
        files["results"] = str(run_dir / layout.RESULTS)
        outcome = DatasetRun(spec.name, dataset.name, status, len(keys), n_completed, n_errors, evaluation, files,
                             errors=errors, scoring_failures=scored_badly, notes=notes,
                             judge=judge.stats() if judge is not None else None)
        if evaluation is not None:
            try:
                self._more_figures(spec, dataset, rows, keys, journal, records, table["prediction"], states,
                                   evaluation, outcome, label, judge)
            except JudgeStopped as stop:
                outcome.status, outcome.message = "stopped", self._scrub(f"{label}: {stop}")
        write_json(
            run_dir / layout.RESULTS,
            self._results(spec, dataset, outcome, records, keys, started, time.perf_counter() - began, truncated,
                          usage=usage),
            secrets=self._secrets,
        )
        return outcome

    def _side_journal(self, folder: Path, journal: Journal) -> Journal:
        """The journal of an attempt >= 2 or of the retried rows: in its own folder, under the pair's settings."""
        return Journal(folder / layout.JOURNAL, journal.fingerprint, secrets=self._secrets)

    def _infer_more(self, spec: ModelSpec, dataset: Dataset, rows: pd.DataFrame, keys: list[str], journal: Journal,
                    label: str) -> list[str]:
        """--repeats N: attempts 2..N, each into its own journal with its seed; --retry-truncated N: the rows whose
        reply was cut, asked once more with max_tokens N into the retry journal. Returns notes."""
        notes: list[str] = []
        n = self.options.repeats
        run_dir = journal.path.parent
        for k in range(2, n + 1):
            side = self._side_journal(repeats.attempt_dir(run_dir, k), journal)
            set_aside_stale(side, [], reuse=self.options.reuse)
            notes += self._infer(spec, dataset, rows, keys, side, None, f"{label} [attempt {k}/{n}]",
                                 extra=repeats.attempt_params(k, n))
        budget = self.options.retry_truncated
        if budget:
            side = self._side_journal(truncation.retry_dir(run_dir), journal)
            set_aside_stale(side, [], reuse=self.options.reuse)
            cut = truncation.cut_positions(self._all_records(run_dir, journal), keys)
            if cut:
                notes += self._infer(spec, dataset, rows, keys, side, None,
                                     f"{label} [{len(cut)} cut, max_tokens {budget}]",
                                     extra={"max_tokens": budget}, only=cut)
        return notes

    def _more_figures(self, spec: ModelSpec, dataset: Dataset, rows: pd.DataFrame, keys: list[str], journal: Journal,
                      records: Records, predictions: pd.Series, states: bytearray, evaluation: EvalResult,
                      outcome: DatasetRun, label: str, judge: Any) -> None:
        """Truncation (every run), --retry-truncated's before and after, and --repeats' figures: into
        outcome.scoring_extra (results.json `scoring`), outcome.lines (the console, under the table) and notes.
        predictions and states: each row's as scored (`_answers`)."""
        max_tokens = spec.kwargs.get("max_tokens", spec.kwargs.get("max_new_tokens"))
        blocks, lines, notes = truncation.figures(
            label, records, keys, states, evaluation, budget=self.options.retry_truncated, max_tokens=max_tokens,
            first=lambda first: _answers(first, keys)[::2],  # (predictions, states) of the first answers
            score=lambda answers: self._evaluated_predictions(dataset, rows, answers, judge))
        outcome.scoring_extra.update(blocks)
        outcome.lines += lines
        outcome.notes += notes
        run_dir = journal.path.parent
        if "retry_truncated" in blocks:
            outcome.files["retry_journal"] = str(truncation.retry_dir(run_dir) / layout.JOURNAL)
        n = self.options.repeats
        if n < 2:
            return
        attempts = [repeats.Attempt(1, predictions.tolist(), evaluation)]
        for k in range(2, n + 1):
            folder = repeats.attempt_dir(run_dir, k)
            side = self._all_records(folder, self._side_journal(folder, journal),
                                     any_settings=self.options.mode == "eval")
            their_judge = self.judge.for_pair(folder, tuple(self._secrets)) if self.judge is not None else None
            predictions = _answers(side, keys)[0]
            attempts.append(repeats.Attempt(k, predictions,
                                            self._evaluated_predictions(dataset, rows, predictions, their_judge)))
        block, line = repeats.figures(label, attempts, keys, evaluation,
                                      lambda voted: self._evaluated_predictions(dataset, rows, voted, judge))
        outcome.scoring_extra["repeats"] = block
        outcome.lines.append(line)
        outcome.files["attempt_journals"] = str(run_dir / repeats.ATTEMPTS_DIR / "attempt*" / layout.JOURNAL)

    def _evaluated_predictions(self, dataset: Dataset, rows: pd.DataFrame, predictions: list[Any],
                               judge: Any) -> EvalResult | None:
        n_completed = sum(p is not None for p in predictions)
        return self._evaluate(dataset, rows.assign(prediction=predictions), len(predictions), n_completed, [],
                              judge, rescored=False)[0]

    def _evaluate(self, dataset: Dataset, table: pd.DataFrame, n_total: int, n_completed: int, notes: list[str],
                  judge: Any = None, *, rescored: bool = True) -> tuple[EvalResult | None, str]:
        """(evaluation, status); no evaluation when there is no answer, no target, or nothing could be scored.
        Rows whose judge call failed make the pair partial: the next run asks the judge again for them.
        rescored: False for the side figures (--repeats' attempts and vote, --retry-truncated's before), which show
        no interval: only the generic one of a mean, never the bootstrap that re-runs the scorer."""
        if n_completed == 0:
            return None, "failed"
        if self.options.mode == "infer":
            return None, "inferred" if n_completed == n_total else "partial"
        target = (dataset.answer_columns or ("answer",))[0]  # the reference (LLaVABench: gpt4_ans)
        if target not in table or not table[target].notna().any():
            return None, "no_target"
        def score(rows: pd.DataFrame, judged_by: Any) -> EvalResult:
            return dataset.evaluate(rows, fuzzy=self.options.fuzzy, judge=judged_by)

        evaluation = EvalResult.scored(score, table, judge) if rescored else score(table, judge).with_generic_interval()
        evaluation.counts.setdefault("inference_errors", n_total - n_completed)
        if evaluation.counts.get("scored", 1) == 0:  # no figure that would read as a result
            notes += evaluation.notes
            return None, "no_target"
        judge_errors = int(evaluation.counts.get("judge_errors") or 0)
        if judge_errors:
            notes.append(f"{judge_errors} row(s) could not be judged (the judge call failed; the scorer's notes say how "
                         "they count this run); rerun the same command to ask the judge again for them")
        return evaluation, "success" if n_completed == n_total and not judge_errors else "partial"

    def _infer(self, spec: ModelSpec, dataset: Dataset, rows: pd.DataFrame, keys: list[str], journal: Journal,
               shard: Shard | None, label: str, *, extra: dict[str, Any] | None = None,
               only: Sequence[int] | None = None) -> list[str]:
        """Ask the model for this shard's rows (every row without one) that have no answer, or whose journalled
        prompt or parameters differ from what is built now; journal each answer. Only the journals that can hold
        this shard's rows are read. Returns notes for results.json. RunStopped when the probe or the first samples
        say that the rest would fail too. extra: fields every request of this call adds to its row's parameters (an
        attempt's seed, a retry's max_tokens); only: ask these positions alone (the cut rows of a retry)."""
        records = self._all_records(journal.path.parent, journal, overlapping=shard)
        positions = only if only is not None else shard.positions(len(keys)) if shard is not None else range(len(keys))
        build = self._prompter(spec, dataset)
        if self.options.mcq_mode != "generate":  # each task carries the options its row is scored on
            build = _with_choices(build, dataset.kind)
        pending = array("q")  # positions to ask: the tasks themselves are built again as they are sent
        unbuildable: list[dict[str, Any]] = []
        changed: list[Any] = []
        for pos, line in row_lines(rows, positions):
            key = keys[pos]
            answered = key in records and not records.failed(key)
            try:
                task = _with_extra(self._task(build, dataset, line), extra)
            except PROMPT_ERRORS as exc:
                if not answered:  # an answer asked before stays; a new row fails alone
                    unbuildable.append(prompt_failure_record(line["index"], line.get("answer"), exc))
                continue
            if answered:
                if same_request(records[key], task.msgs, task.params):
                    continue
                changed.append(line["index"])
            pending.append(pos)
        tasks = PendingTasks(rows, pending, lambda line: _with_extra(self._task(build, dataset, line), extra))
        notes: list[str] = []
        if changed:
            note = (f"{label}: {len(changed)} journalled answer(s) were asked with another prompt or other parameters "
                    f"than this run builds; asked again: index {listed(changed)}")
            log.warning("%s", note)
            notes.append(note)
        share = len(positions)
        answered_before = share - len(tasks) - len(unbuildable)
        if not tasks and not unbuildable:
            print(f"{label}: all {share} already answered, nothing to ask", flush=True)
            return notes
        if answered_before:
            print(f"{label}: {answered_before} of {share} already answered, asking {len(tasks)}",
                  flush=True)
        model = self._model(spec) if tasks else None
        is_api = model is not None and model.is_api
        if is_api:
            self._probe(spec, model)
        with journal:
            for record in unbuildable:
                journal.append(record)
            if is_api and self.options.mcq_mode != "generate":  # the letter mode: the server's top_logprobs
                likelihood.run_served(model, list(tasks), journal, dataset=dataset.name, nproc=self.options.nproc,
                                      desc=label, progress=self.options.progress)
            elif is_api:
                run_api(model, tasks, journal, dataset=dataset.name, nproc=self.options.nproc, desc=label,
                        progress=self.options.progress, watch=FirstFailures(len(tasks)).check)
            elif model is not None:  # a local model sorts its tasks by length: they are built here
                mode = self.options.mcq_mode
                ask = None if mode == "generate" else likelihood.ask_batch(model.inner, mode, dataset.name)
                run_local(model, list(tasks), journal, dataset=dataset.name, batch_size=self._batch_size(spec),
                          desc=label, progress=self.options.progress, ask=ask)
        return notes

    # Helpers ------------------------------------------------------------------------------------------------
    def _rows(self, dataset: Dataset) -> pd.DataFrame:
        rows = dataset.data if self.options.limit is None else dataset.data.head(self.options.limit)
        if len(rows) == 0:
            raise DataError(f"{dataset.source_file}: no rows (only a header?); nothing to evaluate")
        return rows

    def _remember_secret(self, spec: ModelSpec) -> None:
        for secret in (spec.kwargs.get("api_key"), config.openai_api_key()):
            if isinstance(secret, str) and secret:
                self._secrets.add(secret)

    def _scrub(self, text: str) -> str:
        return scrub(text, self._secrets)

    def _scrubbed(self, obj: Any) -> Any:
        """obj (JSON-able) with every known key replaced wherever it appears in a string."""
        return json.loads(scrub(json.dumps(obj, default=str), self._secrets)) if self._secrets else obj

    def _batch_size(self, spec: ModelSpec) -> int:
        """--batch-size, else the default of the model's backend."""
        if self.options.batch_size is not None:
            return self.options.batch_size
        return VLLM_BATCH if spec.target == vllm_target() else LOCAL_BATCH

    def _model(self, spec: ModelSpec) -> ModelView:
        if spec.name not in self._models:
            run_kwargs: dict[str, Any] = {}
            if spec.is_local:
                run_kwargs["batch_size"] = self._batch_size(spec)
                if rank_world()[1] > 1 and "device" not in spec.kwargs:
                    run_kwargs["device"] = local_rank_device()
            self._models[spec.name] = model_view(spec.build(**run_kwargs))
        return self._models[spec.name]

    def _probe(self, spec: ModelSpec, model: ModelView) -> None:
        """Ask an API model's server once, before its first inference (`probe()`, where the model has one)."""
        if spec.name in self._probes:
            return
        probe = model.probe
        if probe is None:
            self._probes[spec.name] = None
            return
        try:
            info = probe()
        except ModelCallError as exc:
            raise RunStopped(with_hint(f"stopped before asking anything: {exc}")) from None
        info = self._scrubbed(dict(info or {}))
        if info.get("warning"):
            log.warning("%s: %s", spec.name, info["warning"])
        self._probes[spec.name] = info

    def _prompter(self, spec: ModelSpec, dataset: Dataset) -> Callable[[dict[str, Any]], list[Any]]:
        """How this run builds a row's prompt: the dataset's, or the model's own where it says so (VLMEvalKit's
        `use_custom_prompt` / `build_prompt`, given a vlmkit.core.contracts.DatasetInfo). `--prompt-style dataset` always
        takes the dataset's. The kit's local classes own prompts through the family named by their preset
        (vlm.prompts), asked without loading weights; another class that never owns prompts is not built for this.
        What VLMEvalKit would do (the owner's `use_custom_prompt`, whatever --prompt-style says) is recorded too:
        results.json's run.vlmevalkit_prompts_from, which `vlmkit report --explain` reads."""
        key = (spec.name, dataset.name)
        info = dataset_info(dataset)
        owner: Any
        if spec.is_local:
            owner = import_target("vlm.prompts:prompts_for", what="model prompts")(spec.kwargs.get("preset"))
            who = type(owner).__name__
        else:
            cls = import_target(spec.target, what=f"model {spec.name!r}")
            owner = self._model(spec) if owns_prompts(cls) else None
            who = owner.class_name if owner is not None else ""
        models_own = owner is not None and bool(owner.use_custom_prompt(info))
        # what VLMEvalKit would do with this model and dataset, whatever --prompt-style says (report --explain)
        self._vlmevalkit_prompts_from[key] = f"model ({who})" if models_own else "dataset"
        self._prompts_from[key] = "dataset"
        if self.options.prompt_style == "dataset" or not models_own:
            return dataset.build_prompt
        self._prompts_from[key] = f"model ({who})"
        return lambda line: owner.build_prompt(line, info)

    @staticmethod
    def _servers(model: ModelView | None) -> dict[str, Any]:
        """`{"servers": ...}` from a model that counts its requests per server (`server_counts()`: several
        --api-base URLs); empty for any other model, so that results.json has no `servers` key then."""
        counts = getattr(model.inner, "server_counts", None) if model is not None else None
        return {"servers": counts()} if callable(counts) else {}

    @staticmethod
    def _task(build: Callable[[dict[str, Any]], Any], dataset: Dataset, line: dict[str, Any]) -> Task:
        built = build(line)
        msgs, choices = built if isinstance(built, _WithChoices) else (built, None)
        params = dataset.generation_params(line)
        return Task(index=line["index"], msgs=msgs, target=line.get("answer"), params=params or None, choices=choices)

    def _check_mcq_mode(self, specs: Sequence[ModelSpec], datasets: Sequence[Dataset]) -> None:
        """--mcq-mode logits|continuation: ConfigError (one line) for a dataset that is not MCQ or Y/N, or a model
        without the likelihood method (a served model: not available yet)."""
        mode = self.options.mcq_mode
        if mode == "generate":
            return
        for dataset in datasets:
            why = likelihood.refusal(mode, dataset=dataset.name, kind=getattr(dataset, "kind", None))
            if why:
                raise ConfigError(why)
        for spec in specs:
            cls = None if spec.is_api else import_target(spec.target, what=f"model {spec.name!r}")
            why = likelihood.refusal(mode, model=spec.name, model_class=cls, served=spec.is_api)
            if why:
                raise ConfigError(why)

    def _all_records(self, run_dir: Path, own: Journal, *, any_settings: bool = False,
                     notes: list[str] | None = None, overlapping: Shard | None = None,
                     seen: list[tuple[Path, tuple[int, int] | None]] | None = None) -> Records:
        """Records of every journal in run_dir written under the same settings (all shards or ranks of a sharded
        run, or an earlier run split otherwise); a successful record wins over an error for the same index.
        any_settings (--mode eval): journals written under other settings count too, with a warning and a note.
        overlapping: only the journals whose rows can meet this shard's (the others are read no further than their
        header line). seen: gets (path, its header's shard) of each journal read. The records stay in their files
        (vlmkit.run.journal.JournalRecords): one journal's mapping is returned as it is, several are merged."""
        sources: list[JournalRecords] = []
        for path in sorted(run_dir.glob(layout.JOURNALS)):
            if layout.is_stale(path.name):
                continue
            journal = own if path == own.path else Journal(path, own.fingerprint)
            stored_shard = journal.stored_shard()
            if path != own.path and overlapping is not None and not may_overlap(overlapping.pair, stored_shard):
                continue
            stored = journal.stored_fingerprint()
            if not same_settings(stored, own.fingerprint) and not journal.header_lost():
                if any_settings:
                    what = ", ".join(differences(stored, own.fingerprint))
                    note = f"{path} was written under other settings ({what} differ); scoring its answers as they are"
                    log.warning("%s", note)
                    if notes is not None:
                        notes.append(note)
                elif not self.options.reuse:
                    continue
            if seen is not None:
                seen.append((path, stored_shard))
            sources.append(journal.current())
        if len(sources) == 1:
            return sources[0]
        merged = MergedRecords()
        for source in sources:
            merged.take(source)
        return merged

    def _shard(self) -> Shard | None:
        """This process's shard: --shard I/N, or rank R of W under torchrun; None for a whole single-process run."""
        if self.options.shard is not None:
            return self.options.shard  # type: ignore[return-value]  (check() parsed it)
        rank, world = rank_world()
        return Shard(rank, world) if world > 1 else None

    def _journal_name(self, shard: Shard | None) -> str:
        if self.options.shard is not None and shard is not None:
            return layout.shard_journal_name(shard.index, shard.count)
        rank, world = rank_world()
        return layout.journal_name(rank, world)

    def _arrive(self, model: str, dataset: str, status: str) -> None:
        """Under torchrun: tell rank 0 that this rank is done with the pair (how it ended). A no-op otherwise."""
        if self._group is not None:
            self._group.arrive(pair_step(model, dataset), status)

    def _shard_outcome(self, spec: ModelSpec, dataset: Dataset, keys: list[str], journal: Journal, shard: Shard | None,
                       run_dir: Path) -> DatasetRun:
        """How a shard (or a rank > 0) ended, from the journals of its rows: shard_done when each of its rows has
        an answer, partial when some failed (a rerun of the shard asks them again). Nothing is scored."""
        records = self._all_records(run_dir, journal, overlapping=shard)
        mine = [keys[pos] for pos in (shard.positions(len(keys)) if shard is not None else range(len(keys)))]
        n_ok, n_errors = _answered(records, mine), sum(map(records.failed, mine))
        errors = self._scrubbed(errors_by_kind(records, mine))
        status = "shard_done" if n_ok == len(mine) else "partial"
        return DatasetRun(spec.name, dataset.name, status, len(mine), n_ok, n_errors, errors=errors,
                          files={"journal": str(journal.path)})

    @staticmethod
    def _result_files(model_dir: Path, run_dir: Path, spec: ModelSpec, dataset: Dataset) -> list[Path]:
        """Every file a finished pair writes besides its journal (the xlsx and score csv where VLMEvalKit puts them)."""
        return [model_dir / layout.xlsx_name(spec.name, dataset.name),
                *(model_dir / layout.summary_name(spec.name, dataset.name, s) for s in layout.SUMMARY_SUFFIXES),
                run_dir / layout.PREDICTIONS, run_dir / layout.RESULTS]

    def _results(self, spec: ModelSpec, dataset: Dataset, outcome: DatasetRun, records: Records, keys: list[str],
                 started: str, duration: float, truncated_cells: int, usage: Usage | None = None) -> dict[str, Any]:
        model = self._models.get(spec.name)
        if self.judge is None:
            judge = {"name": None, "note": "rules only (no --judge): answers no rule could read count as misses"}
        else:
            judge = {**self.judge.settings(), **(outcome.judge or {})}
        document = results_document(
            outcome, dataset.info(), records, keys, started=started, duration=duration,
            truncated_cells=truncated_cells, argv=redacted_argv(sys.argv, self._secrets),
            model={"name": spec.name, "target": spec.target, "kwargs": spec.public_kwargs(),
                   "settings": model.settings() if model is not None else None, "probe": self._probes.get(spec.name)},
            run={"mode": self.options.mode, "nproc": self.options.nproc,
                 "batch_size": self._batch_size(spec) if spec.is_local else self.options.batch_size,
                 "keep_local_tsv": self.options.keep_local_tsv, "limit": self.options.limit,
                 "prompt_style": self.options.prompt_style,
                 "prompts_from": self._prompts_from.get((spec.name, dataset.name)),  # None: no inference this run
                 "vlmevalkit_prompts_from": self._vlmevalkit_prompts_from.get((spec.name, dataset.name)),
                 "mcq_mode": self.options.mcq_mode,
                 **({"repeats": self.options.repeats} if self.options.repeats > 1 else {}),
                 **({"retry_truncated": self.options.retry_truncated} if self.options.retry_truncated else {}),
                 **self._servers(model)},
            judge=judge, usage=usage,
        )
        if outcome.scoring_extra and isinstance(document.get("scoring"), dict):
            document["scoring"].update(outcome.scoring_extra)
        if self.options.mcq_mode != "generate" and isinstance(document.get("scoring"), dict):
            answers = list(dataset.data["answer"].iloc[: len(keys)]) if "answer" in dataset.data else [None] * len(keys)
            document["scoring"]["likelihood"] = likelihood.likelihood_summary(self.options.mcq_mode, records, keys,
                                                                              answers)
        return document


class _WithChoices(tuple):
    """(msgs, choices): what a likelihood run's prompt builder returns for a row (`_with_choices`)."""


def _with_choices(build: Callable[[dict[str, Any]], list[Any]], kind: str) -> Callable[[dict[str, Any]], Any]:
    """A prompt builder whose rows also carry the options they are scored on (vlmkit.run.likelihood.row_choices);
    a row whose options cannot be read fails alone, as a prompt that cannot be built."""

    def build_with_choices(line: dict[str, Any]) -> _WithChoices:
        return _WithChoices((build(line), likelihood.row_choices(kind, line)))

    return build_with_choices


class _ByKey:
    """A column's values by index key, for a few look-ups (`get`) without a dict of every row."""

    def __init__(self, keys: list[str], values: pd.Series) -> None:
        self.keys, self.values = keys, values

    def get(self, key: str, default: Any = None) -> Any:
        try:
            return self.values.iloc[self.keys.index(key)]
        except ValueError:
            return default


def _with_extra(task: Task, extra: dict[str, Any] | None) -> Task:
    """task with extra added to its row's parameters (an attempt's seed, a retry's max_tokens win over the row's)."""
    if extra:
        task.params = {**(task.params or {}), **extra}
    return task


def _answered(records: Records, keys: Sequence[str]) -> int:
    """How many of keys have an answer (a record that is not an error)."""
    return sum(1 for key in keys if key in records and not records.failed(key))


def _answers(records: Records, keys: Sequence[str]) -> tuple[list[Any], Usage, bytearray]:
    """Each key's prediction (None without an answer), the usage totals, and each row's reply state (finished, cut
    by the token budget, or none: vlmkit.run.truncation.reply_state), reading each answered record once."""
    predictions: list[Any] = []
    usage = Usage(requests=0, input_tokens=0, output_tokens=0, reasoning_tokens=0)
    states = bytearray(len(keys))
    for pos, key in enumerate(keys):
        record = records.get(key)
        if record is None:
            predictions.append(None)
            continue
        add_usage(usage, record.get("usage"))
        predictions.append(record.get("prediction") if record.get("error") is None else None)
        states[pos] = truncation.reply_state(record)
    return predictions, usage, states


def summary_rows(outcomes: list[DatasetRun]) -> str:
    """The console table; a pair with nothing scored shows no value (never a 0 that reads as a score)."""
    rows = []
    for o in outcomes:
        ev = o.evaluation
        rows.append(
            {
                "model": o.model,
                "dataset": o.dataset,
                "metric": ev.primary if ev else "-",
                "value": ev.formatted(ev.primary) if ev else None,  # on its scale, as `vlmkit report` shows it
                "ci95": ev.formatted_interval() if ev else None,
                "vlmevalkit": _vlmevalkit_value(ev),
                "n": o.n_total,
                "done": o.n_completed,
                "errors": o.n_errors,
                "unparsed": ev.counts.get("unread", ev.counts.get("unparsed")) if ev else None,  # after any judge
                "status": o.status,
            }
        )
    columns = ["model", "dataset", "metric", "value", "ci95", "vlmevalkit", "n", "done", "errors", "unparsed", "status"]
    for optional in ("ci95", "vlmevalkit"):  # shown when some pair has one
        if all(row[optional] is None for row in rows):
            columns.remove(optional)
    table = format_table(rows, columns)
    also = [f"{o.model} x {o.dataset}: also " + ", ".join(f"{m} {o.evaluation.formatted(m)}" for m in o.evaluation.also)
            for o in outcomes if o.evaluation is not None and o.evaluation.also]
    lines = [line for o in outcomes for line in o.lines]  # --repeats, --retry-truncated
    return "\n".join([table, *also, *lines])


def _vlmevalkit_value(ev: EvalResult | None) -> str | None:
    """VLMEvalKit's headline for the same replies, on vlmkit's scale (None where the scorer does not compute it)."""
    if ev is None or ev.vlmevalkit is None or ev.vlmevalkit.primary_value is None:
        return None
    scale = ev.scale_of(ev.vlmevalkit.primary)
    value = ev.vlmevalkit.primary_value
    return scale.format(value) if scale is not None else f"{value:.4g}"
