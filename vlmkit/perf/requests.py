"""Every request body, built as bytes before the clock starts (base64 media and JSON encoding cost time that must
never land in a measured TTFT: `json.dumps` of a 4 MB body takes about 9 ms).

Request n of a level uses dataset row n % rows; one body per row is built once and reused. A body is
`{"model", "messages", <the row's generation params>, "max_tokens", ["ignore_eos"], "stream": true,
"stream_options": {"include_usage": true}}`. max_tokens: the row's own (dataset.generation_params: per-row
`max_tokens`, or the `.meta.json` output_config of a custom dataset) wins over `--max-tokens`.

Messages come from vlmkit.formats.openai_chat.to_openai_messages, with `system_prompt` as `vlmkit run` sends it (a system
turn first unless the conversation has its own). The media modes it has no option for (file:// image
URLs, `video_url`, `audio_url`) go through it as placeholder image URLs that are then swapped for the URL part;
the default modes (data URLs, video as frames, input_audio) use it unchanged.
"""

from __future__ import annotations

import json
import mimetypes
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from vlmkit.core.model_calls import ModelCallError
from vlmkit.core.media import file_to_b64
from vlmkit.core.message import is_url, normalise_conversation
from vlmkit.formats.openai_chat import to_openai_messages
from vlmkit.perf.options import PerfInputError, PerfOptions

if TYPE_CHECKING:
    from vlmkit.core.contracts import Dataset

try:
    import orjson

    def dumps(obj: Any) -> bytes:
        return orjson.dumps(obj)

    ENCODER = "orjson"
except ImportError:  # pragma: no cover - depends on the environment

    def dumps(obj: Any) -> bytes:
        return json.dumps(obj, ensure_ascii=False, separators=(",", ":")).encode("utf-8")

    ENCODER = "json"

_PLACEHOLDER = "http://vlmkit-perf.invalid/media/{}"
# Keys that are ours to set; a dataset row cannot override them.
_RESERVED = frozenset({"model", "messages", "stream", "stream_options"})


@dataclass
class PreparedRequests:
    """Bodies per dataset row, ready to send."""

    bodies: list[bytes]
    max_tokens: list[int]
    index: list[Any]  # the dataset's `index` of each row
    build_s: float
    encoder: str = ENCODER
    sessions: list[list[int]] | None = None  # --sessions: the rows (turns, in order) of each session
    shared: bytes | None = None  # --prefix-share: per row, 1 when it carries the shared prefix, 0 its own
    think_ns: int = 0  # --sessions: the pause between an answer's end and the next turn
    keep_replies: bool = False  # --score: each request keeps its answer's text until its line is written

    def __len__(self) -> int:
        return len(self.bodies)

    @property
    def total_bytes(self) -> int:
        return sum(len(b) for b in self.bodies)

    def row_of(self, n: int) -> int:
        return n % len(self.bodies)


def media_url(kind: str, value: str, options: PerfOptions) -> str | None:
    """The URL to send a media part as, when its mode sends a URL part; None to leave it to to_openai_messages."""
    url_mode = (
        (kind == "image" and options.media_mode == "file-url")
        or (kind == "video" and options.video_mode == "video_url")
        or (kind == "audio" and options.audio_mode == "audio_url")
    )
    if not url_mode:
        return None
    if value.startswith("data:") or is_url(value):
        return value
    path = Path(value)
    if not path.is_file():
        raise PerfInputError(f"{kind} {value}: no such file")
    if options.media_mode == "file-url":
        return path.resolve().as_uri()
    mime = mimetypes.guess_type(path.name)[0] or f"{kind}/{path.suffix.lstrip('.') or 'octet-stream'}"
    return f"data:{mime};base64,{file_to_b64(path)}"


