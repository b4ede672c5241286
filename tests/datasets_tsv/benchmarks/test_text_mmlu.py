"""MMLU by name from a miniature snapshot in the original release's layout (data/dev, data/test CSVs without a header,
as data.tar has them and OpenCompass reads them): the prompt written out literally, a served run through a FaultServer
scored by hand, and a `--mcq-mode logits` run on vlmkit-tiny whose choices are the argmax of the letters'
log-probabilities asked of the model directly."""

from __future__ import annotations

import csv
import json
import re
from pathlib import Path
from typing import Any

import pytest

from datasets_tsv.catalog.registry import build_dataset
from datasets_tsv.io.tsv_read import DatasetError
from tests.support.run_helpers import chat_only, question_of, run_served, vlmkit_cli
from tests.support.servers import FaultServer, Recorded, Reply, chat_reply

# (question, A, B, C, D, answer) per subject; the test questions carry a tag the server reads
TEST_ROWS = {
    "astronomy": [("[t0] What is the Sun?", "A star", "A planet", "A moon", "A comet", "A"),
                  ("[t1] Which planet is largest?", "Mars", "Venus", "Jupiter", "Earth", "C"),
                  ("[t2] What orbits the Earth?", "The Sun", "Mars", "Venus", "The Moon", "D")],
    "high_school_biology": [("[t3] What do cells divide by?", "Osmosis", "Mitosis", "Erosion", "Fusion", "B"),
                            ("[t4] What carries oxygen in blood?", "Haemoglobin", "Insulin", "Keratin", "Pepsin",
                             "A")],
}
REPLIES = {0: "A", 1: "The answer is (C).", 2: "B", 3: "(B) because cells split", 4: "I think it's the first"}
# read: A (right), C (right), B (wrong: D), B (right), nothing (unread: wrong) -> 3 of 5; astronomy 2/3, biology 1/2


