"""`vlmkit run --mode perf`: AISBench's perf mode on the run command's datasets and served models.

Each (model, dataset) pair is load-tested once, closed loop at `--nproc` concurrent requests, `--limit` requests
(default: one per row), with the run's `--max-tokens`; the custom datasets' `.meta.json` and per-row
`max_tokens` decide each request's max_tokens as in `vlmkit perf`; `--system-prompt` is sent as `vlmkit run` sends it. Figures go to
`WORK_DIR/<model>/<dataset>/perf/`. For sweeps, open loops, SLOs and workers use `vlmkit perf`.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from vlmkit.core.errors import DataError
from vlmkit.perf.api import PerfResult, run_perf
from vlmkit.perf.options import DEFAULT_MAX_TOKENS, PerfOptions
from vlmkit.outputs.layout import PERF_DIR, run_dir
from vlmkit.run.resolve import ModelSpec


def perf_options_for(spec: ModelSpec, *, work_dir: Path, dataset: str, nproc: int, limit: int | None,
                     max_tokens: int | None, seed: int = 0) -> PerfOptions:
    """The perf options of one (served model, dataset) pair of a `run --mode perf`: the spec's class (whichever API
    class its registry entry names) gives the auth headers."""
    from vlm.registry import default_api_base

    if not spec.is_api:
        raise DataError(
            f"--mode perf load-tests a served model; {spec.name} is local: give --api-base URL (or use `vlmkit run`)"
        )
    kwargs = spec.kwargs
    return PerfOptions(
        model=kwargs["model"],
        api_base=kwargs.get("api_base") or default_api_base(),
        api_key=kwargs.get("api_key"),
        api_class=spec.target,
        concurrency=[nproc],
        num_requests=limit,
        max_tokens=max_tokens or DEFAULT_MAX_TOKENS,
        video_mode=kwargs.get("video_mode", "frames"),
        nframe=kwargs.get("nframe") or 8,
        system_prompt=kwargs.get("system_prompt"),  # --system-prompt, as `vlmkit run` sends it
        out_dir=run_dir(work_dir, spec.name, dataset) / PERF_DIR,
        seed=seed,
    )


def run_perf_mode(specs: list[ModelSpec], datasets: list[Any], *, work_dir: Path, nproc: int,
                  limit: int | None, max_tokens: int | None, seed: int = 0) -> list[PerfResult]:
    """Every served model against every dataset, one perf level each; the results in that order."""
    plans = [
        (perf_options_for(spec, work_dir=work_dir, dataset=d.name, nproc=nproc, limit=limit, max_tokens=max_tokens,
                          seed=seed), d)
        for spec in specs
        for d in datasets
    ]  # every pair checked before any load is sent
    return [run_perf(dataset, options) for options, dataset in plans]
