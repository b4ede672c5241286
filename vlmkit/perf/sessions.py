"""`--sessions FILE`: multi-turn conversations replayed turn by turn, the history growing.

A session is a conversation from the file. Its user turns are sent one after another: turn k+1 goes out when the answer
to turn k has ended (plus `--think-time` seconds), carrying the whole conversation so far. The history's assistant
turns are the file's own replies, not the answers streamed during the run: so every body is built before the clock
starts (as every other request of `vlmkit perf` is), and two runs send the same bytes whatever the server answered.
A turn that fails ends its session (a user with no answer does not ask the next question): `sessions.cut_short`.

File shapes (jsonl, one conversation a line; blank lines skipped):
- Ark conversation jsonl: `{"messages": [{"role": "system"|"user"|"assistant", "content": TEXT | [parts]}, ...]}`;
  parts are OpenAI's (`{"type": "text", "text"}`, `{"type": "image_url", "image_url": {"url"}}`) or vlmkit's
  (`{"type": "image", "value"}`); an `answer` after a last user turn is not sent (it is that turn's reference);
- ShareGPT: `{"conversations": [{"from": "system"|"human"|"user"|"gpt"|"assistant", "value": TEXT}, ...],
  "image" | "images": PATH | [PATHS]}`: each `<image>` in a turn's text is the next image there; images no
  placeholder claims go first in the first user turn. Relative paths are read from the file's folder.
A line's `id` (or `session_id`) names the session in perf_requests.jsonl (default: its line number).

In a level, `--concurrency N` is N conversations at once (closed loop: a slot starts the next session when its
conversation is over); `--request-rate R` starts R sessions a second; `--num-requests` counts sessions (default: each
session of the file once). Per turn the summary gives TTFT and prompt tokens (the server's usage), and the growth of
the TTFT median with the history: the least-squares slope over the turns of median TTFT against mean prompt tokens.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from vlmkit.perf.groups import KeyedTally
from vlmkit.perf.jsonl_input import json_objects
from vlmkit.perf.options import PerfInputError

ROLE_OF = {"system": "system", "human": "user", "user": "user", "gpt": "assistant", "assistant": "assistant"}
IMAGE_MARK = "<image>"


class Session:
    """One conversation: its name and its turns (role + vlmkit parts)."""

    __slots__ = ("name", "turns")

    def __init__(self, name: str, turns: list[dict[str, Any]]) -> None:
        self.name = name
        self.turns = turns

    def prefixes(self) -> list[list[dict[str, Any]]]:
        """The conversation as sent at each user turn: every turn up to and including that one."""
        return [self.turns[: i + 1] for i, turn in enumerate(self.turns) if turn["role"] == "user"]


def _bad(path: Path, line: int, field: str, why: str) -> PerfInputError:
    return PerfInputError(f"{path}: line {line}: {field}: {why}")


def _openai_part(path: Path, line: int, field: str, part: Any) -> dict[str, str]:
    if isinstance(part, str):
        return {"type": "text", "value": part}
    if not isinstance(part, dict):
        raise _bad(path, line, field, f"a part must be an object or a string, got {type(part).__name__}")
    kind = part.get("type")
    if kind == "text" and isinstance(part.get("text"), str):
        return {"type": "text", "value": part["text"]}
    if kind in ("image_url", "video_url", "audio_url"):
        url = (part.get(kind) or {}).get("url") if isinstance(part.get(kind), dict) else part.get(kind)
        if not isinstance(url, str) or not url:
            raise _bad(path, line, field, f"a {kind} part needs {kind}.url")
        return {"type": kind.removesuffix("_url"), "value": url}
    if kind in ("text", "image", "video", "audio") and isinstance(part.get("value"), str):
        return {"type": kind, "value": part["value"]}
    raise _bad(path, line, field, f"unknown part {json.dumps(part)[:80]}")


def _media_path(folder: Path, value: str) -> str:
    if value.startswith("data:") or "://" in value:
        return value
    candidate = Path(value)
    return str(candidate if candidate.is_absolute() else folder / candidate)


def _from_messages(path: Path, line: int, messages: Any) -> list[dict[str, Any]]:
    if not isinstance(messages, list) or not messages:
        raise _bad(path, line, "messages", "expected a non-empty list of {role, content}")
    turns = []
    for i, message in enumerate(messages):
        field = f"messages[{i}]"
        if not isinstance(message, dict) or message.get("role") not in ("system", "user", "assistant"):
            raise _bad(path, line, field, "expected {role: system|user|assistant, content}")
        content = message.get("content")
        if isinstance(content, str):
            parts = [{"type": "text", "value": content}]
        elif isinstance(content, list) and content:
            parts = [_openai_part(path, line, f"{field}.content", p) for p in content]
            parts = [{**p, "value": _media_path(path.parent, p["value"])} if p["type"] != "text" else p for p in parts]
        else:
            raise _bad(path, line, f"{field}.content", "expected text or a non-empty list of parts")
        turns.append({"role": message["role"], "content": parts})
    return turns


def _from_sharegpt(path: Path, line: int, record: dict[str, Any]) -> list[dict[str, Any]]:
    conversations = record["conversations"]
    if not isinstance(conversations, list) or not conversations:
        raise _bad(path, line, "conversations", "expected a non-empty list of {from, value}")
    images = record.get("images", record.get("image")) or []
    images = [images] if isinstance(images, str) else images
    if not isinstance(images, list) or not all(isinstance(x, str) and x for x in images):
        raise _bad(path, line, "images", "expected a path or a list of paths")
    pending = [_media_path(path.parent, x) for x in images]
    turns = []
    for i, message in enumerate(conversations):
        field = f"conversations[{i}]"
        if not isinstance(message, dict) or message.get("from") not in ROLE_OF or not isinstance(message.get("value"), str):
            raise _bad(path, line, field, f"expected {{from: {'|'.join(ROLE_OF)}, value: text}}")
        parts: list[dict[str, str]] = []
        pieces = message["value"].split(IMAGE_MARK)
        for k, piece in enumerate(pieces):
            if k:
                if not pending:
                    raise _bad(path, line, field, f"more {IMAGE_MARK} marks than images")
                parts.append({"type": "image", "value": pending.pop(0)})
            if piece.strip():
                parts.append({"type": "text", "value": piece.strip()})
        turns.append({"role": ROLE_OF[message["from"]], "content": parts})
    if pending:  # images no mark claimed: first in the first user turn
        first = next((t for t in turns if t["role"] == "user"), None)
        if first is None:
            raise _bad(path, line, "conversations", "no user turn")
        first["content"][:0] = [{"type": "image", "value": x} for x in pending]
    for i, turn in enumerate(turns):
        if not turn["content"]:
            raise _bad(path, line, f"conversations[{i}]", "empty turn")
    return turns


def read_sessions(path: str | Path) -> list[Session]:
    """Every conversation of the file (see the module docstring); one line naming the file, line and field for one
    that cannot be replayed."""
    path = Path(path)
    sessions = []
    for number, record in json_objects(path, "--sessions"):
        if "messages" in record:
            turns = _from_messages(path, number, record["messages"])
        elif "conversations" in record:
            turns = _from_sharegpt(path, number, record)
        else:
            raise _bad(path, number, "messages", "expected `messages` (Ark) or `conversations` (ShareGPT)")
        if not any(t["role"] == "user" for t in turns):
            raise _bad(path, number, "messages", "no user turn to send")
        name = record.get("id", record.get("session_id", number))
        sessions.append(Session(str(name), turns))
    if not sessions:
        raise PerfInputError(f"--sessions {path}: no conversations in the file")
    return sessions


class SessionsSource:
    """The runner's dataset protocol over the session file: one row per (session, user turn), in order, so that
    build_requests builds every turn's body; `turn_rows` says which rows make each session."""

    def __init__(self, path: str | Path, sessions: list[Session]) -> None:
        import hashlib

        import pandas as pd

        self.name = f"sessions:{Path(path).name}"
        self.file_md5 = hashlib.md5(Path(path).read_bytes()).hexdigest()
        self.prompts: list[list[dict[str, Any]]] = []
        self.index: list[str] = []
        self.turn_rows: list[list[int]] = []
        for session in sessions:
            rows = []
            for k, prefix in enumerate(session.prefixes()):
                rows.append(len(self.prompts))
                self.prompts.append(prefix)
                self.index.append(f"{session.name}#{k}")
            self.turn_rows.append(rows)
        self.data = pd.DataFrame({"index": self.index})

    def line(self, i: int) -> dict[str, Any]:
        return {"index": self.index[i], "row": i}

    def build_prompt(self, line: dict[str, Any]) -> list[dict[str, Any]]:
        return [dict(turn, content=list(turn["content"])) for turn in self.prompts[line["row"]]]

    def generation_params(self, line: dict[str, Any]) -> None:
        return None

    def info(self) -> dict[str, Any]:
        turns = [len(rows) for rows in self.turn_rows]
        return {"name": self.name, "n_total": len(self.turn_rows), "sessions": len(turns), "turns": sum(turns),
                "most_turns": max(turns)}


