"""How a served model's requests are authorised: the one place an API key becomes request headers.

A provider with another header (Azure's `api-key`, a gateway's own scheme) changes this module only; the API model
and `vlmkit perf` both take their headers from `auth_headers`.
"""

from __future__ import annotations


def auth_headers(api_key: str | None) -> dict[str, str]:
    """The headers that carry `api_key` (none without a key)."""
    return {"Authorization": f"Bearer {api_key}"} if api_key else {}
