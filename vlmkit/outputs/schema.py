"""results.json and the predictions.jsonl record as types: what the runner writes and what a reader may count on.

`Results` is one (model, dataset) pair's document, its fields in the order the file holds them; the blocks inside it
are TypedDicts (plain dicts at run time, so a writer's block goes into the file as it is, and a reader keeps keys
this version does not know). docs/outputs.md says what each field means.

Reading is tolerant (`read_results`, `read_predictions`): a file written by hand or damaged has each field of the
wrong type (`notes` a string, `scoring` a list, `counts.total` a string) left out and said in one warning line that
names the file and the fields; only a file that is not JSON, or not a results document at all (no `status` string),
is refused (UnreadableFile, one line). Types are checked from the annotations below, so they are the one
description of the shape. No pandas here: the report imports this module.
"""

from __future__ import annotations

import json
import types
import typing
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field, fields
from functools import lru_cache
from pathlib import Path
from typing import Any, TypedDict

SCHEMA_VERSION = 1  # results.json's `schema_version`; raise it when a field changes meaning or type


class UnreadableFile(ValueError):
    """A results or predictions file that cannot be read as one; the text names the file (one line)."""


# --- results.json blocks -------------------------------------------------------------------------------------
class ScaleBlock(TypedDict, total=False):
    """A figure's scale (vlmkit.scoring.scales.Scale.to_dict)."""

    scale: str  # fraction | percent | points
    higher_is_better: bool
    out_of: float | None


class PrimaryMetric(ScaleBlock, total=False):
    name: str
    value: float | None


class VlmevalkitBlock(TypedDict, total=False):
    """`scoring.vlmevalkit` (vlmkit.scoring.vlmevalkit_figure.VlmevalkitFigure.to_dict)."""

    repo: str
    commit: str
    primary_metric: dict[str, Any]  # name, value
    metrics: dict[str, Any]
    differing_rows: int
    rows: list[dict[str, Any]]  # index, vlmkit, vlmevalkit[, vlmkit_score, vlmevalkit_score]
    notes: list[str]


class IntervalBlock(TypedDict, total=False):
    """`scoring.interval` (vlmkit.scoring.common.intervals.Interval.to_dict; docs/error_bars.md)."""

    metric: str
    estimate: float
    low: float
    high: float
    se: float
    confidence: float
    method: str
    n: int
    unit: str
    clusters: int
    cluster_by: str
    resamples: int
    seed: int


class TruncationBlock(TypedDict, total=False):
    """`scoring.truncation`: replies cut by the token budget (vlmkit.run.truncation; docs/error_bars.md)."""

    count: int
    share: float  # of the replies
    replies: int
    score_finished: float | None  # mean per-row outcome of the replies that finished
    score_truncated: float | None  # ... and of those that were cut
    measure: str


class RetryTruncatedBlock(TypedDict, total=False):
    """`scoring.retry_truncated` (`--retry-truncated N`): the cut rows asked again; the headline is `after`."""

    max_tokens: int
    cut_before: int
    retried: int
    before: dict[str, Any]  # {value, truncation}
    after: dict[str, Any]


class RepeatsBlock(TypedDict, total=False):
    """`scoring.repeats` (`--repeats N`, vlmkit.run.repeats): each attempt's headline and the figures over them."""

    n: int
    seeds: list[int]
    metric: str | None
    per_attempt: list[dict[str, Any]]  # {attempt, seed, answered, value}
    scored_attempts: int
    mean: float | None  # mean@N
    std: float | None  # sample SD (n-1) of the attempts' headlines
    pass_at_k: dict[str, float] | None  # "1".."N"; null for graded scorers
    pass_at_k_unit: str | None
    majority: dict[str, Any] | None  # {value, vote_on}


class Scoring(TypedDict, total=False):
    """The scorer's block (vlmkit.scoring.result.EvalResult.to_dict)."""

    scorer: str
    primary_metric: PrimaryMetric
    metrics: dict[str, Any]
    scale: ScaleBlock | None
    metric_scales: dict[str, ScaleBlock]
    breakdown: list[dict[str, Any]] | None  # the summary table's rows
    counts: dict[str, Any]  # unparsed, unread, by_rule, ... (after any judge)
    notes: list[str]
    vlmevalkit: VlmevalkitBlock | None  # the figure VLMEvalKit would print (vlmkit.scoring.vlmevalkit_figure)
    interval: IntervalBlock | None  # the headline's 95% interval (docs/error_bars.md)
    truncation: TruncationBlock  # replies cut by the token budget (absent in files written before)
    retry_truncated: RetryTruncatedBlock  # --retry-truncated only
    repeats: RepeatsBlock  # --repeats N > 1 only


