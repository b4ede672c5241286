"""vlmkit.run.likelihood: the options a row is scored on, the chosen letter, the record's figures, the refusals, and
the run identity that holds the mode (issue 28). Expected values are worked by hand."""

from __future__ import annotations

import math
from types import SimpleNamespace

import pytest

from vlmkit.core.errors import ConfigError
from vlmkit.run import likelihood
from vlmkit.run.resume import differences, run_fingerprint, same_settings


def test_row_choices_read_the_filled_option_columns_and_yes_no() -> None:
    line = {"index": 3, "question": "q", "A": "red", "B": "blue", "C": float("nan"), "D": "green"}
    assert likelihood.row_choices("mcq", line) == {"A": "red", "B": "blue", "D": "green"}
    assert likelihood.row_choices("yorn", {"index": 1, "question": "q"}) == {"Yes": "Yes", "No": "No"}
    with pytest.raises(ValueError, match="row index 7"):
        likelihood.row_choices("mcq", {"index": 7, "question": "q"})


def test_the_argmax_takes_the_first_option_on_a_tie() -> None:
    assert likelihood.first_argmax({"A": -2.0, "B": -0.5, "C": -0.5}) == "B"
    assert likelihood.first_argmax({"Yes": -1.0, "No": -1.0}) == "Yes"
    assert likelihood.first_argmax({"A": -math.inf, "B": -50.0}) == "B"
    with pytest.raises(ValueError):
        likelihood.first_argmax({})


def test_continuation_figures_normalise_by_characters() -> None:
    choices = {"A": "red", "B": "orange"}
    # raw: A -3.0 beats B -4.2; per character: A -1.0, B -0.7 -> acc picks A, acc_norm picks B
    extra = likelihood.likelihood_extra("continuation", choices, [(-3.0, 1), (-4.2, 2)])
    assert extra["logprobs"] == {"A": -3.0, "B": -4.2}
    assert extra["tokens"] == {"A": 1, "B": 2}
    assert extra["normalised"]["A"] == pytest.approx(-1.0)
    assert extra["normalised"]["B"] == pytest.approx(-0.7)
    assert extra["choice_norm"] == "B"
    assert likelihood.first_argmax(extra["logprobs"]) == "A"
    logits = likelihood.likelihood_extra("logits", {"A": "x", "B": "y"}, {"B": -0.1, "A": -2.5})
    assert logits == {"mode": "logits", "logprobs": {"A": -2.5, "B": -0.1}}


class _Scorer:
    """A model with the likelihood methods, answering fixed figures (the run's side is under test, not a model's)."""

    def option_logprobs_batch(self, batch, letters_per_row, dataset=None):  # noqa: ANN001, ANN201
        return [ValueError("bad image") if i == 1 else {L: -float(j) for j, L in enumerate(reversed(letters))}
                for i, letters in enumerate(letters_per_row)]

    def continuation_logprobs_batch(self, batch, continuations_per_row, dataset=None):  # noqa: ANN001, ANN201
        return [[(-float(len(c)), len(c)) for c in row] for row in continuations_per_row]


def test_ask_batch_answers_the_argmax_letter_and_keeps_a_row_error() -> None:
    tasks = [SimpleNamespace(msgs=["q1"], choices={"A": "a", "B": "b", "C": "c"}),
             SimpleNamespace(msgs=["q2"], choices={"A": "a", "B": "b"})]
    out = likelihood.ask_batch(_Scorer(), "logits", "demo")(tasks)
    assert out[0].text == "C"  # C is scored 0, B -1, A -2
    assert out[0].extra["likelihood"]["logprobs"] == {"A": -2.0, "B": -1.0, "C": 0.0}
    assert isinstance(out[1], ValueError)
    cont = likelihood.ask_batch(_Scorer(), "continuation", "demo")(
        [SimpleNamespace(msgs=["q"], choices={"A": "long one", "B": "ab"})])
    assert cont[0].text == "B" and cont[0].extra["likelihood"]["choice_norm"] == "A"  # -8/8 = -1 beats -2/2 = -1: tie
    # a tie on the normalised figures goes to the first option (A)


def test_refusals_name_the_dataset_or_the_model() -> None:
    assert likelihood.refusal("generate", dataset="x", kind="vqa") is None
    assert "x is a vqa dataset" in likelihood.refusal("logits", dataset="x", kind="vqa")
    assert likelihood.refusal("logits", dataset="x", kind="yorn") is None
    assert likelihood.refusal("logits", model="gpt", served=True) is None  # top_logprobs (vlm.api.letter_logprobs)
    assert "no log-probabilities of the prompt" in likelihood.refusal("continuation", model="gpt", served=True)
    assert "no log-probabilities of the prompt" in likelihood.refusal("ppl", model="gpt", served=True)
    assert "x is a mcq dataset; perplexity takes QA or caption" in likelihood.refusal("ppl", dataset="x", kind="mcq")
    assert likelihood.refusal("ppl", dataset="x", kind="caption") is None
    assert "x is a qa dataset" in likelihood.refusal("logits", dataset="x", kind="qa")
    assert "has no continuation_logprobs_batch" in likelihood.refusal("continuation", model="m", model_class=object)
    assert likelihood.refusal("continuation", model="m", model_class=_Scorer) is None
    with pytest.raises(ConfigError, match="--mcq-mode"):
        likelihood.check_mode("perplexity")


def test_the_mode_is_part_of_the_run_identity() -> None:
    dataset = SimpleNamespace(name="D", file_md5="abc")
    generated = run_fingerprint("m", "vlm.x:Y", {"max_tokens": 8}, dataset)
    assert "mcq_mode" not in generated  # journals written before the flag still match a generation run
    logits = run_fingerprint("m", "vlm.x:Y", {"max_tokens": 8}, dataset, "logits")
    continuation = run_fingerprint("m", "vlm.x:Y", {"max_tokens": 8}, dataset, "continuation")
    assert not same_settings(generated, logits) and not same_settings(logits, continuation)
    assert differences(logits, continuation) == ["mcq_mode"]
    assert same_settings(logits, run_fingerprint("m", "vlm.x:Y", {"max_tokens": 8}, dataset, "logits"))


def test_likelihood_summary_counts_rows_with_a_target() -> None:
    def rec(raw: dict[str, float], norm: str) -> dict:
        return {"error": None, "extra": {"likelihood": {"mode": "continuation", "logprobs": raw, "choice_norm": norm}}}

    records = {"1": rec({"A": -1.0, "B": -2.0}, "B"), "2": rec({"A": -3.0, "B": -2.0}, "B"),
               "3": {"error": {"kind": "x"}, "prediction": None}}
    summary = likelihood.likelihood_summary("continuation", records, ["1", "2", "3", "4"], ["A", "B", "A", None])
    # targets on rows 1-3: acc hits row 1 (A) and row 2 (B) = 2/3; acc_norm hits row 2 only = 1/3; row 3 failed
    assert summary == {"mode": "continuation", "n": 3, "acc": pytest.approx(2 / 3), "acc_norm": pytest.approx(1 / 3)}
    assert likelihood.likelihood_summary("logits", records, ["1"], ["A"]) == {"mode": "logits"}