def write_csv(path: Path, rows: list[tuple[str, ...]]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("w", newline="", encoding="utf-8") as f:
        csv.writer(f).writerows(rows)


def make_mmlu(root: Path) -> Path:
    for subject, rows in TEST_ROWS.items():
        write_csv(root / "data" / "test" / f"{subject}_test.csv", rows)
        dev = [(f"{subject} example {i}?", "w", "x", "y", "z", "ABCD"[i % 4]) for i in range(5)]
        write_csv(root / "data" / "dev" / f"{subject}_dev.csv", dev)
    return root


@pytest.fixture()
def mmlu(tmp_path: Path) -> Path:
    return make_mmlu(tmp_path / "mmlu_snapshot")


def test_rows_and_the_five_shot_prompt(mmlu: Path, tmp_path: Path) -> None:
    ds = build_dataset("MMLU", data_root=mmlu, root=tmp_path, progress=False)
    assert ds.kind == "mcq" and len(ds) == 5
    assert ds.data["subject"].tolist() == ["astronomy"] * 3 + ["high_school_biology"] * 2
    assert ds.data["answer"].tolist() == ["A", "C", "D", "B", "A"]
    assert ds.image_paths(0) == []
    expected = (
        "The following are multiple choice questions (with answers) about high school biology.\n\n"
        "high_school_biology example 0?\nA. w\nB. x\nC. y\nD. z\nAnswer: A\n\n"
        "high_school_biology example 1?\nA. w\nB. x\nC. y\nD. z\nAnswer: B\n\n"
        "high_school_biology example 2?\nA. w\nB. x\nC. y\nD. z\nAnswer: C\n\n"
        "high_school_biology example 3?\nA. w\nB. x\nC. y\nD. z\nAnswer: D\n\n"
        "high_school_biology example 4?\nA. w\nB. x\nC. y\nD. z\nAnswer: A\n\n"
        "[t3] What do cells divide by?\nA. Osmosis\nB. Mitosis\nC. Erosion\nD. Fusion\nAnswer:"
    )
    assert ds.build_prompt(3) == [{"type": "text", "value": expected}]


def test_a_folder_holding_the_snapshot_by_name_is_found(mmlu: Path, tmp_path: Path) -> None:
    holder = tmp_path / "many"
    holder.mkdir()
    mmlu.rename(holder / "MMLU")
    assert len(build_dataset("MMLU", data_root=holder, root=tmp_path, progress=False)) == 5


def test_a_missing_snapshot_is_one_line_naming_the_repo(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("HF_HUB_CACHE", str(tmp_path / "empty_cache"))
    with pytest.raises(DatasetError) as err:
        build_dataset("MMLU", root=tmp_path, progress=False)
    message = str(err.value)
    assert "\n" not in message
    assert "cais/mmlu" in message and "--data-root" in message and str(tmp_path / "empty_cache") in message
    with pytest.raises(DatasetError, match="no MMLU files"):
        build_dataset("MMLU", data_root=tmp_path, root=tmp_path, progress=False)


def test_the_hugging_face_cache_layout_is_found(mmlu: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    cache = tmp_path / "hub"
    repo = cache / "datasets--cais--mmlu"
    (repo / "refs").mkdir(parents=True)
    (repo / "refs" / "main").write_text("abc123")
    (repo / "snapshots").mkdir()
    mmlu.rename(repo / "snapshots" / "abc123")
    monkeypatch.setenv("HF_HUB_CACHE", str(cache))
    ds = build_dataset("MMLU", root=tmp_path, progress=False)
    assert ds.snapshot == repo / "snapshots" / "abc123" and len(ds) == 5


def test_a_bad_answer_names_the_file_row_and_field(mmlu: Path, tmp_path: Path) -> None:
    write_csv(mmlu / "data" / "test" / "astronomy_test.csv", [("q?", "a", "b", "c", "d", "E")])
    with pytest.raises(DatasetError, match=r"astronomy_test\.csv: row 0, field answer: 'E'"):
        build_dataset("MMLU", data_root=mmlu, root=tmp_path, progress=False)


def test_a_parquet_snapshot_without_pyarrow_says_what_to_do(tmp_path: Path) -> None:
    try:
        import pyarrow  # noqa: F401
    except ImportError:
        pass
    else:
        pytest.skip("pyarrow is installed: parquet is read")
    (tmp_path / "astronomy").mkdir()
    (tmp_path / "astronomy" / "test-00000-of-00001.parquet").write_bytes(b"PAR1")
    with pytest.raises(DatasetError, match="reading parquet needs pyarrow"):
        build_dataset("MMLU", data_root=tmp_path, root=tmp_path, progress=False)


def reply_by_tag(request: Recorded) -> Reply:
    return chat_reply(REPLIES[int(re.search(r"\[t(\d)\]", question_of(request)).group(1))])


def test_served_run_by_name_scored_by_hand(mmlu: Path, tmp_path: Path) -> None:
    with FaultServer(chat_only(reply_by_tag)) as server:
        result = run_served(server.base_url, tmp_path / "work", tmp_path / "lmu", "--data-root", str(mmlu),
                            data="MMLU")
    assert result.returncode == 0, result.stderr[-2000:]
    scoring = json.loads((tmp_path / "work" / "served" / "MMLU" / "results.json").read_text())["scoring"]
    assert scoring["scorer"] == "text_choice"
    assert scoring["metrics"] == pytest.approx({"Overall": 3 / 5, "subject:astronomy": 2 / 3,
                                                "subject:high_school_biology": 1 / 2})
    assert scoring["counts"]["unread"] == 1


@pytest.fixture(scope="module")
def tiny() -> Any:
    from vlmkit.run.resolve import ModelOptions, resolve_model

    built = resolve_model("vlmkit-tiny", ModelOptions()).build()
    yield built
    built.close()


def test_logits_mode_on_vlmkit_tiny(tmp_path: Path, tiny: Any) -> None:
    mmlu = make_mmlu(tmp_path / "mmlu_snapshot")
    work = tmp_path / "work"
    result = vlmkit_cli("run", "--data", "MMLU", "--model", "vlmkit-tiny", "--data-root", str(mmlu), "--work-dir",
                        str(work), "--mcq-mode", "logits",
                        env={"LMUData": str(tmp_path / "lmu"), "OMP_NUM_THREADS": "2"}, timeout=600)
    assert result.returncode == 0, result.stderr[-3000:]
    folder = work / "vlmkit-tiny" / "MMLU"
    records = [json.loads(line) for line in (folder / "predictions.jsonl").read_text().splitlines()]
    answers = [row[5] for rows in TEST_ROWS.values() for row in rows]
    assert sorted(r["index"] for r in records) == list(range(5))
    hits = 0
    for record in records:
        direct = tiny.option_logprobs(record["prompt"], list("ABCD"), "MMLU")
        best = max("ABCD", key=lambda letter: (direct[letter], -"ABCD".index(letter)))
        assert record["prediction"] == best
        hits += best == answers[record["index"]]
    scoring = json.loads((folder / "results.json").read_text())["scoring"]
    assert scoring["likelihood"] == {"mode": "logits"}
    assert scoring["metrics"]["Overall"] == pytest.approx(hits / 5)


@pytest.mark.parametrize("style", ["qwen2vl", "llava", "internvl", "smolvlm"])
def test_no_model_family_replaces_the_benchmark_s_prompt(mmlu: Path, tmp_path: Path, style: str) -> None:
    from vlm.prompts import prompts_for
    from vlmkit.core.contracts import dataset_info

    ds = build_dataset("MMLU", data_root=mmlu, root=tmp_path, progress=False)
    assert ds.vlmevalkit_prompt == "dataset"  # the table's column: the few-shot prompt is sent whatever the model
    assert not prompts_for({"name": "x", "prompt_style": style}).use_custom_prompt(dataset_info(ds))
