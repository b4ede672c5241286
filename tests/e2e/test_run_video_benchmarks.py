"""`vlmkit run --data Video-MME|MVBench --data-root DIR` end to end on miniature snapshots (tests.support.video_snapshots):
(a) through an API model (an in-test OpenAI-compatible server) that receives the sampled frames: the number of
frames, which frames, and VLMEvalKit's prompt texts arrive, and results.json holds the hand-worked scores and the
frame settings; (b) through a tiny local Qwen2-VL that takes the video natively.

The catalog rows these benchmarks need are the ones proposed for datasets_tsv/catalog/catalog.tsv (`ROWS`, checked here with
the catalog's own parser); while the packaged catalog does not have them yet, the tests add them for the run."""

from __future__ import annotations

import base64
import io
import json
from pathlib import Path

import numpy as np
import pytest
from PIL import Image

from tests.datasets_tsv.benchmarks.test_video_benchmarks import (
    MVBENCH_ITEMS,
    MVBENCH_REPLIES,
    MVBENCH_SYS,
    VIDEOMME_FRAMES,
    VIDEOMME_REPLIES,
    VIDEOMME_ROWS,
)
from tests.support.run_helpers import chat_only, chat_requests, row_of
from tests.support.media_files import nearest_frame
from tests.support.servers import FaultServer, Recorded, Reply, chat_reply
from tests.support.video_snapshots import write_mvbench, write_videomme

HEADER = "name\tkind\tstatus\tscorer\tjudge\trows\tclass\tkwargs\turl\tmd5\tdescription\tnotes\n"
VIDEOMME_NOTE = (
    "no download: the rows are read from a local snapshot of lmms-lab/Video-MME (its parquet, or the Video-MME.tsv "
    "VLMEvalKit writes there, MD5 85bdd91f9b29a99354c23b97ab7c113c, not checked)"
)
MVBENCH_NOTE = (
    "no download: the rows are read from a local snapshot of OpenGVLab/MVBench (json/<task>.json); VLMEvalKit's "
    "MVBench.tsv MD5 fd21d36522cdedd46d84dc46715ad832 is of a TSV vlmkit does not build"
)
ROWS = (
    "Video-MME\tvideo\tok\tvideomme\toptional\t2700\tdatasets_tsv.benchmarks.videomme:VideoMME\t{}\t\t\t"
    "Video-MME from a local snapshot of lmms-lab/Video-MME (--data-root DIR, or the Hugging Face cache)\t"
    f"{VIDEOMME_NOTE}\n"
    "Video-MME_8frame_subs\tvideo\tok\tvideomme\toptional\t2700\tdatasets_tsv.benchmarks.videomme:VideoMME\t"
    '{"use_subtitle": true, "nframe": 8}\t\t\tVideo-MME with the subtitle lines at VLMEvalKit\'s 8 frames (run the '
    f"model with --nframe 8)\t{VIDEOMME_NOTE}\n"
    "Video-MME_0.5fps_subs\tvideo\tok\tvideomme\toptional\t2700\tdatasets_tsv.benchmarks.videomme:VideoMME\t"
    '{"use_subtitle": true, "fps": 0.5}\t\t\tVideo-MME with the subtitle lines at VLMEvalKit\'s frames at 0.5 fps '
    f"(run the model with --fps 0.5)\t{VIDEOMME_NOTE}\n"
    "MVBench\tvideo\tok\tmvbench\toptional\t4000\tdatasets_tsv.benchmarks.mvbench:MVBench\t{}\t\t\t"
    "MVBench from a local snapshot of OpenGVLab/MVBench (--data-root DIR, or the Hugging Face cache)\t"
    f"{MVBENCH_NOTE}\n"
    "MVBench_MP4\tvideo\tok\tmvbench\toptional\t\tdatasets_tsv.benchmarks.mvbench:MVBenchMP4\t{}\t\t\t"
    "MVBench_MP4 from a local snapshot of OpenGVLab/MVBench, branch video (--data-root DIR, or the Hugging Face "
    "cache)\tno download: the rows are read from a local snapshot of OpenGVLab/MVBench, branch video (test.json)\n"
)


@pytest.fixture
def catalog(monkeypatch: pytest.MonkeyPatch) -> dict:
    """The packaged catalog plus ROWS (parsed and validated by the catalog's parser)."""
    from datasets_tsv.catalog import entries as catalog_module
    from datasets_tsv.catalog import registry
    rows = {row.name: row for row in catalog_module.parse_rows(HEADER + ROWS, "proposed rows")}
    packaged = catalog_module.catalog_rows()
    for name, row in rows.items():  # once the rows are in the catalog they must build the same classes
        if packaged.get(name) is not None and packaged[name].status == "ok":
            have = packaged[name]
            assert (have.cls, have.scorer, have.kwargs) == (row.cls, row.scorer, row.kwargs)
    merged = {**packaged, **rows}
    monkeypatch.setattr(registry, "catalog_rows", lambda: merged)
    return merged


