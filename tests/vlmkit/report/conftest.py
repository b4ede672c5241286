"""A work dir of hand-made runs: two models on an MCQ benchmark (one run partial, one earlier run set aside), a Y/N
benchmark (one run failed), an MME run from before scales were recorded, and a VQA run."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.support.browser import find_browser
from tests.support.workdirs import FRACTION, PERCENT, image, record, scoring, write_run


def pytest_terminal_summary(terminalreporter) -> None:  # type: ignore[no-untyped-def]
    """Say it at the end of every run where the report's page was not opened in a browser (never a silent pass)."""
    if find_browser() is None:
        terminalreporter.write_line(
            "tests/report: no Chromium (chromium, chromium-browser or google-chrome) on PATH: the HTML page was not "
            "opened in a browser; `apt-get install chromium` runs those tests", yellow=True)


@pytest.fixture
def work(tmp_path: Path) -> Path:
    work = tmp_path / "outputs"
    images = tmp_path / "images"
    red, blue, green = (image(images / f"{c}.jpg", c) for c in ("red", "blue", "green"))
    mcq_a = [
        record(0, "A", "A", hit=True, extracted="A", method="exact", image_path=red),
        record(1, "The answer is B", "A", hit=False, extracted="B", method="marker", image_path=blue, category="shape"),
        record(2, "I cannot tell", "C", hit=False, extracted=None, method="unparsed", image_path=green),
        record(3, "<think>it is round</think>D", "D", hit=True, extracted="D", method="exact", image_path=red,
               category="shape"),
    ]
    breakdown = [{"split": "dev", "Overall": 0.5, "colour": 0.5, "shape": 0.5}]
    write_run(work, "model-a", "MCQBench", block=scoring("mcq", 0.5, scale=FRACTION, breakdown=breakdown),
              records=mcq_a, completed_at="2026-11-20T10:00:00+00:00")
    mcq_b = [
        record(0, None, "A", image_path=red, error={"kind": "timeout", "message": "no answer in 60 s", "status": None},
               method="inference_error", hit=False),
        record(1, "A", "A", hit=True, extracted="A", method="exact", image_path=blue, category="shape"),
        record(2, "C", "C", hit=True, extracted="C", method="exact", image_path=green),
        record(3, "B", "D", hit=False, extracted="B", method="exact", image_path=red, category="shape"),
    ]
    write_run(work, "model-b", "MCQBench", status="partial", block=scoring("mcq", 0.75, scale=FRACTION),
              records=mcq_b, completed_at="2026-11-21T09:00:00+00:00", errors=1)
    write_run(work, "model-b", "MCQBench", block=scoring("mcq", 0.25, scale=FRACTION), records=mcq_b, stale=1,
              completed_at="2026-11-18T09:00:00+00:00")
    yn = [record(i, "Yes", "Yes", hit=True, extracted="Yes", method="parsed") for i in range(3)]
    write_run(work, "model-a", "YNBench", block=scoring("yorn_acc", 90.0, scale=PERCENT), records=yn)
    write_run(work, "model-b", "YNBench", status="failed", block=None, total=3, completed=0, errors=3,
              records=[record(i, None, "Yes", error={"kind": "http_4xx", "message": "bad", "status": 400}) for i in range(3)])
    write_run(work, "model-a", "MMEBench", block=scoring("yorn_mme", 1500.5), records=yn)  # no scale: older file
    vqa = [
        record(0, "cat", "cat", score=1.0),
        record(1, "dog", "cat", score=0.0),
        record(2, "a cat", "cat", score=0.5, method="judge", judge={"analysis": "Half right: names the animal."}),
    ]
    write_run(work, "model-c", "VQABench", block=scoring("vqa_score", 50.0, scale=PERCENT), records=vqa)
    return work