class Counts(TypedDict, total=False):
    total: int
    completed: int
    inference_errors: int
    not_run: int
    xlsx_cells_truncated: int


class ModelBlock(TypedDict, total=False):
    name: str
    target: str
    kwargs: dict[str, Any]  # without the API key
    settings: dict[str, Any] | None
    probe: Any  # a served model's /models answer; null for a local model


class DatasetBlock(TypedDict, total=False):
    """The dataset's info() (more keys than named here: kind, class, source, scorer, ...) plus limit, n_evaluated."""

    name: str
    md5: str | None
    limit: int | None
    n_evaluated: int


class ErrorSummary(TypedDict, total=False):
    """One error kind of `errors_by_kind` (vlmkit.run.failures.errors_by_kind)."""

    count: int
    first_index: Any
    first_message: str | None
    status: Any


class ScoringFailure(TypedDict, total=False):
    """One kind of `scoring_failures` (vlmkit.run.failures.scoring_failures)."""

    count: int
    first_index: Any
    what: str
    first_prediction: str | None


class Usage(TypedDict, total=False):
    requests: int
    input_tokens: int
    output_tokens: int
    reasoning_tokens: int


class JudgeBlock(TypedDict, total=False):
    """`{name: null, note}` without --judge; with one, its settings and what it cost (vlmkit.run.judge)."""

    name: str | None
    note: str


@dataclass
class Results:
    """One results.json. The field order is the file's key order."""

    schema_version: int | None = SCHEMA_VERSION
    status: str = ""  # success | partial | failed | stopped | inferred | no_target
    started_at: str | None = None
    completed_at: str | None = None
    duration_s: float | None = None
    argv: list[str] = field(default_factory=list)  # every API key masked
    packages: dict[str, str | None] = field(default_factory=dict)
    git: dict[str, Any] | None = None  # commit, dirty
    host: dict[str, Any] = field(default_factory=dict)  # platform, gpu_name, gpu_count
    model: ModelBlock = field(default_factory=ModelBlock)
    dataset: DatasetBlock = field(default_factory=DatasetBlock)
    run: dict[str, Any] = field(default_factory=dict)  # mode, nproc, batch_size, ..., prompts_from
    counts: Counts = field(default_factory=Counts)
    errors_by_kind: dict[str, ErrorSummary] = field(default_factory=dict)
    scoring: Scoring | None = None
    scoring_failures: dict[str, ScoringFailure] = field(default_factory=dict)
    usage: Usage = field(default_factory=Usage)
    judge: JudgeBlock = field(default_factory=JudgeBlock)
    message: str | None = None  # one line: why the pair stopped
    notes: list[str] = field(default_factory=list)
    files: dict[str, str] = field(default_factory=dict)  # where the pair's other files are

    @property
    def model_name(self) -> str | None:
        return self.model.get("name")

    @property
    def dataset_name(self) -> str | None:
        return self.dataset.get("name")

    @property
    def primary_metric(self) -> PrimaryMetric | None:
        """`{name, value, scale, higher_is_better[, out_of]}` of the headline figure; None when nothing was scored."""
        return (self.scoring or {}).get("primary_metric")

    def to_dict(self) -> dict[str, Any]:
        """The document as write_json takes it (blocks as they are, not copied)."""
        return {f.name: getattr(self, f.name) for f in fields(self)}


# --- predictions.jsonl records -------------------------------------------------------------------------------
class Part(TypedDict, total=False):
    type: str  # text | image | video | audio
    value: Any


class Turn(TypedDict, total=False):
    role: str  # system | user | assistant
    content: list[Part]


class PredictionError(TypedDict, total=False):
    kind: str  # http_4xx, timeout, bad_media, not_run, ... (docs/outputs.md)
    message: str | None
    status: Any


