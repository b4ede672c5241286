"""What one model call gives back: text with usage, or a typed error. Never an error string as a prediction."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

# HTTP statuses that the same request will meet again however often it is sent (a wrong model id, path, key or
# parameter): a run whose first samples all fail with one of these stops instead of failing every row.
FATAL_STATUSES = frozenset({400, 401, 403, 404, 422})

# Per-request generation parameters a dataset row may set (Ark `parameters`, AISBench per-row `max_tokens`).
# Models map them onto their own API: an OpenAI body takes them as they are; transformers' generate takes
# max_tokens as max_new_tokens and stop as stop_strings.
GENERATION_PARAMS = frozenset(
    {"max_tokens", "temperature", "top_p", "top_k", "stop", "seed", "presence_penalty", "frequency_penalty",
     "repetition_penalty", "ignore_eos"}
)


def check_params(params: dict[str, Any] | None, where: str = "parameters") -> dict[str, Any]:
    """The params as a dict; ValueError naming an unknown key (so a typo never passes silently)."""
    params = dict(params or {})
    unknown = sorted(set(params) - GENERATION_PARAMS)
    if unknown:
        raise ValueError(f"{where}: unknown generation parameter(s) {', '.join(unknown)}; known: {', '.join(sorted(GENERATION_PARAMS))}")
    return params


@dataclass
class Usage:
    input_tokens: int = 0
    output_tokens: int = 0
    reasoning_tokens: int = 0

    def add(self, other: "Usage") -> None:
        self.input_tokens += other.input_tokens
        self.output_tokens += other.output_tokens
        self.reasoning_tokens += other.reasoning_tokens

    def to_dict(self) -> dict[str, int]:
        # spelled out: dataclasses.asdict deep-copies and cost a fifth of a journalled record's time
        return {"input_tokens": self.input_tokens, "output_tokens": self.output_tokens,
                "reasoning_tokens": self.reasoning_tokens}


@dataclass
class Generation:
    """One successful answer."""

    text: str
    usage: Usage | None = None
    latency_ms: float | None = None
    extra: dict[str, Any] = field(default_factory=dict)  # e.g. the model name a service echoed


class ModelCallError(RuntimeError):
    """A model call that failed for good (after retries). `kind` is a short machine-readable class of failure:
    "http_4xx", "http_5xx", "rate_limited", "timeout", "connection", "bad_response", "unsupported_input", ...
    """

    def __init__(self, kind: str, message: str, status: int | None = None) -> None:
        super().__init__(message)
        self.kind = kind
        self.status = status

    @property
    def fatal(self) -> bool:
        """True when retrying cannot help: the status is one of FATAL_STATUSES."""
        return self.status in FATAL_STATUSES

    def to_record(self) -> dict[str, Any]:
        return {"kind": self.kind, "message": str(self), "status": self.status}


class UnsupportedInputError(ModelCallError):
    """A message holds a modality (or more media) than the model can take: fail the row, never drop silently."""

    def __init__(self, message: str) -> None:
        super().__init__("unsupported_input", message)


def error_record(exc: BaseException) -> dict[str, Any]:
    """The error dict stored in a prediction record for any exception from a model call: a ModelCallError's own
    kind; "bad_media" for an image that cannot be read or sent; "bad_input" for bad dataset content."""
    # imported here: vlmkit.core.errors gathers the user-error classes of many modules, and this bottom-layer module must
    # stay importable from any of them
    from vlmkit.core.errors import DataError
    from vlmkit.core.media import MediaError

    if isinstance(exc, ModelCallError):
        return exc.to_record()
    if isinstance(exc, MediaError):
        return {"kind": "bad_media", "message": str(exc), "status": None}
    if isinstance(exc, DataError):
        return {"kind": "bad_input", "message": str(exc), "status": None}
    return {"kind": "exception", "message": f"{exc.__class__.__name__}: {exc}", "status": None}
