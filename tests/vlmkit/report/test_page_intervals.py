"""The page's intervals and paired tests (issue 27) and its GUI grounding clicks (issue 30), in a real headless
Chromium: a run's 95% interval beside its value, the "inside the noise" mark where the paired test against its
dataset's best run gives p >= 0.05 (and none where p < 0.05), the diff's paired test, and a ScreenSpot sample's target
box and click drawn at their place over the screenshot.

The p-values are worked by hand (McNemar's exact test, two-sided: min(1, 2 * P(X <= min(b, c))), X ~ Bin(b + c,
1/2)): 10 samples, the best run right on all; one run misses 1 (b=1, c=0: p = 2 * 1/2 = 1) and one misses 6 (b=6,
c=0: p = 2 / 64 = 0.03125)."""

from __future__ import annotations

import json
import math
import re
from pathlib import Path

import pandas as pd
import pytest
from PIL import Image

from tests.support.browser import DevTools, find_browser
from tests.support.workdirs import FRACTION, PERCENT, image, record, scoring, write_run
from vlmkit.report.cli import main
from vlmkit.report.samples import read_click
from vlmkit.scoring.benchmarks.gui_grounding import score_gui_grounding
from vlmkit.scoring.benchmarks.gui_points import Convention

BROWSER = find_browser()
needs_browser = pytest.mark.skipif(
    BROWSER is None,
    reason="no Chromium found (chromium, chromium-browser or google-chrome on PATH): "
    "install it with `apt-get install chromium` to run the page tests",
)
N = 10


def _interval(value: float, low: float, high: float) -> dict:
    return {"metric": "Overall", "estimate": value, "low": low, "high": high, "se": 0.05, "method": "wilson", "n": N}


def _mcq_run(work: Path, model: str, misses: int, interval: tuple[float, float]) -> None:
    value = (N - misses) / N
    block = scoring("mcq", value, scale=FRACTION)
    block["interval"] = _interval(value, *interval)
    records = [record(i, "A" if i >= misses else "B", "A", hit=i >= misses, extracted="A" if i >= misses else "B",
                      method="exact") for i in range(N)]
    write_run(work, model, "MCQBench", block=block, records=records)


@pytest.fixture
def work(tmp_path: Path) -> Path:
    work = tmp_path / "outputs"
    _mcq_run(work, "best", 0, (0.7225, 1.0))
    _mcq_run(work, "close", 1, (0.5958, 0.9821))  # half-widths: 0.3042 below, 0.0821 above -> +-0.3042
    _mcq_run(work, "far", 6, (0.1682, 0.6873))  # 0.2318 below, 0.2873 above -> +-0.2873
    return work


def _payload(page: Path) -> dict:
    text = page.read_text(encoding="utf-8")
    found = re.search(r'<script type="application/json" id="vlmkit-data">(.*?)</script>', text, re.S)
    return json.loads(found.group(1))


def _page(work: Path, tmp_path: Path, *extra: str) -> Path:
    out = tmp_path / "page.html"
    assert main(["report", str(work), "--out", str(tmp_path / "tables"), "--html", str(out), *extra]) == 0
    return out


def test_payload_carries_interval_and_p_value(work: Path, tmp_path: Path) -> None:
    runs = {r["model"]: r for r in _payload(_page(work, tmp_path))["runs"]}
    assert runs["close"]["ci95"] == "\u00b10.3042" and runs["far"]["ci95"] == "\u00b10.2873"
    assert runs["best"]["vs_best_p"] is None
    assert runs["close"]["vs_best_p"] == pytest.approx(1.0)
    assert runs["far"]["vs_best_p"] == pytest.approx(2 / 64)


def test_diff_payload_carries_the_paired_test(work: Path, tmp_path: Path) -> None:
    page = tmp_path / "diff.html"
    assert main(["report", "--diff", str(work / "best" / "MCQBench"), str(work / "far" / "MCQBench"),
                 "--html", str(page)]) == 0
    test = _payload(page)["diff"]["test"]
    assert (test["method"], test["n"], test["discordant"], test["a_only"], test["b_only"]) == (
        "mcnemar_exact", N, 6, 6, 0)
    assert test["p_value"] == pytest.approx(2 / 64) and test["differs"] is True
    assert "6 discordant" in test["summary"]


@needs_browser
def test_page_shows_interval_and_marks_the_run_inside_the_noise(work: Path, tmp_path: Path) -> None:
    page = _page(work, tmp_path)
    ids = {r["model"]: r["id"] for r in _payload(page)["runs"]}
    with DevTools(BROWSER, tmp_path / "profile") as tab:
        tab.open(page.as_uri())
        cell = ("(id) => { const tr = [...document.querySelectorAll('#runs-table tbody tr')].find(r => r.dataset.run"
                " === id); return [tr.cells[3].querySelector('.ci') && tr.cells[3].querySelector('.ci').textContent,"
                " !!tr.cells[3].querySelector('.noise'), tr.cells[3].querySelector('.noise') &&"
                " tr.cells[3].querySelector('.noise').title]; }")
        close = tab.js(f"({cell})('{ids['close']}')")
        far = tab.js(f"({cell})('{ids['far']}')")
        best = tab.js(f"({cell})('{ids['best']}')")
        assert close[0].strip() == "\u00b10.3042" and close[1] is True
        assert "inside the noise" in close[2] and "p = 1.000" in close[2]  # the mark says what it means
        assert far[0].strip() == "\u00b10.2873" and far[1] is False  # p = 0.03125 < 0.05: no mark
        assert best[1] is False
        board = tab.js("[...document.querySelectorAll('#board tbody tr')].map(r => [r.cells[0].textContent, "
                       "!!r.querySelector('.noise')])")
        assert dict(board) == {"best": False, "close": True, "far": False}
        legend = tab.js("document.querySelector('#leaderboard .legend').textContent")
        assert "inside the noise" in legend  # the mark is explained on the page, not only in a tooltip

        tab.open(page.as_uri() + f"#run={ids['close']}")
        assert tab.js("document.getElementById('vs-best').textContent").startswith("p = 1.000")
        assert "inside the noise" in tab.js("document.getElementById('vs-best').textContent")
        tab.open(page.as_uri() + f"#run={ids['far']}")
        assert "differs" in tab.js("document.getElementById('vs-best').textContent")