class PredictionRecord(TypedDict, total=False):
    """One predictions.jsonl line: the journal's record, the row's other columns, then the scorer's fields."""

    index: Any
    prompt: list[Turn]
    prompt_hash: str | None
    prompt_digest: str | None
    target: Any
    prediction: str | None
    error: PredictionError | None
    reasoning: str | None
    usage: dict[str, Any] | None
    latency_ms: float | None
    finish_reason: str | None  # the server's (`length`: cut by the token budget); absent on error records
    extra: dict[str, Any] | None
    params: dict[str, Any] | None
    metadata: dict[str, Any]
    # the scorer's per-row fields (present after evaluation; which ones depends on the scorer)
    extracted: Any
    method: str | None
    hit: bool | None
    group_hit: bool | None
    score: float | None
    judge: Any


# --- reading ---------------------------------------------------------------------------------------------------
_BAD = object()  # a value that is not of its field's type


def read_results(path: Path, warnings: list[str] | None = None) -> Results:
    """One results.json as Results. Fields of the wrong type are left out (their defaults stand) and said in one
    line appended to `warnings`; UnreadableFile when the file cannot be read, is not JSON or has no `status`."""
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except OSError as exc:
        raise UnreadableFile(f"{path}: cannot be read ({exc.strerror or exc})") from None
    except ValueError as exc:
        raise UnreadableFile(f"{path}: not JSON ({exc})") from None
    if not isinstance(data, dict) or not isinstance(data.get("status"), str):
        raise UnreadableFile(f"{path}: not a vlmkit results.json (no `status` field)")
    results, problems = results_from_dict(data)
    if problems and warnings is not None:
        warnings.append(f"{path}: {'; '.join(problems)} (left out)")
    return results


def results_from_dict(data: dict[str, Any]) -> tuple[Results, list[str]]:
    """Results from a parsed results.json, and what was left out for being of the wrong type (`notes` is a string,
    not a list)."""
    problems: list[str] = []
    hints = _hints(Results)
    values: dict[str, Any] = {"schema_version": None}  # a file without one predates the field
    for name, hint in hints.items():
        if name in data:
            value = _check(data[name], hint, ((), name), problems)
            if value is not _BAD:
                values[name] = value
    return Results(**values), problems


def prediction_record(data: Any, problems: list[str]) -> PredictionRecord | None:
    """A parsed predictions.jsonl line as a record (fields of the wrong type left out, each said in `problems`);
    None when it is not a JSON object with an `index`."""
    if not isinstance(data, dict) or "index" not in data:
        return None
    return _check(data, PredictionRecord, (), problems)


def read_predictions(path: Path, warnings: list[str] | None = None) -> Iterator[PredictionRecord]:
    """The records of a predictions.jsonl, in order. A line that is not a JSON object with an `index` is an
    UnreadableFile naming the file and line (the file is written whole, never half); fields of the wrong type are
    left out, said in one line appended to `warnings` when the file is read to its end."""
    try:
        handle = open(path, "rb")  # bytes: a line that is not UTF-8 is that line's error, not a traceback
    except OSError as exc:
        raise UnreadableFile(f"{path}: cannot be read ({exc.strerror or exc})") from None
    problems: list[str] = []
    with handle:
        for number, line in enumerate(handle, 1):
            if not line.strip():
                continue
            try:
                data = json.loads(line)
            except ValueError as exc:  # UnicodeDecodeError included
                raise UnreadableFile(f"{path}: line {number} is not JSON ({exc})") from None
            found: list[str] = []
            record = prediction_record(data, found)
            if record is None:
                raise UnreadableFile(f"{path}: line {number} has no `index` field")
            problems += [f"line {number}: {problem}" for problem in found]
            yield record
    if problems and warnings is not None:
        more = f" (and {len(problems) - 3} more)" if len(problems) > 3 else ""
        warnings.append(f"{path}: {'; '.join(problems[:3])}{more} (left out)")


@lru_cache(maxsize=None)
def _hints(cls: type) -> dict[str, Any]:
    return typing.get_type_hints(cls)


# `where` is the value's place in the document as (place of its parent, key or position), () at the top: spelled
# out (`scoring.notes`, `prompt[0].content`) only for a value of the wrong type.
Where = tuple[Any, ...]
Checker = Callable[[Any, Where, list[str]], Any]


def _check(value: Any, hint: Any, where: Where, problems: list[str]) -> Any:
    """value if it is of type `hint` (a TypedDict: a copy without its keys of the wrong type), else _BAD with the
    problem said in `problems`."""
    return _checker(hint)(value, where, problems)


