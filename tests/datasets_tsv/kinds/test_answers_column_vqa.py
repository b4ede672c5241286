"""VizWiz (AnswersColumnVQADataset): the question alone as prompt, the VQA score over the `answers` column and
never over an `answer` column the file may also hold."""

from __future__ import annotations

import pytest

from tests.support.tsvs import b64, image_bytes, write_tsv


@pytest.fixture
def vizwiz(lmu_root):
    from datasets_tsv.catalog.registry import build_dataset

    jpeg = b64(image_bytes())
    rows = [  # `answer` holds the other reply on purpose: scoring it would swap the two rows' scores
        {"index": 0, "image": jpeg, "question": "What colour is this?", "answers": str(["red"] * 10),
         "answer": "blue"},
        {"index": 1, "image": jpeg, "question": "What is it?", "answers": str(["mug"] * 2 + ["cup"] * 8),
         "answer": "mug"},
    ]
    write_tsv(lmu_root / "VizWiz.tsv", rows)
    return build_dataset("VizWiz", root=lmu_root, progress=False, keep_local_tsv=True)


def test_the_prompt_is_the_question_without_a_short_answer_instruction(vizwiz):
    assert vizwiz.build_prompt(0)[-1] == {"type": "text", "value": "What colour is this?"}
    assert vizwiz.scorer_params()["answer_column"] == "answers"
    assert vizwiz.scorer_params()["short_answer_prompt"] is False


def test_scores_come_from_the_answers_list(vizwiz):
    # VQA score min(1, matches / 3) averaged over the 10 leave-one-out subsets: "red" matches 10 of 10 -> 1;
    # "mug" matches 2 answers: subsets leaving out a "mug" see 1 match (1/3), the other 8 see 2 (2/3):
    # (2 * 1/3 + 8 * 2/3) / 10 = 18/30 = 0.6
    result = vizwiz.evaluate(vizwiz.data.assign(prediction=["red", "mug"]))
    scores = result.per_sample.sort_values("index")["score"].tolist()
    assert scores == pytest.approx([1.0, 0.6])
