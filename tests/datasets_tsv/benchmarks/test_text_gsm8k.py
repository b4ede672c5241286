"""GSM8K by name from a miniature snapshot in the original release's layout (grade_school_math/data/test.jsonl and
train.jsonl, as OpenCompass reads them): the 5-shot prompt written out literally, a served run through a FaultServer
scored by hand (flexible and strict readings of the final number), and the likelihood modes refused in one line."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pandas as pd
import pytest

from datasets_tsv.catalog.registry import build_dataset
from datasets_tsv.io.tsv_read import DatasetError
from tests.support.run_helpers import chat_only, question_of, run_served, stderr_lines, vlmkit_cli
from tests.support.servers import FaultServer, Recorded, Reply, chat_reply
from vlmkit.scoring.benchmarks.text_gsm8k import final_number, normalise, score_text_gsm8k, strict_number

TRAIN = [{"question": f"Train {i}: what is {i} + {i}?",
          "answer": f"{i} + {i} = <<{i}+{i}={2 * i}>>{2 * i}\n#### {2 * i}"} for i in range(1, 7)]
TEST = [
    {"question": "[g0] Janet sells 9 eggs at $2. How much does she make?", "answer": "9 * 2 = 18\n#### 18"},
    {"question": "[g1] A car costs $1,080. What is its price?", "answer": "It costs 1080.\n#### 1080"},
    {"question": "[g2] What is 2 + 3?", "answer": "2 + 3 = 5\n#### 5"},
    {"question": "[g3] What is 3 + 4?", "answer": "3 + 4 = 7\n#### 7"},
]
REPLIES = {
    0: "She sells 9 eggs, 9 * 2 = 18.\n#### 18",  # strict 18, flexible 18: right both ways
    1: "The total is $1,080.",  # flexible "$1,080." -> 1080: right; no ####: strict wrong
    2: "3 + 3 = 6. The answer is 6.",  # 6: wrong both ways
    3: "7\n\nQuestion: Tom has 3 apples. How many?\nAnswer: 3\n#### 3",  # cut at Question: -> 7 (right), strict none
}


def write_jsonl(path: Path, rows: list[dict[str, str]]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")


@pytest.fixture()
def gsm8k(tmp_path: Path) -> Path:
    root = tmp_path / "gsm8k_snapshot"
    write_jsonl(root / "grade_school_math" / "data" / "test.jsonl", TEST)
    write_jsonl(root / "grade_school_math" / "data" / "train.jsonl", TRAIN)
    return root


def test_rows_and_the_five_shot_prompt(gsm8k: Path, tmp_path: Path) -> None:
    ds = build_dataset("GSM8K", data_root=gsm8k, root=tmp_path, progress=False)
    assert ds.kind == "vqa" and len(ds) == 4
    assert ds.data["answer"].tolist() == ["18", "1080", "5", "7"]
    expected = (
        "Question: Train 1: what is 1 + 1?\nAnswer: 1 + 1 = <<1+1=2>>2\n#### 2\n\n"
        "Question: Train 2: what is 2 + 2?\nAnswer: 2 + 2 = <<2+2=4>>4\n#### 4\n\n"
        "Question: Train 3: what is 3 + 3?\nAnswer: 3 + 3 = <<3+3=6>>6\n#### 6\n\n"
        "Question: Train 4: what is 4 + 4?\nAnswer: 4 + 4 = <<4+4=8>>8\n#### 8\n\n"
        "Question: Train 5: what is 5 + 5?\nAnswer: 5 + 5 = <<5+5=10>>10\n#### 10\n\n"
        "Question: [g2] What is 2 + 3?\nAnswer:"
    )
    assert ds.build_prompt(2) == [{"type": "text", "value": expected}]


def test_a_solution_without_its_final_number_names_the_row(gsm8k: Path, tmp_path: Path) -> None:
    write_jsonl(gsm8k / "grade_school_math" / "data" / "test.jsonl", [TEST[0], {"question": "q", "answer": "no mark"}])
    with pytest.raises(DatasetError, match=r"test\.jsonl: row 1, field answer: no '#### <number>'"):
        build_dataset("GSM8K", data_root=gsm8k, root=tmp_path, progress=False)


def reply_by_tag(request: Recorded) -> Reply:
    return chat_reply(REPLIES[int(re.search(r"\[g(\d)\]", question_of(request)).group(1))])


def test_served_run_by_name_scored_by_hand(gsm8k: Path, tmp_path: Path) -> None:
    with FaultServer(chat_only(reply_by_tag)) as server:
        result = run_served(server.base_url, tmp_path / "work", tmp_path / "lmu", "--data-root", str(gsm8k),
                            data="GSM8K")
    assert result.returncode == 0, result.stderr[-2000:]
    scoring = json.loads((tmp_path / "work" / "served" / "GSM8K" / "results.json").read_text())["scoring"]
    assert scoring["scorer"] == "text_gsm8k"
    assert scoring["primary_metric"]["name"] == "exact_match"
    assert scoring["metrics"] == pytest.approx({"exact_match": 3 / 4, "strict_match": 1 / 4})


def test_likelihood_modes_are_refused_in_one_line(gsm8k: Path, tmp_path: Path) -> None:
    result = vlmkit_cli("run", "--data", "GSM8K", "--model", "vlmkit-tiny", "--data-root", str(gsm8k), "--work-dir",
                        str(tmp_path / "work"), "--mcq-mode", "logits", env={"LMUData": str(tmp_path / "lmu")})
    assert result.returncode != 0
    assert any("likelihood scoring takes MCQ or Y/N datasets only" in line for line in stderr_lines(result))
    assert not (tmp_path / "work" / "vlmkit-tiny" / "GSM8K" / "predictions.jsonl").exists()


@pytest.mark.parametrize(("reply", "flexible", "strict"), [
    ("#### 1,234", "1234", "1234"),
    ("so $5.", "5", None),  # "$5." : `$` and the final `.` go
    ("18.00 dollars", "18.00", None),  # compared as text: not 18
    ("no number here", None, None),
    ("first 3 then -4", "-4", None),  # the last number, its sign kept
])
def test_readings(reply: str, flexible: str | None, strict: str | None) -> None:
    assert final_number(reply) == flexible
    assert strict_number(reply) == strict


def test_scorer_counts_a_failed_call_wrong() -> None:
    df = pd.DataFrame({"index": [0, 1, 2], "prediction": ["#### 18", None, "18.00"], "answer": ["18", "5", "18"]})
    result = score_text_gsm8k(df)
    assert result.metrics == {"exact_match": 1 / 3, "strict_match": 1 / 3}
    assert result.counts["inference_errors"] == 1 and result.counts["unread"] == 0
    assert normalise("It is #### 1,000.") == "1000"