def run(*args: str) -> int:
    from vlmkit.cli.main import main

    return main(["run", *args])


def by_row(replies: list[str]):
    return chat_only(lambda request: chat_reply(replies[row_of(request)]))


def frame_colours(content: list[dict]) -> list[int]:
    """The palette index of every image part of a request (the frames' mean colour)."""
    out = []
    for part in content:
        if part["type"] == "image_url":
            data = base64.b64decode(part["image_url"]["url"].split(",", 1)[1])
            out.append(nearest_frame(np.asarray(Image.open(io.BytesIO(data)).convert("RGB")).mean(axis=(0, 1))))
    return out


def results_of(work: Path, model: str, data: str) -> dict:
    return json.loads((work / model / data / "results.json").read_text())


# ------------------------------------------------------------------------------------------------- API model
def test_videomme_through_an_api_model(catalog: dict, lmu_root: Path, tmp_path: Path):
    snapshot = write_videomme(tmp_path / "Video-MME", VIDEOMME_ROWS, frames={"vid_s": 16, "vid_m": 24, "vid_l": 40})
    work = tmp_path / "out"
    with FaultServer(by_row(VIDEOMME_REPLIES)) as server:
        code = run("--data", "Video-MME", "--data-root", str(snapshot), "--model", "served", "--api-base",
                   server.base_url, "--work-dir", str(work), "--nframe", "4")
        requests = sorted(chat_requests(server.requests), key=row_of)
    assert code == 0
    assert len(requests) == 5
    for row, request in zip(VIDEOMME_ROWS, requests):
        [message] = request.body["messages"]  # no system turn (VLMEvalKit's SYS is empty)
        content = message["content"]
        assert [p["type"] for p in content] == ["image_url"] * 4 + ["text", "text"]
        question = row["question"] + "\n" + "\n".join(row["candidates"])
        assert [p["text"] for p in content[4:]] == [VIDEOMME_FRAMES, f"Question: {question}\nAnswer: "]
    # 24 frames, 4 asked: VLMEvalKit's frames int(i * 24 / 5), i = 1..4: 4 9 14 19 (palette wraps at 16)
    assert frame_colours(requests[2].body["messages"][0]["content"]) == [4, 9, 14, 3]
    results = results_of(work, "served", "Video-MME")
    assert results["status"] == "success" and results["dataset"]["kind"] == "video"
    frames = results["dataset"]["frames"]  # the sampling rule and the decoder are in results.json
    assert frames["sampler"].startswith("vlmevalkit") and frames["decoder"] == "opencv"
    assert results["model"]["settings"]["nframe"] == 4 and results["model"]["settings"]["fps"] is None
    scoring = results["scoring"]
    assert scoring["primary_metric"]["value"] == pytest.approx(0.6) and scoring["scale"]["scale"] == "fraction"
    assert [scoring["metrics"][d] for d in ("short", "medium", "long")] == [1.0, 0.5, 0.0]
    assert scoring["metrics"]["domain: Knowledge"] == pytest.approx(2 / 3)
    assert [r["duration"] for r in scoring["breakdown"]] == ["short", "medium", "long", "overall"]
    assert scoring["counts"]["unread"] == 1
    assert (work / "served" / "served_Video-MME_acc.csv").is_file()


