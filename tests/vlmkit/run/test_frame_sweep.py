"""`vlmkit run --nframe 2,4`: a miniature Video-MME (tests.support.video_snapshots, frames carrying their index) at two
frame budgets in one command through an OpenAI-compatible test server: one run per budget, named as VLMEvalKit names
its settings (Video-MME_2frame, Video-MME_4frame), each budget's frames as VLMEvalKit's formula picks them, each
budget's score worked by hand, results.json's `dataset.video`, a rerun that asks nothing, and a dataset that is not
video run once as without the flag. Also the budget flags' parsing, a single value that runs as before, and the
refusals made before anything is asked."""

from __future__ import annotations

import base64
import io
import json
from pathlib import Path

import numpy as np
import pytest
from PIL import Image

from tests.datasets_tsv.benchmarks.test_video_benchmarks import VIDEOMME_ROWS
from tests.support.media_files import nearest_frame
from tests.support.run_helpers import chat_only, chat_requests, row_of
from tests.support.servers import FaultServer, Recorded, Reply, chat_reply
from tests.support.tsvs import b64, image_bytes, write_tsv
from tests.support.video_snapshots import write_mvbench, write_videomme
from vlmkit.run.frame_budgets import Budget, BudgetError, fps_values, nframe_values, single, sweep_of

FRAMES = {"vid_s": 16, "vid_m": 24, "vid_l": 40}
# Replies by the number of frames a request carries. Answers: A C D B A.
REPLIES = {
    2: ["A", "B", "D", "A", "B"],  # right: rows 0, 2 -> 2 of 5
    4: ["A", "C", "D", "B", "C"],  # right: rows 0, 1, 2, 3 -> 4 of 5
}
QUIZ = [  # a plain image MCQ (not video): the sweep runs it once
    {"index": 0, "question": "[0] Which colour?", "A": "red", "B": "blue", "answer": "A", "image": b64(image_bytes())},
    {"index": 1, "question": "[1] Which colour?", "A": "red", "B": "blue", "answer": "A", "image": b64(image_bytes())},
]


def vlmevalkit_frames(n: int, count: int) -> list[int]:
    """VLMEvalKit's Video-MME frames at nframe=count of an n-frame video: int(i * n / (count + 1)), i = 1..count."""
    step = n / (count + 1)
    return [int(i * step) for i in range(1, count + 1)]


def image_parts(request: Recorded) -> list[dict]:
    content = next(m for m in request.body["messages"] if m["role"] == "user")["content"]
    return [p for p in content if isinstance(p, dict) and p.get("type") == "image_url"]


def frame_colours(request: Recorded) -> list[int]:
    out = []
    for part in image_parts(request):
        data = base64.b64decode(part["image_url"]["url"].split(",", 1)[1])
        out.append(nearest_frame(np.asarray(Image.open(io.BytesIO(data)).convert("RGB")).mean(axis=(0, 1))))
    return out


def by_frames(request: Recorded) -> Reply:
    frames = len(image_parts(request))
    if frames in REPLIES:
        return chat_reply(REPLIES[frames][row_of(request)])
    return chat_reply("A")  # the image MCQ (one image)


def run(*args: str) -> int:
    from vlmkit.cli.main import main

    return main(["run", *args])


def results_of(work: Path, model: str, data: str) -> dict:
    return json.loads((work / model / data / "results.json").read_text())


@pytest.fixture
def snapshot(tmp_path: Path) -> Path:
    return write_videomme(tmp_path / "Video-MME", VIDEOMME_ROWS, frames=FRAMES)


def sweep_args(snapshot: Path, work: Path, base_url: str, *extra: str) -> list[str]:
    return ["--data", "Video-MME", *extra, "--data-root", str(snapshot), "--model", "served", "--api-base", base_url,
            "--work-dir", str(work), "--nframe", "2,4"]