def _spelled(where: Where) -> str:
    if not where:
        return ""
    parent, key = where
    head = _spelled(parent)
    if isinstance(key, int):
        return f"{head}[{key}]"
    return f"{head}.{key}" if head else str(key)


@lru_cache(maxsize=None)
def _checker(hint: Any) -> Checker:
    """The check of one annotation, built once (a predictions file asks it for every row)."""
    if hint is Any:
        return lambda value, where, problems: value
    origin = typing.get_origin(hint)
    if origin is typing.Union or origin is types.UnionType:
        return _union_checker(hint)
    if typing.is_typeddict(hint):
        return _typeddict_checker(hint)
    if origin is list:
        return _list_checker(hint)
    if origin is dict:
        return _dict_checker(hint)
    accepted: Any = {float: (int, float), int: int}.get(hint, hint)
    exact = frozenset(accepted) if isinstance(accepted, tuple) else frozenset((accepted,))

    def check(value: Any, where: Where, problems: list[str]) -> Any:
        if type(value) in exact:  # the usual case, at once
            return value
        if isinstance(value, accepted) and not (isinstance(value, bool) and hint is not bool):
            return value
        return _wrong(value, hint, where, problems)

    return check


def _union_checker(hint: Any) -> Checker:
    nullable = type(None) in typing.get_args(hint)
    options = [_checker(h) for h in typing.get_args(hint) if h is not type(None)]

    def check(value: Any, where: Where, problems: list[str]) -> Any:
        if value is None:
            return None if nullable else _wrong(value, hint, where, problems)
        if len(options) == 1:
            return options[0](value, where, problems)
        for option in options:
            if option(value, where, []) is not _BAD:
                return option(value, where, problems)
        return _wrong(value, hint, where, problems)

    return check


def _typeddict_checker(hint: Any) -> Checker:
    keys = {key: _checker(sub) for key, sub in _hints(hint).items() if sub is not Any}

    def check(value: Any, where: Where, problems: list[str]) -> Any:
        if not isinstance(value, dict):
            return _wrong(value, hint, where, problems)
        out = value
        for key, item in value.items():
            key_check = keys.get(key)
            if key_check is None:
                continue
            checked = key_check(item, (where, key), problems)
            if checked is not item:
                if out is value:
                    out = dict(value)  # copied only when something changes
                if checked is _BAD:
                    del out[key]
                else:
                    out[key] = checked
        return out

    return check


def _list_checker(hint: Any) -> Checker:
    (item,) = typing.get_args(hint)
    item_check = None if item is Any else _checker(item)

    def check(value: Any, where: Where, problems: list[str]) -> Any:
        if not isinstance(value, list):
            return _wrong(value, hint, where, problems)
        if item_check is None:
            return value
        out = [item_check(v, (where, i), problems) for i, v in enumerate(value)]
        if any(v is _BAD for v in out):
            return _BAD
        return value if all(a is b for a, b in zip(out, value)) else out

    return check


def _dict_checker(hint: Any) -> Checker:
    _, item = typing.get_args(hint)
    item_check = None if item is Any else _checker(item)

    def check(value: Any, where: Where, problems: list[str]) -> Any:
        if not isinstance(value, dict):
            return _wrong(value, hint, where, problems)
        if item_check is None:
            return value
        out = {k: item_check(v, (where, str(k)), problems) for k, v in value.items()}
        if any(v is _BAD for v in out.values()):
            return _BAD
        return value if all(out[k] is v for k, v in value.items()) else out

    return check


def _wrong(value: Any, hint: Any, where: Where, problems: list[str]) -> Any:
    problems.append(f"`{_spelled(where)}` is {_a(type(value))}, not {_expected(hint)}")
    return _BAD


def _expected(hint: Any) -> str:
    origin = typing.get_origin(hint)
    if origin is typing.Union or origin is types.UnionType:
        return " or ".join(_expected(h) for h in typing.get_args(hint))
    return _a(origin or hint)


def _a(kind: Any) -> str:
    """`a string`, `a list`, `an object`: a JSON type in words."""
    if typing.is_typeddict(kind) or kind is dict:
        return "an object"
    return {str: "a string", int: "a whole number", float: "a number", bool: "true or false", list: "a list",
            type(None): "null"}.get(kind, "something else")
