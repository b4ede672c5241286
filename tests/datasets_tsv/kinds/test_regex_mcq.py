"""RegexMCQDataset on small TSVs of the shapes of MME-RealWorld, VisualPuzzles, PuzzleVQA, VisuLogic, MedQ-DEG-Bench
and MedQ-Bench: VLMEvalKit's prompts (written out from its source) and its rule-read scores worked out by hand."""

from __future__ import annotations

from pathlib import Path

import pytest

from datasets_tsv.catalog import entries as catalog
from datasets_tsv.kinds.regex_mcq import RegexMCQDataset
from datasets_tsv.catalog.registry import build_row, scorer_id
from vlmkit.scoring.kinds.regex_mcq import (
    read_answer_line,
    read_boxed_or_phrase,
    read_characters,
    read_first_letter,
)

from tests.support.tsvs import b64, image_bytes, write_tsv

PUZZLE_TAIL = (
    "\nSolve the multiple-choice question and then answer with the option letter from the given choices. The last "
    "line of your response should be of the following format:'Answer: $LETTER' (without quotes) where LETTER is one "
    "of options. Think step by step before answering."
)


def build(root: Path, name: str, rows: list[dict], **kwargs) -> RegexMCQDataset:
    for row in rows:
        row.setdefault("image", b64(image_bytes()))
    write_tsv(root / f"{name}.tsv", rows)
    return RegexMCQDataset(name, root=root, progress=False, **kwargs)


@pytest.mark.parametrize(
    ("reply", "expected"),
    [
        ("The best answer is: B", ("B", "first_capital")),
        ("Based on the image, the answer is C", ("B", "first_capital")),  # VLMEvalKit's first capital: `Based`
        ("<answer>D</answer> because A", ("D", "first_capital")),
        ("(c)", ("C", "choice_text")),
        ("", (None, "unparsed")),  # VLMEvalKit reads A
        ("this is a long reply with many words but no capital letters at all here", (None, "unparsed")),
    ],
)
def test_characters_rule(reply, expected):
    assert read_characters(reply) == expected


@pytest.mark.parametrize(
    ("reply", "expected"),
    [
        ("Reasoning...\nAnswer: (b)", ("B", "last_line")),
        ("Steps\n\\boxed{C}", ("C", "last_line")),
        ("Answer：（A）", ("A", "last_line")),
        ("**Final answer: D**", ("D", "last_line")),
        ("Answer: C\nI am confident.", (None, "unparsed")),
        ("I think C", (None, "unparsed")),
    ],
)
def test_answer_line_rule(reply, expected):
    assert read_answer_line(reply) == expected


@pytest.mark.parametrize(
    ("reply", "expected"),
    [
        ("so the result is \\boxed{B}", ("B", "boxed")),
        ("\\boxed{\\text{C}}", ("C", "boxed")),
        ("\\boxed{$LETTER} or \\boxed{B or C}", (None, "unparsed")),
        ("The answer is (C).", ("C", "phrase")),
        ("I think the answer is: d. Because it fits.", ("D", "phrase")),
        ("B\nbecause the pattern repeats", ("B", "phrase")),
        ("I cannot decide", (None, "unparsed")),
    ],
)
def test_boxed_or_phrase_rule(reply, expected):
    assert read_boxed_or_phrase(reply) == expected


@pytest.mark.parametrize(
    ("reply", "letters", "expected"),
    [
        ("b", "ABCDE", ("B", "exact")),
        ("C. Severe", "ABCDE", ("C", "leading")),
        ("The answer is D", "ABCDE", ("D", "phrase")),
        ("A cat", "ABCDE", ("A", "leading")),
        ("I think E", "ABCDE", ("E", "first_letter")),
        ("I think E", "ABCD", (None, "unparsed")),
        ("Moderate", "ABCDE", (None, "unparsed")),
    ],
)
def test_first_letter_rule(reply, letters, expected):
    assert read_first_letter(reply, letters) == expected


MME_RW_ROWS = [
    ("Perception/Monitoring", "Vehicle/Counting", "B", "B"),
    ("Perception/Monitoring", "Vehicle/Attribute/Color", "A", "The best answer is: (C)"),
    ("Perception/Monitoring", "Vehicle/Attribute/Size", "D", ""),
    ("Reasoning/Autonomous_Driving", "Intention/Ego", "C", "C"),
]
CHOICES = "(A) 1\n(B) 2\n(C) 3\n(D) 4\n(E) 5"


def mme_rw_rows(lead: str) -> list[dict]:
    return [
        {"index": i, "question": "How many cars are there?", "multi-choice options": f"{lead}{CHOICES}",
         "A": "1", "B": "2", "C": "3", "D": "4", "E": "5", "answer": a, "category": cat, "l2-category": l2}
        for i, (cat, l2, a, _) in enumerate(MME_RW_ROWS)
    ]  # fmt: skip


