"""datasets_tsv.custom.text_mcq_qa.detect_format called directly on hand-made records: the order of the format
rules (media rows, conversations, option columns, Ark keys, plain QA), what data_type overrides, and its errors."""

from __future__ import annotations

from pathlib import Path

import pytest

from datasets_tsv.custom.reading import CustomDataError, Record
from datasets_tsv.custom.text_mcq_qa import detect_format

PATH = Path("data.jsonl")


def _recs(*rows: dict) -> list[Record]:
    return [Record(dict(row), line) for line, row in enumerate(rows, start=1)]


MCQ = ({"question": "q", "A": "x", "B": "y", "answer": "A"}, {"question": "q2", "A": "x", "B": "y", "C": "z"})


@pytest.mark.parametrize(
    "rows, data_type, expected",
    [
        (MCQ, None, ("text", "mcq", ("A", "B", "C"))),
        (MCQ, "mcq", ("text", "mcq", ("A", "B", "C"))),
        (MCQ, "qa", ("text", "qa", ())),  # qa never makes an MCQ
        (({"question": "q", "answer": "a"},), None, ("text", "qa", ())),
        (({"query": "q", "response": "a"},), None, ("conversation", "qa", ())),  # an Ark / EvalScope key
        (({"question": "q", "session_id": "s"},), "qa", ("conversation", "qa", ())),
        (({"messages": [{"role": "user", "content": "hi"}]}, {"question": "q"}), None, ("conversation", "qa", ())),
        # media rows first, even with option columns; some row is enough
        (({"question": "q"}, {"type": "image", "path": ["a.png"], "question": "q"}), None, ("mm_custom", "qa", ())),
        (({"image": "a.png", "question": "q", "A": "x", "B": "y"},), None, ("mm_custom", "mcq", ("A", "B"))),
        (({"image": "a.png", "question": "q", "A": "x", "B": "y"},), "qa", ("mm_custom", "qa", ())),
        # option columns beat Ark keys
        (({"query": "q", "A": "x", "B": "y", "answer": "B"},), None, ("text", "mcq", ("A", "B"))),
    ],
)
def test_format_rules_in_order(rows: tuple, data_type: str | None, expected: tuple) -> None:
    assert detect_format(PATH, _recs(*rows), data_type) == expected


def test_mcq_asked_of_a_file_that_cannot_be_one() -> None:
    with pytest.raises(CustomDataError, match=r"^data\.jsonl: data_type mcq, but the file has no option columns A "
                                              r"and B$"):
        detect_format(PATH, _recs({"question": "q", "answer": "a"}), "mcq")
    with pytest.raises(CustomDataError, match=r"^data\.jsonl: data_type mcq, but conversation rows \(`messages`\) "
                                              r"cannot be multiple choice$"):
        detect_format(PATH, _recs({"messages": []}), "mcq")
    with pytest.raises(CustomDataError, match=r"data_type mcq, but the file has no option columns"):
        detect_format(PATH, _recs({"image": "a.png", "question": "q"}), "mcq")