# ----------------------------------------------------------------------------------------------------- parsing
def test_budget_flags_parse_and_name_as_vlmevalkit():
    assert tuple(nframe_values("8,16,32")) == (8, 16, 32) and nframe_values("8").key == "nframe"
    assert tuple(nframe_values("16, 8,16")) == (16, 8)  # order kept, a repeat dropped
    assert tuple(fps_values("0.5,1")) == (0.5, 1.0) and fps_values("1").key == "fps"
    assert str(nframe_values("8,16")) == "8,16" and str(fps_values("0.5,1")) == "0.5,1"  # as typed
    for bad in ("0", "8,x", "2.5", "", "8,,16", "-4"):
        with pytest.raises(BudgetError, match="--nframe"):
            nframe_values(bad)
    for bad in ("0", "nan", "1,-1", "inf"):
        with pytest.raises(BudgetError, match="--fps"):
            fps_values(bad)
    # VLMEvalKit's names of settings: Video-MME_8frame, Video-MME_0.5fps, Video-MME_1fps
    assert Budget("nframe", 8).dataset_name("Video-MME") == "Video-MME_8frame"
    assert Budget("fps", 0.5).dataset_name("Video-MME") == "Video-MME_0.5fps"
    assert Budget("fps", 1.0).dataset_name("MVBench_MP4") == "MVBench_MP4_1fps"
    # one value is a plain run: the model takes it as before
    assert sweep_of(nframe_values("8"), None) is None and single(nframe_values("8")) == 8
    assert single(fps_values("0.5")) == 0.5 and single(None) is None and single(nframe_values("8,16")) is None
    assert sweep_of(None, fps_values("0.5,1")) == [Budget("fps", 0.5), Budget("fps", 1.0)]
    with pytest.raises(BudgetError, match="not both"):
        sweep_of(nframe_values("8,16"), fps_values("1"))


def test_a_bad_budget_is_one_line(capsys):
    from vlmkit.cli.main import main

    with pytest.raises(SystemExit) as stop:
        main(["run", "--data", "Video-MME", "--model", "m", "--nframe", "8,zero"])
    assert stop.value.code == 2
    assert "--nframe takes whole numbers of frames" in capsys.readouterr().err


# ------------------------------------------------------------------------------------------------------ sweep
def test_sweep_runs_each_budget_and_a_rerun_asks_nothing(lmu_root: Path, snapshot: Path, tmp_path: Path):
    write_tsv(lmu_root / "MyQuiz.tsv", QUIZ)
    work = tmp_path / "out"
    with FaultServer(chat_only(by_frames)) as server:
        code = run(*sweep_args(snapshot, work, server.base_url, "MyQuiz"))
        requests = chat_requests(server.requests)
    assert code == 0
    video = [r for r in requests if len(image_parts(r)) != 1]
    quiz = [r for r in requests if len(image_parts(r)) == 1]
    assert len(video) == 10 and len(quiz) == 2  # 5 rows at 2 budgets; the image MCQ once
    for count in (2, 4):  # each budget's frames are VLMEvalKit's at that budget (vid_m: 24 frames, row 2)
        [request] = [r for r in video if len(image_parts(r)) == count and row_of(r) == 2]
        assert frame_colours(request) == [i % 16 for i in vlmevalkit_frames(24, count)]
    [long_row] = [r for r in video if len(image_parts(r)) == 4 and row_of(r) == 4]  # vid_l: 40 frames: 8 16 24 32
    assert frame_colours(long_row) == [8, 0, 8, 0]

    for count, hits in ((2, 2), (4, 4)):
        name = f"Video-MME_{count}frame"
        results = results_of(work, "served", name)
        assert results["status"] == "success" and results["dataset"]["name"] == name
        video_block = results["dataset"]["video"]
        assert video_block["nframe"] == count and "fps" not in video_block
        assert video_block["benchmark"] == "Video-MME" and video_block["label"] == f"{count}frame"
        assert video_block["rule"].startswith("vlmevalkit: frame int(i * n / (N + 1))")
        assert results["model"]["settings"]["nframe"] == count and results["model"]["kwargs"]["nframe"] == count
        assert results["scoring"]["primary_metric"]["value"] == pytest.approx(hits / 5)
        assert (work / "served" / name / "journal.jsonl").is_file()
        assert (work / "served" / f"served_{name}.xlsx").is_file()
    assert not (work / "served" / "Video-MME").exists()  # no run under the plain name
    quiz_results = results_of(work, "served", "MyQuiz")  # run once, as without --nframe
    assert "video" not in quiz_results["dataset"] and "nframe" not in quiz_results["model"]["kwargs"]
    assert quiz_results["scoring"]["primary_metric"]["value"] == pytest.approx(1.0)

    # the same command again: every budget's answers are journalled; nothing is asked
    with FaultServer(chat_only(by_frames)) as server:
        assert run(*sweep_args(snapshot, work, server.base_url, "MyQuiz")) == 0
        assert chat_requests(server.requests) == []
    assert results_of(work, "served", "Video-MME_4frame")["scoring"]["primary_metric"]["value"] == pytest.approx(0.8)


