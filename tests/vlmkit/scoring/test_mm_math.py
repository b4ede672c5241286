"""MM-Math as VLMEvalKit scores it (mmmath.py AutoScoringJudge and MMMath.evaluate at e8e78f05): boxed answers,
numbers within 0.01, sympy-equal expressions, intervals and equations (each verdict below checked against
VLMEvalKit's own AutoScoringJudge run on the same pair), and the per-group figures, worked by hand."""

from __future__ import annotations

from pathlib import Path

import pytest

pytest.importorskip("antlr4", reason="the optional `math` extra (antlr4-python3-runtime 4.11, for sympy's LaTeX)")

from datasets_tsv.catalog.registry import build_dataset  # noqa: E402
from tests.support.tsvs import b64, image_bytes, write_tsv  # noqa: E402
from vlmkit.scoring.benchmarks.mm_math_judge import boxed_contents, replace_symbols, same_answer  # noqa: E402


@pytest.mark.parametrize(("answer", "reply", "same"), [
    ("3", "so \\boxed{3}", True),
    ("\\frac{1}{2}", "The answer is $0.5$", True),  # the last line's $..$, then numbers within 0.01
    ("50", "0.5", True),  # x100 and /100 count too
    ("2\\sqrt{3}", "\\boxed{\\sqrt{12}}", True),  # sympy: the difference simplifies to 0
    ("\\sqrt{2}", "1.414", True),  # within 0.01
    ("\\sqrt{2}", "1.43", False),
    ("(1, 2)", "\\boxed{(1,3)}", False),
    ("1<x<3", "(1,3)", True),  # a<x<b is the interval (a, b)
    ("2, 3", "\\boxed{3}\\boxed{2}", True),  # items pair in any order
    ("\\pm 2", "2, -2", True),
    ("y=2x+1", "2x+1=y", True),  # sides swapped: the differences are -1 times each other
    ("2x-y+1=0", "4x-2y+2=0", True),  # an integer multiple
    ("5cm", "5", True),  # units removed
    ("10", "\\boxed{10", False),  # a \\boxed{ never closed: unbalanced braces, not the same
    ("10", "\\boxed{10} and \\boxed{1", False),  # unbalanced braces after a box: not the same
])  # fmt: skip
def test_same_answer_worked_by_hand(answer, reply, same):
    assert same_answer(answer, reply) is same


def test_cleaning():
    assert boxed_contents("a \\boxed{x^{2}} b \\boxed{3}") == "x^{2},3,"
    assert boxed_contents("first\nso $1$ and $2$") == "1,2,"
    assert replace_symbols("60^\\circ") == "60" and replace_symbols("\\sin30") == "\\sin((30/180)\\pi)"
    assert replace_symbols("x\\in (0,1)") == "(0,1)"


ROWS = [
    # (answer, difficulty, knowledge_l1, reply)
    ("3", "easy", "代数", "so \\boxed{3}"),
    ("\\frac{1}{2}", "easy", "代数", "The answer is $0.5$"),
    ("2\\sqrt{3}", "hard", "代数", "\\boxed{\\sqrt{12}}"),
    ("(1, 2)", "hard", "几何", "\\boxed{(1,3)}"),
    ("5", "hard", "几何", None),  # a failed call
]


def write(lmu_root: Path, rows=ROWS) -> None:
    image = b64(image_bytes())
    write_tsv(lmu_root / "MM-Math.tsv", [
        {"index": i, "image": image, "question": f"Q{i}", "answer": a, "difficulty": d, "year": 2021,
         "knowledge_l1": k, "knowledge_l2": "x"} for i, (a, d, k, _) in enumerate(rows)])  # fmt: skip


def test_by_catalog_name_scored_by_hand(lmu_root: Path):
    write(lmu_root)
    ds = build_dataset("MM-Math", root=lmu_root, progress=False, keep_local_tsv=True)
    assert ds.build_prompt(0)[-1]["value"] == "Q0"
    result = ds.evaluate(ds.data.assign(prediction=[r[3] for r in ROWS]))
    assert result.metrics == pytest.approx({
        "overall": 3 / 5, "Difficulty-easy": 1.0, "Difficulty-hard": 1 / 3, "Year-2021": 3 / 5,
        "Knowledge-L1-几何": 0.0, "Knowledge-L1-代数": 1.0, "Knowledge-L2-x": 3 / 5})
    assert result.primary == "overall" and result.counts["inference_errors"] == 1
    assert result.vlmevalkit.metrics == pytest.approx(result.metrics)


def test_vlmevalkit_misses_answers_its_xlsx_reads_back_as_numbers(lmu_root: Path):
    rows = [("3", "easy", "代数", "\\boxed{3}"), ("4", "easy", "代数", "\\boxed{4}")]
    write(lmu_root, rows)
    ds = build_dataset("MM-Math", root=lmu_root, progress=False, keep_local_tsv=True)
    result = ds.evaluate(ds.data.assign(prediction=[r[3] for r in rows]))
    assert result.metrics["overall"] == 1.0
    assert result.vlmevalkit.metrics["overall"] == 0.0 and len(result.vlmevalkit.differing) == 2