def test_mvbench_through_an_api_model(catalog: dict, lmu_root: Path, tmp_path: Path):
    snapshot = write_mvbench(tmp_path / "MVBench", MVBENCH_ITEMS)
    work = tmp_path / "out"
    with FaultServer(by_row(MVBENCH_REPLIES)) as server:
        code = run("--data", "MVBench", "--data-root", str(snapshot), "--model", "served", "--api-base",
                   server.base_url, "--work-dir", str(work), "--nframe", "4")
        requests = sorted(chat_requests(server.requests), key=row_of)
    assert code == 0 and len(requests) == 5
    for request in requests:
        system, user, prefill = request.body["messages"]
        assert system == {"role": "system", "content": MVBENCH_SYS}
        kinds = [p["type"] for p in user["content"]]
        # VLMEvalKit's order: the frames, then the question and "Only give the best option.", then its assistant
        # turn "Best option:(" (a prefill: sent as the last assistant message, as VLMEvalKit's API wrappers send it)
        assert kinds[:4] == ["image_url"] * 4 and kinds[4:] == ["text"] * 2
        assert user["content"][-1]["text"] == "\nOnly give the best option."
        assert prefill == {"role": "assistant", "content": "Best option:("}
    # VLMEvalKit's get_index at N = 4, seg = (hi - lo) / 4, frames int(lo + seg / 2 + round(seg * k)):
    # row 0, seconds 1..2 of a 32-frame 8 fps video: lo 8, hi 16, seg 2: frames 9 11 13 15
    first = requests[0].body["messages"][1]["content"]
    assert first[4]["text"] == "Question: [0] What happened after?\nOptions:\n(A) sat\n(B) stood\n(C) ran"
    assert frame_colours(first) == [9, 11, 13, 15]
    # row 3, a frame folder of 12 files from 1 at 3 fps, seconds 1..3: lo 3, hi 9, seg 1.5: files 3 5 6 7 (colour k-1)
    assert frame_colours(requests[3].body["messages"][1]["content"]) == [2, 4, 5, 6]
    # row 1, a WebM video (MVBench's ssv2 clips) as it is, 32 frames: lo 0, hi 31, seg 7.75: frames 3 11 19 26
    # (round(15.5) = 16, half to even)
    assert frame_colours(requests[1].body["messages"][1]["content"]) == [3, 11, 3, 10]
    results = results_of(work, "served", "MVBench")
    assert results["status"] == "success"
    assert results["model"]["settings"]["nframe"] == 4 and results["model"]["settings"]["fps"] is None
    scoring = results["scoring"]
    assert scoring["scale"]["scale"] == "percent"
    assert scoring["metrics"] == pytest.approx({"Overall": 60.0, "Action Sequence": 100.0, "Action Antonym": 50.0,
                                                "Episodic Reasoning": 50.0})
    records = [json.loads(line) for line in (work / "served" / "MVBench" / "predictions.jsonl").open()]
    assert [r["hit"] for r in records] == [True, True, False, True, False]
    # a second run finds every answer journalled under the same prompts (the clips are reused): nothing is asked
    with FaultServer(by_row(MVBENCH_REPLIES)) as server:
        assert run("--data", "MVBench", "--data-root", str(snapshot), "--model", "served", "--api-base",
                   server.base_url, "--work-dir", str(work), "--nframe", "4") == 0
        assert chat_requests(server.requests) == []


def test_videomme_with_a_judge_for_the_unread_reply(catalog: dict, lmu_root: Path, tmp_path: Path):
    snapshot = write_videomme(tmp_path / "Video-MME", VIDEOMME_ROWS)
    work = tmp_path / "out"

    def judge(request: Recorded) -> Reply:
        if request.method == "GET":
            return Reply(404, {"error": {"message": "no models route"}})
        return chat_reply("B")

    with FaultServer(by_row(VIDEOMME_REPLIES)) as model, FaultServer(judge) as judge_server:
        code = run("--data", "Video-MME", "--data-root", str(snapshot), "--model", "served", "--api-base",
                   model.base_url, "--work-dir", str(work), "--nframe", "2", "--judge", "judge-m",
                   "--judge-api-base", judge_server.base_url)
        asked = chat_requests(judge_server.requests)
    assert code == 0
    [request] = asked  # only the reply no rule reads (row 3), with the row's candidates as the options
    prompt = request.body["messages"][-1]["content"]
    assert "I cannot tell from this." in prompt and "B. green" in prompt and "[3] Why did he run?" in prompt
    scoring = results_of(work, "served", "Video-MME")["scoring"]
    assert scoring["counts"]["by_judge"] == 1 and scoring["counts"]["unread"] == 0
    assert scoring["primary_metric"]["value"] == pytest.approx(0.8)  # row 3's answer is B: 4 of 5


def test_missing_snapshot_is_one_line(catalog: dict, lmu_root: Path, tmp_path: Path, capsys, monkeypatch):
    monkeypatch.setenv("HF_HUB_CACHE", str(tmp_path / "hub"))
    with FaultServer(by_row(["A"])) as server:
        code = run("--data", "MVBench", "--model", "served", "--api-base", server.base_url, "--work-dir",
                   str(tmp_path / "out"))
        asked = chat_requests(server.requests)
    err = capsys.readouterr().err.strip().splitlines()
    assert code == 2 and asked == []
    expected = (
        f"vlmkit: error: MVBench: no local snapshot of OpenGVLab/MVBench (looked in {tmp_path / 'hub'}); pass "
        "--data-root DIR (a folder holding json/<task>.json for its 20 tasks and the videos unzipped under video/), "
        "or download it with `hf download OpenGVLab/MVBench --repo-type dataset`"
    )
    assert err == [expected]