def test_a_sweep_asks_only_the_budget_it_lacks(lmu_root: Path, snapshot: Path, tmp_path: Path):
    work = tmp_path / "out"
    with FaultServer(chat_only(by_frames)) as server:  # budget 2 first, alone under its sweep name...
        args = sweep_args(snapshot, work, server.base_url)
        assert run(*args[:-1], "2,2") == 0  # a repeated value is one budget: a plain run, under the plain name
    assert (work / "served" / "Video-MME").is_dir() and not (work / "served" / "Video-MME_2frame").exists()
    with FaultServer(chat_only(by_frames)) as server:
        assert run(*sweep_args(snapshot, work, server.base_url)) == 0
        first = chat_requests(server.requests)
    with FaultServer(chat_only(by_frames)) as server:
        assert run(*sweep_args(snapshot, work, server.base_url)[:-1], "2,4,8") == 0
        asked = chat_requests(server.requests)
    assert len(first) == 10
    assert sorted({len(image_parts(r)) for r in asked}) == [8] and len(asked) == 5  # only the new budget
    assert results_of(work, "served", "Video-MME_8frame")["dataset"]["video"]["nframe"] == 8


def test_one_value_runs_as_before(lmu_root: Path, snapshot: Path, tmp_path: Path):
    work = tmp_path / "out"
    with FaultServer(chat_only(by_frames)) as server:
        assert run(*sweep_args(snapshot, work, server.base_url)[:-1], "4") == 0
    results = results_of(work, "served", "Video-MME")
    assert results["dataset"]["name"] == "Video-MME" and "video" not in results["dataset"]
    assert results["model"]["settings"]["nframe"] == 4
    assert results["scoring"]["primary_metric"]["value"] == pytest.approx(0.8)


def test_fps_sweep_refuses_mvbench_before_asking(lmu_root: Path, tmp_path: Path, capsys):
    from tests.datasets_tsv.benchmarks.test_video_benchmarks import MVBENCH_ITEMS

    mvbench = write_mvbench(tmp_path / "MVBench", MVBENCH_ITEMS)
    with FaultServer(chat_only(by_frames)) as server:
        code = run("--data", "MVBench", "--data-root", str(mvbench), "--model", "served", "--api-base",
                   server.base_url, "--work-dir", str(tmp_path / "out"), "--fps", "0.5,1")
        assert chat_requests(server.requests) == []
    assert code == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith("vlmkit: error: MVBench") and "--nframe" in err[0]
    assert not (tmp_path / "out").exists() or not any((tmp_path / "out").rglob("journal*.jsonl"))


def test_sweep_does_not_go_with_perf_mode(lmu_root: Path, snapshot: Path, tmp_path: Path, capsys):
    code = run("--data", "Video-MME", "--data-root", str(snapshot), "--model", "m", "--api-base",
               "http://127.0.0.1:9/v1", "--mode", "perf", "--nframe", "2,4")
    assert code == 2
    assert "--nframe with several values is a sweep" in capsys.readouterr().err


