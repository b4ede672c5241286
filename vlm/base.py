"""BaseModel: the whole contract for someone adding a model is `generate(msgs, dataset=None) -> str`.

Optional: `use_custom_prompt(info)` + `build_prompt(line, info)` (the model owns the prompt for that dataset; `info`
is a `vlmkit.core.contracts.DatasetInfo`: the dataset's name, kind and the row's decoded images; `str(info)` is the
name), `generate_batch` (default: a loop), `generate_full` (text plus usage; default wraps `generate`), `close()`
(release what the model holds), and the declared capabilities below. A failure is an exception
(`vlmkit.core.model_calls.ModelCallError` for typed ones), never a string returned as the answer.

A model class need not inherit BaseModel: the run asks any object with `generate` through
`vlmkit.core.contracts.ModelView`, which gives the optional members the defaults BaseModel has (both take them from
vlmkit.core.contracts).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any, ClassVar, TypeVar

from vlmkit.core.model_calls import Generation, UnsupportedInputError
from vlmkit.core.message import Part, Turn, iter_parts, normalise_conversation
from vlmkit.core.contracts import (
    DEFAULT_MODALITIES,
    DatasetInfo,
    class_settings,
    each_in_turn,
    generate_only,
    no_custom_prompt,
)

Item = TypeVar("Item")


def batch_or_each(items: list[Item], run: Callable[[list[Item]], list[Generation]]) -> list[Generation | BaseException]:
    """run(items) as one batch; when the batch fails as a whole, each item alone, so that only the bad ones fail
    (each then holds its own exception)."""
    try:
        return run(items)  # type: ignore[return-value]
    except Exception as exc:
        if len(items) == 1:
            return [exc]
    out: list[Generation | BaseException] = []
    for item in items:
        try:
            out.extend(run([item]))
        except Exception as exc:
            out.append(exc)
    return out


class BaseModel:
    # Capabilities, declared per class (or per instance when they depend on the loaded checkpoint).
    modalities: ClassVar[frozenset[str]] = DEFAULT_MODALITIES
    interleave: ClassVar[bool] = True
    max_images: ClassVar[int | None] = None
    is_api: ClassVar[bool] = False

    def generate(self, msgs: Sequence[Any], dataset: str | None = None) -> str:
        """The answer text for one message (list of parts, list of strings, or conversation turns)."""
        return self.generate_full(msgs, dataset).text

    def generate_full(
        self, msgs: Sequence[Any], dataset: str | None = None, params: dict[str, Any] | None = None
    ) -> Generation:
        """Text plus usage. Subclasses implement this one, `generate`, or `generate_batch` (this is then a batch of
        one).

        params: per-request generation parameters (see vlmkit.core.model_calls.GENERATION_PARAMS) that override the
        model's own settings for this call. A model that implements only `generate` cannot take them and says so.
        """
        if type(self).generate_batch is not BaseModel.generate_batch and type(self).generate is BaseModel.generate:
            result = self.generate_batch([msgs], dataset, [params])[0]
            if isinstance(result, BaseException):
                raise result
            return result
        if type(self).generate is BaseModel.generate:
            raise NotImplementedError(
                f"{type(self).__name__} implements none of generate, generate_full and generate_batch"
            )
        return generate_only(self, msgs, dataset, params)

    def generate_batch(
        self,
        batch: Sequence[Sequence[Any]],
        dataset: str | None = None,
        params: Sequence[dict[str, Any] | None] | None = None,
    ) -> list[Generation | BaseException]:
        """One result per message: a Generation, or the exception that message raised (the others still run).

        params, when given, holds one parameter dict (or None) per message."""
        return each_in_turn(self.generate_full, batch, dataset, params)

    # False: the dataset builds every prompt. A class that owns some prompts overrides it (and build_prompt); the
    # runner tells the two apart by this very function (vlmkit.core.contracts.owns_prompts).
    use_custom_prompt = no_custom_prompt

    def build_prompt(self, line: dict[str, Any], dataset: DatasetInfo) -> list[Part]:
        raise NotImplementedError(f"{type(self).__name__}.build_prompt is not implemented")

    def prepare(self, msgs: Sequence[Any]) -> list[Turn]:
        """Normalised conversation, checked against the declared capabilities (UnsupportedInputError if not)."""
        turns = normalise_conversation(msgs)
        self.check_supported(turns)
        return turns

    def check_supported(self, turns: Sequence[Turn]) -> None:
        parts = list(iter_parts(turns))
        missing = sorted({p["type"] for p in parts} - set(self.modalities))
        if missing:
            raise UnsupportedInputError(
                f"{type(self).__name__} takes {', '.join(sorted(self.modalities))}; this message has {', '.join(missing)}"
            )
        n_images = sum(p["type"] == "image" for p in parts)
        if self.max_images is not None and n_images > self.max_images:
            raise UnsupportedInputError(f"{type(self).__name__} takes at most {self.max_images} images; got {n_images}")

    def close(self) -> None:
        """Release what the model holds (weights, GPU memory, connections). The default does nothing.

        The runner calls it after a model's last dataset, before it builds the next model, so a run over several
        local models holds one at a time. After close() the model need not generate; settings() must still work.
        Calling it twice must be harmless."""

    def settings(self) -> dict[str, Any]:
        """Model and generation settings for results.json. Never include secrets."""
        return class_settings(self)
