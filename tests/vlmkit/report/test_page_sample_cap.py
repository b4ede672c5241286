"""A page embeds at most SAMPLE_CAP samples a run, says so, links the predictions file for the rest, and reads the
file a record at a time: only the embedded records become samples (a million-row run costs the report what a
4,000-row one does)."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

import vlmkit.report.page as page
from tests.support.workdirs import FRACTION, record, scoring, write_run
from vlmkit.report.cli import main


def _payload(path: Path) -> dict:
    text = path.read_text(encoding="utf-8")
    return json.loads(re.search(r'id="vlmkit-data">(.*?)</script>', text, re.S).group(1))


@pytest.fixture
def big_run(tmp_path: Path) -> Path:
    """One run of 60 samples: every third wrong (indices 1, 4, 7, ... are misses)."""
    work = tmp_path / "outputs"
    records = [record(i, "A" if i % 3 != 1 else "B", "A", hit=i % 3 != 1, extracted="A" if i % 3 != 1 else "B",
                      method="exact") for i in range(60)]
    write_run(work, "m", "Big", block=scoring("mcq", 40 / 60, scale=FRACTION), records=records)
    return work


def test_samples_past_the_cap_are_left_out_said_and_linked(big_run: Path, tmp_path: Path,
                                                            monkeypatch: pytest.MonkeyPatch) -> None:
    made = []
    real = page.to_sample
    monkeypatch.setattr(page, "to_sample", lambda *a, **k: made.append(1) or real(*a, **k))
    monkeypatch.setattr(page, "SAMPLE_CAP", 10)
    html = tmp_path / "page.html"
    assert main(["report", str(big_run), "--html", str(html), "--thumb-size", "0"]) == 0
    run = _payload(html)["runs"][0]
    assert [int(s["i"]) for s in run["samples"]] == list(range(10))  # the first ten in file order
    assert len(made) == 10  # the other 50 records were read, never made into samples
    predictions = big_run / "m" / "Big" / "predictions.jsonl"
    assert "10 of these 60 shown" in run["sample_note"] and "at most 10 samples a run" in run["sample_note"]
    assert str(predictions) in run["sample_note"] and run["all_samples"] == predictions.resolve().as_uri()


def test_wrong_samples_are_capped_after_the_choice(big_run: Path, tmp_path: Path,
                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(page, "SAMPLE_CAP", 5)
    html = tmp_path / "page.html"
    assert main(["report", str(big_run), "--html", str(html), "--samples", "wrong", "--thumb-size", "0"]) == 0
    run = _payload(html)["runs"][0]
    assert [int(s["i"]) for s in run["samples"]] == [1, 4, 7, 10, 13]  # the first five misses (20 in all)
    assert "20 of 60 samples embedded (--samples wrong)" in run["sample_note"]
    assert "5 of these 20 shown" in run["sample_note"]


def test_a_page_under_the_cap_says_nothing_of_it(big_run: Path, tmp_path: Path) -> None:
    html = tmp_path / "page.html"
    assert main(["report", str(big_run), "--html", str(html), "--thumb-size", "0"]) == 0
    run = _payload(html)["runs"][0]
    assert len(run["samples"]) == 60 and run["sample_note"] is None and "all_samples" not in run


def test_samples_a_diff_lists_take_the_place_of_the_last_picked(tmp_path: Path) -> None:
    """With --samples none only the diff's samples are embedded; past the cap the diff's own come first."""
    work = tmp_path / "outputs"
    records = [record(i, "A", "A", hit=True, extracted="A", method="exact") for i in range(30)]
    results = write_run(work, "m", "Big", block=scoring("mcq", 1.0, scale=FRACTION), records=records)
    from vlmkit.report.runs import load_run

    run = load_run(results)
    chosen, note = page._samples_for(run, "all", keep={"25", "28"}, cap=4)
    assert [s.index for s in chosen] == [0, 1, 25, 28]
    assert "4 of these 30 shown" in note