@needs_browser
def test_diff_view_says_the_paired_test(work: Path, tmp_path: Path) -> None:
    pages = {}
    for other in ("close", "far"):
        pages[other] = tmp_path / f"diff-{other}.html"
        assert main(["report", "--diff", str(work / "best" / "MCQBench"), str(work / other / "MCQBench"),
                     "--html", str(pages[other])]) == 0
    with DevTools(BROWSER, tmp_path / "profile") as tab:
        tab.open(pages["close"].as_uri())
        text = tab.js("document.getElementById('diff-test').textContent")
        assert "inside the noise" in text and "1 discordant" in text
        tab.open(pages["far"].as_uri())
        text = tab.js("document.getElementById('diff-test').textContent")
        assert "differ" in text and "6 discordant" in text and "p = 0.03125" in text


# -- GUI grounding ------------------------------------------------------------------------------------------------
W, H = 400, 200  # the screenshot; its thumbnail keeps the 2:1 shape, so a wrong axis shows


def _gui_work(tmp_path: Path) -> tuple[Path, list[dict]]:
    """A ScreenSpot run scored by the real scorer, its per-row fields merged into the records as the runner does."""
    shot = image(tmp_path / "images" / "screen.jpg", "blue", (W, H))
    # bbox [x, y, w, h] inclusive: (100, 50)..(200, 100) px -> box (0.25, 0.25, 0.5, 0.5) of the screenshot
    df = pd.DataFrame({
        "index": [0, 1], "prediction": ["pyautogui.click(x=375, y=375)", "pyautogui.click(x=800, y=900)"],
        "image_width": [W, W], "image_height": [H, H], "bbox": ["[100, 50, 101, 51]"] * 2,
        "data_type": ["text", "icon"],
    })
    result = score_gui_grounding(df, "screenspot", Convention(coords="norm1000"))
    fields = [{k: (None if isinstance(v, float) and math.isnan(v) else v) for k, v in row.items() if k != "index"}
              for row in result.per_sample.to_dict("records")]
    records = [record(i, df["prediction"][i], "[100, 50, 101, 51]", image_path=shot, question="Click the button",
                      **fields[i]) for i in range(2)]
    work = tmp_path / "outputs"
    write_run(work, "gui-model", "ScreenSpot", block=scoring("gui_grounding", 50.0, metric="Overall_Accuracy",
                                                              scale=PERCENT), records=records)
    return work, records


def test_read_click_takes_the_scorers_fields(tmp_path: Path) -> None:
    _, records = _gui_work(tmp_path)
    hit, miss = (read_click(r) for r in records)
    assert hit.point == pytest.approx((0.375, 0.375)) and hit.box == pytest.approx((0.25, 0.25, 0.5, 0.5))
    assert miss.point == pytest.approx((0.8, 0.9)) and records[1]["hit"] is False and records[0]["hit"] is True
    assert read_click({"x": None, "y": None, "box": [0.1, 0.1, 0.2, 0.2]}).point is None
    assert read_click({"x": 0.5, "y": float("nan"), "box": [0.1, 0.2]}) is None  # neither a point nor a box


@needs_browser
def test_gui_sample_draws_box_and_click_in_place(tmp_path: Path) -> None:
    work, _ = _gui_work(tmp_path)
    page = _page(work, tmp_path)
    (run,) = _payload(page)["runs"]
    with DevTools(BROWSER, tmp_path / "profile") as tab:
        tab.size(1280, 900)
        tab.open(page.as_uri() + f"#run={run['id']}")
        geometry = tab.js("""(async () => {
          const out = {};
          for (const card of document.querySelectorAll('#cards .card')) {
            card.scrollIntoView();
            const img = card.querySelector('.shot img');
            await img.decode();
            const r = (el) => { const b = el.getBoundingClientRect(); return [b.left, b.top, b.width, b.height]; };
            const svg = card.querySelector('svg.click');
            out[card.dataset.index] = { img: r(img), box: r(svg.querySelector('rect')),
              point: r(svg.querySelector('circle')), stroke: getComputedStyle(svg.querySelector('rect')).stroke,
              natural: [img.naturalWidth, img.naturalHeight] };
          }
          return out;
        })()""")
        tab.screenshot(tmp_path / "gui-sample.png")
    assert set(geometry) == {"0", "1"}
    for index, (expected_point, colour) in {"0": ((0.375, 0.375), "rgb(26, 127, 75)"),
                                            "1": ((0.8, 0.9), "rgb(192, 54, 44)")}.items():
        g = geometry[index]
        left, top, width, height = g["img"]
        assert width > 0 and height == pytest.approx(width / 2, abs=1)  # the 2:1 screenshot as drawn
        bx, by, bw, bh = g["box"]
        assert (bx - left, by - top) == pytest.approx((0.25 * width, 0.25 * height), abs=1)
        assert (bw, bh) == pytest.approx((0.25 * width, 0.25 * height), abs=1)
        px, py, pw, ph = g["point"]
        assert (px + pw / 2 - left, py + ph / 2 - top) == pytest.approx(
            (expected_point[0] * width, expected_point[1] * height), abs=1)
        assert g["stroke"] == colour  # green where the click hit the box, red where it missed