def test_a_subtitle_variant_runs_once_at_its_own_budget(lmu_root: Path, snapshot: Path, tmp_path: Path, capsys):
    work = tmp_path / "out"
    common = ["--data", "Video-MME", "Video-MME_8frame_subs", "--data-root", str(snapshot), "--model", "served",
              "--work-dir", str(work)]
    with FaultServer(chat_only(by_frames)) as server:
        assert run(*common, "--api-base", server.base_url, "--nframe", "4,8") == 0
        asked = chat_requests(server.requests)
    assert sorted(p.name for p in (work / "served").iterdir() if p.is_dir()) == [
        "Video-MME_4frame", "Video-MME_8frame", "Video-MME_8frame_subs"]
    assert len(asked) == 15 and sorted(len(image_parts(r)) for r in asked) == [4] * 5 + [8] * 10
    subs = results_of(work, "served", "Video-MME_8frame_subs")  # under its own name, at the frames it was made for
    assert subs["model"]["settings"]["nframe"] == 8 and "video" not in subs["dataset"]
    capsys.readouterr()
    # a sweep without its budget: one line before anything is asked
    with FaultServer(chat_only(by_frames)) as server:
        assert run(*common, "--api-base", server.base_url, "--nframe", "2,4") == 2
        assert chat_requests(server.requests) == []
    assert capsys.readouterr().err.strip().splitlines() == [
        "vlmkit: error: Video-MME_8frame_subs shows its subtitle lines at nframe=8, which no budget of this sweep is: "
        "add 8 to --nframe, or run it apart"]


def test_a_sweep_under_data_parallel(lmu_root: Path, tmp_path: Path):
    """--data-parallel 2 with --nframe 2,4 (a local tiny Qwen2-VL on CPU): each child runs its shard of every budget
    (its command line carries the sweep as typed), and the parent scores each budget from both shards' journals."""
    from tests.support.tiny_models import build_tiny_qwen2_vl

    tiny = build_tiny_qwen2_vl(tmp_path / "tiny-qwen2-vl")
    snapshot = write_videomme(tmp_path / "Video-MME", VIDEOMME_ROWS[:3], frames=FRAMES)
    work = tmp_path / "out"
    assert run("--data", "Video-MME", "--data-root", str(snapshot), "--model", "tiny", "--model-path", str(tiny),
               "--work-dir", str(work), "--nframe", "2,4", "--max-tokens", "2", "--data-parallel", "2") == 0
    for i in (0, 1):
        assert "--nframe=2,4" in (work / "logs" / f"data_parallel.shard{i}of2.log").read_text().splitlines()[0]
    for count in (2, 4):
        folder = work / "tiny" / f"Video-MME_{count}frame"
        results = json.loads((folder / "results.json").read_text())
        assert results["status"] == "success" and results["counts"]["completed"] == 3
        assert results["run"]["data_parallel"] == 2 and results["dataset"]["video"]["nframe"] == count
        assert results["model"]["kwargs"]["nframe"] == count
        for i, rows in ((0, [0, 2]), (1, [1])):  # shard i of 2: rows i, i + 2, ...
            records = [json.loads(line) for line in (folder / f"journal.shard{i}of2.jsonl").open()]
            assert sorted(r["index"] for r in records if "index" in r) == rows


def test_a_prompt_that_names_its_frames_runs_once_at_that_budget() -> None:
    """MMBench-Video / QBench_Video / STI-Bench name the frame count in their prompts (`prompt_sampling`): a sweep runs
    such a dataset once, under its own name, at the budget it names, and refuses it when no budget is that one."""
    from types import SimpleNamespace

    from vlmkit.core.errors import ConfigError
    from vlmkit.run.frame_budgets import Budget
    from vlmkit.run.frame_sweep import plan_sweep

    named = SimpleNamespace(name="QBench_Video_MCQ", kind="video", subtitle_sampling=None,
                            prompt_sampling={"nframe": 8})
    free = SimpleNamespace(name="Video-MME", kind="video", subtitle_sampling=None, prompt_sampling=None)
    plan = plan_sweep([named, free], [Budget("nframe", 4), Budget("nframe", 8)])
    assert [[d.name for d in runs] for runs in plan.per_budget] == [["Video-MME_4frame"], ["QBench_Video_MCQ",
                                                                                          "Video-MME_8frame"]]
    with pytest.raises(ConfigError, match=r"^QBench_Video_MCQ names in its prompt nframe=8, which no budget of this "
                                          r"sweep is: add 8 to --nframe"):
        plan_sweep([named], [Budget("nframe", 4), Budget("nframe", 16)])
