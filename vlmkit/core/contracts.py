"""The contracts between a run and what it runs: `Dataset` and `Model` (typing Protocols), `ModelView` (a model as
the run asks it), and `DatasetInfo` (what a model that writes its own prompts may know of the benchmark).

Dataset: what vlmkit.run and vlmkit.perf use of a dataset object. Every dataset class inherits
`datasets_tsv.io.table.TableRows`, which declares the optional members below with their defaults, so the run reads
`dataset.output_format` instead of probing for it.

Model: the whole contract for someone adding a model is `generate(msgs, dataset=None) -> str` (DESIGN.md). A model
class may be a user's own with only that method, so the optional members (`generate_full`, `generate_batch`,
`use_custom_prompt`/`build_prompt`, `is_api`, `modalities`, `probe`, `close`, `settings`) are asked through one
`ModelView`, which gives each its default where the class has none. vlm.base.BaseModel takes the same defaults
from here (`generate_only`, `each_in_turn`, `no_custom_prompt`, `class_settings`).

DatasetInfo: VLMEvalKit's wrappers decide on their own prompts from the dataset's *type* (MCQ, Y/N, VQA) and name,
and they reach the row's decoded images through a function the runner hands them (`dump_image`). vlmkit passes the
same three things as one small object instead of the dataset itself, so that `vlm/` still never imports
`datasets_tsv/`:

    model.use_custom_prompt(info) -> bool
    model.build_prompt(line, info) -> list of parts

`info.name` is the dataset's name (what `generate(msgs, dataset=...)` gets), `info.kind` its kind (`mcq`, `yorn`,
`vqa`, `caption`, `mmmu`, ... as the dataset class says), `info.images(line)` the row's images as local files, in
order, decoded once by the dataset. `str(info)` is the name, so code written for VLMEvalKit's string argument reads
the same.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path
from typing import Any, Protocol

from vlmkit.core.model_calls import Generation, UnsupportedInputError

# What a model takes when its class declares nothing (vlm.base.BaseModel.modalities).
DEFAULT_MODALITIES: frozenset[str] = frozenset({"text", "image"})


@dataclass(frozen=True)
class DatasetInfo:
    name: str
    kind: str
    images: Callable[[Mapping[str, Any]], list[str]] = field(repr=False, compare=False)
    vlmevalkit_type: str | None = None  # VLMEvalKit's dataset TYPE (catalog column vlmevalkit_type); None: the kind's
    vlmevalkit_prompt: str | None = None  # "dataset": VLMEvalKit forces the dataset's prompt (catalog vlmevalkit_prompt)

    def __str__(self) -> str:
        return self.name


def dataset_info(dataset: Any) -> DatasetInfo:
    """The DatasetInfo of a dataset object (anything with `name`, `kind` and `image_paths(line)`); a DatasetInfo is
    returned as it is. A bare name is a TypeError: a model's own prompts depend on the kind, which a name lacks."""
    if isinstance(dataset, DatasetInfo):
        return dataset
    if not (hasattr(dataset, "name") and hasattr(dataset, "kind")):
        raise TypeError(
            f"expected a vlmkit.core.contracts.DatasetInfo or a dataset object (name, kind, image_paths); got {dataset!r}: "
            "a model's own prompts depend on the dataset's kind, which a name alone does not give"
        )
    paths = getattr(dataset, "image_paths", None)
    images = paths if callable(paths) else (lambda line: [])
    return DatasetInfo(name=str(dataset.name), kind=str(getattr(dataset, "kind", "")), images=images,
                       vlmevalkit_type=getattr(dataset, "vlmevalkit_type", None),
                       vlmevalkit_prompt=getattr(dataset, "vlmevalkit_prompt", None))


# -- datasets ------------------------------------------------------------------------------------------------------
class Dataset(Protocol):
    """What a run needs of a dataset. The members after `info` are optional for a dataset class: TableRows gives
    them their defaults (no answer columns but `answer`, no scorer note, no extra output file, no per-row
    parameters, no scoring problem, no subtitle frames)."""

    @property
    def name(self) -> str: ...  # names the results folder, and what `generate(msgs, dataset=...)` gets
    @property
    def kind(self) -> str: ...  # mcq, yorn, vqa, caption, video, ... (DatasetInfo.kind)
    @property
    def data(self) -> Any: ...  # the rows: a pandas DataFrame with an `index` column
    @property
    def file_md5(self) -> str: ...  # the MD5 of what the rows came from (part of the journal's fingerprint)
    @property
    def source_file(self) -> Path: ...  # the file (or snapshot folder) the rows came from, for messages

    def image_paths(self, line: Mapping[str, Any] | int) -> list[str]: ...
    def build_prompt(self, line: Mapping[str, Any] | int) -> list[Any]: ...
    def evaluate(self, predictions: Any, *, fuzzy: bool = False, judge: Any = None) -> Any: ...
    def info(self) -> dict[str, Any]: ...  # the dataset's part of results.json

    # optional (defaults on datasets_tsv.io.table.TableRows)
    @property
    def answer_columns(self) -> tuple[str, ...]: ...  # what scoring needs; the first is the reference
    @property
    def scorer_reason(self) -> str | None: ...  # one line: which scorer and why, said before inference
    @property
    def output_format(self) -> str | None: ...  # "ark": the run also writes Ark's output records
    @property
    def subtitle_sampling(self) -> dict[str, float] | None: ...  # frames the subtitle lines were picked at
    @property
    def prompt_sampling(self) -> dict[str, float] | None: ...  # frames the prompt tells the model it sees

    def generation_params(self, line: Mapping[str, Any] | int) -> dict[str, Any] | None: ...  # per-row parameters
    def scoring_problem(self) -> str | None: ...  # why this dataset cannot be scored here (a missing library)
    def prepare_images(self) -> None: ...  # decode the images once; DataError for a dataset-level problem


