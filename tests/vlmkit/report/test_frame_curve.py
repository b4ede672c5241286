"""`vlmkit report` on the runs of a frame-budget sweep and of two video modes, all made by `vlmkit run` on a
miniature Video-MME through an OpenAI-compatible test server (results.json and predictions.jsonl, nothing else):
- score against frames: the console table, report.md and frame_curves.csv (rows model, columns budget) with the
  scores worked by hand, and the page's line chart (one line per model, a point per budget, opened in Chromium
  where it is installed);
- video modes: the same model asked with frames and with video_url (the second run sets the first aside in the
  same folder), both scores, the McNemar test worked by hand and the one-line reading."""

from __future__ import annotations

import csv
import json
import math
import re
from pathlib import Path

import pytest

from tests.datasets_tsv.benchmarks.test_video_benchmarks import VIDEOMME_ROWS
from tests.support.browser import dump_dom, find_browser, parse
from tests.support.run_helpers import chat_only, row_of
from tests.support.servers import FaultServer, Recorded, Reply, chat_reply
from tests.support.video_snapshots import write_videomme
from vlmkit.report.cli import main as report_main
from vlmkit.report.paired import mcnemar_exact

FRAMES = {"vid_s": 16, "vid_m": 24, "vid_l": 40}
# Answers A C D B A. Replies by model and by the frames a request carries (0: a video_url request).
REPLIES = {
    "served-a": {2: ["A", "B", "D", "A", "B"],  # rows 0, 2 right: 0.4
                 4: ["A", "C", "D", "B", "C"],  # rows 0-3 right: 0.8
                 0: ["A", "C", "D", "B", "A"]},  # every row: 1.0
    "served-b": {2: ["A", "C", "D", "B", "A"],  # 1.0
                 4: ["A", "C", "D", "A", "B"]},  # rows 0-2 right: 0.6
}


def _content(request: Recorded) -> list[dict]:
    return next(m for m in request.body["messages"] if m["role"] == "user")["content"]


def answer(request: Recorded) -> Reply:
    content = _content(request)
    kinds = [p.get("type") for p in content]
    frames = 0 if "video_url" in kinds else kinds.count("image_url")
    return chat_reply(REPLIES[request.body["model"]][frames][row_of(request)])


def run(*args: str) -> int:
    from vlmkit.cli.main import main

    return main(["run", *args])


@pytest.fixture
def snapshot(tmp_path: Path) -> Path:
    return write_videomme(tmp_path / "Video-MME", VIDEOMME_ROWS, frames=FRAMES)


def page_data(page: Path) -> dict:
    text = page.read_text(encoding="utf-8")
    block = re.search(r'<script type="application/json" id="vlmkit-data">(.*?)</script>', text, re.S)
    return json.loads(block.group(1))


