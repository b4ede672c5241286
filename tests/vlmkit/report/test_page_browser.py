"""The HTML page opened from disk in a real headless Chromium: the leaderboard and a sample card render, the filters
work (from the URL fragment and by clicking), columns sort, and screenshots are written for a person to look at.

Chromium comes from Debian's packages (`apt-get install chromium`); where no browser is installed the tests are
skipped with that reason."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from PIL import Image

from tests.support.browser import DevTools, Node, dump_dom, find_browser, parse
from vlmkit.report.cli import main

BROWSER = find_browser()
pytestmark = pytest.mark.skipif(
    BROWSER is None,
    reason="no Chromium found (chromium, chromium-browser or google-chrome on PATH): "
    "install it with `apt-get install chromium` to run the page tests",
)


@pytest.fixture
def page(work: Path, tmp_path: Path) -> Path:
    out = tmp_path / "page.html"
    assert main(["report", str(work), "--out", str(tmp_path / "tables"), "--html", str(out)]) == 0
    return out


def _run_ids(page: Path) -> dict[tuple[str, str], str]:
    text = page.read_text(encoding="utf-8")
    data = json.loads(re.search(r'<script type="application/json" id="vlmkit-data">(.*?)</script>', text, re.S).group(1))
    return {(r["model"], r["dataset"]): r["id"] for r in data["runs"]}


def _dom(page: Path, fragment: str, tmp_path: Path):
    return parse(dump_dom(BROWSER, page.as_uri() + fragment, tmp_path / "profile"))


def test_leaderboard_and_a_filtered_sample_card_render(page: Path, tmp_path: Path) -> None:
    ids = _run_ids(page)
    dom = _dom(page, f"#run={ids[('model-a', 'MCQBench')]}&filter=wrong", tmp_path)
    body = dom.find_all("body")[0]
    assert body.attrs.get("data-rendered") == "1"

    board = dom.by_id("board")
    assert board is not None
    rows = board.find_all("tbody")[0].find_all("tr")
    assert [r.find_all("td")[0].text() for r in rows] == ["model-a", "model-b", "model-c"]
    best = {td.text() for td in board.find_all("td", cls="best")}
    assert best == {"0.5000", "1500.50", "90.00", "50.00"}  # one per dataset; never the partial run
    # model-b against the best (model-a) on the samples both scored: right in B only #1 and #2, in A only #3 (and
    # #0, where B failed, if it counts): McNemar p = 1 either way, so the partial run carries the noise mark
    assert [td.text() for td in board.find_all("td", cls="partial")] == ["0.7500*\u2248 inside the noise"]
    assert "failed" in {td.text() for td in board.find_all("td", cls="nodata")}
    assert board.find_all("th")[1].text().startswith("MCQBench") and "fraction" in board.find_all("th")[1].text()

    cards = dom.by_id("cards")
    assert cards.attrs["data-count"] == "2" and cards.attrs["data-filter"] == "wrong"
    shown = cards.find_all("div", cls="card")
    assert sorted(c.attrs["data-verdict"] for c in shown) == ["miss", "unread"]
    miss = next(c for c in shown if c.attrs["data-verdict"] == "miss")
    assert "The answer is B" in miss.text() and "rule: marker" in miss.text() and "What colour is the shape?" in miss.text()
    (thumb,) = miss.find_all("img")
    assert thumb.attrs["src"].startswith("data:image/jpeg;base64,")
    assert [b.text() for b in dom.by_id("samples").find_all("button", cls="on")] == ["Wrong2"]

    breakdown = dom.by_id("breakdown")  # one split: a list of figures
    assert [(row.find_all("span", cls="name")[0].text(), row.find_all("span", cls="num")[0].text())
            for row in breakdown.find_all("div", cls="bd-row")] == [("Overall", "0.5000"), ("colour", "0.5000"),
                                                                   ("shape", "0.5000")]


def test_category_and_error_filters_from_the_address(page: Path, tmp_path: Path) -> None:
    ids = _run_ids(page)
    dom = _dom(page, f"#run={ids[('model-a', 'MCQBench')]}&cat=shape", tmp_path)
    cards = dom.by_id("cards").find_all("div", cls="card")
    assert sorted(c.attrs["data-index"] for c in cards) == ["1", "3"]
    assert any("reasoning" in c.text() for c in cards)  # #3's <think> block, shown apart from its reply

    dom = _dom(page, f"#run={ids[('model-c', 'VQABench')]}&filter=wrong", tmp_path)
    cards = dom.by_id("cards").find_all("div", cls="card")
    assert [c.attrs["data-verdict"] for c in cards] == ["miss", "partial"]
    assert "judge's analysis" in cards[1].text() and "Half right: names the animal." in cards[1].text()
    assert "0.50" in cards[1].text()  # its score

    dom = _dom(page, f"#run={ids[('model-b', 'MCQBench')]}&filter=error", tmp_path)
    (card,) = dom.by_id("cards").find_all("div", cls="card")
    assert card.attrs["data-verdict"] == "error" and "timeout: no answer in 60 s" in card.text()


def test_diff_page_shows_both_replies(work: Path, tmp_path: Path) -> None:
    page = tmp_path / "diff.html"
    a, b = work / "model-a" / "MCQBench", work / "model-b" / "MCQBench"
    assert main(["report", "--diff", str(a), str(b), "--html", str(page)]) == 0
    dom = _dom(page, "", tmp_path)
    cards = dom.by_id("diff-cards")
    assert cards.attrs["data-count"] == "4"
    shown = cards.find_all("div", cls="card")
    assert [(c.attrs["data-index"], c.attrs["data-from"], c.attrs["data-to"]) for c in shown] == [
        ("3", "hit", "miss"), ("0", "hit", "error"), ("1", "miss", "hit"), ("2", "unread", "hit")]
    (pair,) = shown[0].find_all("div", cls="pair")
    replies = [side.find_all("div", cls="reply")[0].text() for side in pair.children if isinstance(side, Node)]
    assert replies == ["D", "B"]  # A's reply (its <think> block apart), B's reply
    assert "timeout: no answer in 60 s" in shown[1].text()


def test_clicking_filters_and_sorting_columns(page: Path, tmp_path: Path) -> None:
    ids = _run_ids(page)
    with DevTools(BROWSER, tmp_path / "profile") as tab:
        tab.open(page.as_uri() + f"#run={ids[('model-a', 'MCQBench')]}")
        assert tab.js("document.getElementById('cards').dataset.count") == "4"
        tab.js("document.querySelector('#samples button[data-filter=hit]').click()")
        assert tab.js("[...document.querySelectorAll('#cards .card')].map(c => c.dataset.verdict)") == ["hit", "hit"]
        assert tab.js("location.hash").endswith("filter=hit")  # the view can be bookmarked

        # the MCQBench column: first click sorts best first (higher is better), a pair without a value always last
        order = "[...document.querySelectorAll('#board tbody tr')].map(r => r.cells[0].textContent)"
        tab.js("document.querySelectorAll('#board th')[1].click()")
        assert tab.js(order) == ["model-b", "model-a", "model-c"]
        tab.js("document.querySelectorAll('#board th')[1].click()")
        assert tab.js(order) == ["model-a", "model-b", "model-c"]
        assert tab.js("document.querySelectorAll('#board th')[1].querySelector('.dir').textContent") == "\u25b2"
        tab.js("document.querySelectorAll('#board th')[0].click()")  # model: ascending, then descending
        tab.js("document.querySelectorAll('#board th')[0].click()")
        assert tab.js(order) == ["model-c", "model-b", "model-a"]

        # a click on a run row opens that run's samples
        tab.js("[...document.querySelectorAll('#runs-table tbody tr')].find(r => r.dataset.run === "
               f"'{ids[('model-c', 'VQABench')]}').click()")
        assert tab.js("document.getElementById('run-select').value") == ids[("model-c", "VQABench")]
        assert tab.js("[...document.querySelectorAll('#cards .card')].map(c => c.dataset.verdict)") == [
            "hit", "miss", "partial"]


def test_screenshots_for_a_person(page: Path, tmp_path: Path) -> None:
    """report-top.png (leaderboard and runs) and report-samples.png (a run's wrong answers), 1280 x 900."""
    ids = _run_ids(page)
    with DevTools(BROWSER, tmp_path / "profile") as tab:
        tab.size(1280, 900)
        shots = []
        for name, fragment in (("top", ""), ("samples", f"#run={ids[('model-a', 'MCQBench')]}&filter=wrong")):
            tab.open(page.as_uri() + fragment)
            if fragment:
                assert tab.js("window.scrollY") > 0  # a bookmarked view opens at its run
            shots.append(tab.screenshot(tmp_path / f"report-{name}.png"))
    for shot in shots:
        with Image.open(shot) as image:
            assert image.size == (1280, 900)
            colours = image.convert("RGB").resize((64, 45)).getcolors(64 * 45)
        assert colours is not None and len(colours) > 20  # a drawn page, not a blank one
        print(f"screenshot: {shot}")
