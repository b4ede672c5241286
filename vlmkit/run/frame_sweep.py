"""`vlmkit run --nframe 8,16,32` (or `--fps 0.5,1`): each video benchmark at each frame budget, in one command.

One run per budget: the models are built with that budget (`nframe=N` or `fps=F`, as `--nframe N` alone builds them)
and each video dataset runs under VLMEvalKit's name for the setting, `<dataset>_<N>frame` / `<dataset>_<F>fps`
(vlmkit.run.frame_budgets), so each budget has its own folder, journal and result files, and a rerun of the same
command asks only what no budget's journal holds yet. The dataset is read once; each budget's run sees it through
`BudgetDataset`, which changes its name and adds `video` to what results.json records of it (`dataset.video`:
`{"nframe": 8, "rule": ..., "benchmark": "Video-MME", "label": "8frame"}`); frames, clips and their caches are the
dataset's own, shared by every budget.

What the sweep leaves alone:
- A dataset that is not video (`kind != "video"`) runs once, with the models built as without --nframe/--fps (its
  journal is the one a plain run writes).
- A video dataset whose text was written for fixed frames (`subtitle_sampling`: Video-MME_8frame_subs;
  `prompt_sampling`: a prompt naming the frame count, MMBench-Video, QBench_Video, STI-Bench) runs once,
  under its own name, at the budget it was picked at; a sweep without that budget refuses it before anything runs.
- `--fps` budgets refuse a benchmark that VLMEvalKit runs by frame count only (`refuses_fps`: MVBench), before
  anything runs, as a plain `--fps` run does (vlmkit.run.inputs.check_frames).
Models are built again for each budget (a local model loads its weights once per budget). `--shard`/`--merge` and
`--data-parallel` work per budget: each child runs its shard of every budget (its command line carries the sweep as
typed, vlmkit.run.frame_budgets.Budgets), then the parent merges each budget's journals. `--mode perf` takes one
budget only (vlmkit.cli.main refuses a sweep there).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from typing import Any

from vlmkit.core.errors import ConfigError
from vlmkit.run.frame_budgets import FPS, NFRAME, Budget
from vlmkit.run.inputs import check_frames
from vlmkit.run.judge import JudgeOptions
from vlmkit.run.resolve import ModelOptions, resolve_model
from vlmkit.run.runner import DatasetRun, Runner, RunOptions

VIDEO_KIND = "video"


class BudgetDataset:
    """A dataset seen at one frame budget: every member is the dataset's own but `name` (`<name>_<label>`) and
    `info()`, which adds `video` (the budget, the sampling rule, the benchmark's own name)."""

    def __init__(self, dataset: Any, budget: Budget) -> None:
        self._dataset = dataset
        self.budget = budget
        self.name = budget.dataset_name(dataset.name)

    def __getattr__(self, attr: str) -> Any:
        if attr == "_dataset":  # not set yet (a copy being made): no endless lookup
            raise AttributeError(attr)
        return getattr(self._dataset, attr)

    def __len__(self) -> int:
        return len(self._dataset)

    def __repr__(self) -> str:
        return f"{self.name} ({self._dataset!r} at {self.budget.label})"

    def info(self) -> dict[str, Any]:
        info = dict(self._dataset.info())
        info["name"] = self.name
        info["video"] = video_record(self._dataset, self.budget, info)
        return info


def video_record(dataset: Any, budget: Budget, info: dict[str, Any] | None = None) -> dict[str, Any]:
    """results.json's `dataset.video` of a run at one budget: `{nframe|fps, rule, benchmark, label}` (rule: the
    dataset's frame sampler as its info() says it, None where it says none)."""
    frames = (info if info is not None else dataset.info()).get("frames")
    rule = frames.get("sampler") if isinstance(frames, dict) else None
    return {**budget.sampling(), "rule": rule, "benchmark": dataset.name, "label": budget.label}


def _fixed(dataset: Any) -> tuple[dict[str, float], str] | None:
    """(the sampling a dataset's text was written for, what it is): Video-MME's subtitle variants (`subtitle_sampling`)
    and prompts that name the frame count (`prompt_sampling`: MMBench-Video, QBench_Video, STI-Bench); None for a
    dataset free to sweep."""
    for attr, what in (("subtitle_sampling", "shows its subtitle lines at"), ("prompt_sampling", "names in its prompt")):
        wanted = getattr(dataset, attr, None)
        if wanted:
            return wanted, what
    return None


def _fits(wanted: dict[str, float], budget: Budget) -> bool:
    [(key, value)] = wanted.items()
    return key == budget.key and float(value) == float(budget.value)


class _Prepared(Runner):
    """A Runner over datasets already built (the sweep builds them once for every budget)."""

    def __init__(self, datasets: list[Any], *args: Any) -> None:
        super().__init__(*args)
        self._prepared = datasets

    def build_datasets(self, datasets: list[str], custom: list[dict[str, Any]]) -> list[Any]:
        return list(self._prepared)


@dataclasses.dataclass
class SweepPlan:
    """Which datasets run at which budget: `per_budget[i]` the datasets of budgets[i]'s run (video ones seen through
    BudgetDataset), `once` the datasets that run once without the video options."""

    budgets: list[Budget]
    per_budget: list[list[Any]]
    once: list[Any]


def plan_sweep(datasets: Sequence[Any], budgets: Sequence[Budget]) -> SweepPlan:
    """Split the datasets between the budgets' runs (module docstring); ConfigError (one line) for a fixed-frame
    dataset that no budget of the sweep fits."""
    per_budget: list[list[Any]] = [[] for _ in budgets]
    once: list[Any] = []
    for dataset in datasets:
        if getattr(dataset, "kind", None) != VIDEO_KIND:
            once.append(dataset)
            continue
        fixed = _fixed(dataset)
        if fixed is None:
            for runs, budget in zip(per_budget, budgets):
                runs.append(BudgetDataset(dataset, budget))
            continue
        wanted, what = fixed
        fits = [i for i, budget in enumerate(budgets) if _fits(wanted, budget)]
        if not fits:
            [(key, value)] = wanted.items()
            raise ConfigError(f"{dataset.name} {what} {key}={value:g}, which no budget of this "
                              f"sweep is: add {value:g} to --{key}, or run it apart")
        per_budget[fits[0]].append(dataset)  # under its own name: it is one setting already
    return SweepPlan(list(budgets), per_budget, once)


def budget_options(model_options: ModelOptions, budget: Budget | None) -> ModelOptions:
    """The model options of one budget's run (None: as without --nframe/--fps)."""
    return dataclasses.replace(model_options, nframe=budget.value if budget and budget.key == NFRAME else None,
                               fps=budget.value if budget and budget.key == FPS else None)


def run_sweep(budgets: Sequence[Budget], options: RunOptions, model_options: ModelOptions,
              judge_options: JudgeOptions | None, data: list[str], models: list[str],
              custom: list[dict[str, Any]] | None = None) -> list[DatasetRun]:
    """Every model on every dataset, each video dataset at each budget (module docstring). The datasets are built
    once; the checks between the budgets' models and datasets are made for every budget before anything is asked.
    Returns the runs' outcomes, budget by budget, then those of the datasets that run once."""
    plain = budget_options(model_options, None)
    built = Runner(options, plain, judge_options).build_datasets(data, custom or [])
    plan = plan_sweep(built, budgets)
    if not any(plan.per_budget):
        print(f"--{budgets[0].key} {','.join(b.label for b in budgets)}: no video dataset to sweep; each dataset runs "
              "once", flush=True)
    scoring_only = options.mode == "eval"
    for budget, datasets in zip(plan.budgets, plan.per_budget):
        specs = [resolve_model(name, budget_options(model_options, budget), scoring_only=scoring_only)
                 for name in models]
        for dataset in datasets:
            for spec in specs:
                check_frames(spec, dataset)  # ConfigError for every budget before any budget runs
    outcomes: list[DatasetRun] = []
    for budget, datasets in zip(plan.budgets, plan.per_budget):
        if datasets:
            outcomes += _Prepared(datasets, options, budget_options(model_options, budget), judge_options).run(
                [], list(models))
    if plan.once:
        outcomes += _Prepared(plan.once, options, plain, judge_options).run([], list(models))
    return outcomes
