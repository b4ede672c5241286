"""OpenAI-compatible chat completions (OpenAI, vLLM, SGLang, MindIE, Ark, `transformers serve`, ...).

One instance is shared by the runner's worker threads: the pooled session and the retry policy are thread-safe,
and a call keeps no state on the instance.

Media (see `vlmkit.formats.openai_chat`): images as data URLs; audio as `input_audio` (wav/mp3, other formats converted
to wav); video per `video_mode`: "frames" (default) sends the frames sampled with opencv (`nframe` evenly
spaced, or one per 1/`fps` seconds) as consecutive JPEG `image_url` parts (shrunk to `img_max_side` when set);
"video_url" sends one `video_url` part (the file as a base64 data URL, or an http(s) URL as given) for services
that decode video themselves (vLLM, SGLang, Ark). The API key is held privately and sent in the headers of the
classmethod `auth_headers` (`Authorization: Bearer` by default, vlm.api.auth; a provider with another header overrides
only that); it appears in no repr, settings, error text or log line. A key with white space around it is stripped
(noted in one line); one holding a control character is refused when the model is made (vlm.api.auth.checked_key).

max_tokens defaults to None: the request carries no `max_tokens`, and each server applies its own default. vLLM
(0.32, measured) takes the checkpoint's generation_config `max_new_tokens` when it has one, else the rest of the
context window, and in either case never more than the room left; SGLang the rest of the context window. So a
server started with a short `--max-model-len` works without a flag (a fixed 1024 failed every row there with "max_tokens=1024 cannot be greater than
max_model_len=512"); `transformers serve` (5.x, measured) generates up to max(1024, the checkpoint's
generation_config max_new_tokens) new tokens; OpenAI's API takes it as optional too. For comparison,
VLMEvalKit's `OpenAIWrapper` (vlmeval/api/gpt.py) always sends one: `max_tokens=2048` in current versions (1024
in earlier ones, which cut it to a context window they looked up minus the prompt's length). A `max_tokens`
given to the constructor (`--max-tokens`) or in a row's parameters is sent as given; settings() records None as
None, meaning "the server's default".

Connections: every call goes through one `vlm.api.connection.Client` (aiohttp, pools of kept-alive connections):
`generate_full` from any thread (handed to the client's own event loop thread), `agenerate_full` awaited on the
caller's loop; the run loop takes the second through `open_async()` (vlmkit.run.inference.run_api: one event loop,
`--nproc` calls at once, no thread per call). `timeout` bounds each attempt's whole answer, not each read; `close()`
closes every connection (a call in flight fails at once and is not retried). `probe()` asks `GET {base}/models`
once before a run, so a dead server, a wrong port or a refused key stops the run with one line instead of failing
every row.

Several servers: `api_base` may name replicas of one model, `http://a:8000/v1,http://b:8000/v1`, or a text file
holding one URL a line (vlm.api.urls). Requests go to the replica with the fewest in flight; one that refuses or
drops connections is failed over without spending the row's retries and, failing on, set aside for a while
(vlm.api.replicas). The probe asks every replica at once and sets aside those that are down, naming them in one
warning line; only when none answers does it stop the run. `server_counts()` gives each server's requests, errors,
failovers and times set aside, for results.json. settings() keeps `base_url` (the first server) and adds `servers`
(every base URL) when there are several.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator, Awaitable, Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from typing import Any, ClassVar

from vlm.api import auth
from vlm.api.connection import Client, ConnectionFailed, ResponseTooLarge, Timeout
from vlm.api.http import Response, RetryPolicy, apost_json, encode_body, post_json, server_message
from vlm.api.replicas import Replica, ReplicaSet
from vlm.api.urls import (  # noqa: F401 - chat_completions_url and api_base_list re-exported (vlm.registry, tests)
    DEFAULT_API_BASE, api_base_list, chat_completions_url, models_url, replica_urls,
)
from vlm.base import BaseModel
from vlmkit.core import config
from vlmkit.core.cells import listed
from vlmkit.core.errors import ConfigError
from vlmkit.core.message import PART_TYPES, Turn, normalise_conversation
from vlmkit.core.model_calls import Generation, ModelCallError, Usage
from vlmkit.formats.openai_chat import VIDEO_MODES, prefill_fields, turns_to_openai
from vlmkit.core.secrets import one_line
from vlmkit.core.video import DEFAULT_NFRAME, check_sampling, frame_data_urls

PROBE_TIMEOUT_S = 10.0  # the most a probe waits, whatever the per-call timeout
_HEAVY_PARTS = frozenset({"video", "audio"})  # decoded or converted to build a request: off the event loop


def _has_heavy_parts(turns: list[Turn]) -> bool:
    """Whether building the request decodes or converts media (video frames, audio): then off the event loop."""
    for turn in turns:
        for part in turn["content"]:
            if part["type"] in _HEAVY_PARTS:
                return True
    return False


def _model_list(data: Any) -> list[dict[str, Any]] | None:
    """The entries of an OpenAI model list (`{"object": "list", "data": [{"id": ...}, ...]}`); None if it is not one."""
    entries = data.get("data") if isinstance(data, dict) else None
    if not isinstance(entries, list):
        return None
    return [e for e in entries if isinstance(e, dict) and isinstance(e.get("id"), str)]


def _int(value: Any) -> int:
    return value if type(value) is int or (isinstance(value, int) and not isinstance(value, bool)) else 0


def usage_from(data: dict[str, Any]) -> Usage | None:
    """Usage from an OpenAI `usage` object (reasoning tokens from completion_tokens_details when given)."""
    usage = data.get("usage")
    if not isinstance(usage, dict):
        return None
    details = usage.get("completion_tokens_details")
    reasoning = details.get("reasoning_tokens") if isinstance(details, dict) else None
    return Usage(_int(usage.get("prompt_tokens")), _int(usage.get("completion_tokens")), _int(reasoning))


def reasoning_text(data: dict[str, Any]) -> str | None:
    """The first choice's reasoning when the server gives it apart (`reasoning_content`: vLLM/SGLang reasoning
    parsers, DeepSeek; `reasoning`: some others), else None. Kept apart from the answer (vlmkit.core.reasoning)."""
    choices = data.get("choices")
    if not isinstance(choices, list) or not choices or not isinstance(choices[0], dict):
        return None
    message = choices[0].get("message")
    if not isinstance(message, dict):
        return None
    for key in ("reasoning_content", "reasoning"):
        value = message.get(key)
        if isinstance(value, str) and value.strip():
            return value
    return None


def answer_text(data: dict[str, Any]) -> tuple[str, str | None]:
    """(content, finish_reason) of the first choice; ModelCallError("bad_response") when there is none, and
    ModelCallError("truncated_reasoning") when the reply is reasoning only and ran out of tokens."""
    choices = data.get("choices")
    if not isinstance(choices, list) or not choices or not isinstance(choices[0], dict):
        raise ModelCallError("bad_response", "the response has no choices")
    message = choices[0].get("message")
    content = message.get("content") if isinstance(message, dict) else None
    finish = choices[0].get("finish_reason")
    if isinstance(content, list):  # some servers answer with content parts
        texts = [p.get("text") for p in content if isinstance(p, dict) and isinstance(p.get("text"), str)]
        content = "".join(texts) if texts else None
    empty = not isinstance(content, str) or not content.strip()
    if empty and reasoning_text(data) is not None and finish == "length":
        raise ModelCallError(
            "truncated_reasoning", "the reply ended inside its reasoning (finish_reason='length'), before any "
            "answer: raise --max-tokens (reasoning models need several thousand)"
        )
    if not isinstance(content, str):
        refusal = message.get("refusal") if isinstance(message, dict) else None
        why = f"refusal: {str(refusal)[:200]}" if refusal else f"finish_reason={finish!r}"
        raise ModelCallError("bad_response", f"the first choice has no text content ({why})")
    return content, finish if isinstance(finish, str) else None


def _plain_answer(data: dict[str, Any]) -> tuple[str, dict[str, Any]] | None:
    """(content, the first choice) of the common answer, a first choice whose message holds string content and no
    reasoning field, in one look; None for any other shape (`answer_text` and `reasoning_text` read those). The run
    loop reads every answer through here: one pass instead of three over the same dicts."""
    choices = data.get("choices")
    if type(choices) is not list or not choices:
        return None
    first = choices[0]
    message = first.get("message") if type(first) is dict else None
    if type(message) is not dict or "reasoning_content" in message or "reasoning" in message:
        return None
    content = message.get("content")
    return (content, first) if type(content) is str else None


def _generation(response: Response) -> Generation:
    """The Generation of a decoded answer: its text (stripped), usage, latency, and what else the server said."""
    data = response.data
    plain = _plain_answer(data)
    if plain is not None:  # no reasoning: what answer_text and reasoning_text give, read once
        text, first = plain
        extra: dict[str, Any] = {"response_model": data.get("model"), "attempts": response.attempts}
        finish = first.get("finish_reason")
        if type(finish) is str:
            extra["finish_reason"] = finish
        if first.get("logprobs") is not None:
            extra["logprobs"] = first["logprobs"]  # asked for (vlm.api.letter_logprobs): kept as the server gave it
        return Generation(text=text.strip(), usage=usage_from(data), latency_ms=response.latency_ms, extra=extra)
    text, finish = answer_text(data)
    extra = {"response_model": data.get("model"), "attempts": response.attempts}
    if finish is not None:
        extra["finish_reason"] = finish
    if data["choices"][0].get("logprobs") is not None:  # answer_text found a first choice that is a dict
        extra["logprobs"] = data["choices"][0]["logprobs"]
    reasoning = reasoning_text(data)
    if reasoning is not None:
        extra["reasoning_content"] = reasoning.strip()  # moved to the record's `reasoning` (vlmkit.run.inference)
    # stripped as VLMEvalKit's API wrappers and the local path strip: a served model then predicts what it
    # predicts locally (a byte-level BPE decodes its first token with a leading space)
    return Generation(text=text.strip(), usage=usage_from(data), latency_ms=response.latency_ms, extra=extra)


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
        max_tokens: int | None = None,
        timeout: float = 60.0,
        retries: int = 3,
        backoff: float = 1.0,
        img_max_side: int | None = None,
        system_prompt: str | None = None,
        extra_body: dict[str, Any] | None = None,
        nframe: int | None = DEFAULT_NFRAME,
        fps: float | None = None,
        video_mode: str = "frames",
        continue_prefill: bool = False,
    ) -> None:
        """max_tokens: None sends none (the server's default, see the module docstring); timeout: seconds per
        attempt; retries: extra attempts after the first (0: one attempt); nframe / fps: video frame sampling (fps,
        when given, replaces nframe, which is then recorded as None); video_mode: "frames" or "video_url".
        continue_prefill: a conversation ending with an assistant turn (a prefill, e.g. MVBench's "Best option:(")
        always sends it as the last assistant message, as VLMEvalKit's API wrappers do; True also asks the server to
        continue that message (`continue_final_message`, `add_generation_prompt: false`: vLLM and SGLang read them;
        OpenAI and `transformers serve` refuse them)."""
        _check_settings(max_tokens=max_tokens, timeout=timeout, retries=retries)
        if video_mode not in VIDEO_MODES:
            raise ConfigError(f"video_mode must be one of {', '.join(VIDEO_MODES)}; got {video_mode!r}")
        self.nframe = None if fps is not None else nframe
        self.fps = fps
        self._sampling = check_sampling(self.nframe, self.fps)
        self.video_mode = video_mode
        self.model = model
        servers = replica_urls(api_base or config.openai_api_base() or DEFAULT_API_BASE)
        self.base_url, self.url = servers[0]
        self._servers = ReplicaSet(servers)
        given = api_key if api_key is not None else config.openai_api_key()
        key = auth.checked_key(given)  # ConfigError for control characters; white space stripped with a note
        self.__headers = {"Content-Type": "application/json", **type(self).auth_headers(key)}
        # never echoed; scrubbed from anything a server says back, as given and as sent
        self.__secrets = tuple(dict.fromkeys(k for k in (given, key) if k))
        self.temperature = temperature
        self.max_tokens = max_tokens
        self.timeout = timeout
        self.retries = retries
        self.backoff = backoff
        self.img_max_side = img_max_side
        self.system_prompt = system_prompt
        self.extra_body = dict(extra_body or {})
        self.continue_prefill = continue_prefill
        self._policy = RetryPolicy(retries=retries, backoff=backoff)
        self._client = Client()

    def __repr__(self) -> str:
        return f"{type(self).__name__}(model={self.model!r}, base_url={self.base_url!r})"

    @classmethod
    def auth_headers(cls, api_key: str | None) -> dict[str, str]:
        """The headers that carry `api_key` (none without one); the key is checked first (vlm.api.auth.checked_key:
        ConfigError for control characters, white space stripped). Override for a provider with another header;
        `vlmkit perf` asks the served model's class the same."""
        return auth.auth_headers(api_key)

    def prepare(self, msgs: Sequence[Any]) -> list[Turn]:
        """BaseModel.prepare, without the capability check where this model takes every part type and any number of
        images (it could refuse nothing): one less walk over every part of every request."""
        if self.max_images is None and self.modalities.issuperset(PART_TYPES):
            return normalise_conversation(msgs)
        return super().prepare(msgs)

    def request_body(self, msgs: Sequence[Any], params: dict[str, Any] | None = None) -> dict[str, Any]:
        """The JSON body for one message (after the capability check); `extra_body` keys override the model's
        settings, and per-request params (passed through as OpenAI-style fields) override both."""
        return self._body(self.prepare(msgs), params)

    def _body(self, turns: list[Any], params: dict[str, Any] | None) -> dict[str, Any]:
        """request_body for turns prepared already (normalised and checked once)."""
        messages = turns_to_openai(
            turns,
            system_prompt=self.system_prompt,
            img_max_side=self.img_max_side,
            video_frames=self._video_frames,
            video_mode=self.video_mode,
        )
        body: dict[str, Any] = {"model": self.model, "messages": messages, "temperature": self.temperature}
        if self.max_tokens is not None:
            body["max_tokens"] = self.max_tokens
        if self.continue_prefill:
            body.update(prefill_fields(turns))
        body.update(self.extra_body)
        body.update(params or {})
        return body

    def _video_frames(self, value: str) -> list[str]:
        return frame_data_urls(value, max_side=self.img_max_side, **self._sampling)

    def generate_full(
        self, msgs: Sequence[Any], dataset: str | None = None, params: dict[str, Any] | None = None
    ) -> Generation:
        payload = encode_body(self.request_body(msgs, params))
        epoch = self._client.epoch
        response = post_json(
            self._client,
            self._servers,
            payload,
            headers=self.__headers,
            timeout=self.timeout,
            policy=self._policy,
            secrets=self.__secrets,
            abandoned=lambda: self._client.epoch != epoch,  # close() during the call: no retry after it
        )
        return _generation(response)

    async def agenerate_full(
        self, msgs: Sequence[Any], dataset: str | None = None, params: dict[str, Any] | None = None
    ) -> Generation:
        """As `generate_full`, awaited on the running event loop. A request with video or audio is built in a worker
        thread (frames are decoded, audio converted), any other inline."""
        turns = self.prepare(msgs)
        if _has_heavy_parts(turns):
            body = await asyncio.to_thread(self._body, turns, params)
        else:
            body = self._body(turns, params)
        client = self._client
        epoch = client.epoch
        response = await apost_json(
            client,
            self._servers,
            encode_body(body),
            headers=self.__headers,
            timeout=self.timeout,
            policy=self._policy,
            secrets=self.__secrets,
            abandoned=lambda: client.epoch != epoch,
        )
        return _generation(response)

    @contextlib.asynccontextmanager
    async def open_async(self) -> AsyncIterator[Callable[..., Awaitable[Generation]]]:
        """For a run loop on an event loop (vlmkit.run.inference.run_api): yields `agenerate_full`, and closes the
        connections it opened on the running loop on leaving. `close()` from another thread ends its calls in flight."""
        try:
            yield self.agenerate_full
        finally:
            await self._client.aclose_here()

    def server_counts(self) -> dict[str, dict[str, int]]:
        """Per server (base URL, in the order given): requests sent, errors (failed attempts), failovers (failed
        attempts moved to another replica) and set_aside (times set aside as failing), since the model was made."""
        return self._servers.counts()

    def settings(self) -> dict[str, Any]:
        return {
            **super().settings(),
            "model": self.model,
            "base_url": self.base_url,
            **({"servers": [r.base_url for r in self._servers.replicas]} if len(self._servers) > 1 else {}),
            "temperature": self.temperature,
            "max_tokens": self.max_tokens,
            "timeout": self.timeout,
            "retries": self.retries,
            "img_max_side": self.img_max_side,
            "system_prompt": self.system_prompt,
            "extra_body": dict(self.extra_body),
            "video_mode": self.video_mode,
            "continue_prefill": self.continue_prefill,
            "nframe": self.nframe,
            "fps": self.fps,
        }

    def close(self) -> None:
        """Close every connection (the instance stays usable; a later call opens a new one)."""
        self._client.close()

    def probe(self) -> dict[str, Any]:
        """Ask the server once, before a run, what it serves: `GET {base_url}/models`, no retries; with several
        servers (replicas), every one at once.

        Raises ModelCallError, in one line naming the URL and the likely fix, when no server can be reached
        ("connection", "timeout") or one refuses the key (HTTP 401/403, "http_4xx"). A server without /models (any
        other non-2xx, or a 2xx that is not a model list) gives {"reachable": True, "models": None}. A model list
        gives {"reachable": True, "models": [ids], "max_model_len": the int its entry for this model reports
        (vLLM does) or None}, plus "warning" when the list is non-empty and this model is not in it. With several
        servers these come from the first that answers, "servers" maps each base URL to "ok" or why it is down, and
        the servers that are down are set aside (vlm.api.replicas) and named in one "warning" line.
        """
        replicas = self._servers.replicas
        if len(replicas) == 1:
            outcome = self._probe_one(replicas[0])
            if isinstance(outcome, ModelCallError):
                raise outcome
            return outcome
        with ThreadPoolExecutor(min(8, len(replicas)), thread_name_prefix="vlmkit-probe") as pool:
            outcomes = list(pool.map(self._probe_one, replicas))
        refused = [o for o in outcomes if isinstance(o, ModelCallError) and o.kind == "http_4xx"]
        if refused:
            raise refused[0]
        down = [(r, o) for r, o in zip(replicas, outcomes) if isinstance(o, ModelCallError)]
        answered = [o for o in outcomes if not isinstance(o, ModelCallError)]
        if not answered:
            reasons = "; ".join(f"{r.base_url}: {_why_down(o)}" for r, o in down)
            raise ModelCallError(down[0][1].kind, f"none of the {len(replicas)} servers answers ({reasons}): are they "
                                 "running and --api-base right?")
        result = dict(answered[0])
        result["servers"] = {r.base_url: "ok" if not isinstance(o, ModelCallError) else _why_down(o)
                             for r, o in zip(replicas, outcomes)}
        if down:
            for replica, _ in down:
                self._servers.set_down(replica)
            note = (f"{len(down)} of {len(replicas)} servers do not answer and are set aside: "
                    + "; ".join(f"{r.base_url} ({_why_down(o)})" for r, o in down))
            result["warning"] = one_line("; ".join(filter(None, (note, result.get("warning")))), 1000, self.__secrets)
        return result

    def _probe_one(self, replica: Replica) -> dict[str, Any] | ModelCallError:
        """The probe of one server: its result, or the ModelCallError that says why it cannot serve (returned)."""
        url = models_url(replica.base_url)
        timeout = min(self.timeout, PROBE_TIMEOUT_S)
        secrets = self.__secrets
        headers = {k: v for k, v in self.__headers.items() if k != "Content-Type"}
        try:
            resp = self._client.get(url, headers, timeout)
        except Timeout:
            return ModelCallError(
                "timeout", f"no answer from {url} within {timeout:g} s: is the server running (not overloaded or "
                "still loading) and --api-base right?"
            )
        except (ConnectionFailed, ResponseTooLarge) as exc:
            return ModelCallError(
                "connection", f"cannot reach {url} ({one_line(exc.reason, 200, secrets)}): is the server running and "
                "--api-base right?"
            )
        status = resp.status_code
        if status in (401, 403):
            return ModelCallError(
                "http_4xx", f"{url} refused the request with HTTP {status}: {server_message(resp, secrets)}: check "
                "--api-key (or OPENAI_API_KEY)", status
            )
        if not 200 <= status < 300:
            return {"reachable": True, "models": None}
        try:
            entries = _model_list(resp.json())
        except ValueError:
            entries = None
        if entries is None:
            return {"reachable": True, "models": None}
        ids = [e["id"] for e in entries]
        mine = next((e for e in entries if e["id"] == self.model), None)
        limit = mine.get("max_model_len") if mine is not None else None
        result: dict[str, Any] = {
            "reachable": True,
            "models": ids,
            "max_model_len": limit if isinstance(limit, int) and not isinstance(limit, bool) else None,
        }
        if ids and mine is None:
            served = listed([repr(i) for i in ids], most=5)
            result["warning"] = one_line(
                f"{url} does not list model {self.model!r}; it serves {served}: check the model name", 500, secrets
            )
        return result


def _why_down(error: ModelCallError) -> str:
    """Why a probed server is down, short: "no answer in time", or the reason of "cannot reach URL (reason): ..."."""
    if error.kind == "timeout":
        return "no answer in time"
    text = str(error)
    start, end = text.find(" ("), text.find("):")
    return text[start + 2:end] if 0 <= start < end else text[:120]


def _check_settings(*, max_tokens: Any, timeout: Any, retries: Any) -> None:
    """ConfigError (one line, naming the setting) for a value no call could work with."""
    if max_tokens is not None and (isinstance(max_tokens, bool) or not isinstance(max_tokens, int) or max_tokens <= 0):
        raise ConfigError(
            f"max_tokens must be a positive whole number or None (the server's default), got {max_tokens!r}"
        )
    if isinstance(timeout, bool) or not isinstance(timeout, (int, float)) or not timeout > 0:
        raise ConfigError(f"timeout must be a positive number of seconds, got {timeout!r}")
    if isinstance(retries, bool) or not isinstance(retries, int) or retries < 0:
        raise ConfigError(f"retries must be a whole number >= 0 (0: one attempt), got {retries!r}")
