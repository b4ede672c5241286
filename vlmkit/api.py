"""vlmkit's public Python API: what a user's script (and every tool in tools/ that is not a benchmark of one
internal component) imports. `import vlmkit` stays cheap: each name is imported on first use.

    import vlmkit
    runs = vlmkit.evaluate(["vlmkit_demo_mcq"], ["vlmkit-tiny"], work_dir="outputs", batch_size=16)
    for result in vlmkit.load_results("outputs"):
        print(result.model_name, result.dataset_name, result.primary_metric)

The whole run is `evaluate` (not `run`: `vlmkit.run` is the package that holds the run pipeline). It takes the
options of `vlmkit run` as keyword arguments, spelled with underscores; an unknown one is a TypeError naming it.
"""

from __future__ import annotations

import dataclasses
import sys
from pathlib import Path
from typing import Any


def evaluate(data: str | list[str], model: str | list[str], *, judge: str | None = None,
             custom: list[dict[str, Any]] | None = None, **options: Any) -> list[Any]:
    """Every model on every dataset, as `vlmkit run --data ... --model ...` does: infer (resuming a journal),
    score, and write the work dir's files. Returns one DatasetRun per (model, dataset) pair (vlmkit.run.runner).

    Options are the fields of RunOptions (work_dir, mode, limit, nproc, batch_size, root, shard="I/N", merge,
    barrier_timeout, ...) and of ModelOptions (api_base, api_key, max_tokens, temperature, model_path,
    system_prompt, ...); `judge` names a judge model. With shard="I/N" only that shard's rows are asked and nothing is
    scored; merge=True scores once every shard is done (vlmkit.run.shards)."""
    from vlmkit.run.judge import JudgeOptions
    from vlmkit.run.resolve import ModelOptions
    from vlmkit.run.runner import Runner, RunOptions

    run_fields = {f.name for f in dataclasses.fields(RunOptions)}
    model_fields = {f.name for f in dataclasses.fields(ModelOptions)}
    unknown = sorted(set(options) - run_fields - model_fields)
    if unknown:
        raise TypeError(f"evaluate() got unknown option(s) {', '.join(unknown)}; "
                        f"known: {', '.join(sorted(run_fields | model_fields))}")
    run_kwargs = {"progress": sys.stderr.isatty(), **{k: v for k, v in options.items() if k in run_fields}}
    if "work_dir" in run_kwargs:
        run_kwargs["work_dir"] = Path(run_kwargs["work_dir"])
    run_options = RunOptions(**run_kwargs)
    model_options = ModelOptions(**{k: v for k, v in options.items() if k in model_fields})
    judge_options = JudgeOptions(name=judge) if judge else None
    datasets = [data] if isinstance(data, str) else list(data)
    models = [model] if isinstance(model, str) else list(model)
    return Runner(run_options, model_options, judge_options).run(datasets, models, custom)


def load_results(*work_dirs: str | Path) -> list[Any]:
    """Every results.json under the work dirs (default `outputs`; results set aside as results.staleN.json are left
    out) as vlmkit.outputs.schema.Results. A field of the
    wrong type is left out and a file that is not a results document is skipped, each with one warning line on
    stderr naming the file."""
    from vlmkit.outputs.layout import find_results, is_stale
    from vlmkit.outputs.schema import UnreadableFile, read_results

    found, warnings = [], []
    for path in find_results([Path(d) for d in (work_dirs or ("outputs",))]):
        if is_stale(path.name):
            continue
        try:
            found.append(read_results(path, warnings))
        except UnreadableFile as exc:
            warnings.append(f"skipped {exc}")
    for line in warnings:
        print(f"vlmkit: warning: {line}", file=sys.stderr)
    return found


def build_dataset(name_or_path: str, **options: Any) -> Any:
    """A benchmark by its catalog name, or a TSV by name in $LMUData or by path (datasets_tsv.catalog.registry)."""
    from datasets_tsv.catalog.registry import build_dataset as build

    return build(name_or_path, **options)


def build_custom_dataset(path: str | Path, **options: Any) -> Any:
    """A user's csv/jsonl file (AISBench, OpenCompass, EvalScope, mm_custom, conversations) as a dataset."""
    from datasets_tsv.custom import build_custom_dataset as build

    return build(path, **options)


def build_model(name: str, **options: Any) -> Any:
    """A model instance by the name `--model` takes, with the options of ModelOptions (api_base, max_tokens, ...)."""
    from vlmkit.run.resolve import ModelOptions, resolve_model

    return resolve_model(name, ModelOptions(**options)).build()


def normalise_message(msgs: Any) -> list[Any]:
    """A message (a string, a list of strings and parts, or a conversation) in the one format every model takes:
    a list of parts, or of turns when it is a conversation (vlmkit.core.message)."""
    from vlmkit.core.message import is_conversation, normalise_conversation, normalise_parts

    return normalise_conversation(msgs) if is_conversation(msgs) else normalise_parts(msgs)


def decode_image(data: bytes) -> Any:
    """A file's bytes as a PIL image, checked as vlmkit checks every image it reads; MediaError when they are not a
    readable image."""
    from vlmkit.core.media import bytes_to_image

    return bytes_to_image(data)


def bytes_to_b64(data: bytes) -> str:
    """Base64 text of a file's bytes, as a TSV's `image` cell holds it."""
    from vlmkit.core.media import bytes_to_b64 as encode

    return encode(data)


def extract_choice(reply: str, options: dict[str, str]) -> tuple[str | None, str]:
    """The option letter a reply names (None when it names none) and the reading rule that found it, as vlmkit
    reads MCQ answers (vlmkit.scoring.common.choice_reading)."""
    from vlmkit.scoring.common.choice_reading import extract_choice as read

    return read(reply, options)


def extract_yes_no(reply: str) -> str:
    """"Yes", "No" or "Unknown", as vlmkit reads a Y/N answer (vlmkit.scoring.kinds.yorn)."""
    from vlmkit.scoring.kinds.yorn import extract_yes_no as read

    return read(reply)


def __getattr__(name: str) -> Any:
    """The error types a script catches: DataError (bad dataset content: file, row, field), MediaError (bytes that
    are not the media they claim), ConfigError (a setting that cannot work)."""
    if name in ("DataError", "ConfigError"):
        from vlmkit.core import errors

        return getattr(errors, name)
    if name == "MediaError":
        from vlmkit.core.media import MediaError

        return MediaError
    raise AttributeError(f"module 'vlmkit.api' has no attribute {name!r}")


def run_perf(dataset: Any, options: Any) -> Any:
    """A load test of an OpenAI-compatible streaming service with requests built from `dataset`
    (vlmkit.perf; options: vlmkit.perf.PerfOptions)."""
    from vlmkit.perf import run_perf as perf

    return perf(dataset, options)
