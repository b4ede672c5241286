"""Keeping API keys out of every file and log line: the one place that knows what a secret looks like.

A key reaches vlmkit three ways (a flag, an environment variable, a config file); whichever way, what vlmkit writes
passes through `scrub` (any text) or `redacted_argv` (the command line). Both replace the value itself wherever it
appears, so an abbreviated flag (`--api-k`, which argparse accepts) or a key pasted into another argument is still
caught.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

MASK = "***"
# Flags whose value is a secret, each with its shortest spelling argparse could accept as an abbreviation
# (`--api-k`; `--api` would be ambiguous with `--api-base`, and `--judge` is a flag of its own).
SECRET_FLAGS = {"--api-key": "--api-k", "--judge-api-key": "--judge-api-k"}


def scrub(text: str, secrets: Iterable[str | None]) -> str:
    """text with every non-empty secret replaced by ***."""
    for secret in secrets:
        if secret:
            text = text.replace(secret, MASK)
    return text


def one_line(text: str, limit: int, secrets: Iterable[str | None] = ()) -> str:
    """Outside text (a server's message, a model's answer) as quoted in one line of an error or a summary: every
    secret scrubbed first (a cut through a key would leave a prefix that no longer matches it), white space runs
    collapsed, cut to `limit` characters."""
    text = " ".join(scrub(str(text), secrets).split())
    return text if len(text) <= limit else text[: limit - 3] + "..."


def _secret_flag(arg: str) -> str | None:
    """The secret flag that arg names, whole or abbreviated as argparse allows; None for any other arg."""
    name = arg.split("=", 1)[0]
    return next((flag for flag, shortest in SECRET_FLAGS.items() if flag.startswith(name) and name.startswith(shortest)), None)


def redacted_argv(argv: Sequence[str], secrets: Iterable[str | None] = ()) -> list[str]:
    """The command line with the value of every secret flag replaced, and any known secret value scrubbed."""
    secrets = [s for s in secrets if s]
    out: list[str] = []
    hide = False
    for arg in argv:
        if hide:
            out.append(MASK)
            hide = False
            continue
        flag = _secret_flag(arg) if arg.startswith("--") else None
        if flag is not None and "=" in arg:
            out.append(arg.split("=", 1)[0] + "=" + MASK)
        else:
            out.append(scrub(arg, secrets))
            hide = flag is not None
    return out
