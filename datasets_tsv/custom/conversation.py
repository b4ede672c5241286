"""Conversation rows: Volcengine Ark evaluation data, EvalScope general_qa, and QA rows with a system prompt.

Shapes (one per row; a file may mix the first two):
- single turn: `system` | `system_prompt` (optional), `prompt` | `query` | `question`, `answer` |
  `reference_response` | `response` (optional; see fields.py for when `response` counts), `parameters`
  (optional), `session_id` (optional);
- multi-turn (Ark jsonl): `messages` = [{"role": "system"|"user"|"assistant", "content": text}, ...] ending with a
  user turn, `answer` (the reference reply to that last user turn, optional), `parameters` (optional);
- multi-turn sessions over several rows (Ark's Excel layout, here as csv/jsonl rows): when a `session_id` value
  repeats, its rows (in file order) are one conversation: each row's query is a user turn, a non-last row's
  `response` (optional) the assistant's earlier reply; the last row's `reference_response` is the answer and its
  `parameters` apply. Rows of a session must agree on the system prompt; a non-last row may not carry a
  reference answer, the last may not carry a `response`.

Every row keeps its conversation in the `messages` column (single-turn rows get [system?, user]) so the prediction
record shows it; `question` holds the last user turn's text, and `parameters` the object the file gave (a CSV/Excel
cell's text read as the dict it spells) for Ark's output records (vlmkit.outputs.ark). `parameters` (temperature,
top_p, max_tokens, stop, ...) are checked against vlmkit.core.model_calls.GENERATION_PARAMS and reach the model per
request through `generation_params`, overriding the run's defaults (Ark: the dataset's parameters win); see
fields.parse_parameters for the Ark keys that are dropped.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from vlmkit.core.cells import is_blank
from vlmkit.core.message import ROLES, MessageError, normalise_conversation

from datasets_tsv.custom.fields import (
    QUESTION_KEYS,
    SYSTEM_KEYS,
    answer_keys,
    literal_dict,
    parse_max_tokens,
    pick,
    require_question,
)
from datasets_tsv.custom.reading import CustomDataError, Record, where
from datasets_tsv.custom.text_mcq_qa import Built, answer_value, finish_answers, row_params


def conversation_row(path: Path, record: Record) -> dict[str, Any]:
    fields = record.fields
    if "messages" in fields:
        messages = _messages(path, record, fields["messages"])
        question = next(t["content"] for t in reversed(messages) if t["role"] == "user")
        row: dict[str, Any] = {"question": question if isinstance(question, str) else _text_of(question)}
        consumed = {"messages", "max_tokens", *answer_keys(fields)}
    else:
        question = require_question(path, record)
        _, system = pick(fields, SYSTEM_KEYS)
        messages = [{"role": "system", "content": str(system)}] if system is not None else []
        messages.append({"role": "user", "content": question})
        row = {"question": question}
        if system is not None:
            row["system"] = str(system)
        consumed = {*QUESTION_KEYS, *SYSTEM_KEYS, "max_tokens", *answer_keys(fields)}
    row["messages"] = messages
    row["answer"] = answer_value(path, record)
    max_tokens = parse_max_tokens(path, record)
    if max_tokens is not None:
        row["max_tokens"] = max_tokens
    for key, value in fields.items():
        if key not in consumed and key not in row:
            row[key] = value
    if isinstance(row.get("parameters"), str) and not is_blank(row["parameters"]):
        # a CSV/Excel cell: kept as the object it spells (Ark's output records echo it)
        row["parameters"] = literal_dict(row["parameters"], where(path, record.line, "parameters"))
    return row


def _messages(path: Path, record: Record, raw: Any) -> list[dict[str, Any]]:
    here = where(path, record.line, "messages")
    if not isinstance(raw, list) or not raw:
        raise CustomDataError(f"{here}: must be a non-empty list of {{role, content}} turns")
    turns = []
    for pos, turn in enumerate(raw):
        if not isinstance(turn, dict) or "role" not in turn:
            raise CustomDataError(f"{here}[{pos}]: a turn is an object with `role` and `content`")
        if turn["role"] not in ROLES:
            raise CustomDataError(f"{here}[{pos}]: unknown role {turn['role']!r} (expected one of {', '.join(ROLES)})")
        if turn.get("content") is None:
            raise CustomDataError(f"{here}[{pos}]: no `content`")
        turns.append({"role": turn["role"], "content": turn["content"]})
    if turns[-1]["role"] != "user":
        raise CustomDataError(f"{here}: must end with a user turn (the last turn is {turns[-1]['role']!r})")
    try:
        normalise_conversation(turns)  # validates roles and parts
    except MessageError as exc:
        raise CustomDataError(f"{here}: {exc}") from None
    return turns


def _text_of(parts: Any) -> str:
    return "\n".join(p.get("value", "") for p in parts if isinstance(p, dict) and p.get("type") == "text")


def sessions(path: Path, records: list[Record]) -> list[Record]:
    """Ark's Excel multi-turn layout: rows sharing a repeated `session_id` become one `messages` record."""
    groups: dict[str, list[Record]] = {}
    for record in records:
        sid = record.fields.get("session_id")
        if not is_blank(sid) and "messages" not in record.fields:
            groups.setdefault(str(sid).strip(), []).append(record)
    if all(len(g) == 1 for g in groups.values()):
        return records
    first_of = {id(g[0]): g for g in groups.values() if len(g) > 1}
    later = {id(r) for g in first_of.values() for r in g[1:]}
    out = []
    for record in records:
        if id(record) in later:
            continue
        group = first_of.get(id(record))
        out.append(_session(path, group) if group else record)
    return out


def _session(path: Path, group: list[Record]) -> Record:
    systems = {str(v).strip() for r in group if (v := pick(r.fields, SYSTEM_KEYS)[1]) is not None}
    if len(systems) > 1:
        session = group[0].fields["session_id"]
        raise CustomDataError(
            f"{where(path, group[0].line, 'system_prompt')}: rows of session {session!r} differ in their system prompt"
        )
    messages: list[dict[str, Any]] = [{"role": "system", "content": systems.pop()}] if systems else []
    for pos, record in enumerate(group):
        last = pos == len(group) - 1
        messages.append({"role": "user", "content": require_question(path, record)})
        reference = pick(record.fields, ("answer", "reference_response"))
        reply = record.fields.get("response")
        if not last:
            if reference[0] is not None:
                raise CustomDataError(
                    f"{where(path, record.line, reference[0])}: only the last row of session "
                    f"{record.fields['session_id']!r} may hold the reference answer"
                )
            if not is_blank(reply):
                messages.append({"role": "assistant", "content": str(reply)})
        elif not is_blank(reply):
            raise CustomDataError(
                f"{where(path, record.line, 'response')}: the last row of a session is for the model's reply; "
                "leave `response` empty"
            )
    last = group[-1].fields
    fields = {k: v for k, v in last.items() if k not in (*QUESTION_KEYS, *SYSTEM_KEYS, "response")}
    fields["messages"] = messages
    return Record(fields, group[-1].line)


def build_conversation(path: Path, records: list[Record]) -> Built:
    built = Built([], [], [], "conversation", "qa")
    built.records = sessions(path, records)
    for record in built.records:
        built.rows.append(conversation_row(path, record))
        built.lines.append(record.line)
        built.params.append(row_params(path, record, built))
    if len(built.rows) != len(records):
        built.details["sessions_merged"] = len(records) - len(built.rows)
    finish_answers(path, built)
    return built
