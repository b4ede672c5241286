"""BaseModel's defaults: a model may implement generate, generate_full or generate_batch, and gets the other two."""

from __future__ import annotations

import pytest

from vlm.base import BaseModel
from vlmkit.core.model_calls import Generation


class BatchOnly(BaseModel):
    """Answers each message with its text upper-cased; a message saying 'fail' fails alone."""

    def generate_batch(self, batch, dataset=None, params=None):
        out = []
        for msgs, p in zip(batch, params or [None] * len(batch)):
            text = msgs[0]["value"]
            out.append(ValueError("asked to fail") if text == "fail" else Generation(text=f"{text.upper()}{p or ''}"))
        return out


def test_a_batch_only_model_answers_one_message_as_a_batch_of_one():
    model = BatchOnly()
    assert model.generate([{"type": "text", "value": "red"}]) == "RED"
    assert model.generate_full([{"type": "text", "value": "red"}], params={"seed": 1}).text == "RED{'seed': 1}"
    with pytest.raises(ValueError, match="asked to fail"):  # the sample's own exception, never a string answer
        model.generate([{"type": "text", "value": "fail"}])


def test_a_model_implementing_nothing_says_so():
    with pytest.raises(NotImplementedError, match="none of generate, generate_full and generate_batch"):
        BaseModel().generate_full([{"type": "text", "value": "x"}])