def test_mme_realworld_prompts(lmu_root):
    ds = build(lmu_root, "MME-RealWorld", mme_rw_rows("The choices are listed below:\n"), prompt="mme_realworld",
               rule="characters", report="mme_realworld", scale="fraction")
    msgs = ds.build_prompt(0)
    assert [p["type"] for p in msgs] == ["image", "text"]
    assert msgs[1]["value"] == (
        f"How many cars are there? The choices are listed below:\n{CHOICES}\nSelect the best answer to the above "
        "multiple-choice question based on the image. Respond with only the letter (A, B, C, D, or E) of the correct "
        "option. \nThe best answer is:"
    )
    cn = build(lmu_root, "MME-RealWorld-CN", mme_rw_rows("选项如下所示:\n"), prompt="mme_realworld_cn",
               rule="characters", report="mme_realworld", scale="fraction")
    assert cn.build_prompt(0)[1]["value"] == (
        f"How many cars are there? 选项如下所示:\n{CHOICES}\n"
        "根据图像选择上述多项选择题的最佳答案。只需回答正确选项的字母（A, B, C, D 或 E）。\n最佳答案为："
    )


def test_mme_realworld_dimension_rating_by_hand(lmu_root):
    ds = build(lmu_root, "MME-RealWorld", mme_rw_rows("The choices are listed below:\n"), prompt="mme_realworld",
               rule="characters", report="mme_realworld", scale="fraction")
    result = ds.evaluate(ds.data.assign(prediction=[r[3] for r in MME_RW_ROWS]))
    assert result.scorer == "regex_mcq" and result.scale_of("Overall").kind == "fraction"
    assert result.metrics == pytest.approx({
        "Overall": 0.5,
        "Perception": 1 / 3, "Perception/Monitoring": 1 / 3,
        "Perception/Monitoring/vehicle/attribute": 0.0, "Perception/Monitoring/vehicle/counting": 1.0,
        "Reasoning": 1.0, "Reasoning/Autonomous_Driving": 1.0, "Reasoning/Autonomous_Driving/intention/ego": 1.0,
    })  # fmt: skip
    assert result.per_sample["method"].tolist() == ["first_capital", "first_capital", "unparsed", "first_capital"]
    assert (result.counts["unread"], result.counts["by_rule"]) == (1, 3)


PUZZLES = [
    ("spatial", "easy", "A", "Steps...\nAnswer: a"),
    ("spatial", "hard", "B", "Answer: C"),
    ("algorithmic", "easy", "C", "I think C"),
    ("algorithmic", "hard", "D", "\\boxed{D}"),
    ("spatial", "easy", "A", "Answer: A"),
]


def test_visualpuzzles_prompt_and_scores_by_hand(lmu_root):
    rows = [
        {"index": i, "question": "Which comes next?", "options": "['3', '5', '7', '9']", "answer": a,
         "category": cat, "difficulty": level}
        for i, (cat, level, a, _) in enumerate(PUZZLES)
    ]  # fmt: skip
    rows[1]["options"] = None
    ds = build(lmu_root, "VisualPuzzles", rows, prompt="visualpuzzles", rule="answer_line", answer_match="casefold",
               groups=[["category", "{}"], ["difficulty", "{}"]])
    assert ds.build_prompt(0)[-1]["value"] == (
        f"Which comes next?\nOptions:\n(A) 3\n(B) 5\n(C) 7\n(D) 9{PUZZLE_TAIL}"
    )
    assert ds.build_prompt(1)[-1]["value"] == (
        f"Which comes next?\nOptions: Choose from (A) (B) (C) (D) in the image.{PUZZLE_TAIL}"
    )
    result = ds.evaluate(ds.data.assign(prediction=[p[3] for p in PUZZLES]))
    assert result.metrics == pytest.approx(
        {"Overall": 60.0, "algorithmic": 50.0, "spatial": 200 / 3, "easy": 200 / 3, "hard": 50.0}
    )


def test_puzzlevqa_prompt(lmu_root):
    rows = [{"index": 0, "question": "What colour is missing?", "options": "['red', 'blue']", "answer": "A",
             "category": "colors"}]
    ds = build(lmu_root, "PuzzleVQA", rows, prompt="puzzlevqa", rule="answer_line", answer_match="casefold",
               groups=[["category", "{}"]])
    assert ds.build_prompt(0)[-1]["value"] == f"What colour is missing?\nOptions:\n(A) red\n(B) blue{PUZZLE_TAIL}"
    assert ds.evaluate(ds.data.assign(prediction=["Answer: A"])).metrics == {"Overall": 100.0, "colors": 100.0}


def test_visulogic_prompt_and_exact_answers(lmu_root):
    rows = [
        {"index": 0, "question": "Pick the odd one.", "answer": "B", "category": "Spatial Reasoning"},
        {"index": 1, "question": "Pick the next.", "answer": "C", "category": "Other"},
    ]
    ds = build(lmu_root, "VisuLogic", rows, prompt="visulogic", rule="boxed_or_phrase", groups=[["category", "{}"]])
    assert ds.build_prompt(0)[-1]["value"] == (
        "Pick the odd one.\nSolve the complex visual logical reasoning problem through step-by-step reasoning.Think "
        "about the reasoning process first and answer the question following this format: Answer: \\boxed{$LETTER}"
    )
    result = ds.evaluate(ds.data.assign(prediction=["Answer: \\boxed{B}", "answer: c"]))
    assert result.metrics == {"Overall": 100.0, "Other": 100.0, "Spatial Reasoning": 100.0}
    assert result.per_sample["method"].tolist() == ["boxed", "phrase"]