def test_score_by_frames_table_csv_md_and_chart(lmu_root: Path, snapshot: Path, tmp_path: Path, capsys):
    work = tmp_path / "out"
    with FaultServer(chat_only(answer)) as server:
        assert run("--data", "Video-MME", "--data-root", str(snapshot), "--model", "served-a", "served-b",
                   "--api-base", server.base_url, "--work-dir", str(work), "--nframe", "2,4") == 0
    capsys.readouterr()
    tables, page = tmp_path / "tables", tmp_path / "page.html"
    assert report_main(["report", str(work), "--out", str(tables), "--html", str(page)]) == 0
    out = capsys.readouterr().out
    section = out[out.index("score by frame budget"):].splitlines()
    assert section[0] == "score by frame budget - Video-MME: Overall (fraction) by frames"  # Video-MME's headline
    assert section[1].split() == ["model", "2", "frames", "4", "frames"]
    assert section[3].split() == ["served-a", "0.4000", "0.8000"]
    assert section[4].split() == ["served-b", "1.0000", "0.6000"]
    assert "video modes" not in out  # one mode only: no such section

    with (tables / "frame_curves.csv").open(newline="") as handle:
        rows = list(csv.DictReader(handle))
    assert [(r["benchmark"], r["unit"], r["model"], float(r["2 frames"]), float(r["4 frames"])) for r in rows] == [
        ("Video-MME", "frames", "served-a", 0.4, 0.8), ("Video-MME", "frames", "served-b", 1.0, 0.6)]
    md = (tables / "report.md").read_text()
    assert "## Score by frame budget" in md and "| served-a | 0.4000 | 0.8000 |" in md

    [curve] = page_data(page)["frame_curves"]
    assert curve["budgets"] == [2, 4] and curve["unit"] == "frames" and curve["hib"] is True
    assert [(s["model"], [p[:3] for p in s["points"]]) for s in curve["series"]] == [
        ("served-a", [[2, 0.4, "0.4000"], [4, 0.8, "0.8000"]]), ("served-b", [[2, 1.0, "1.0000"], [4, 0.6, "0.6000"]])]
    assert curve["rules"] and curve["rules"][0].startswith("vlmevalkit")

    browser = find_browser()
    if browser is None:
        pytest.skip("no Chromium on PATH (apt-get install chromium): the chart was not drawn in a browser")
    dom = parse(dump_dom(browser, page.as_uri(), tmp_path / "profile"))
    [chart] = [n for n in dom.find_all("svg") if "curve" in n.classes]
    lines = [n for n in chart.iter() if not isinstance(n, str) and n.tag == "polyline"]
    dots = [n for n in chart.iter() if not isinstance(n, str) and n.tag == "circle"]
    assert len(lines) == 2 and len(dots) == 4
    # served-a rises from 2 to 4 frames, served-b falls: SVG y grows downwards
    y = {(d.attrs["data-model"], d.attrs["data-budget"]): float(d.attrs["cy"]) for d in dots}
    assert y[("served-a", "4")] < y[("served-a", "2")] and y[("served-b", "4")] > y[("served-b", "2")]
    assert y[("served-b", "2")] < y[("served-a", "4")]  # 1.0 above 0.8


def test_video_modes_section_from_two_runs(lmu_root: Path, snapshot: Path, tmp_path: Path, capsys):
    work = tmp_path / "out"
    common = ["--data", "Video-MME", "--data-root", str(snapshot), "--model", "served-a", "--work-dir", str(work),
              "--nframe", "2"]
    with FaultServer(chat_only(answer)) as server:
        assert run(*common, "--api-base", server.base_url) == 0  # frames (the default)
        assert run(*common, "--api-base", server.base_url, "--video-mode", "video_url") == 0
    # the second run set the first aside beside it
    assert sorted(p.name for p in (work / "served-a" / "Video-MME").glob("results*.json")) == [
        "results.json", "results.stale1.json"]
    capsys.readouterr()
    tables, page = tmp_path / "tables", tmp_path / "page.html"
    assert report_main(["report", str(work), "--out", str(tables), "--html", str(page)]) == 0
    out = capsys.readouterr().out
    section = out[out.index("video modes"):].splitlines()
    # frames at 2: rows 0, 2 right (0.4); video_url: every row (1.0). Discordant: rows 1, 3, 4, right in B only:
    # McNemar exact p = 2 * P(X <= 0), X ~ Binomial(3, 1/2) = 2 / 8
    p = 2 * (1 / 8)
    assert mcnemar_exact(0, 3) == pytest.approx(p)
    row = section[3].split()
    assert row[0] == "Video-MME" and "0.4000" in row and "1.0000" in row
    assert row[-3:] == ["+0.6000", "0/3", f"{p:.3g}"]
    [reading] = [line for line in section if line.startswith("Video-MME: served-a (frames, 2 frames) -> served-a "
                                                                 "(video_url, server's sampling)")]
    assert "inside the noise" in reading and "p = 0.25" in reading
    assert "score by frame budget" not in out  # one budget: no curve

    [pair] = page_data(page)["video_modes"]
    assert (pair["a"]["mode"], pair["b"]["mode"]) == ("frames", "video_url")
    assert (pair["a_only"], pair["b_only"]) == (0, 3) and pair["p_value"] == pytest.approx(p)
    assert pair["difference"] == pytest.approx(0.6) and pair["method"] == "mcnemar_exact"
    md = (tables / "report.md").read_text()
    assert "## Video modes" in md and "inside the noise" in md


