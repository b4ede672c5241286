"""The other text-only families read from miniature snapshots in their original releases' layouts (C-Eval, MMLU-Pro,
BBH, HellaSwag, ARC, BoolQ, WinoGrande): rows as the benchmark defines them and each prompt written out literally; one
`--mcq-mode continuation` run of ARC-Challenge and BoolQ on vlmkit-tiny whose choices, acc and acc_norm are worked out
from the model's own continuation log-probabilities."""

from __future__ import annotations

import csv
import json
from pathlib import Path
from typing import Any

import pytest

from datasets_tsv.catalog.registry import build_dataset
from datasets_tsv.io.tsv_read import DatasetError
from tests.support.run_helpers import vlmkit_cli


def write_jsonl(path: Path, rows: list[dict[str, Any]]) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows), encoding="utf-8")
    return path


def build(name: str, root: Path, tmp_path: Path) -> Any:
    return build_dataset(name, data_root=root, root=tmp_path, progress=False)


def prompt(ds: Any, i: int) -> str:
    (part,) = ds.build_prompt(i)
    assert part["type"] == "text"
    return part["value"]


def test_ceval_val_split_with_the_chinese_subject_name(tmp_path: Path) -> None:
    root = tmp_path / "ceval"
    header = ["id", "question", "A", "B", "C", "D", "answer", "explanation"]
    for split, rows in (("val", [["0", "1+1=?", "1", "2", "3", "4", "B", ""]]),
                        ("dev", [[str(i), f"例{i}", "甲", "乙", "丙", "丁", "A", "解"] for i in range(5)])):
        (root / split).mkdir(parents=True)
        with (root / split / f"high_school_math_{split}.csv").open("w", newline="", encoding="utf-8") as f:
            csv.writer(f).writerows([header, *rows])
    (root / "subject_mapping.json").write_text(json.dumps({"high_school_math": ["High School Math", "高中数学", "STEM"]}))
    ds = build("C-Eval", root, tmp_path)
    assert ds.data["answer"].tolist() == ["B"] and ds.data["subject"].tolist() == ["high_school_math"]
    shots = "".join(f"例{i}\nA. 甲\nB. 乙\nC. 丙\nD. 丁\n答案：A\n\n" for i in range(5))
    assert prompt(ds, 0) == ("以下是中国关于高中数学考试的单项选择题，请选出其中的正确答案。\n\n" + shots
                             + "1+1=?\nA. 1\nB. 2\nC. 3\nD. 4\n答案：")


def test_mmlu_pro_five_shot_cot_by_category(tmp_path: Path) -> None:
    root = tmp_path / "mmlu_pro"
    test = [{"question_id": 1, "question": "What is 2*3?", "options": ["5", "6", "7"], "answer": "B",
             "answer_index": 1, "cot_content": "", "category": "math", "src": "x"}]
    validation = [{"question_id": 10 + i, "question": f"V{i}?", "options": ["p", "q"], "answer": "A",
                   "answer_index": 0, "cot_content": f"A: Let's think step by step. Step {i}. The answer is (A).",
                   "category": "math", "src": "x"} for i in range(5)]
    write_jsonl(root / "data" / "test.jsonl", test)
    write_jsonl(root / "data" / "validation.jsonl", validation)
    ds = build("MMLU-Pro", root, tmp_path)
    line = ds.line(0)
    assert (line["A"], line["B"], line["C"], line["D"], line["answer"]) == ("5", "6", "7", None, "B")
    shots = "".join(f"Question:\nV{i}?\nOptions:\nA. p\nB. q\nAnswer: Let's think step by step. Step {i}. "
                    "The answer is (A).\n\n" for i in range(5))
    assert prompt(ds, 0) == (
        "The following are multiple choice questions (with answers) about math. Think step by step and then finish "
        "your answer with \"the answer is (X)\" where X is the correct letter choice.\n\n" + shots
        + "Question:\nWhat is 2*3?\nOptions:\nA. 5\nB. 6\nC. 7\nAnswer: Let's think step by step."
    )


def test_bbh_three_shot_cot_with_the_prompt_files_and_zero_shot_without(tmp_path: Path) -> None:
    root = tmp_path / "bbh"
    (root / "bbh").mkdir(parents=True)
    (root / "bbh" / "boolean_expressions.json").write_text(json.dumps(
        {"canary": "x", "examples": [{"input": "not True is", "target": "False"}]}))
    (root / "bbh" / "date_understanding.json").write_text(json.dumps(
        {"examples": [{"input": "Which date?\nOptions:\n(A) a\n(B) b", "target": "(B)"}]}))
    ds = build("BBH", root, tmp_path)
    assert ds.data[["task", "answer"]].values.tolist() == [["boolean_expressions", "False"],
                                                           ["date_understanding", "(B)"]]
    assert prompt(ds, 0) == "Q: not True is\nA:"
    assert ds.info()["shots"] == 0
    (root / "cot-prompts").mkdir()
    (root / "cot-prompts" / "boolean_expressions.txt").write_text("Evaluate.\n\nQ: True is\nA: So the answer is True.")
    with pytest.raises(DatasetError, match=r"date_understanding\.txt: missing"):
        build("BBH", root, tmp_path)
    (root / "cot-prompts" / "date_understanding.txt").write_text("Dates.")
    ds = build("BBH", root, tmp_path)
    assert prompt(ds, 0) == ("Follow the given examples and answer the question.\nEvaluate.\n\nQ: True is\nA: So the "
                             "answer is True.\n\nQ: not True is\nA: Let's think step by step.")


