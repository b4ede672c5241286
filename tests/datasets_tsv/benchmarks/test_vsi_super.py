"""VSI-SUPER-Recall and VSI-SUPER-Count from miniature snapshots in their layout (the EASI TSV in $LMUData, the
videos under the duration's folder): VLMEvalKit's prompts (written out literally from vlmeval/dataset/vsibench.py at
e8e78f05), its frames (plain linspace) and the scores worked by hand; Recall end to end through an API model."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from datasets_tsv.benchmarks.vsi_bench import VsiSuperCount, VsiSuperRecall
from tests.datasets_tsv.benchmarks.test_vsi_bench import frames_sent
from tests.support.indexed_video import frame_number, write_indexed_video
from tests.support.run_helpers import chat_only, chat_requests, row_of
from tests.support.servers import FaultServer, Reply, chat_reply
from tests.support.tsvs import write_tsv
from vlmkit.core.video import sample_frames

OPTIONS = "['A. sofa', 'B. lamp', 'C. bed', 'D. desk']"
RECALL = [(0, "order", "A"), (1, "order", "C"), (2, "order", "C"), (3, "recall", "B")]
# [0] right. [1] B for C: wrong. [2] tagged C: right. [3] the call fails: a miss. Pooled: 2 of 4; order 2 of 3.
RECALL_REPLIES = ["A", "B", "<answer>C</answer>", None]
COUNT = [(0, "a_count", "10"), (1, "a_count", "20"), (2, "a_count_streaming", "7"), (3, "b_count", "5")]
# [0] 10 for 10: 1. [1] 25 for 20: error 0.25 <= 1 - t for t = .50 .. .75: 0.6. [2] streaming: left out.
# [3] "five" reads 5: 1. a_count 0.8, b_count 1; Overall their mean 0.9
COUNT_REPLIES = {0: "10", 1: "about 25", 3: "five"}


def write_recall(lmu: Path, snapshot: Path, name: str = "VsiSuperRecall_10mins") -> Path:
    write_tsv(lmu / f"{name}.tsv", [
        {"index": i, "video": "10mins/v.mp4", "question": f" [{i}] Which did the camera pass first? ",
         "question_type": kind, "options": OPTIONS, "answer": answer} for i, kind, answer in RECALL
    ])  # fmt: skip
    write_indexed_video(snapshot / "10mins" / "v.mp4", frames=40, fps=10.0)
    return snapshot


def write_count(lmu: Path, snapshot: Path, name: str = "VsiSuperCount_10mins") -> Path:
    write_tsv(lmu / f"{name}.tsv", [
        {"index": i, "video": "10mins/c.mp4", "question": f"[{i}] How many chairs are there?", "question_type": kind,
         "answer": answer} for i, kind, answer in COUNT
    ])  # fmt: skip
    write_indexed_video(snapshot / "10mins" / "c.mp4", frames=33, fps=10.0)
    return snapshot


@pytest.fixture
def recall(tmp_path: Path) -> VsiSuperRecall:
    lmu = tmp_path / "LMUData"
    return VsiSuperRecall("VsiSuperRecall_10mins", data_root=write_recall(lmu, tmp_path / "snap"), root=lmu)


@pytest.fixture
def count(tmp_path: Path) -> VsiSuperCount:
    lmu = tmp_path / "LMUData"
    return VsiSuperCount("VsiSuperCount_10mins", data_root=write_count(lmu, tmp_path / "snap"), root=lmu)


def vsisuper_indices(n: int, v: float, nframe: int = 0, fps: float = -1) -> list[int]:
    """VLMEvalKit's VsiSuperBase.save_video_frames, as written there."""
    if nframe > 0:
        return np.linspace(0, n - 1, nframe, dtype=int).tolist()
    return [int(i * (v / fps)) for i in range(int(n / v * fps))]


def test_recall_prompt_and_frames(recall: VsiSuperRecall):
    parts = recall.build_prompt(0)
    assert [p["type"] for p in parts] == ["video", "text"]
    assert parts[1]["value"] == ("[0] Which did the camera pass first?\nOptions:\nA. sofa\nB. lamp\nC. bed\nD. desk\n"
                                 "Answer with the option's letter from the given choices directly.")
    for setting in ({"nframe": 4}, {"nframe": 16}, {"fps": 1.0}):
        taken = [frame_number(f) for f in sample_frames(parts[0]["value"], **setting).frames]
        assert taken == vsisuper_indices(40, 10.0, **setting)
    assert vsisuper_indices(40, 10.0, fps=1.0) == [0, 10, 20, 30]  # no appended last frame here


def test_recall_score_by_hand(recall: VsiSuperRecall):
    result = recall.evaluate(recall.data.assign(prediction=RECALL_REPLIES))
    assert result.metrics == pytest.approx({"Overall": 50.0, "order_accuracy": 200 / 3, "recall_accuracy": 0.0})
    assert result.scorer == "spatial_video" and result.vlmevalkit.metrics["Overall"] == pytest.approx(50.0)


def test_count_leaves_out_streaming_rows_and_scores_by_hand(count: VsiSuperCount):
    assert count.data["index"].tolist() == [0, 1, 3]
    assert count.build_prompt(0)[1]["value"] == ("These are frames of a video.\n[0] How many chairs are there?\n"
                                                 "Please answer the question using a single word or phrase.")
    result = count.evaluate(count.data.assign(prediction=[COUNT_REPLIES[i] for i in (0, 1, 3)]))
    assert result.per_sample["score"].tolist() == pytest.approx([1.0, 0.6, 1.0])
    assert result.metrics == pytest.approx({"Overall": 90.0, "a_count_MRA:.5:.95:.05": 80.0,
                                            "b_count_MRA:.5:.95:.05": 100.0})
    video = count.build_prompt(1)[0]["value"]
    assert [frame_number(f) for f in sample_frames(video, nframe=5).frames] == vsisuper_indices(33, 10.0, nframe=5)


def test_recall_through_an_api_model(lmu_root: Path, tmp_path: Path):
    from vlmkit.cli.main import main

    snapshot = write_recall(lmu_root, tmp_path / "snap")

    def reply(request):
        text = RECALL_REPLIES[row_of(request)]
        return Reply(400, {"error": {"message": "bad request"}}) if text is None else chat_reply(text)

    work = tmp_path / "out"
    with FaultServer(chat_only(reply)) as server:
        code = main(["run", "--data", "VsiSuperRecall_10mins", "--data-root", str(snapshot), "--model", "served",
                     "--api-base", server.base_url, "--work-dir", str(work), "--fps", "1", "--retries", "0",
                     "--keep-local-tsv"])
        requests = sorted(chat_requests(server.requests), key=row_of)
    assert code == 3  # finished, one row failed
    [user] = requests[1].body["messages"]
    assert frames_sent(user["content"]) == [0, 10, 20, 30]
    assert user["content"][-1]["text"].startswith("[1] Which did the camera pass first?\nOptions:\nA. sofa")
    scoring = json.loads((work / "served" / "VsiSuperRecall_10mins" / "results.json").read_text())["scoring"]
    assert scoring["metrics"] == pytest.approx({"Overall": 50.0, "order_accuracy": 200 / 3, "recall_accuracy": 0.0})
