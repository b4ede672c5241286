"""The message format: normalisation and validation, in one place.

A message is a list of parts ``{"type": "text"|"image"|"video"|"audio", "value": ...}`` in reading order.
A conversation is a list of turns ``{"role": "system"|"user"|"assistant", "content": [parts]}``; a flat part
list means one user turn. A conversation that ends with an assistant turn ends with a *prefill*: text the model's
answer starts with and continues (VLMEvalKit's `role='assistant'` text, e.g. MVBench's "Best option:("). The reply
is the continuation only, never the prefill pasted in front (`prefill_text`; the converters send it as the last
assistant message to continue: `vlmkit.formats.openai_chat.prefill_fields`,
`vlmkit.formats.transformers_chat.template_flags`). A prefill holds text only and follows a user turn.
A list of plain strings is accepted: a string naming an existing file or a URL with a media extension becomes that
media part, anything else text.

Everything else in vlmkit (converters, models, datasets) takes the normalised shapes produced here.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Mapping, Sequence
from typing import Any, Literal, TypedDict
from urllib.parse import urlparse

PartType = Literal["text", "image", "video", "audio"]
Role = Literal["system", "user", "assistant"]
PART_TYPES: tuple[str, ...] = ("text", "image", "video", "audio")
MEDIA_TYPES: tuple[str, ...] = ("image", "video", "audio")
ROLES: tuple[str, ...] = ("system", "user", "assistant")

IMAGE_EXTENSIONS = frozenset({".jpg", ".jpeg", ".png", ".gif", ".bmp", ".webp", ".tif", ".tiff"})
VIDEO_EXTENSIONS = frozenset({".mp4", ".avi", ".mov", ".mkv", ".webm", ".m4v", ".flv"})
AUDIO_EXTENSIONS = frozenset({".wav", ".flac", ".ogg", ".mp3", ".m4a", ".opus"})
_EXTENSION_TYPE = (
    {e: "image" for e in IMAGE_EXTENSIONS}
    | {e: "video" for e in VIDEO_EXTENSIONS}
    | {e: "audio" for e in AUDIO_EXTENSIONS}
)


class Part(TypedDict):
    type: PartType
    value: str


class Turn(TypedDict):
    role: Role
    content: list[Part]


class MessageError(ValueError):
    """A message that does not follow the format; the text says which part and why."""


def is_url(value: str) -> bool:
    return urlparse(value).scheme in ("http", "https")


def media_type_of(value: str) -> str | None:
    """The media type a path, URL or data URL points at, judged by its extension or MIME type; else None."""
    if value.startswith("data:"):
        mime = value[5:].split(";", 1)[0].split(",", 1)[0]
        kind = mime.split("/", 1)[0]
        return kind if kind in MEDIA_TYPES else None
    path = urlparse(value).path if is_url(value) else value
    return _EXTENSION_TYPE.get(os.path.splitext(path)[1].lower())


def _part_from_string(value: str) -> Part:
    kind = media_type_of(value)
    if kind is not None and (value.startswith("data:") or is_url(value) or os.path.isfile(value)):
        return {"type": kind, "value": value}  # type: ignore[typeddict-item]
    return {"type": "text", "value": value}


def _normalise_part(item: Any, where: str) -> Part:
    if isinstance(item, str):
        return _part_from_string(item)
    if type(item) is dict or isinstance(item, Mapping):  # dict first: the ABC check costs more than the rest
        kind, value = item.get("type"), item.get("value")
        if kind not in PART_TYPES:
            raise MessageError(f"{where}: unknown part type {kind!r} (expected one of {', '.join(PART_TYPES)})")
        if not isinstance(value, str):
            raise MessageError(f"{where}: the value of a {kind} part must be a string, got {type(value).__name__}")
        if kind != "text" and not value:
            raise MessageError(f"{where}: empty {kind} value")
        return {"type": kind, "value": value}
    raise MessageError(f"{where}: a part must be a dict with type/value or a string, got {type(item).__name__}")


def normalise_parts(msgs: str | Sequence[Any]) -> list[Part]:
    """A flat list of parts from a string, a list of strings, or a list of part dicts."""
    if isinstance(msgs, str):
        return [_part_from_string(msgs)]
    if type(msgs) is not list and (isinstance(msgs, Mapping) or not isinstance(msgs, Iterable)):
        raise MessageError(f"a message must be a list of parts, got {type(msgs).__name__}")
    parts = [_normalise_part(item, f"part {i}") for i, item in enumerate(msgs)]
    if not parts:
        raise MessageError("empty message")
    return parts


def is_conversation(msgs: Any) -> bool:
    """True when msgs is a list of role turns rather than a flat list of parts."""
    return (
        (type(msgs) is list or (isinstance(msgs, Sequence) and not isinstance(msgs, str)))
        and len(msgs) > 0
        and all((type(m) is dict or isinstance(m, Mapping)) and "role" in m for m in msgs)
    )


def normalise_conversation(msgs: str | Sequence[Any]) -> list[Turn]:
    """Turns from either shape: a flat part list becomes one user turn; turn content may be a string or parts."""
    if not is_conversation(msgs):
        return [{"role": "user", "content": normalise_parts(msgs)}]
    turns: list[Turn] = []
    for i, turn in enumerate(msgs):  # type: ignore[arg-type]
        role = turn["role"]
        if role not in ROLES:
            raise MessageError(f"turn {i}: unknown role {role!r} (expected one of {', '.join(ROLES)})")
        content = turn.get("content")
        if content is None:
            raise MessageError(f"turn {i}: no content")
        parts = [{"type": "text", "value": content}] if isinstance(content, str) else normalise_parts(content)
        turns.append({"role": role, "content": parts})  # type: ignore[typeddict-item]
    if turns[-1]["role"] == "assistant":
        _check_prefill(turns)
    return turns


def _check_prefill(turns: Sequence[Turn]) -> None:
    """A final assistant turn is a prefill: text only, after a user turn (module docstring)."""
    last = len(turns) - 1
    kinds = sorted({p["type"] for p in turns[last]["content"]} - {"text"})
    if kinds:
        raise MessageError(f"turn {last}: the last (assistant) turn is a prefill for the model to continue and may "
                           f"hold text only; this one has {', '.join(kinds)}")
    if last == 0 or turns[last - 1]["role"] != "user":
        raise MessageError(f"turn {last}: the last (assistant) turn is a prefill for the model to continue and must "
                           "follow a user turn")


def prefill_text(turns: Sequence[Turn] | Sequence[Any]) -> str | None:
    """The prefill a normalised conversation ends with (its final assistant turn's text), else None. Works on any
    list of role turns whose content is a string or parts (a transformers conversation too)."""
    if not turns or not isinstance(turns[-1], Mapping) or turns[-1].get("role") != "assistant":
        return None
    content = turns[-1].get("content")
    if isinstance(content, str):
        return content
    return "\n".join(p.get("value", p.get("text", "")) for p in content if p.get("type") == "text")


def modalities(msgs: Sequence[Part] | Sequence[Turn]) -> set[str]:
    """The part types that occur in a message or conversation."""
    return {p["type"] for p in iter_parts(msgs)}


def iter_parts(msgs: Sequence[Part] | Sequence[Turn]) -> Iterable[Part]:
    for item in msgs:
        if "role" in item:
            yield from item["content"]  # type: ignore[typeddict-item]
        else:
            yield item  # type: ignore[misc]


def images_first(parts: Sequence[Part]) -> list[Part]:
    """For models that cannot interleave: every media part in order, then the texts joined by newlines."""
    media = [p for p in parts if p["type"] != "text"]
    text = "\n".join(p["value"] for p in parts if p["type"] == "text")
    return media + ([{"type": "text", "value": text}] if text else [])


def text_of(parts: Sequence[Part]) -> str:
    """The text parts joined by newlines (for logs and prompt hashes)."""
    return "\n".join(p["value"] for p in parts if p["type"] == "text")