def test_hellaswag_text_cleaned_as_lm_eval_does(tmp_path: Path) -> None:
    row = {"ind": 4, "activity_label": "Removing ice from car", "ctx_a": "Then, the man writes over the snow.",
           "ctx_b": "then", "ctx": "x", "split": "val", "split_type": "indomain", "source_id": "s",
           "endings": [" cleans the car [title] Step two.", "  is  done.", "waves [header] hi", "stops."], "label": "2"}
    ds = build("HellaSwag", write_jsonl(tmp_path / "hs" / "data" / "hellaswag_val.jsonl", [row]).parent.parent,
               tmp_path)
    line = ds.line(0)
    assert line["question"] == "Removing ice from car: Then, the man writes over the snow. Then"
    assert [line[k] for k in "ABCD"] == ["cleans the car. Step two.", "is done.", "waves hi", "stops."]
    assert line["answer"] == "C"
    assert prompt(ds, 0) == (
        "Removing ice from car: Then, the man writes over the snow. Then\nQuestion: Which ending makes the most "
        "sense?\nA. cleans the car. Step two.\nB. is done.\nC. waves hi\nD. stops.\nYou may choose from 'A', 'B', "
        "'C', 'D'.\nAnswer:"
    )


def arc_rows() -> list[dict[str, Any]]:
    def q(stem: str, texts: list[str], labels: str, key: str) -> dict[str, Any]:
        return {"id": stem, "question": {"stem": stem, "choices": [{"text": t, "label": L}
                                                                   for t, L in zip(texts, labels)]}, "answerKey": key}
    return [q("Which is a liquid?", ["rock", "water", "wood"], "ABC", "B"),
            q("What melts ice?", ["heat", "cold", "dark", "wind"], "1234", "1"),
            q("Plants need?", ["light", "salt", "sand", "oil", "tar"], "ABCDE", "A")]


def make_arc(root: Path) -> Path:
    write_jsonl(root / "ARC-Challenge" / "ARC-Challenge-Test.jsonl", arc_rows())
    return root


def test_arc_numeric_labels_become_letters(tmp_path: Path) -> None:
    ds = build("ARC-Challenge", make_arc(tmp_path / "arc"), tmp_path)
    assert ds.data["answer"].tolist() == ["B", "A", "A"]
    assert prompt(ds, 0) == "Question: Which is a liquid?\nA. rock\nB. water\nC. wood\nAnswer:"
    assert prompt(ds, 2) == "Question: Plants need?\nA. light\nB. salt\nC. sand\nD. oil\nE. tar\nAnswer:"
    with pytest.raises(DatasetError, match="no ARC-Easy files"):
        build("ARC-Easy", tmp_path / "arc", tmp_path)


def test_boolq_is_yes_or_no(tmp_path: Path) -> None:
    root = tmp_path / "boolq"
    write_jsonl(root / "dev.jsonl", [{"question": "is the sky blue", "title": "Sky", "answer": True,
                                      "passage": "The sky is blue."},
                                     {"question": "is fire cold", "title": "Fire", "answer": False,
                                      "passage": "Fire is hot."}])
    ds = build("BoolQ", root, tmp_path)
    assert ds.kind == "yorn" and ds.data["answer"].tolist() == ["Yes", "No"]
    assert prompt(ds, 0) == "The sky is blue.\nQuestion: is the sky blue?\nAnswer:"


def test_winogrande_options_are_the_completed_sentences(tmp_path: Path) -> None:
    root = tmp_path / "wino"
    write_jsonl(root / "dev.jsonl", [{"qID": "1", "sentence": "The cup broke because _ was fragile.",
                                      "option1": "the cup", "option2": "the floor", "answer": "1"}])
    ds = build("WinoGrande", root, tmp_path)
    assert ds.data["answer"].tolist() == ["A"]
    assert prompt(ds, 0) == ("Which of the following is a good sentence:\nA. The cup broke because the cup was "
                             "fragile.\nB. The cup broke because the floor was fragile.\nAnswer:")


@pytest.fixture(scope="module")
def tiny() -> Any:
    from vlmkit.run.resolve import ModelOptions, resolve_model

    built = resolve_model("vlmkit-tiny", ModelOptions()).build()
    yield built
    built.close()


BOOLQ_ROWS = [{"question": "is the sky blue", "answer": True, "passage": "The sky is blue."},
              {"question": "is fire cold", "answer": False, "passage": "Fire is hot."},
              {"question": "is ice cold", "answer": True, "passage": "Ice is frozen water."}]


