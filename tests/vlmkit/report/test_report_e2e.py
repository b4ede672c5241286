"""The report over what real commands wrote: two `vlmkit run`s of one Y/N benchmark against an in-test server (one
partial) and a `vlmkit perf` run with its plots, all in one work dir; then the table, the page (in Chromium when
there is one) and the diff."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import pytest

from tests.support.run_helpers import chat_only, row_of, vlmkit_cli, write_yorn_tsv
from tests.vlmkit.perf.conftest import start_mock, stop_mock
from tests.support.browser import dump_dom, find_browser, parse
from tests.support.servers import FaultServer, Recorded, Reply, chat_reply
from vlmkit.outputs import layout
from vlmkit.outputs.json_files import write_json
from vlmkit.outputs.schema import read_results


def _careful(request: Recorded) -> Reply:
    row = row_of(request)
    if row == 1:
        return Reply(400, {"error": {"message": "this picture is refused"}})
    return chat_reply("Yes" if row % 3 else "No")  # write_yorn_tsv's answers: row 1 wrong only by failing


def _report(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "vlmkit.report.cli", "report", *args], capture_output=True,
                          text=True, timeout=300)


@pytest.fixture(scope="module")
def runs(tmp_path_factory: pytest.TempPathFactory) -> Path:
    tmp = tmp_path_factory.mktemp("e2e")
    lmu, work = tmp / "LMUData", tmp / "outputs"
    write_yorn_tsv(lmu / "MyYN.tsv", n=10)
    for model, responder in (("yes-man", lambda request: chat_reply("Yes")), ("careful", _careful)):
        with FaultServer(chat_only(responder)) as server:
            done = vlmkit_cli("run", "--data", "MyYN", "--model", model, "--api-base", server.base_url,
                              "--work-dir", str(work), "--retries", "0", env={"LMUData": str(lmu)})
        assert done.returncode in (0, 3), done.stderr
    mock = start_mock(tmp, "--tokens", "4")
    try:
        done = subprocess.run(
            [sys.executable, "-m", "vlmkit.perf.cli", "perf", "--model", "served", "--api-base", mock.base_url,
             "--data", str(lmu / "MyYN.tsv"), "--lmudata", str(lmu), "--num-requests", "6", "--concurrency", "1", "2",
             "--out", str(work / "perf" / "served" / "run1")],
            capture_output=True, text=True, timeout=300,
        )
    finally:
        stop_mock(mock)
    assert done.returncode == 0, done.stderr
    return work


def test_table_of_real_runs(runs: Path) -> None:
    done = _report(str(runs))
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    careful = next(line for line in lines if line.startswith("careful"))
    yes_man = next(line for line in lines if line.startswith("yes-man"))
    assert "90.00*" in careful and "partial" in careful and "percent" in careful  # 9 of 10 right, one failed
    assert "60.00" in yes_man and "60.00*" not in yes_man and "success" in yes_man
    md = (runs / "report.md").read_text()
    assert "**60.00**" in md  # the only finished run is the best


def test_runs_write_where_the_layout_says_and_read_back_to_the_same_bytes(runs: Path, tmp_path: Path) -> None:
    for model in ("yes-man", "careful"):
        run_dir = layout.run_dir(runs, model, "MyYN")
        assert (run_dir / layout.RESULTS).is_file() and (run_dir / layout.PREDICTIONS).is_file()
        assert (run_dir / layout.journal_name()).is_file()
        assert (layout.model_dir(runs, model) / layout.xlsx_name(model, "MyYN")).is_file()
        assert any((layout.model_dir(runs, model) / layout.summary_name(model, "MyYN", s)).is_file()
                   for s in layout.SUMMARY_SUFFIXES)
    found = layout.find_results([runs])
    assert len(found) == 2
    for path in found:
        warnings: list[str] = []
        again = tmp_path / "again.json"
        write_json(again, read_results(path, warnings).to_dict())
        assert warnings == [] and again.read_bytes() == path.read_bytes()


def test_diff_of_real_runs(runs: Path) -> None:
    done = _report("--diff", str(runs / "yes-man" / "MyYN"), str(runs / "careful" / "MyYN"))
    assert done.returncode == 0, done.stderr
    assert "5 of 10 sample(s) changed verdict: miss -> hit 4, hit -> error 1" in done.stdout
    assert re.search(r"^1\s+hit\s+error\s+Yes\s+http_4xx", done.stdout, re.M)


def test_page_of_real_runs(runs: Path, tmp_path: Path) -> None:
    page = tmp_path / "page.html"
    done = _report(str(runs), "--html", str(page))
    assert done.returncode == 0, done.stderr
    data = json.loads(re.search(r'id="vlmkit-data">(.*?)</script>', page.read_text(), re.S).group(1))
    careful = next(r for r in data["runs"] if r["model"] == "careful")
    assert len(careful["samples"]) == 10 and all(s["m"][0][1] for s in careful["samples"])  # every image thumbnailed
    assert [s["v"] for s in careful["samples"]].count("error") == 1
    (perf,) = data["perf"]
    assert [lv["level"] for lv in perf["levels"]] == ["c=1", "c=2"] and perf["levels"][0]["ok/sent"] == "6/6"
    assert {name for name, _ in perf["plots"]} >= {"latency_cdf_c_1.png", "sweep.png"}

    browser = find_browser()
    if browser is None:
        pytest.skip("no Chromium found (chromium, chromium-browser or google-chrome): the page's DOM is not checked")
    dom = parse(dump_dom(browser, page.as_uri() + f"#run={careful['id']}&filter=error", tmp_path / "profile"))
    (card,) = dom.by_id("cards").find_all("div", cls="card")
    assert card.attrs["data-index"] == "1" and "this picture is refused" in card.text()
    assert card.find_all("img")[0].attrs["src"].startswith("data:image/jpeg;base64,")
    plots = dom.by_id("perf").find_all("img")
    assert len(plots) == len(perf["plots"]) and all(p.attrs["src"].startswith("data:image/png") for p in plots)
