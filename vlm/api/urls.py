"""Where a served model is: the base URL(s) an `--api-base` names, and the endpoint URLs beside them.

One server: `http://host:8000/v1` or the full `.../chat/completions` URL. Several servers of one model (replicas,
vlm.api.replicas): URLs separated by commas, or the path of a text file holding one URL a line (blank lines and lines
starting with `#` skipped). Every URL must be http(s) with a host; one that holds credentials is refused without
being echoed (the key goes in `api_key`).
"""

from __future__ import annotations

import os
from urllib.parse import urlsplit, urlunsplit

from vlmkit.core.errors import ConfigError

DEFAULT_API_BASE = "https://api.openai.com/v1"
_ENDPOINT = "/chat/completions"


def _not_a_url(api_base: str) -> ConfigError:
    """ConfigError for an api_base that is not an http(s) URL, with the spelling that was probably meant."""
    text = api_base.strip()
    if "://" not in text and text and not text.startswith("/"):
        host, _, path = text.partition("/")
        hint = f"write http://{host}/{path.rstrip('/') or 'v1'}"
    else:
        hint = "write a URL such as http://127.0.0.1:8000/v1"
    return ConfigError(f"--api-base {api_base!r} is not an http(s) URL; {hint}")


def api_base_list(api_base: str) -> list[str]:
    """The servers an api_base names (`--api-base`): one URL; several separated by commas (replicas of one model,
    `http://a:8000/v1,http://b:8000/v1`); or the path of a text file holding one URL a line (blank lines and lines
    starting with `#` skipped), for a long list. Each URL is checked by `chat_completions_url`; a bad one in a file
    is named by its line. The same URL twice counts once. ConfigError (one line) for an empty list."""
    text = api_base.strip()
    if text and "://" not in text and "," not in text and os.path.isfile(os.path.expanduser(text)):
        path = os.path.expanduser(text)
        try:
            with open(path, encoding="utf-8") as handle:
                lines = handle.read().splitlines()
        except (OSError, UnicodeDecodeError) as exc:
            raise ConfigError(f"--api-base {text}: the list of servers cannot be read ({exc})") from None
        urls = []
        for number, line in enumerate(lines, 1):
            line = line.strip()
            if not line or line.startswith("#"):
                continue
            try:
                _one_url(line)
            except ConfigError as exc:
                raise ConfigError(f"--api-base {text}, line {number}: {exc}") from None
            urls.append(line)
        if not urls:
            raise ConfigError(f"--api-base {text}: the file names no server (one URL a line)")
        return list(dict.fromkeys(urls))
    urls = [u.strip() for u in text.split(",") if u.strip()] if "," in text else [text]
    if not urls:
        raise ConfigError(f"--api-base {api_base!r} names no server; write a URL such as http://127.0.0.1:8000/v1")
    for url in urls:
        _one_url(url)
    return list(dict.fromkeys(urls))


def replica_urls(api_base: str) -> list[tuple[str, str]]:
    """(base URL, chat-completions URL) of every server an api_base names (`api_base_list`), duplicates dropped."""
    return list(dict.fromkeys(_one_url(u) for u in api_base_list(api_base)))


def chat_completions_url(api_base: str) -> tuple[str, str]:
    """(base URL, chat-completions URL) from a base given as `.../v1` or as the full `.../chat/completions` URL; for an
    api_base naming several servers (`api_base_list`), every one is checked and the first one's are returned.

    ConfigError (a ValueError) for anything that is not an http(s) URL with a host, such as `127.0.0.1:8000`
    without its scheme. Credentials written into the URL (`user:pass@host`) are refused: the key goes in `api_key`.
    """
    return replica_urls(api_base)[0]


def _one_url(api_base: str) -> tuple[str, str]:
    """(base URL, chat-completions URL) of one server (see chat_completions_url)."""
    try:
        parts = urlsplit(api_base.strip())
        ok = parts.scheme in ("http", "https") and bool(parts.hostname)
        parts.port  # noqa: B018 - raises ValueError for a port that is not a number in range
    except ValueError:
        ok = False
    if "@" in api_base or (ok and (parts.username or parts.password)):  # never echo what may be a key
        raise ConfigError("--api-base must not hold credentials; pass the key with --api-key (or OPENAI_API_KEY)")
    if not ok:
        raise _not_a_url(api_base)
    path = parts.path.rstrip("/")
    if path.endswith(_ENDPOINT):
        path = path[: -len(_ENDPOINT)]
    base = urlunsplit((parts.scheme, parts.netloc, path, parts.query, ""))
    url = urlunsplit((parts.scheme, parts.netloc, path + _ENDPOINT, parts.query, ""))
    return base, url


def models_url(base_url: str) -> str:
    """The `/models` URL beside chat completions (a query string of the base, e.g. an api-version, is kept)."""
    parts = urlsplit(base_url)
    return urlunsplit((parts.scheme, parts.netloc, parts.path.rstrip("/") + "/models", parts.query, ""))