def openai_messages(
    msgs: Any, options: PerfOptions, video_frames: Callable[[str], Sequence[str]] | None
) -> list[dict[str, Any]]:
    """OpenAI `messages` for one prompt under the run's media modes."""
    turns = normalise_conversation(msgs)
    swaps: dict[str, tuple[str, str]] = {}
    for turn in turns:
        for i, part in enumerate(turn["content"]):
            url = media_url(part["type"], part["value"], options) if part["type"] != "text" else None
            if url is not None:
                placeholder = _PLACEHOLDER.format(len(swaps))
                swaps[placeholder] = (part["type"], url)
                turn["content"][i] = {"type": "image", "value": placeholder}
    messages = to_openai_messages(turns, system_prompt=options.system_prompt, video_frames=video_frames)
    if swaps:
        for message in messages:
            content = message.get("content")
            if not isinstance(content, list):
                continue
            for i, item in enumerate(content):
                found = swaps.get(item.get("image_url", {}).get("url", "")) if item.get("type") == "image_url" else None
                if found is not None:
                    kind, url = found
                    content[i] = {"type": f"{kind}_url", f"{kind}_url": {"url": url}}
    return messages


def request_body(messages: list[dict[str, Any]], params: dict[str, Any] | None, options: PerfOptions) -> dict[str, Any]:
    body: dict[str, Any] = {"model": options.model, "messages": messages}
    for key, value in (params or {}).items():
        if key not in _RESERVED:
            body[key] = value
    body["max_tokens"] = int(body.get("max_tokens") or options.max_tokens)
    if options.ignore_eos:
        body["ignore_eos"] = True
    body["stream"] = True
    body["stream_options"] = {"include_usage": True}
    return body


def build_requests(
    dataset: Dataset,
    options: PerfOptions,
    rows: int | None = None,
    video_frames: Callable[[str], Sequence[str]] | None = None,
) -> PreparedRequests:
    """Bodies for the first `rows` rows of the dataset (all rows when None). A row that cannot become a request
    is a PerfInputError naming the dataset, row and index."""
    total = len(dataset.data)
    if total == 0:
        raise PerfInputError(f"dataset {dataset.name}: no rows to send")
    count = total if rows is None else max(1, min(rows, total))
    if video_frames is None and options.video_mode == "frames":
        video_frames = _frame_sampler(options.nframe)
    began = time.perf_counter()
    sharing = None
    if options.prefix_tokens:
        from vlmkit.perf.prefix import prefix_for, shared_rows, with_prefix

        sharing = shared_rows(count, options.prefix_share or 0.0, options.seed)
    bodies: list[bytes] = []
    max_tokens: list[int] = []
    index: list[Any] = []
    for i in range(count):
        line = dataset.line(i)
        where = f"dataset {dataset.name}: row {i} (index {line.get('index')})"
        try:
            msgs = dataset.build_prompt(line)
            if sharing is not None:
                msgs = with_prefix(msgs, prefix_for(i, i in sharing, options.prefix_tokens, options.seed))
            params = dataset.generation_params(line)
            body = request_body(openai_messages(msgs, options, video_frames), params, options)
        except PerfInputError as exc:
            raise PerfInputError(f"{where}: {exc}") from None
        except (ValueError, OSError, LookupError, ModelCallError) as exc:  # MessageError, DataError, unsupported media
            raise PerfInputError(f"{where}: {exc}") from None
        bodies.append(dumps(body))
        max_tokens.append(body["max_tokens"])
        index.append(_plain(line.get("index", i)))
    shared = bytes(int(i in sharing) for i in range(count)) if sharing is not None else None
    return PreparedRequests(bodies, max_tokens, index, time.perf_counter() - began, shared=shared)


def _frame_sampler(nframe: int) -> Callable[[str], Sequence[str]]:
    """Video part -> `nframe` JPEG data URLs (vlmkit.core.video, opencv; imported when a video is met)."""

    def frames(path: str) -> list[str]:
        from vlmkit.core.video import frame_data_urls

        return frame_data_urls(path, nframe=nframe)

    return frames


def _plain(value: Any) -> Any:
    return value.item() if hasattr(value, "item") else value
