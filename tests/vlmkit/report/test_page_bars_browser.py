"""The report page's likelihood bars (issue 28) in a real headless Chromium: a sample scored by `--mcq-mode` shows one
bar per option, widths the options' shares worked by hand, the chosen option and the target marked; a generated
sample shows none. Skipped where no Chromium is installed. Needs the page.py / page.js / page.css lines of issue 28."""

from __future__ import annotations

import math
from pathlib import Path

import pytest

from tests.support.browser import DevTools, find_browser
from tests.support.workdirs import FRACTION, record, scoring, write_run
from vlmkit.report.cli import main

BROWSER = find_browser()
pytestmark = pytest.mark.skipif(BROWSER is None, reason="no Chromium found (chromium, chromium-browser or "
                                "google-chrome on PATH): install it with `apt-get install chromium`")


def test_a_likelihood_sample_draws_one_bar_per_option(tmp_path: Path) -> None:
    work = tmp_path / "outputs"
    # p(A) = 0.6, p(B) = 0.2, C outside a server's top list: shares 0.75 and 0.25, C without a bar
    served = {"mode": "logits", "source": "top_logprobs", "missing": ["C"],
              "logprobs": {"A": math.log(0.6), "B": math.log(0.2), "C": None}}
    records = [record(0, "A", "B", hit=False, extracted="A", method="exact", extra={"likelihood": served}),
               record(1, "B", "B", hit=True, extracted="B", method="exact")]
    write_run(work, "served", "MCQBench", block=scoring("mcq", 0.5, scale=FRACTION), records=records)
    page = tmp_path / "page.html"
    assert main(["report", str(work), "--out", str(tmp_path / "tables"), "--html", str(page)]) == 0
    with DevTools(BROWSER, tmp_path / "profile") as tab:
        tab.open(page.as_uri())
        bars = tab.js("[...document.querySelectorAll('.card')].map(c => [c.dataset.index, "
                      "[...c.querySelectorAll('.obar')].map(b => [b.dataset.option, b.className, "
                      "b.querySelector('.otrack i') ? parseFloat(b.querySelector('.otrack i').style.width) : null, "
                      "b.querySelector('.ofig').textContent])])")
    by_index = dict((index, rows) for index, rows in bars)
    assert by_index["1"] == []  # generated: no bars
    a, b, c = by_index["0"]
    assert a[:3] == ["A", "obar chosen", 75] and "log p -0.511" in a[3]
    assert b[:3] == ["B", "obar target", 25]
    assert c[:3] == ["C", "obar", None] and c[3] == "not in the top list"
