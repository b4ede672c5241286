"""The call policy for API models: JSON POST with retries over a `vlm.api.connection.Client` (`post_json` blocking,
`apost_json` awaited on an event loop: one policy, `_Retrying`), and the texts of its errors.

Several servers (vlm.api.replicas): each attempt goes to the replica with the fewest requests in flight; a connection
failure there is asked again at once on a replica not yet tried for this attempt, spending no retry; only when every
replica failed is the attempt spent (and retried with backoff as below).

Retried: HTTP 429, 408 and 5xx, timeouts and connection errors, with exponential backoff plus a small jitter from
a seeded generator. A `Retry-After` header (seconds or an HTTP date) on 429/503 replaces the computed wait,
capped at `MAX_RETRY_AFTER_S`. The timeout bounds each attempt's whole answer, however slowly its bytes come
(vlm.api.connection). Other 4xx answers, unparseable bodies and bodies over the size limit are final. The last
failure raises `ModelCallError` with a `kind` ("rate_limited", "http_4xx", "http_5xx", "timeout", "connection",
"bad_response", "bad_input") and the HTTP status. An HTTP error's message quotes the server's own words
(`error.message`, `message` or `detail` of a JSON body, else the body's start) on one line. A 2xx answer whose JSON
object carries an `error` and no (or empty) `choices` (some gateways and proxies report failures so) is an error
too, quoting its message: with a numeric `code` (or `status`) of 400-599 it counts as that HTTP status (retried or
not as that status would be), otherwise it is a final "bad_response". Error texts and log lines never hold the
request headers (the API key); text taken from a response (or from a connection error) is scrubbed of every secret
passed in `secrets` before it is shortened, so a cut can never leave part of a key behind.
"""

from __future__ import annotations

import asyncio
import email.utils
import json
import logging
import random
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from vlm.api.connection import Client, HTTPFailure, Reply, ResponseTooLarge, Timeout
from vlm.api.replicas import Replica, ReplicaSet
from vlmkit.core.model_calls import ModelCallError
from vlmkit.core.secrets import one_line

log = logging.getLogger(__name__)

MAX_RETRY_AFTER_S = 120.0  # a service asking for longer than this is treated as asking for this
MAX_BACKOFF_S = 60.0
RETRY_STATUSES = frozenset({408, 429, 500, 502, 503, 504}) | frozenset(range(505, 600))


def parse_retry_after(value: str | None, now: float | None = None) -> float | None:
    """Seconds to wait from a Retry-After header (delta-seconds or HTTP date); None when absent or unreadable."""
    if not value:
        return None
    value = value.strip()
    try:
        return max(0.0, float(value))
    except ValueError:
        pass
    try:
        when = email.utils.parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return None
    if when is None:
        return None
    return max(0.0, when.timestamp() - (time.time() if now is None else now))


@dataclass
class RetryPolicy:
    retries: int = 3  # extra attempts after the first
    backoff: float = 1.0  # first wait in seconds; doubles each attempt
    seed: int = 0

    def __post_init__(self) -> None:
        self._rng = random.Random(self.seed)
        self._lock = threading.Lock()

    def delay(self, attempt: int, retry_after: float | None = None) -> float:
        """Seconds to wait before attempt `attempt + 1` (attempt counts from 0)."""
        if retry_after is not None:
            return min(retry_after, MAX_RETRY_AFTER_S)
        base = min(self.backoff * (2**attempt), MAX_BACKOFF_S)
        with self._lock:
            jitter = self._rng.uniform(0.0, 0.1 * base)
        return base + jitter


@dataclass
class Response:
    data: dict[str, Any]
    latency_ms: float  # of the attempt that succeeded
    attempts: int


class _Failure(Exception):
    """One failed attempt: what `ModelCallError` would say, whether to retry, and a server-requested wait."""

    def __init__(self, kind: str, message: str, status: int | None, retry: bool, retry_after: float | None = None):
        super().__init__(message)
        self.kind, self.message, self.status, self.retry, self.retry_after = kind, message, status, retry, retry_after


def _said(data: Any) -> str | None:
    """The message of an error body: `error.message` (or `error` when it is a string), `message` or `detail`."""
    if not isinstance(data, dict):
        return None
    error = data.get("error")
    nested = error.get("message") if isinstance(error, dict) else error
    for candidate in (nested, data.get("message"), data.get("detail")):
        if isinstance(candidate, str) and candidate.strip():
            return candidate
    return None


