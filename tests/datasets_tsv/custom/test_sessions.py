"""datasets_tsv.custom.conversation.sessions called directly: rows sharing a repeated session_id become one
conversation (user turns, earlier replies, the last row's answer and parameters), and the one-line errors of rows
that disagree. Expected conversations written out by hand."""

from __future__ import annotations

from pathlib import Path

import pytest

from datasets_tsv.custom.conversation import sessions
from datasets_tsv.custom.reading import CustomDataError, Record

PATH = Path("ark.csv")


def _rec(line: int, **fields) -> Record:
    return Record(dict(fields), line)


def test_rows_of_a_session_become_one_conversation_in_file_order() -> None:
    records = [
        _rec(2, session_id="s1", system_prompt="Be brief.", query="Hi", response="Hello!"),
        _rec(3, session_id="lone", query="Alone"),
        _rec(4, session_id=" s1 ", system_prompt="Be brief.", query="How are you?", response=None),
        _rec(5, session_id="s1", query="Bye", reference_response="Goodbye", parameters='{"temperature": 0}'),
    ]
    out = sessions(PATH, records)
    assert [r.line for r in out] == [5, 3]  # the session where its first row was, as its last row's line
    merged = out[0]
    assert merged.fields["messages"] == [
        {"role": "system", "content": "Be brief."},
        {"role": "user", "content": "Hi"},
        {"role": "assistant", "content": "Hello!"},
        {"role": "user", "content": "How are you?"},  # no earlier reply given: none added
        {"role": "user", "content": "Bye"},
    ]
    assert merged.fields["reference_response"] == "Goodbye" and merged.fields["parameters"] == '{"temperature": 0}'
    assert "query" not in merged.fields and "response" not in merged.fields
    assert out[1] is records[1]  # a session of one row is left as it is


def test_no_repeated_session_leaves_the_records_alone() -> None:
    records = [_rec(2, session_id="a", query="x"), _rec(3, session_id="b", query="y"), _rec(4, query="z")]
    assert sessions(PATH, records) is records
    with_messages = [_rec(2, session_id="a", messages=[]), _rec(3, session_id="a", messages=[])]
    assert sessions(PATH, with_messages) is with_messages  # rows that carry messages are never merged


@pytest.mark.parametrize(
    "records, message",
    [
        ([_rec(2, session_id="s", system_prompt="A", query="q1"),
          _rec(3, session_id="s", system_prompt="B", query="q2")],
         r"^ark\.csv: line 2, field system_prompt: rows of session 's' differ in their system prompt$"),
        ([_rec(2, session_id="s", query="q1", reference_response="early"), _rec(3, session_id="s", query="q2")],
         r"^ark\.csv: line 2, field reference_response: only the last row of session 's' may hold the reference "
         r"answer$"),
        ([_rec(2, session_id="s", query="q1"), _rec(3, session_id="s", query="q2", response="filled")],
         r"^ark\.csv: line 3, field response: the last row of a session is for the model's reply; leave `response` "
         r"empty$"),
    ],
)
def test_inconsistent_sessions_are_one_line_errors(records: list[Record], message: str) -> None:
    with pytest.raises(CustomDataError, match=message):
        sessions(PATH, records)
