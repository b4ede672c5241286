"""The one module that turns the message format into OpenAI chat-completions `messages`.

- text -> ``{"type": "text", "text": ...}``; a user turn holding only text becomes a plain string (the text parts
  joined by newlines, as `vlmkit.message.text_of` does), which every OpenAI-compatible server accepts.
- image -> ``{"type": "image_url", "image_url": {"url": ...}}``: an http(s) or data URL goes as given, a local
  file is read and sent as a base64 data URL (shrunk to ``img_max_side`` when that is set and the image is larger).
- audio -> ``{"type": "input_audio", "input_audio": {"data": <base64>, "format": <extension>}}`` from a local
  file or an audio data URL. OpenAI's `input_audio` takes no URL, so an http(s) audio URL is refused.
- video -> sampled frames as image parts, when the caller passes ``video_frames`` (a function from the video's
  path/URL to a list of frame images as paths or data URLs). Without it a video part raises
  UnsupportedInputError: a video is never dropped silently. (Sending `video_url` is a later addition.)
- system and assistant turns carry text only (a string); a flat part list is one user turn.
- ``system_prompt`` is prepended as a system turn unless the conversation already starts with its own.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Sequence
from typing import Any

from vlmkit.generation import UnsupportedInputError
from vlmkit.media import MediaError, file_to_b64, file_to_data_url
from vlmkit.message import MessageError, Part, Turn, is_url, normalise_conversation, text_of

VideoFrames = Callable[[str], Sequence[str]]

# Audio MIME subtypes whose name is not the file extension OpenAI expects in `input_audio.format`.
_AUDIO_MIME_FORMAT = {"mpeg": "mp3", "x-wav": "wav", "wave": "wav", "vnd.wave": "wav", "x-flac": "flac", "mp4": "m4a"}


def _short(value: str, limit: int = 80) -> str:
    return value if len(value) <= limit else value[:limit] + "..."


def image_url_part(value: str, img_max_side: int | None = None) -> dict[str, Any]:
    """An `image_url` content part for an image path, http(s) URL or data URL."""
    if value.startswith("data:") or is_url(value):
        url = value
    elif os.path.isfile(value):
        try:
            url = file_to_data_url(value, img_max_side)
        except (OSError, MediaError) as exc:
            raise MessageError(f"image {value}: cannot be read ({exc})") from None
    else:
        raise MessageError(f"image {_short(value)!r}: no such file, and not an http(s) or data URL")
    return {"type": "image_url", "image_url": {"url": url}}


def audio_part(value: str) -> dict[str, Any]:
    """An `input_audio` content part (base64 data + format) for an audio file or audio data URL."""
    if value.startswith("data:"):
        header, _, data = value.partition(",")
        mime = header[5:].split(";", 1)[0]
        subtype = mime.split("/", 1)[-1].lower()
        if not mime.startswith("audio/") or ";base64" not in header or not data:
            raise MessageError(f"audio {_short(value)!r}: expected a base64 audio data URL")
        return {"type": "input_audio", "input_audio": {"data": data, "format": _AUDIO_MIME_FORMAT.get(subtype, subtype)}}
    if is_url(value):
        raise UnsupportedInputError(
            f"audio {_short(value)!r}: OpenAI input_audio takes base64 data, not a URL; download the file first"
        )
    if not os.path.isfile(value):
        raise MessageError(f"audio {_short(value)!r}: no such file")
    fmt = os.path.splitext(value)[1].lstrip(".").lower()
    if not fmt:
        raise MessageError(f"audio {value}: no file extension to tell the audio format")
    return {"type": "input_audio", "input_audio": {"data": file_to_b64(value), "format": fmt}}


def content_parts(
    parts: Sequence[Part], *, img_max_side: int | None = None, video_frames: VideoFrames | None = None
) -> list[dict[str, Any]]:
    """OpenAI content parts for a list of message parts, in the same order."""
    out: list[dict[str, Any]] = []
    for part in parts:
        kind, value = part["type"], part["value"]
        if kind == "text":
            out.append({"type": "text", "text": value})
        elif kind == "image":
            out.append(image_url_part(value, img_max_side))
        elif kind == "audio":
            out.append(audio_part(value))
        elif kind == "video":
            if video_frames is None:
                raise UnsupportedInputError(
                    f"video {_short(value)!r}: this OpenAI-format conversion was given no frame sampler "
                    "(video is not sent to OpenAI-compatible services yet)"
                )
            frames = list(video_frames(value))
            if not frames:
                raise MessageError(f"video {_short(value)!r}: the frame sampler returned no frames")
            out.extend(image_url_part(frame, img_max_side) for frame in frames)
        else:  # normalise_conversation lets no other type through
            raise MessageError(f"unknown part type {kind!r}")
    return out


def turn_to_openai(
    turn: Turn, *, img_max_side: int | None = None, video_frames: VideoFrames | None = None
) -> dict[str, Any]:
    """One OpenAI chat message for one normalised turn."""
    role, parts = turn["role"], turn["content"]
    text_only = all(p["type"] == "text" for p in parts)
    if role != "user":
        if not text_only:
            kinds = sorted({p["type"] for p in parts} - {"text"})
            raise MessageError(f"a {role} turn may hold text only; this one has {', '.join(kinds)}")
        return {"role": role, "content": text_of(parts)}
    if text_only:
        return {"role": role, "content": text_of(parts)}
    return {"role": role, "content": content_parts(parts, img_max_side=img_max_side, video_frames=video_frames)}


def to_openai_messages(
    msgs: str | Sequence[Any],
    *,
    system_prompt: str | None = None,
    img_max_side: int | None = None,
    video_frames: VideoFrames | None = None,
) -> list[dict[str, Any]]:
    """OpenAI chat `messages` for a message (flat parts = one user turn) or a conversation of turns."""
    turns = normalise_conversation(msgs)
    messages = [turn_to_openai(t, img_max_side=img_max_side, video_frames=video_frames) for t in turns]
    if system_prompt and turns[0]["role"] != "system":
        messages.insert(0, {"role": "system", "content": system_prompt})
    return messages