def server_message(resp: Reply, secrets: Sequence[str | None], limit: int = 300) -> str:
    """What the server said about an error, cleanly: `error.message` (or `error` when it is a string), `message` or
    `detail` of a JSON body when one is a string; else the body's first `limit` characters. One line, scrubbed."""
    try:
        data = resp.json()
    except ValueError:
        data = None
    return one_line(_said(data) or resp.text or "", limit, secrets) or "(empty body)"


def _error_in_answer(data: dict[str, Any], status: int, secrets: Sequence[str]) -> _Failure | None:
    """The failure a 2xx JSON answer reports with an `error` object instead of choices; None for an answer."""
    error = data.get("error")
    if not error or data.get("choices"):  # an answer beside an error field is an answer
        return None
    said = one_line(_said(data) or json.dumps(error, ensure_ascii=False, default=str), 300, secrets)
    code = error.get("code", error.get("status")) if isinstance(error, dict) else None
    if isinstance(code, str) and code.isdigit():
        code = int(code)
    if isinstance(code, int) and not isinstance(code, bool) and 400 <= code < 600:
        kind = "rate_limited" if code == 429 else "http_5xx" if code >= 500 else "http_4xx"
        return _Failure(kind, f"HTTP {status} carrying error {code}: {said}", code, code in RETRY_STATUSES)
    return _Failure("bad_response", f"HTTP {status} carrying an error: {said}", status, False)


def _judge(resp: Reply, latency_ms: float, secrets: Sequence[str]) -> tuple[dict[str, Any], float]:
    """The decoded answer of one reply, or the _Failure it is."""
    status = resp.status_code
    if status >= 400:
        snippet = server_message(resp, secrets)
        retry_after = parse_retry_after(resp.headers.get("Retry-After")) if status in (429, 503) else None
        kind = "rate_limited" if status == 429 else "http_5xx" if status >= 500 else "http_4xx"
        raise _Failure(kind, f"HTTP {status}: {snippet}", status, status in RETRY_STATUSES, retry_after)
    try:
        data = resp.json()
    except ValueError:
        snippet = one_line(resp.text or "", 200, secrets)
        raise _Failure("bad_response", f"HTTP {status} with a body that is not JSON: {snippet!r}", status,
                       False) from None
    if not isinstance(data, dict):
        raise _Failure("bad_response", f"HTTP {status} with JSON that is not an object", status, False)
    failure = _error_in_answer(data, status, secrets)
    if failure is not None:
        raise failure
    return data, latency_ms


def _transport_failure(exc: HTTPFailure, secrets: Sequence[str]) -> _Failure:
    """The _Failure of an exchange that got no reply."""
    if isinstance(exc, Timeout):
        return _Failure("timeout", exc.reason, None, True)
    if isinstance(exc, ResponseTooLarge):
        return _Failure("bad_response", exc.reason, None, False)
    return _Failure("connection", f"connection failed ({one_line(exc.reason, 200, secrets)})", None, True)


_ENCODER = json.JSONEncoder(allow_nan=False)  # made once: json.dumps with options builds an encoder each call


def encode_body(body: dict[str, Any]) -> bytes:
    """The request body as UTF-8 JSON; ModelCallError("bad_input") for a value JSON cannot carry (NaN, an object):
    asking again could not help."""
    try:
        return _ENCODER.encode(body).encode("utf-8")
    except (TypeError, ValueError) as exc:
        raise ModelCallError("bad_input", f"the request body is not valid JSON: {exc}") from None