DEG_GROUPS = [["modality", "Modality_{}"], ["degradation_type", "DegType_{}"],
              ["degradation_severity", "Severity_{}"], ["source", "Source_{}"]]  # fmt: skip


def test_medqdeg_prompt_and_breakdowns_by_hand(lmu_root):
    cells = [
        ("CT", "noise", "mild", "s1", " b ", "B. Moderate"),
        ("MRI", "blur", "severe", "s1", "A", "The answer is C"),
        ("CT", "blur", "mild", "s2", "C", "c"),
    ]
    rows = [
        {"index": i, "question": "How good is the image quality?", "A": " Good ", "B": "Moderate", "C": "Poor",
         "D": "Unusable", "E": "", "answer": a, "modality": m, "degradation_type": t, "degradation_severity": s,
         "source": src}
        for i, (m, t, s, src, a, _) in enumerate(cells)
    ]  # fmt: skip
    ds = build(lmu_root, "MedQDEGBench_good_dev", rows, prompt="medqdeg", rule="first_letter", answer_match="upper",
               letters="ABCDE", groups=DEG_GROUPS, scale="fraction")
    assert ds.build_prompt(0)[-1]["value"] == (
        "How good is the image quality?\n\nA. Good\nB. Moderate\nC. Poor\nD. Unusable\n\n"
        "Answer with the option letter from the given choices directly."
    )
    result = ds.evaluate(ds.data.assign(prediction=[c[5] for c in cells]))
    assert result.metrics == pytest.approx({
        "Overall": 2 / 3, "Modality_CT": 1.0, "Modality_MRI": 0.0, "DegType_blur": 0.5, "DegType_noise": 1.0,
        "Severity_mild": 1.0, "Severity_severe": 0.0, "Source_s1": 0.5, "Source_s2": 1.0,
    })  # fmt: skip


def test_medqbench_prompt_and_numeric_answers(lmu_root):
    rows = [
        {"index": 0, "question": "Which artefact is visible?", "A": "None", "B": "Noise", "C": "Blur", "D": "Ghost",
         "answer": "1", "modality": "MRI"},
        {"index": 1, "question": "Rate the quality.", "A": "Good", "B": "Poor", "answer": "A", "modality": "CT"},
    ]  # fmt: skip
    ds = build(lmu_root, "MedqbenchMCQ_dev", rows, prompt="medqbench", rule="first_letter",
               answer_match="letter_index", letters="ABCD", groups=[["modality", "{}_accuracy"]], scale="fraction")
    assert ds.build_prompt(0)[-1]["value"] == (
        "Please carefully observe this medical image and answer the following question:\n\n"
        "Which artefact is visible?\n\nOptions:\nA. None\nB. Noise\nC. Blur\nD. Ghost\n\n"
        "Answer directly only with the option **letter** from the given choices. "
    )
    result = ds.evaluate(ds.data.assign(prediction=["B. Noise", None]))
    assert result.metrics == {"Overall": 0.5, "CT_accuracy": 0.0, "MRI_accuracy": 1.0}
    assert result.counts["inference_errors"] == 1


def test_bad_options_are_refused_in_one_line(lmu_root):
    rows = [{"index": 0, "question": "Q?", "answer": "A"}]
    with pytest.raises(ValueError, match="rule 'regex'; choose one of"):
        build(lmu_root, "X", rows, prompt="visulogic", rule="regex")
    with pytest.raises(ValueError, match="groups must be"):
        build(lmu_root, "X", rows, prompt="visulogic", rule="boxed_or_phrase", groups=[["category"]])


def test_catalog_rows_parse_and_build(lmu_root):
    rows = [r for r in catalog.catalog_rows().values() if r.cls and r.cls == "datasets_tsv.kinds.regex_mcq:RegexMCQDataset"]
    assert len(rows) == 12
    generic = {"index": 0, "question": "Q?", "options": "['x', 'y']", "multi-choice options": "(A) x\n(B) y",
               "A": "x", "B": "y", "answer": "A", "category": "Perception/Monitoring", "l2-category": "a/b"}
    for row in rows:
        build(lmu_root, row.name, [dict(generic)], **row.kwargs)
        ds = build_row(row, root=lmu_root, progress=False, keep_local_tsv=True)
        assert scorer_id(ds) == row.scorer == "regex_mcq"
        assert ds.build_prompt(0)[-1]["type"] == "text"
        assert ds.evaluate(ds.data.assign(prediction=["Answer: \\boxed{A}"])).metrics["Overall"] > 0