def test_mode_reading_says_when_the_gap_is_beyond_the_noise():
    from vlmkit.report.paired import mcnemar
    from vlmkit.report.video_modes import ModeRun, _reading

    # 8 rows right with video_url only, none with frames only: p = 2 / 2**8
    test = mcnemar([False] * 8 + [True] * 2, [True] * 10)
    assert test.p_value == pytest.approx(2 / 256)
    a, b = (ModeRun(None, mode, "V", None) for mode in ("frames", "video_url"))  # type: ignore[arg-type]
    line = _reading(a, b, test)
    assert "video_url gains beyond the noise" in line and "+0.8000 on 10 sample(s)" in line


@pytest.fixture(scope="module")
def tiny_qwen(tmp_path_factory: pytest.TempPathFactory) -> Path:
    from tests.support.tiny_models import build_tiny_qwen2_vl

    return build_tiny_qwen2_vl(tmp_path_factory.mktemp("models") / "tiny-qwen2-vl")


def test_a_local_model_swept_and_paired_with_a_served_one(lmu_root: Path, snapshot: Path, tmp_path: Path,
                                                          tiny_qwen: Path, capsys):
    """A local Qwen2-VL (native video) swept at 2 and 4 frames, and a served model at 2 frames on the same rows:
    the curve holds both models, and the video-modes section pairs the served run with the local run at its budget
    only, the McNemar counts taken here from the two predictions files."""
    work = tmp_path / "out"
    assert run("--data", "Video-MME", "--data-root", str(snapshot), "--model", "tiny", "--model-path", str(tiny_qwen),
               "--work-dir", str(work), "--nframe", "2,4", "--max-tokens", "2", "--batch-size", "5") == 0
    for count in (2, 4):
        results = json.loads((work / "tiny" / f"Video-MME_{count}frame" / "results.json").read_text())
        assert results["status"] == "success" and results["model"]["settings"]["nframe"] == count
        assert results["model"]["settings"]["video_input"] == "native"
        assert results["dataset"]["video"]["nframe"] == count
    with FaultServer(chat_only(answer)) as server:
        assert run("--data", "Video-MME", "--data-root", str(snapshot), "--model", "served-a", "--api-base",
                   server.base_url, "--work-dir", str(work), "--nframe", "2") == 0
    capsys.readouterr()
    assert report_main(["report", str(work), "--out", str(tmp_path / "tables")]) == 0
    out = capsys.readouterr().out
    curve = out[out.index("score by frame budget"):].splitlines()
    assert [line.split()[0] for line in curve[3:5]] == ["served-a", "tiny"]
    assert curve[3].split()[1:] == ["0.4000", "-"]  # served-a ran at 2 frames only

    def hits(path: Path) -> dict[int, bool]:
        return {r["index"]: bool(r["hit"]) for r in map(json.loads, path.open())}

    served = hits(work / "served-a" / "Video-MME" / "predictions.jsonl")
    local = hits(work / "tiny" / "Video-MME_2frame" / "predictions.jsonl")
    a_only = sum(served[i] and not local[i] for i in served)
    b_only = sum(local[i] and not served[i] for i in served)
    n = a_only + b_only  # McNemar exact: 2 * P(X <= min(b, c)), X ~ Binomial(b + c, 1/2)
    p = min(1.0, 2 * sum(math.comb(n, k) for k in range(min(a_only, b_only) + 1)) / 2**n)
    section = out[out.index("video modes"):].splitlines()
    rows = [line for line in section[3:] if line.startswith("Video-MME ")]
    assert len(rows) == 1  # the local run at 4 frames is not paired with the served run at 2
    assert "served-a (frames, 2 frames)" in rows[0] and "tiny (local, 2 frames)" in rows[0]
    assert rows[0].split()[-2:] == [f"{a_only}/{b_only}", f"{p:.3g}"]
    assert any("the local model's own video path against the served model's separate frames" in line
               for line in section)