class _Retrying:
    """One call's way through its attempts and the replicas (vlm.api.replicas): which server next, what a failure
    costs (a failover to another replica now, a wait before the next attempt, or the final ModelCallError)."""

    __slots__ = ("servers", "policy", "abandoned", "attempt", "attempts", "tried", "replica")

    def __init__(self, servers: ReplicaSet, policy: RetryPolicy, abandoned: Callable[[], bool] | None) -> None:
        self.servers, self.policy, self.abandoned = servers, policy, abandoned
        self.attempt = 0  # attempts spent (failovers spend none)
        self.attempts = policy.retries + 1
        self.tried: list[Replica] = []
        self.replica: Replica | None = None

    def next_url(self) -> str:
        replica = self.servers.pick(self.tried)
        assert replica is not None  # after_failure empties `tried` before every replica is in it
        self.replica = replica
        return replica.url

    def succeeded(self) -> int:
        assert self.replica is not None
        self.servers.succeeded(self.replica)
        return self.attempt + 1

    def after_failure(self, failure: _Failure) -> float | None:
        """None: ask another replica now (a failover); else the seconds to wait before the next attempt. Raises the
        final ModelCallError when no attempt is left (or the caller closed the model)."""
        replica = self.replica
        assert replica is not None
        unreachable = failure.kind in ("connection", "timeout")
        self.tried.append(replica)
        failover = failure.kind == "connection" and len(self.tried) < len(self.servers)
        self.servers.failed(replica, unreachable=unreachable, moved=failover)
        if failover and not self._abandoned():
            return None
        url = replica.url
        self.tried = []
        if not failure.retry or self.attempt + 1 >= self.attempts:
            tries = f" after {self.attempt + 1} attempts" if self.attempt else ""
            raise ModelCallError(failure.kind, f"{url}: {failure.message}{tries}", failure.status) from None
        self._refuse_if_abandoned(url, failure)
        wait = self.policy.delay(self.attempt, failure.retry_after)
        self.attempt += 1
        log.warning("%s: %s; retrying in %.1f s (attempt %d of %d)", url, failure.message[:120], wait, self.attempt + 1,
                    self.attempts)
        return wait

    def check_after_wait(self, failure: _Failure) -> None:
        assert self.replica is not None
        self._refuse_if_abandoned(self.replica.url, failure)

    def _abandoned(self) -> bool:
        return self.abandoned is not None and self.abandoned()

    def _refuse_if_abandoned(self, url: str, failure: _Failure) -> None:
        if self._abandoned():
            raise ModelCallError("cancelled", f"{url}: {failure.message}; not retried: the model was closed",
                                 failure.status) from None


def _servers(target: str | ReplicaSet) -> ReplicaSet:
    return target if isinstance(target, ReplicaSet) else ReplicaSet([(target, target)])


def post_json(
    client: Client,
    target: str | ReplicaSet,
    body: dict[str, Any] | bytes,
    *,
    headers: dict[str, str],
    timeout: float,
    policy: RetryPolicy,
    secrets: Sequence[str] = (),
    sleep: Callable[[float], None] = time.sleep,
    abandoned: Callable[[], bool] | None = None,
) -> Response:
    """POST `body` (an object, or JSON bytes from `encode_body`) to `target` (a URL, or the replicas of a model) and
    return the decoded object; ModelCallError after the last failed attempt. Blocks the calling thread.

    abandoned: asked before each retry; True (the caller closed the model: an interrupted or stopped run left this
    call behind) ends the call with kind "cancelled" instead of retrying on in the background."""
    payload = body if isinstance(body, bytes) else encode_body(body)
    headers = {"Content-Type": "application/json", **headers}
    state = _Retrying(_servers(target), policy, abandoned)
    while True:
        url = state.next_url()
        start = time.perf_counter()
        try:
            try:
                resp = client.post(url, payload, headers, timeout)
            except HTTPFailure as exc:
                raise _transport_failure(exc, secrets) from None
            data, latency_ms = _judge(resp, (time.perf_counter() - start) * 1000.0, secrets)
        except _Failure as failure:
            wait = state.after_failure(failure)
            if wait is not None:
                sleep(wait)
                state.check_after_wait(failure)
            continue
        return Response(data=data, latency_ms=latency_ms, attempts=state.succeeded())


async def apost_json(
    client: Client,
    target: str | ReplicaSet,
    body: dict[str, Any] | bytes,
    *,
    headers: dict[str, str],
    timeout: float,
    policy: RetryPolicy,
    secrets: Sequence[str] = (),
    abandoned: Callable[[], bool] | None = None,
) -> Response:
    """As `post_json`, awaited on the running event loop (`Client.arequest`); waits between attempts with
    asyncio.sleep. `headers` must hold the Content-Type already (the model's headers do)."""
    payload = body if isinstance(body, bytes) else encode_body(body)
    state = _Retrying(_servers(target), policy, abandoned)
    while True:
        url = state.next_url()
        start = time.perf_counter()
        try:
            try:
                resp = await client.arequest("POST", url, payload, headers, timeout)
            except HTTPFailure as exc:
                raise _transport_failure(exc, secrets) from None
            data, latency_ms = _judge(resp, (time.perf_counter() - start) * 1000.0, secrets)
        except _Failure as failure:
            wait = state.after_failure(failure)
            if wait is not None:
                await asyncio.sleep(wait)
                state.check_after_wait(failure)
            continue
        return Response(data=data, latency_ms=latency_ms, attempts=state.succeeded())
