"""CustomDataset over rows held in memory: its table, prompts (MCQ, QA, few-shot, system, mm_custom,
conversation), per-row parameters and scoring, each expected text assembled here by hand."""

from __future__ import annotations

from pathlib import Path

import pytest

from datasets_tsv.custom.reading import CustomDataError
from datasets_tsv.custom.rows import CustomDataset

CLOSING = "Please select the correct answer from the options above. \n"


def make(rows, **kwargs) -> CustomDataset:
    kwargs.setdefault("data_format", "text")
    kwargs.setdefault("data_type", "qa")
    return CustomDataset("mine", rows, source=Path("/data/mine.jsonl"), file_md5="0" * 32, **kwargs)


def test_the_table_keeps_every_key_in_the_order_first_met_with_index_first():
    ds = make([{"question": "q1", "answer": "a", "index": 1}, {"index": 2, "extra": 5, "question": "q2"}])
    assert list(ds.data.columns) == ["index", "question", "answer", "extra"]
    assert ds.line(1) == {"index": 2, "question": "q2", "answer": None, "extra": 5}
    assert len(ds) == 2 and ds.data["extra"].dtype == object


def test_unknown_format_or_type_and_repeated_indices_are_refused():
    with pytest.raises(ValueError, match="mine: unknown format/data type 'csv'/'qa'"):
        make([{"index": 0, "question": "q"}], data_format="csv")
    with pytest.raises(ValueError, match="unknown format/data type 'text'/'yorn'"):
        make([{"index": 0, "question": "q"}], data_type="yorn")
    with pytest.raises(CustomDataError, match=r"/data/mine.jsonl: row indices are not unique"):
        make([{"index": 3, "question": "a"}, {"index": "3", "question": "b"}])


def test_mcq_prompt_is_vlmevalkits_text_without_empty_options():
    ds = make([{"index": 0, "question": "Sky?", "A": "blue", "B": "", "C": 3.0, "hint": "look up"}],
              data_type="mcq", option_letters=("A", "B", "C"))
    assert ds.build_prompt(0) == [
        {"type": "text", "value": f"Hint: look up\nQuestion: Sky?\nOptions:\nA. blue\nC. 3\n{CLOSING}"}
    ]
    assert ds.scorer_params() == {"scorer": "custom_mcq", "circular": False, "options": ["A", "B", "C"]}


def test_qa_prompt_is_the_question_and_few_shot_adds_the_examples_and_answer_cue():
    rows = [{"index": 0, "question": "Capital of France?", "answer": "Paris"}]
    assert make(rows).prompt_text(0) == "Capital of France?"
    prefix = "Question: 1+1?\nAnswer: 2\n\n"
    assert make(rows, few_shot_prefix=prefix).prompt_text(0) == prefix + "Question: Capital of France?\nAnswer:"


def test_an_empty_question_is_one_clear_line():
    ds = make([{"index": 7, "question": "  "}])
    with pytest.raises(CustomDataError) as err:
        ds.build_prompt(0)
    assert str(err.value) == "/data/mine.jsonl: row with index 7, field question: empty"


def test_a_system_text_makes_a_two_turn_conversation():
    ds = make([{"index": 0, "question": "Hi?", "system": "Be brief."}])
    assert ds.build_prompt(0) == [
        {"role": "system", "content": [{"type": "text", "value": "Be brief."}]},
        {"role": "user", "content": [{"type": "text", "value": "Hi?"}]},
    ]


def test_mm_custom_rows_put_their_media_first_and_text_rows_ignore_paths():
    row = {"index": 0, "question": "What is shown?", "type": "image", "path": ["/x/a.png", "/x/b.png"]}
    parts = make([row], data_format="mm_custom").build_prompt(0)
    assert parts == [
        {"type": "image", "value": "/x/a.png"},
        {"type": "image", "value": "/x/b.png"},
        {"type": "text", "value": "What is shown?"},
    ]
    assert make([row]).build_prompt(0) == [{"type": "text", "value": "What is shown?"}]


def test_a_conversation_row_is_given_as_its_turns():
    messages = [{"role": "system", "content": "S"}, {"role": "user", "content": "U"}]
    ds = make([{"index": 0, "question": "unused", "messages": messages}], data_format="conversation")
    assert ds.build_prompt(0) == [
        {"role": "system", "content": [{"type": "text", "value": "S"}]},
        {"role": "user", "content": [{"type": "text", "value": "U"}]},
    ]
    assert ds.output_format == "ark" and make([{"index": 0, "question": "q"}]).output_format is None


def test_generation_params_per_row_are_copies_and_absent_rows_have_none():
    rows = [{"index": 0, "question": "a"}, {"index": 1, "question": "b"}]
    ds = make(rows, params=[None, {"max_tokens": 8}])
    assert ds.generation_params(0) is None
    got = ds.generation_params(1)
    assert got == {"max_tokens": 8}
    got["max_tokens"] = 99
    assert ds.generation_params(ds.line(1)) == {"max_tokens": 8}


def test_evaluate_needs_answers_and_predictions():
    ds = make([{"index": 0, "question": "q"}])
    with pytest.raises(CustomDataError, match=r"^/data/mine.jsonl: no `answer` column, nothing to score for mine"):
        ds.evaluate(ds.data.assign(prediction=["x"]))
    with pytest.raises(CustomDataError, match=r"^the predictions: no `prediction` column"):
        ds.evaluate(ds.data)


def test_qa_scoring_counts_exact_matches_out_of_100():
    rows = [{"index": 0, "question": "a?", "answer": "Paris"}, {"index": 1, "question": "b?", "answer": "Rome"}]
    ds = make(rows, qa_metrics=("em",))
    result = ds.evaluate(ds.data.assign(prediction=["Paris", "Oslo"]))
    assert result.metrics[result.primary] == pytest.approx(50.0)
    assert ds.scorer_params() == {"scorer": "text_qa", "metrics": ["em"], "segmenter": "auto", "scale": 100}


def test_mcq_scoring_reads_the_letters():
    rows = [{"index": i, "question": f"q{i}", "A": "x", "B": "y", "answer": a} for i, a in enumerate("ABAB")]
    ds = make(rows, data_type="mcq", option_letters=("A", "B"))
    result = ds.evaluate(ds.data.assign(prediction=["A", "B", "B", "B"]))
    assert result.metrics["Overall"] == pytest.approx(0.75)


def test_info_describes_the_dataset():
    ds = make([{"index": 0, "question": "q", "answer": "a"}], details={"subset": "s"}, notes=["n1"])
    info = ds.info()
    assert info == {
        "name": "mine", "kind": "qa", "format": "text", "class": "datasets_tsv.custom.rows:CustomDataset",
        "source": "/data/mine.jsonl", "md5": "0" * 32, "n_total": 1, "has_answers": True,
        "scorer": ds.scorer_params(), "subset": "s", "notes": ["n1"],
    }
    assert make([{"index": 0, "question": "q"}]).info()["has_answers"] is False
