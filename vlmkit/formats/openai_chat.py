"""The one module that turns the message format into OpenAI chat-completions `messages`.

- text -> ``{"type": "text", "text": ...}``; a user turn holding only text becomes a plain string (the text parts
  joined by newlines, as `vlmkit.core.message.text_of` does), which every OpenAI-compatible server accepts.
- image -> ``{"type": "image_url", "image_url": {"url": ...}}``: an http(s) or data URL goes as given, a local
  file is read and sent as a base64 data URL (shrunk to ``img_max_side`` when that is set and the image is larger).
  A file or data URL whose header declares more pixels than Pillow's limit is refused with an ImageFileError (a
  MessageError and a `vlmkit.core.media.MediaError`) naming it and the size; no pixel is decoded to find out.
  A file is read, checked and encoded once while it is unchanged (same path, size, mtime and inode): an image shared
  by many rows, or asked again, costs one `os.stat` after the first (a bounded cache, vlmkit.formats.image_cache).
- audio -> ``{"type": "input_audio", "input_audio": {"data": <base64>, "format": "wav"|"mp3"}}`` from a local
  file or an audio data URL. OpenAI's `input_audio` takes wav and mp3 only: a wav/mp3 file goes as its own bytes,
  any other format soundfile reads (flac, ogg, ...) is converted to 16-bit wav (`vlmkit.core.audio.api_audio`); a data
  URL in wav/mp3 goes as given. An http(s) audio URL is refused (input_audio takes no URL); a file soundfile
  cannot read raises `vlmkit.core.audio.AudioError` naming it.
- video, ``video_mode="frames"`` (default) -> sampled frames as consecutive image parts, when the caller passes
  ``video_frames`` (a function from the video's path to a list of frame images as paths or data URLs, e.g.
  `vlmkit.core.video.frame_data_urls`). Without it a video part raises UnsupportedInputError: a video is never
  dropped silently.
- video, ``video_mode="video_url"`` -> ``{"type": "video_url", "video_url": {"url": ...}}`` (vLLM, SGLang, Ark):
  an http(s) or data URL as given, a local file as a base64 data URL of its bytes with the MIME type of its
  extension (checked first with opencv: a file it cannot open raises `vlmkit.core.video.VideoError`).
- system and assistant turns carry text only (a string); a flat part list is one user turn.
- ``system_prompt`` is prepended as a system turn unless the conversation already starts with its own.
- a prefill (a conversation ending with an assistant turn, `vlmkit.core.message`) is the last message, an assistant
  message whose content is a string (SGLang continues only a string). The request body must then also carry
  `prefill_fields(turns)`: ``continue_final_message: true`` and ``add_generation_prompt: false``, the extra fields
  vLLM and SGLang read to render the message open and continue it; their reply is the continuation only. Other
  servers may ignore them (the prefill then reads as a finished assistant turn and the model answers after it) or
  refuse them: `transformers serve` answers 422 "Unexpected fields in the request" to any field it does not know,
  and its chat completions always render with a generation prompt, so it cannot continue a prefill at all.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Sequence
from typing import Any

from vlmkit.core.audio import API_FORMATS, api_audio
from vlmkit.core.model_calls import UnsupportedInputError
from vlmkit.core.media import MediaError, b64_to_bytes, file_to_b64, file_to_data_url, refuse_decompression_bomb
from vlmkit.core.message import MessageError, Part, Turn, is_url, normalise_conversation, prefill_text, text_of
from vlmkit.core.video import probe_video
from vlmkit.formats.image_cache import IMAGE_URLS, stat_is_file

VideoFrames = Callable[[str], Sequence[str]]
VIDEO_MODES = ("frames", "video_url")
PREFILL_FIELDS: dict[str, Any] = {"continue_final_message": True, "add_generation_prompt": False}
_VIDEO_MIME = {".mp4": "video/mp4", ".m4v": "video/mp4", ".mov": "video/quicktime", ".webm": "video/webm",
               ".mkv": "video/x-matroska", ".avi": "video/x-msvideo", ".flv": "video/x-flv"}

# Audio MIME subtypes whose name is not the file extension OpenAI expects in `input_audio.format`.
_AUDIO_MIME_FORMAT = {"mpeg": "mp3", "x-wav": "wav", "wave": "wav", "vnd.wave": "wav", "x-flac": "flac", "mp4": "m4a"}


def _short(value: str, limit: int = 80) -> str:
    return value if len(value) <= limit else value[:limit] + "..."


class ImageFileError(MessageError, MediaError):
    """An image file of a message that cannot be sent (unreadable, not an image, or refused as a decompression
    bomb): a MessageError for the message and a MediaError for the file, so a prediction record files it under
    `bad_media`."""


def image_url_part(value: str, img_max_side: int | None = None) -> dict[str, Any]:
    """An `image_url` content part for an image path, http(s) URL or data URL. A file or data URL whose header
    declares more pixels than Pillow allows is refused (`vlmkit.core.media`), an ImageFileError naming it."""
    if value.startswith("data:"):
        _refuse_bomb_data_url(value)
        url = value
    elif is_url(value):
        url = value
    else:
        url = _image_file_url(value, img_max_side)
    return {"type": "image_url", "image_url": {"url": url}}


def _image_file_url(path: str, img_max_side: int | None) -> str:
    """The data URL of a local image file, from the cache while the file is unchanged (vlmkit.formats.image_cache)."""
    try:
        stat = os.stat(path)
    except OSError:
        stat = None
    if stat is None or not stat_is_file(stat):
        raise MessageError(f"image {_short(path)!r}: no such file, and not an http(s) or data URL")
    key = (path, stat.st_size, stat.st_mtime_ns, stat.st_ino, img_max_side)
    url = IMAGE_URLS.get(key)
    if url is None:
        try:
            url = file_to_data_url(path, img_max_side)
        except MediaError as exc:  # names the file
            raise ImageFileError(f"image {exc}") from None
        IMAGE_URLS.put(key, url)
    return url


def _refuse_bomb_data_url(value: str) -> None:
    """ImageFileError when an image data URL declares too many pixels; any other data URL is left as given."""
    try:
        data = b64_to_bytes(value)
    except MediaError:  # not base64: the server judges it, as before
        return
    try:
        refuse_decompression_bomb(data, "image data URL")
    except MediaError as exc:
        raise ImageFileError(str(exc)) from None


def audio_part(value: str) -> dict[str, Any]:
    """An `input_audio` content part (base64 data + "wav"/"mp3") for an audio file or audio data URL."""
    if value.startswith("data:"):
        header, _, data = value.partition(",")
        mime = header[5:].split(";", 1)[0]
        subtype = mime.split("/", 1)[-1].lower()
        if not mime.startswith("audio/") or ";base64" not in header or not data:
            raise MessageError(f"audio {_short(value)!r}: expected a base64 audio data URL")
        fmt = _AUDIO_MIME_FORMAT.get(subtype, subtype)
        if fmt in API_FORMATS:
            return {"type": "input_audio", "input_audio": {"data": data, "format": fmt}}
        data, fmt = api_audio(value)
        return {"type": "input_audio", "input_audio": {"data": data, "format": fmt}}
    if is_url(value):
        raise UnsupportedInputError(
            f"audio {_short(value)!r}: OpenAI input_audio takes base64 data, not a URL; download the file first"
        )
    data, fmt = api_audio(value)
    return {"type": "input_audio", "input_audio": {"data": data, "format": fmt}}


def video_url_part(value: str) -> dict[str, Any]:
    """A `video_url` content part: an http(s)/data URL as given, a local video file as a base64 data URL."""
    if value.startswith("data:") or is_url(value):
        return {"type": "video_url", "video_url": {"url": value}}
    probe_video(value)  # VideoError naming the file when opencv cannot open it
    ext = os.path.splitext(value)[1].lower()
    mime = _VIDEO_MIME.get(ext, f"video/{ext.lstrip('.') or 'mp4'}")
    return {"type": "video_url", "video_url": {"url": f"data:{mime};base64,{file_to_b64(value)}"}}


def video_parts(
    value: str, *, video_mode: str = "frames", video_frames: VideoFrames | None = None, img_max_side: int | None = None
) -> list[dict[str, Any]]:
    """The content parts one video becomes: one `video_url` part, or one `image_url` part per sampled frame."""
    if video_mode == "video_url":
        return [video_url_part(value)]
    if video_mode != "frames":
        raise ValueError(f"video_mode must be one of {', '.join(VIDEO_MODES)}; got {video_mode!r}")
    if video_frames is None:
        raise UnsupportedInputError(
            f"video {_short(value)!r}: this OpenAI-format conversion was given no frame sampler "
            "(pass video_frames, or video_mode='video_url')"
        )
    frames = list(video_frames(value))
    if not frames:
        raise MessageError(f"video {_short(value)!r}: the frame sampler returned no frames")
    return [image_url_part(frame, img_max_side) for frame in frames]


def content_parts(
    parts: Sequence[Part],
    *,
    img_max_side: int | None = None,
    video_frames: VideoFrames | None = None,
    video_mode: str = "frames",
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
            out.extend(video_parts(value, video_mode=video_mode, video_frames=video_frames, img_max_side=img_max_side))
        else:  # normalise_conversation lets no other type through
            raise MessageError(f"unknown part type {kind!r}")
    return out


def turn_to_openai(
    turn: Turn,
    *,
    img_max_side: int | None = None,
    video_frames: VideoFrames | None = None,
    video_mode: str = "frames",
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
    content = content_parts(parts, img_max_side=img_max_side, video_frames=video_frames, video_mode=video_mode)
    return {"role": role, "content": content}


def to_openai_messages(
    msgs: str | Sequence[Any],
    *,
    system_prompt: str | None = None,
    img_max_side: int | None = None,
    video_frames: VideoFrames | None = None,
    video_mode: str = "frames",
) -> list[dict[str, Any]]:
    """OpenAI chat `messages` for a message (flat parts = one user turn) or a conversation of turns."""
    return turns_to_openai(normalise_conversation(msgs), system_prompt=system_prompt, img_max_side=img_max_side,
                           video_frames=video_frames, video_mode=video_mode)


def turns_to_openai(
    turns: Sequence[Turn],
    *,
    system_prompt: str | None = None,
    img_max_side: int | None = None,
    video_frames: VideoFrames | None = None,
    video_mode: str = "frames",
) -> list[dict[str, Any]]:
    """`to_openai_messages` for a conversation normalised already (`vlmkit.core.message.normalise_conversation`, as a
    model's `prepare` returns it): the per-request path normalises once."""
    messages = [
        turn_to_openai(t, img_max_side=img_max_side, video_frames=video_frames, video_mode=video_mode) for t in turns
    ]
    if system_prompt and turns[0]["role"] != "system":
        messages.insert(0, {"role": "system", "content": system_prompt})
    return messages


def prefill_fields(turns: Sequence[Turn] | Sequence[dict[str, Any]]) -> dict[str, Any]:
    """The request-body fields a conversation needs beside its `messages`: `PREFILL_FIELDS` when it ends with a
    prefill (module docstring), else none, so a conversation without one is sent exactly as before. Takes normalised
    turns or the OpenAI `messages` made of them."""
    return dict(PREFILL_FIELDS) if prefill_text(turns) is not None else {}