class DatasetIdentity(Protocol):
    """What a journal's fingerprint takes of a dataset (vlmkit.run.resume.run_fingerprint)."""

    @property
    def name(self) -> str: ...
    @property
    def file_md5(self) -> str: ...


# -- models --------------------------------------------------------------------------------------------------------
class Model(Protocol):
    """The whole contract for someone adding a model; everything else is optional (ModelView)."""

    def generate(self, msgs: Sequence[Any], dataset: Any = None) -> str: ...


def generate_only(model: Model, msgs: Sequence[Any], dataset: Any = None,
                  params: dict[str, Any] | None = None) -> Generation:
    """`generate_full` of a model that implements only `generate`: its text, no usage. Per-request parameters are
    refused (UnsupportedInputError), never dropped."""
    if params:
        raise UnsupportedInputError(
            f"{type(model).__name__} implements only generate(); it cannot apply per-request parameters {sorted(params)}"
        )
    return Generation(text=model.generate(msgs, dataset))


def each_in_turn(generate_full: Callable[..., Generation], batch: Sequence[Sequence[Any]], dataset: Any = None,
                 params: Sequence[dict[str, Any] | None] | None = None) -> list[Generation | BaseException]:
    """`generate_batch` as a loop over generate_full: one result per message, a Generation or the exception that
    message raised (the others still run). params, when given, holds one parameter dict (or None) per message."""
    per_message = list(params) if params is not None else [None] * len(batch)
    results: list[Generation | BaseException] = []
    for msgs, message_params in zip(batch, per_message):
        try:
            results.append(generate_full(msgs, dataset, message_params))
        except Exception as exc:  # one bad sample must not sink the batch
            results.append(exc)
    return results


def no_custom_prompt(model: Any, dataset: DatasetInfo) -> bool:
    """The default `use_custom_prompt`: the dataset builds every prompt. (vlm.base.BaseModel uses this very
    function, so that `owns_prompts` tells a class that overrides it from one that does not.)"""
    return False


def owns_prompts(cls: Any) -> bool:
    """Whether a model class (or factory) may build its own prompts: it has a `use_custom_prompt` of its own. Asked
    of the class, so that a class that never does is not built for the question."""
    return getattr(cls, "use_custom_prompt", no_custom_prompt) is not no_custom_prompt


def class_settings(model: Any) -> dict[str, Any]:
    """The default `settings()`: the model's class, as results.json names it."""
    return {"class": f"{type(model).__module__}.{type(model).__qualname__}"}


def _member(model: Any, name: str) -> Callable[..., Any] | None:
    found = getattr(model, name, None)
    return found if callable(found) else None


class ModelView:
    """A model as the run asks it: every optional member of the contract, the model's own where its class has it,
    else the default. The run reaches a model only through one (`model_view`); `inner` is the model itself.

    generate_full(msgs, dataset=None, params=None) -> Generation; generate_batch(batch, dataset=None, params=None)
    -> one Generation or exception per message (default: each_in_turn); use_custom_prompt(info) (default False) and
    build_prompt(line, info); is_api (default False); modalities (default text and image); probe: the model's
    `probe()` (ask its server once before inference) or None; close() (default: nothing); settings() (default: the
    class); model_id: the served model id where the model has one (`model`, as OpenAI-compatible clients do), else
    the class name."""

    generate_full: Callable[..., Generation]
    generate_batch: Callable[..., list[Generation | BaseException]]

    def __init__(self, model: Model) -> None:
        self.inner = model
        # bound once: the hot paths call the model's own method with no layer between (no reference to self either,
        # so dropping the view drops the model without waiting for the garbage collector)
        full = _member(model, "generate_full")
        self.generate_full = full if full is not None else partial(generate_only, model)
        batch = _member(model, "generate_batch")
        self.generate_batch = batch if batch is not None else partial(each_in_turn, self.generate_full)

    @property
    def class_name(self) -> str:
        return type(self.inner).__name__

    @property
    def is_api(self) -> bool:
        return bool(getattr(self.inner, "is_api", False))

    @property
    def modalities(self) -> frozenset[str]:
        return frozenset(getattr(self.inner, "modalities", DEFAULT_MODALITIES))

    @property
    def probe(self) -> Callable[[], Mapping[str, Any] | None] | None:
        return _member(self.inner, "probe")

    @property
    def model_id(self) -> str:
        return str(getattr(self.inner, "model", self.class_name))

    def generate(self, msgs: Sequence[Any], dataset: Any = None) -> str:
        return self.inner.generate(msgs, dataset)

    def use_custom_prompt(self, dataset: DatasetInfo) -> bool:
        own = _member(self.inner, "use_custom_prompt")
        return bool(own(dataset)) if own is not None else False

    def build_prompt(self, line: dict[str, Any], dataset: DatasetInfo) -> list[Any]:
        own = _member(self.inner, "build_prompt")
        if own is None:
            raise NotImplementedError(f"{self.class_name}.build_prompt is not implemented")
        return own(line, dataset)

    def close(self) -> None:
        own = _member(self.inner, "close")
        if own is not None:
            own()

    def settings(self) -> dict[str, Any]:
        own = _member(self.inner, "settings")
        return own() if own is not None else class_settings(self.inner)


def model_view(model: Model | ModelView) -> ModelView:
    """The ModelView of a model (a view is returned as it is)."""
    return model if isinstance(model, ModelView) else ModelView(model)
