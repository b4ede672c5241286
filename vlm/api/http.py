"""The call policy for API models: JSON POST with retries over a `vlm.api.connection.Client`, and the texts of
its errors.

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

import email.utils
import json
import logging
import random
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from vlm.api.connection import Client, ConnectionFailed, Reply, ResponseTooLarge, Timeout
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


def _attempt(
    client: Client,
    url: str,
    body: bytes,
    headers: dict[str, str],
    timeout: float,
    secrets: Sequence[str],
) -> tuple[dict[str, Any], float]:
    start = time.perf_counter()
    try:
        resp = client.post(url, body, headers, timeout)
    except Timeout as exc:
        raise _Failure("timeout", exc.reason, None, True) from None
    except ResponseTooLarge as exc:
        raise _Failure("bad_response", exc.reason, None, False) from None
    except ConnectionFailed as exc:
        raise _Failure("connection", f"connection failed ({one_line(exc.reason, 200, secrets)})", None, True) from None
    latency_ms = (time.perf_counter() - start) * 1000.0
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
        raise _Failure("bad_response", f"HTTP {status} with a body that is not JSON: {snippet!r}", status, False) from None
    if not isinstance(data, dict):
        raise _Failure("bad_response", f"HTTP {status} with JSON that is not an object", status, False)
    failure = _error_in_answer(data, status, secrets)
    if failure is not None:
        raise failure
    return data, latency_ms


def encode_body(body: dict[str, Any]) -> bytes:
    """The request body as UTF-8 JSON; ModelCallError("bad_input") for a value JSON cannot carry (NaN, an object):
    asking again could not help."""
    try:
        return json.dumps(body, allow_nan=False).encode("utf-8")
    except (TypeError, ValueError) as exc:
        raise ModelCallError("bad_input", f"the request body is not valid JSON: {exc}") from None


def post_json(
    client: Client,
    url: str,
    body: dict[str, Any],
    *,
    headers: dict[str, str],
    timeout: float,
    policy: RetryPolicy,
    secrets: Sequence[str] = (),
    sleep: Callable[[float], None] = time.sleep,
    abandoned: Callable[[], bool] | None = None,
) -> Response:
    """POST `body` as JSON and return the decoded object; ModelCallError after the last failed attempt.

    abandoned: asked before each retry; True (the caller closed the model: an interrupted or stopped run left this
    call behind) ends the call with kind "cancelled" instead of retrying on in the background."""
    attempts = policy.retries + 1
    payload = encode_body(body)
    headers = {"Content-Type": "application/json", **headers}
    for attempt in range(attempts):
        try:
            data, latency_ms = _attempt(client, url, payload, headers, timeout, secrets)
            return Response(data=data, latency_ms=latency_ms, attempts=attempt + 1)
        except _Failure as failure:
            if not failure.retry or attempt + 1 >= attempts:
                tries = f" after {attempt + 1} attempts" if attempt else ""
                raise ModelCallError(failure.kind, f"{url}: {failure.message}{tries}", failure.status) from None
            if abandoned is not None and abandoned():
                raise ModelCallError("cancelled", f"{url}: {failure.message}; not retried: the model was closed",
                                     failure.status) from None
            wait = policy.delay(attempt, failure.retry_after)
            log.warning(
                "%s: %s; retrying in %.1f s (attempt %d of %d)", url, failure.message[:120], wait, attempt + 2, attempts
            )
            sleep(wait)
            if abandoned is not None and abandoned():
                raise ModelCallError("cancelled", f"{url}: {failure.message}; not retried: the model was closed",
                                     failure.status) from None
    raise AssertionError("unreachable")  # the loop returns or raises
