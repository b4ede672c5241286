"""HiPhO: VLMEvalKit's competition prompt, its grading and xverify judge prompts byte for byte, and the points
worked out by hand from VLMEvalKit's hipho.py (fine-grained marking with its retry rounds and several schemes,
coarse-grained boxed answers by rule and by xverify, the larger of the two, the rounded sums), end to end through a
judge on a local OpenAI-compatible server."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from datasets_tsv.benchmarks.hipho import HiPhODataset
from datasets_tsv.catalog.entries import catalog_rows
from tests.support.servers import FaultServer, Recorded, Reply, chat_reply
from tests.support.tsvs import b64, image_bytes, write_tsv
from vlm.api.openai_compat import OpenAICompatModel
from vlmkit.judging import FunctionJudge
from vlmkit.run.judge_journal import JournalledJudge
from vlmkit.scoring.benchmarks.hipho_answers import boxed_answers, grader_score, rule_match

KEY = "sk-hipho-judge-77c3"
PNG = b64(image_bytes("green", "PNG"))

# VLMEvalKit's texts at e8e78f05, as it sends them (copied, not built by vlmkit's code)
GRADING_ROW3_ATTEMPT2 = (
    "You are an expert physics competition grader.\nEvaluate the student's solution against the specific grading criterion.\n\nPHYSICS PROBLEM:\nFind the speed.\n\nSTUDENT'S SOLUTION:\n\\boxed{u=4.0}\n\nGRADING CRITERION:\ncrit A\n⚠️  IMPORTANT TOTAL SCORE CONSTRAINT:\n- This question has a maximum total score of 1.0 points\n- ALL marking criteria scores combined MUST NOT exceed 1.0 points\n- You are evaluating ONE criterion among multiple criteria for this question\n- Be conservative in your scoring to ensure the total doesn't exceed the limit\n- This is attempt #2 of evaluation\n🔄 RETRY NOTICE:\n- Previous attempt(s) resulted in total score exceeding the maximum\n- Please be more conservative in your scoring\n- Focus on strict adherence to the criterion requirements\n\nINSTRUCTIONS:\n1. Carefully analyze the student's solution for physics concepts, mathematical derivations, and calculations.\n2. Compare the solution against the specific grading criterion provided.\n3. Award points strictly according to the criterion, including partial credit when specified.\n4. Consider both conceptual understanding and technical accuracy.\n5. BE CONSERVATIVE - remember this is one of multiple criteria being evaluated simultaneously.\n\nSCORING FORMAT:\n- Read the grading criterion carefully to understand the maximum points and conditions for partial credit\n- Evaluate whether the student's solution meets the full criteria, partial criteria, or no criteria\n- Output your score using the exact format: \\boxed{score}\n- The score should be a number (e.g., 0.4, 0.2, 0.1, 0.0)\n\nCRITICAL REQUIREMENTS:\n- You MUST output your final score in the format: \\boxed{score}\n- The score must be a single number only (no text inside the boxed)\n- Do not include explanations after the boxed score\n- Ensure your score follows the point allocation in the grading criterion\n- BE CONSERVATIVE to avoid exceeding the total score limit\n\nExample outputs:\n- \\boxed{0.4} (for full credit)\n- \\boxed{0.1} (for partial credit)\n- \\boxed{0.0} (for no credit)\n\n⚠️ CRITICAL INSTRUCTION:\n- Output ONLY: \\boxed{score}\n- NO explanations, NO analysis, NO reasoning\n- Just the number in the exact format \\boxed{score}\n- Any other text will result in AUTOMATIC REJECTION\n\nRESPOND WITH ONLY THE BOXED SCORE:"
)
XVERIFY_ROW4_SPLIT = (
    '\nYou are a diligent and precise assistant tasked with evaluating the correctness of responses. You will\nreceive a question, an output sentence, and the correct answer. Your task is to determine if the output\nsentence accurately answers the question based on the provided correct answer. Respond with either\n[Correct] or [Incorrect].\n-\nSpecial considerations:\n1. **Multiple Answers**: If the output contains multiple answers, evaluate whether later answers\nmodify or correct earlier ones. In such cases, compare the final answer with the correct answer. If the\nfinal answer is unclear or incorrect, respond with [Incorrect].\n2. **Mathematical Problems**: If the formats differ but the answers are mathematically equivalent such as 256/55=4.65,\nrespond with [Correct].\n3. **Phycis Problems**: If the values match such as 3=3 \\, \\text{GHz} return [Correct].\n4. **Explicit Options**: If the question provides explicit candidate answers, the output will be\nconsidered correct if it clearly indicates the correct option\'s code or the correct option\'s content.\n5. **No Explicit Options**: If the question does not provide explicit options, the output must align\nwith the correct answer in content and meaning to be considered [Correct].\n-\nQuestion: """Give the energy."""\nOutput sentence: """ mc^2"""\nCorrect answer:  m c^{2}\n\n⚠️ Final Instruction:\nYou must respond with exactly one of the following: [Correct] or [Incorrect].\n❌ Do NOT include any explanation, reasoning, or additional text.\n🚫 Any deviation from this format (even a single word) will be considered INVALID.\n\nJudgement:\n'
)
PROMPT_EN_HEAD = ("You are participating in a high school physics competition.\nPlease read the following question "
                  "carefully and provide a clear, step-by-step solution with full reasoning.\n\nContext (if applicable):"
                  "\nA block on a slope.\n\nProblem:\nFind the speed.\n\nUseful information (formulas, constants, units, "
                  "if applicable):\n\n\nInstructions:\n")
PROMPT_BOX_LINE = "   of [\\boxed{{answer}}]. Do not include units inside the box.\n"


def hipho_rows() -> list[dict]:
    return [
        {"index": 1, "image": PNG, "context": "A block on a slope.", "question": "Find the speed.", "information": "",
         "answer": json.dumps(["\\boxed{3.2}"]), "points": "[1.0]",
         "marking": json.dumps(["Correct force balance (0.4 pt)", "Correct final speed (0.6 pt)"])},
        {"index": 2, "image": "", "context": "", "question": "Pick and compute.", "information": "g = 9.8",
         "answer": json.dumps(["A", "\\boxed{2.5}"]), "points": "[0.5, 0.5]", "marking": ""},
        {"index": 3, "image": "", "context": "", "question": "Find the speed.", "information": "",
         "answer": "v = 4", "points": "[1.0]", "marking": json.dumps(["crit A", "crit B"])},
        {"index": 4, "image": "", "context": "", "question": "Give the energy.", "information": "",
         "answer": json.dumps(["E = m c^{2}"]), "points": "[2.0]",
         "marking": json.dumps([["s1 a", "s1 b"], ["s2 a"]])},
        {"index": 5, "image": "", "context": "", "question": "Unanswered.", "information": "",
         "answer": json.dumps(["1"]), "points": "[1.0]", "marking": json.dumps(["c5"])},
        {"index": 6, "image": "", "context": "", "question": "Count.", "information": "",
         "answer": json.dumps(["7"]), "points": "[1.0]", "marking": json.dumps(["only crit"])},
    ]


PREDICTIONS = [
    "<think>balance forces</think><answer>[\\boxed{3.20}]</answer>",
    "<answer>[\\boxed{B}, \\boxed{5/2}]</answer>",
    "\\boxed{u=4.0}",
    "\\boxed{E = mc^2}",
    None,
    "\\boxed{7}",
]

# grader replies by (criterion, attempt number in the prompt)
GRADES = {
    ("Correct force balance (0.4 pt)", 1): "\\boxed{0.4}",
    ("Correct final speed (0.6 pt)", 1): "Partial credit: \\boxed{0.3}",
    ("crit A", 1): "\\boxed{0.8}", ("crit B", 1): "\\boxed{0.6}",  # 1.4 > 1.0: asked again
    ("crit A", 2): "\\boxed{0.5}", ("crit B", 2): "\\boxed{0.4}",  # 0.9
    ("s1 a", 1): "\\boxed{0.5}", ("s1 b", 1): "\\boxed{0.5}", ("s2 a", 1): "\\boxed{1.5}",
    ("only crit", 1): "\\boxed{1}",
}
XVERIFY = {"B": "[Incorrect]", "E = mc^2": "Incorrect", " mc^2": "[Correct]"}


def sent_text(request: Recorded) -> str:
    content = request.body["messages"][-1]["content"]
    return content if isinstance(content, str) else "".join(p.get("text", "") for p in content)


def make_responder(broken: set[str]):
    def respond(request: Recorded) -> Reply:
        prompt = sent_text(request)
        if prompt.startswith("\nYou are a diligent"):
            given = prompt.split('Output sentence: """', 1)[1].split('"""', 1)[0]
            return chat_reply(XVERIFY[given])
        criterion = prompt.split("GRADING CRITERION:\n", 1)[1].split("\n", 1)[0]
        if criterion in broken:
            return Reply(500, {"error": {"message": "overloaded"}})
        attempt = int(re.search(r"This is attempt #(\d+)", prompt).group(1))
        return chat_reply(GRADES[(criterion, attempt)])

    return respond


def judge_on(server: FaultServer, journal: Path) -> JournalledJudge:
    model = OpenAICompatModel("judge-m", api_base=server.base_url, api_key=KEY, retries=0, timeout=10)
    return JournalledJudge(model, journal, nproc=2, secrets=(KEY,))


def test_prompt_is_vlmevalkits(lmu_root: Path):
    write_tsv(lmu_root / "IPhO_2025.tsv", hipho_rows())
    ds = HiPhODataset("IPhO_2025", root=lmu_root, progress=False, **catalog_rows()["IPhO_2025"].kwargs)
    parts = ds.build_prompt(0)
    assert [p["type"] for p in parts] == ["image", "text"]
    assert parts[1]["value"].startswith(PROMPT_EN_HEAD) and PROMPT_BOX_LINE in parts[1]["value"]
    assert [p["type"] for p in ds.build_prompt(1)] == ["text"]  # no figure: text alone
    assert "Useful information (formulas, constants, units, if applicable):\ng = 9.8\n" in ds.build_prompt(1)[0]["value"]


def test_panmechanics_asks_in_chinese(lmu_root: Path):
    write_tsv(lmu_root / "PanMechanics_2025.tsv", hipho_rows()[:1])
    ds = HiPhODataset("PanMechanics_2025", root=lmu_root, progress=False,
                      **catalog_rows()["PanMechanics_2025"].kwargs)
    text = ds.build_prompt(0)[1]["value"]
    assert text.startswith("你正在参加高中物理竞赛。\n") and "背景信息（如有）：\nA block on a slope.\n" in text
    assert "[\\boxed{{A}}, \\boxed{3.2}]" in text  # VLMEvalKit's Chinese example, braces as it has them


def test_points_end_to_end_with_a_failed_grader_call_asked_again(lmu_root: Path, tmp_path: Path):
    write_tsv(lmu_root / "IPhO_2024.tsv", hipho_rows())
    ds = HiPhODataset("IPhO_2024", root=lmu_root, progress=False)
    table = ds.data.assign(prediction=PREDICTIONS)
    broken = {"only crit"}
    with FaultServer(make_responder(broken)) as server:
        first = ds.evaluate(table, judge=judge_on(server, tmp_path / "judge.jsonl"))
        sent = [sent_text(r) for r in server.requests if r.method == "POST"]
        broken.clear()
        again = ds.evaluate(table, judge=judge_on(server, tmp_path / "judge.jsonl"))
    assert GRADING_ROW3_ATTEMPT2 in sent and XVERIFY_ROW4_SPLIT in sent
    assert all("5/2" not in s.split("Output sentence:")[-1] for s in sent if s.startswith("\nYou"))  # by rule
    per = first.per_sample.set_index("index")
    # row 1: answers 3.20 = 3.2 by rule (1.0), marking 0.4 + 0.3; row 2: B wrong by xverify, 5/2 = 2.5 by rule:
    # 0.5 of [0.5, 0.5], no marking; row 3: u=4.0 vs v = 4 matches after the `=`, marking 1.4 > 1 then 0.9;
    # row 4: E = mc^2 wrong whole, right after the `=` by xverify (2.0), schemes 1.0 and 1.5; row 5: no prediction;
    # row 6: its grader call failed: left out this run
    assert per["fine"].tolist() == pytest.approx([0.7, 0.0, 0.9, 1.5, 0.0, 0.0])
    assert per["coarse"].tolist() == pytest.approx([1.0, 0.5, 1.0, 2.0, 0.0, 1.0])
    assert per["answers"].tolist() == ["rule", "wrong,rule", "rule", "xverify", "", "rule"]
    assert per["method"].tolist() == ["judge"] * 4 + ["inference_error", "judge_error"]
    # earned 1.0 + 0.5 + 1.0 + 2.0 + 0 = 4.5 of 1 + 1 + 1 + 2 + 1 = 6; fine 3.1; coarse 4.5
    assert first.metrics["score_rate"] == 75.0 and first.primary == "score_rate"
    assert first.metrics["total_score"] == 4.5 and first.metrics["max_possible_score"] == 6.0
    assert first.metrics["fine_grained_score_rate"] == 51.67 and first.metrics["coarse_grained_score_rate"] == 75.0
    assert first.counts["judge_errors"] == 1
    # the next run asks the failed grader call only; row 6 earns 1 of 1: 5.5 of 7
    assert again.metrics["score_rate"] == 78.57 and again.metrics["fine_grained_total_score"] == 4.1
    assert again.counts["judge_errors"] == 0
    assert KEY not in (tmp_path / "judge.jsonl").read_text()


def test_forced_scaling_and_subsets(lmu_root: Path):
    rows = [
        {"index": 1, "image": "", "question": "q1", "answer": "[]", "points": "[0.5, 0.5]",
         "marking": json.dumps(["k1", "k2"]), "SUB_DATASET": "IPhO_2024"},
        {"index": 2, "image": "", "question": "q2", "answer": json.dumps(["2"]), "points": "[2]",
         "marking": "", "SUB_DATASET": "F_MA_2025"},
    ]
    write_tsv(lmu_root / "HiPhO_ALL.tsv", rows)
    ds = HiPhODataset("HiPhO_ALL", root=lmu_root, progress=False, **catalog_rows()["HiPhO_ALL"].kwargs)
    judge = FunctionJudge(lambda request: "\\boxed{0.8}")  # every round 0.8 + 0.8 > 1.0
    result = ds.evaluate(ds.data.assign(prediction=["no box", "\\boxed{2.0}"]), judge=judge)
    attempts = sorted({re.search(r"attempt #(\d+)", r.prompt).group(1) for r in judge.asked if "attempt #" in r.prompt})
    assert attempts == ["1", "2", "3", "4"]  # the first ask and 3 more
    # row 1: after 4 rounds scaled by 1.0 / 1.6: 0.5 + 0.5 = 1.0; row 2: 2.0 = 2 by rule, 1 answer of points [2]
    assert result.metrics["IPhO_2024/score_rate"] == 100.0 and result.metrics["IPhO_2024/total_score"] == 1.0
    assert result.metrics["F_MA_2025/coarse_grained_total_score"] == 2.0
    assert result.metrics["score_rate"] == 100.0 and result.metrics["max_possible_score"] == 3.0
    assert result.table["subset"].tolist() == ["IPhO_2024", "F_MA_2025", "Overall"]


@pytest.mark.parametrize("reply, score", [
    ("\\boxed{0.4}", 0.4), ("first \\boxed{0.1} then \\boxed{0.25}", 0.25), ("boxed{0.3}", 0.3),
    ("\\boxed{x = 0.5 pts}", 0.5), ("I award 0.35", 0.35), ("no number", 0.0), ("\\boxed{-0.2}", -0.2),
    ("score -0.2", 0.2),  # the last pattern has no sign
    ("\\boxed{0.333}", 0.33),
])
def test_grader_score_reading(reply: str, score: float):
    assert grader_score(reply) == score


def test_boxed_answers_take_the_last_ones_in_order():
    assert boxed_answers("\\boxed{1} x \\boxed{2} y \\boxed{\\frac{1}{2}}", 2) == ["2", "\\frac{1}{2}"]
    assert boxed_answers("only \\boxed{9}", 3) == ["", "", "9"]
    assert boxed_answers("none", 1) == [""]


@pytest.mark.parametrize("pred, gold, same", [
    ("3.20", "3.2", True), ("\\dfrac{1}{2}", "0.5", True), ("3\\times10^{8}", "3.0e8", True),
    ("81", "80", True),  # VLMEvalKit compares about three significant figures (8.10e1 vs 8.00e1 rounds to 8)
    ("3.3", "3.2", False), ("A", "A", True), ("$A$", "A", True), ("B", "A", False), ("", "0", False),
])
def test_rule_match(pred: str, gold: str, same: bool):
    assert rule_match(pred, gold) is same