class TurnTally(KeyedTally):
    """Per turn of a session (the key: 0 = the first turn), and how many sessions ended at a failed turn."""

    def __init__(self) -> None:
        super().__init__()
        self.cut_short = 0

    def merge(self, other: "TurnTally") -> None:  # type: ignore[override]
        super().merge(other)
        self.cut_short += other.cut_short

    def summary(self) -> dict[str, Any]:
        rows = [{"turn": turn + 1, **self.row(turn)} for turn in sorted(self.groups)]
        return {"turns": rows, "cut_short": self.cut_short, "ttft_growth": ttft_growth(rows)}


def ttft_growth(rows: list[dict[str, Any]]) -> dict[str, Any] | None:
    """How TTFT grows with the history: the least-squares slope of the turns' median TTFT against their mean prompt
    tokens (ms per 1,000 prompt tokens), and the last turn's median over the first's. None with fewer than two turns
    that have both figures."""
    points = [(r["prompt_tokens_mean"], r["ttft_ms"]["median"]) for r in rows
              if r["prompt_tokens_mean"] is not None and r["ttft_ms"]["median"] is not None]
    if len(points) < 2:
        return None
    n = len(points)
    mx = sum(x for x, _ in points) / n
    my = sum(y for _, y in points) / n
    sxx = sum((x - mx) ** 2 for x, _ in points)
    slope = sum((x - mx) * (y - my) for x, y in points) / sxx if sxx else None
    first, last = points[0][1], points[-1][1]
    return {"ms_per_1k_prompt_tokens": slope * 1000 if slope is not None else None,
            "last_over_first": last / first if first else None, "turns": n}