def test_subtitle_variants_by_name(catalog: dict, tmp_path: Path):
    from datasets_tsv.catalog.registry import build_dataset

    snapshot = write_videomme(tmp_path / "Video-MME", VIDEOMME_ROWS[:1])
    eight = build_dataset("Video-MME_8frame_subs", root=tmp_path, data_root=snapshot)
    half = build_dataset("Video-MME_0.5fps_subs", root=tmp_path, data_root=snapshot)
    assert (eight.use_subtitle, eight.subtitle_sampling, half.subtitle_sampling) == (True, {"nframe": 8}, {"fps": 0.5})
    assert "This video's subtitles are listed below:" in eight.build_prompt(0)[1]["value"]
    assert any("run it with --nframe 8" in note for note in eight.info()["notes"])


# ------------------------------------------------------------------------------------------------- local model
@pytest.fixture(scope="module")
def tiny_qwen(tmp_path_factory: pytest.TempPathFactory) -> Path:
    from tests.support.tiny_models import build_tiny_qwen2_vl

    return build_tiny_qwen2_vl(tmp_path_factory.mktemp("models") / "tiny-qwen2-vl")


def test_both_through_a_local_qwen2_vl_with_native_video(catalog: dict, lmu_root: Path, tmp_path: Path,
                                                          tiny_qwen: Path):
    videomme = write_videomme(tmp_path / "Video-MME", VIDEOMME_ROWS[:2])
    mvbench = write_mvbench(tmp_path / "MVBench", {"Action Sequence": MVBENCH_ITEMS["Action Sequence"],
                                                   "Episodic Reasoning": MVBENCH_ITEMS["Episodic Reasoning"][:1]})
    work = tmp_path / "out"
    common = ("--model", "tiny", "--model-path", str(tiny_qwen), "--work-dir", str(work), "--nframe", "2",
              "--max-tokens", "2", "--batch-size", "2")
    assert run("--data", "Video-MME", "--data-root", str(videomme), *common) == 0
    assert run("--data", "MVBench", "--data-root", str(mvbench), *common) == 0
    for name, n in (("Video-MME", 2), ("MVBench", 2)):
        results = results_of(work, "tiny", name)
        settings = results["model"]["settings"]
        assert results["status"] == "success" and results["counts"]["completed"] == n
        assert settings["video_input"] == "native" and settings["nframe"] == 2
        assert settings["video_processor"] == "vlm.local.qwen_video (torchvision-free)"
        assert results["usage"]["input_tokens"] > 0
        records = [json.loads(line) for line in (work / "tiny" / name / "predictions.jsonl").open()]
        assert all(isinstance(r["prediction"], str) and r["error"] is None for r in records)
        videos = [p["value"] for r in records for turn in r["prompt"] for p in turn["content"] if p["type"] == "video"]
        assert len(videos) == n and all(Path(v).is_file() for v in videos)
    # the MVBench prompt keeps its system turn
    record = json.loads((work / "tiny" / "MVBench" / "predictions.jsonl").open().readline())
    assert record["prompt"][0] == {"role": "system", "content": [{"type": "text", "value": MVBENCH_SYS}]}


def test_a_subtitle_variant_refuses_a_model_that_samples_other_frames(catalog: dict, lmu_root: Path, tmp_path: Path,
                                                                      capsys):
    snapshot = write_videomme(tmp_path / "Video-MME", VIDEOMME_ROWS[:1])
    with FaultServer(by_row(["A"])) as server:
        code = run("--data", "Video-MME_8frame_subs", "--data-root", str(snapshot), "--model", "served",
                   "--api-base", server.base_url, "--work-dir", str(tmp_path / "out"), "--nframe", "4")
        asked = chat_requests(server.requests)
        err = capsys.readouterr().err.strip().splitlines()
        assert code == 2 and asked == []
        assert err == ["vlmkit: error: Video-MME_8frame_subs shows the subtitle lines at nframe=8, but served would "
                       "sample nframe=4: run it with --nframe 8"]
        code = run("--data", "Video-MME_8frame_subs", "--data-root", str(snapshot), "--model", "served",
                   "--api-base", server.base_url, "--work-dir", str(tmp_path / "out"))  # the models' default: 8
        assert code == 0 and len(chat_requests(server.requests)) == 1


def test_mvbench_refuses_fps_before_asking_anything(catalog: dict, lmu_root: Path, tmp_path: Path, capsys):
    """VLMEvalKit's MVBench samples by nframe only: --fps is one line and no request, not an error on every row."""
    snapshot = write_mvbench(tmp_path / "MVBench", MVBENCH_ITEMS)
    with FaultServer(by_row(MVBENCH_REPLIES)) as server:
        code = run("--data", "MVBench", "--data-root", str(snapshot), "--model", "served", "--api-base",
                   server.base_url, "--work-dir", str(tmp_path / "out"), "--fps", "1")
        asked = chat_requests(server.requests)
    err = capsys.readouterr().err.strip().splitlines()
    assert code == 2 and asked == []
    assert any("MVBench" in line and "nframe only" in line and "--nframe" in line for line in err)