@pytest.fixture(scope="module")
def continuation_run(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """One `--mcq-mode continuation` run of ARC-Challenge and BoolQ on vlmkit-tiny, both from one --data-root (ARC's
    files at its top, BoolQ's in its repository's name, boolq/)."""
    root = tmp_path_factory.mktemp("text_snapshots")
    make_arc(root)
    write_jsonl(root / "boolq" / "dev.jsonl", BOOLQ_ROWS)
    work = tmp_path_factory.mktemp("work")
    result = vlmkit_cli("run", "--data", "ARC-Challenge", "BoolQ", "--model", "vlmkit-tiny", "--data-root", str(root),
                        "--work-dir", str(work), "--mcq-mode", "continuation",
                        env={"LMUData": str(tmp_path_factory.mktemp("lmu")), "OMP_NUM_THREADS": "2"}, timeout=600)
    assert result.returncode == 0, result.stderr[-3000:]
    return work / "vlmkit-tiny"


def run_records(folder: Path) -> dict[int, dict[str, Any]]:
    return {r["index"]: r for r in map(json.loads, (folder / "predictions.jsonl").read_text().splitlines())}


def first_best(values: list[float]) -> int:
    return max(range(len(values)), key=lambda k: (values[k], -k))


def test_arc_continuation_mode_acc_and_acc_norm_on_vlmkit_tiny(continuation_run: Path, tiny: Any) -> None:
    folder = continuation_run / "ARC-Challenge"
    records = run_records(folder)
    texts = [[c["text"] for c in row["question"]["choices"]] for row in arc_rows()]
    answers = ["B", "A", "A"]
    hits = hits_norm = 0
    for i, options in enumerate(texts):
        scored = tiny.continuation_logprobs(records[i]["prompt"], options, "ARC-Challenge")
        pick = "ABCDE"[first_best([lp for lp, _ in scored])]
        pick_norm = "ABCDE"[first_best([lp / len(text) for (lp, _), text in zip(scored, options)])]
        assert records[i]["prediction"] == pick
        assert records[i]["extra"]["likelihood"]["choice_norm"] == pick_norm
        hits += pick == answers[i]
        hits_norm += pick_norm == answers[i]
    scoring = json.loads((folder / "results.json").read_text())["scoring"]
    assert scoring["likelihood"]["acc"] == pytest.approx(hits / 3)
    assert scoring["likelihood"]["acc_norm"] == pytest.approx(hits_norm / 3)
    assert scoring["metrics"]["Overall"] == pytest.approx(hits / 3)


def test_boolq_continuation_mode_compares_yes_and_no_on_vlmkit_tiny(continuation_run: Path, tiny: Any) -> None:
    folder = continuation_run / "BoolQ"
    records = run_records(folder)
    hits = 0
    for i, row in enumerate(BOOLQ_ROWS):
        assert records[i]["prompt"][-1]["content"] == [
            {"type": "text", "value": f"{row['passage']}\nQuestion: {row['question']}?\nAnswer:"}]
        scored = tiny.continuation_logprobs(records[i]["prompt"], ["Yes", "No"], "BoolQ")
        pick = ["Yes", "No"][first_best([lp for lp, _ in scored])]
        assert records[i]["prediction"] == pick
        hits += pick == ("Yes" if row["answer"] else "No")
    scoring = json.loads((folder / "results.json").read_text())["scoring"]
    assert scoring["metrics"]["Overall"] == pytest.approx(hits / 3)
    assert scoring["likelihood"]["acc"] == pytest.approx(hits / 3)


def test_hub_layout_rows_read_as_the_original_ones() -> None:
    """The hub repositories' parquet rows (read by pandas where pyarrow is installed) take the same path once read:
    checked here on frames of their shape."""
    import pandas as pd

    from datasets_tsv.benchmarks.text.arc import question_parts
    from datasets_tsv.benchmarks.text.mmlu import four_options, hub_folders

    frame = pd.DataFrame({"question": ["q"], "subject": ["astronomy"], "choices": [["a", "b", "c", "d"]],
                          "answer": [2]})
    out = four_options(frame, Path("astronomy/test-0.parquet"))
    assert out[["A", "B", "C", "D", "answer"]].values.tolist() == [["a", "b", "c", "d", "C"]]
    with pytest.raises(DatasetError, match=r"row 0, field answer: 4 is not 0-3"):
        four_options(frame.assign(answer=[4]), Path("x.parquet"))
    files = [Path("all/test-0.parquet"), Path("astronomy/test-0.parquet"), Path("auxiliary_train/train-0.parquet")]
    assert hub_folders(files) == [Path("astronomy/test-0.parquet")]
    assert hub_folders(files[:1]) == files[:1]
    hub_row = {"id": "x", "question": "Which?", "choices": {"text": ["p", "q"], "label": ["1", "2"]}, "answerKey": "2"}
    assert question_parts(hub_row) == ("Which?", ["p", "q"], ["1", "2"])
