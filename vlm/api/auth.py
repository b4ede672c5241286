"""How a served model's requests are authorised: the one place an API key becomes request headers.

A provider with another header (Azure's `api-key`, a gateway's own scheme) overrides the API model's classmethod
`auth_headers` (vlm.api.openai_compat.OpenAICompatModel), which defaults to `auth_headers` here; `vlmkit perf` takes
its headers from the same classmethod.

A key is checked before it goes into a header (`checked_key`): white space around it (the newline YAML's `|` leaves,
a space pasted with it) is stripped with a one-line note, and a key holding a control character (`\\r\\n` would add
a header of its own to every request) is refused in one line. Neither line ever shows the key.
"""

from __future__ import annotations

import logging
import unicodedata

from vlmkit.core.errors import ConfigError

log = logging.getLogger("vlmkit")
_CONTROL = frozenset({"Cc", "Zl", "Zp"})  # control characters (C0, DEL, C1) and the Unicode line/paragraph separators


def checked_key(api_key: str | None) -> str | None:
    """The key as it can go into a header: surrounding white space stripped (noted in one line), None when nothing
    is left; ConfigError for a key holding a control character (CR, LF, NUL, ...), or one that is not a string."""
    if api_key is None:
        return None
    if not isinstance(api_key, str):
        raise ConfigError(f"the API key must be a string, not {type(api_key).__name__}")
    key = api_key.strip()
    if key != api_key:
        log.warning("the API key had white space around it (a trailing newline?); it was stripped")
    if any(unicodedata.category(c) in _CONTROL for c in key):
        raise ConfigError(
            "the API key holds control characters (a line break or similar) and was refused: it would corrupt every "
            "request's headers; check --api-key, OPENAI_API_KEY or the config file"
        )
    return key or None


def auth_headers(api_key: str | None) -> dict[str, str]:
    """The headers that carry `api_key` (none without a key): `Authorization: Bearer <key>`, the key checked first
    (`checked_key`)."""
    key = checked_key(api_key)
    return {"Authorization": f"Bearer {key}"} if key else {}
