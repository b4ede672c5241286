"""OpenAI-compatible chat completions (OpenAI, vLLM, SGLang, MindIE, Ark, `transformers serve`, ...).

One instance is shared by the runner's worker threads: the pooled session and the retry policy are thread-safe,
and a call keeps no state on the instance.

Media (see `vlmkit.openai_format`): images as data URLs; audio as `input_audio` (wav/mp3, other formats converted
to wav); video per `video_mode`: "frames" (default) sends the frames sampled with opencv (`nframe` evenly
spaced, or one per 1/`fps` seconds) as consecutive JPEG `image_url` parts (shrunk to `img_max_side` when set);
"video_url" sends one `video_url` part (the file as a base64 data URL, or an http(s) URL as given) for services
that decode video themselves (vLLM, SGLang, Ark). The API key is held privately and sent as `Authorization: Bearer`;
it appears in no repr, settings, error text or log line.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, ClassVar
from urllib.parse import urlsplit, urlunsplit

from vlm.api.http import RetryPolicy, make_session, post_json
from vlm.base import BaseModel
from vlmkit import config
from vlmkit.generation import Generation, ModelCallError, Usage
from vlmkit.openai_format import VIDEO_MODES, to_openai_messages
from vlmkit.video import check_sampling, frame_data_urls

DEFAULT_API_BASE = "https://api.openai.com/v1"
_ENDPOINT = "/chat/completions"


def chat_completions_url(api_base: str) -> tuple[str, str]:
    """(base URL, chat-completions URL) from a base given as `.../v1` or as the full `.../chat/completions` URL.

    Credentials written into the URL (`user:pass@host`) are refused: the key goes in `api_key`.
    """
    parts = urlsplit(api_base.strip())
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise ValueError(f"api_base must be an http(s) URL such as https://host/v1, got {parts.scheme or 'no'} scheme")
    if parts.username or parts.password:
        raise ValueError("api_base must not hold credentials; pass the key as api_key (or OPENAI_API_KEY)")
    path = parts.path.rstrip("/")
    if path.endswith(_ENDPOINT):
        path = path[: -len(_ENDPOINT)]
    base = urlunsplit((parts.scheme, parts.netloc, path, parts.query, ""))
    url = urlunsplit((parts.scheme, parts.netloc, path + _ENDPOINT, parts.query, ""))
    return base, url


def _int(value: Any) -> int:
    return value if isinstance(value, int) and not isinstance(value, bool) else 0


def usage_from(data: dict[str, Any]) -> Usage | None:
    """Usage from an OpenAI `usage` object (reasoning tokens from completion_tokens_details when given)."""
    usage = data.get("usage")
    if not isinstance(usage, dict):
        return None
    details = usage.get("completion_tokens_details")
    reasoning = details.get("reasoning_tokens") if isinstance(details, dict) else None
    return Usage(
        input_tokens=_int(usage.get("prompt_tokens")),
        output_tokens=_int(usage.get("completion_tokens")),
        reasoning_tokens=_int(reasoning),
    )


def answer_text(data: dict[str, Any]) -> tuple[str, str | None]:
    """(content, finish_reason) of the first choice; ModelCallError("bad_response") when there is none."""
    choices = data.get("choices")
    if not isinstance(choices, list) or not choices or not isinstance(choices[0], dict):
        raise ModelCallError("bad_response", "the response has no choices")
    message = choices[0].get("message")
    content = message.get("content") if isinstance(message, dict) else None
    finish = choices[0].get("finish_reason")
    if isinstance(content, list):  # some servers answer with content parts
        texts = [p.get("text") for p in content if isinstance(p, dict) and isinstance(p.get("text"), str)]
        content = "".join(texts) if texts else None
    if not isinstance(content, str):
        refusal = message.get("refusal") if isinstance(message, dict) else None
        why = f"refusal: {str(refusal)[:200]}" if refusal else f"finish_reason={finish!r}"
        raise ModelCallError("bad_response", f"the first choice has no text content ({why})")
    return content, finish if isinstance(finish, str) else None


class OpenAICompatModel(BaseModel):
    modalities: ClassVar[frozenset[str]] = frozenset({"text", "image", "video", "audio"})
    interleave: ClassVar[bool] = True
    is_api: ClassVar[bool] = True

    def __init__(
        self,
        model: str,
        *,
        api_base: str | None = None,
        api_key: str | None = None,
        temperature: float = 0.0,
        max_tokens: int = 1024,
        timeout: float = 60.0,
        retries: int = 3,
        backoff: float = 1.0,
        img_max_side: int | None = None,
        system_prompt: str | None = None,
        extra_body: dict[str, Any] | None = None,
        pool_size: int = 64,
        nframe: int | None = 8,
        fps: float | None = None,
        video_mode: str = "frames",
    ) -> None:
        """nframe / fps: video frame sampling (fps, when given, replaces nframe, which is then recorded as None);
        video_mode: "frames" or "video_url" (module docstring)."""
        if retries < 0 or timeout <= 0 or max_tokens <= 0:
            raise ValueError("retries must be >= 0, timeout > 0 and max_tokens > 0")
        if video_mode not in VIDEO_MODES:
            raise ValueError(f"video_mode must be one of {', '.join(VIDEO_MODES)}; got {video_mode!r}")
        self.nframe = None if fps is not None else nframe
        self.fps = fps
        self._sampling = check_sampling(self.nframe, self.fps)
        self.video_mode = video_mode
        self.model = model
        self.base_url, self.url = chat_completions_url(api_base or config.openai_api_base() or DEFAULT_API_BASE)
        key = api_key if api_key is not None else config.openai_api_key()
        self.__key = key or None  # name-mangled and never echoed
        self.temperature = temperature
        self.max_tokens = max_tokens
        self.timeout = timeout
        self.retries = retries
        self.backoff = backoff
        self.img_max_side = img_max_side
        self.system_prompt = system_prompt
        self.extra_body = dict(extra_body or {})
        self._policy = RetryPolicy(retries=retries, backoff=backoff)
        self._session = make_session(pool_size)

    def __repr__(self) -> str:
        return f"{type(self).__name__}(model={self.model!r}, base_url={self.base_url!r})"

    def _headers(self) -> dict[str, str]:
        headers = {"Content-Type": "application/json"}
        if self.__key:
            headers["Authorization"] = f"Bearer {self.__key}"
        return headers

    def request_body(self, msgs: Sequence[Any], params: dict[str, Any] | None = None) -> dict[str, Any]:
        """The JSON body for one message (after the capability check); `extra_body` keys override the model's
        settings, and per-request params (passed through as OpenAI-style fields) override both."""
        turns = self.prepare(msgs)
        messages = to_openai_messages(
            turns,
            system_prompt=self.system_prompt,
            img_max_side=self.img_max_side,
            video_frames=self._video_frames,
            video_mode=self.video_mode,
        )
        body: dict[str, Any] = {
            "model": self.model,
            "messages": messages,
            "temperature": self.temperature,
            "max_tokens": self.max_tokens,
        }
        body.update(self.extra_body)
        body.update(params or {})
        return body

    def _video_frames(self, value: str) -> list[str]:
        return frame_data_urls(value, max_side=self.img_max_side, **self._sampling)

    def generate_full(
        self, msgs: Sequence[Any], dataset: str | None = None, params: dict[str, Any] | None = None
    ) -> Generation:
        body = self.request_body(msgs, params)
        response = post_json(
            self._session,
            self.url,
            body,
            headers=self._headers(),
            timeout=self.timeout,
            policy=self._policy,
            secrets=(self.__key,) if self.__key else (),
        )
        text, finish = answer_text(response.data)
        extra: dict[str, Any] = {"response_model": response.data.get("model"), "attempts": response.attempts}
        if finish is not None:
            extra["finish_reason"] = finish
        # stripped as VLMEvalKit's API wrappers and the local path strip: a served model then predicts what it
        # predicts locally (a byte-level BPE decodes its first token with a leading space)
        return Generation(text=text.strip(), usage=usage_from(response.data), latency_ms=response.latency_ms,
                          extra=extra)

    def settings(self) -> dict[str, Any]:
        return {
            **super().settings(),
            "model": self.model,
            "base_url": self.base_url,
            "temperature": self.temperature,
            "max_tokens": self.max_tokens,
            "timeout": self.timeout,
            "retries": self.retries,
            "img_max_side": self.img_max_side,
            "system_prompt": self.system_prompt,
            "extra_body": dict(self.extra_body),
            "video_mode": self.video_mode,
            "nframe": self.nframe,
            "fps": self.fps,
        }

    def close(self) -> None:
        """Release pooled connections (the instance stays usable; a new call opens new ones)."""
        self._session.close()
