"""vlmkit.report.explain's pieces called directly (tests/vlmkit/report/test_explain.py runs the whole command): the
difference in points on each scale, and the judge section's figures, worked by hand from hand-made runs."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.support.workdirs import FRACTION, PERCENT, record, scoring, write_run
from vlmkit.report.explain import CELL_WIDTH, _cell, generation_settings, judge, points_apart, prompt_family
from vlmkit.report.runs import load_run
from vlmkit.scoring.scales import Scale


@pytest.mark.parametrize(
    ("a", "b", "scale", "text"),
    [
        (0.8, 0.7, FRACTION, "+10.00 percentage points"),
        (0.7, 0.8, FRACTION, "-10.00 percentage points"),
        (71.5, 70.0, PERCENT, "+1.50 percentage points"),
        (1500.0, 1520.5, {"scale": "points", "higher_is_better": True, "out_of": 2800}, "-20.50 points"),
        (3.0, 2.5, None, "+0.5 (scale unknown)"),
    ],
)
def test_points_apart_on_each_scale(a: float, b: float, scale: dict | None, text: str):
    assert points_apart(a, b, None if scale is None else Scale.from_dict(scale)) == text


def test_a_long_or_multiline_cell_is_cut_to_its_width():
    assert _cell(None) == "-" and _cell("two\nlines") == "two lines"
    assert _cell("x" * CELL_WIDTH) == "x" * CELL_WIDTH
    assert _cell("x" * (CELL_WIDTH + 1)) == "x" * (CELL_WIDTH - 1) + "…"


def _judged_run(tmp_path: Path, value: float, judge_block: dict | None) -> Path:
    rows = [record(i, "A", "A", hit=True, method="exact") for i in range(6)]
    rows += [record(i, "surely A", "A", hit=True, method="judge") for i in (6, 7)]
    rows += [record(8, "hmm", "A", method="judge_unread"), record(9, "C", "A", hit=False, method="exact")]
    counts = {"by_rule": 7, "by_judge": 2, "unread": 1, "judge_errors": 0}
    path = write_run(tmp_path, "m", "MCQ", block=scoring("mcq", value, scale=FRACTION, counts=counts), records=rows)
    if judge_block is not None:
        data = json.loads(path.read_text(encoding="utf-8"))
        data["judge"] = judge_block
        path.write_text(json.dumps(data), encoding="utf-8")
    return path


def test_the_judge_section_says_how_far_the_judge_moved_the_score(tmp_path: Path):
    # 8 of 10 right, 2 of them by the judge: 0.6 without it, 20 points
    path = _judged_run(tmp_path, 0.8, {"name": "gpt-judge", "replies": 3, "errors": 0})
    section = judge(load_run(path))
    assert section.effect == "+20.00 percentage points"
    assert section.lines[0] == "judge: gpt-judge; replies 3, errors 0"
    assert "rows read: by_rule 7, by_judge 2, unread 1, judge_errors 0 (scoring.counts)" in section.lines
    assert any(line.startswith("without the judge: 0.6") and "they scored 2 of 2" in line for line in section.lines)


def test_without_a_judge_the_section_says_what_one_could_add(tmp_path: Path):
    path = _judged_run(tmp_path / "a", 0.8, None)
    # no judge block, yet rows marked `judge`: the rows say the judge decided them, the run says no judge; the
    # unread row alone could be gained: (8 + 1) / 10 - 0.8
    section = judge(load_run(path))
    assert section.lines[0].startswith("no judge: rules alone")
    assert section.effect == "no judge; one could add at most +10.00 percentage points"


def test_sections_that_need_a_rerun_say_so(tmp_path: Path):
    run = load_run(_judged_run(tmp_path, 0.8, None))
    assert prompt_family(run).effect == generation_settings(run).effect == "needs a rerun to be measured"
    assert "no generation settings recorded in results.json" in generation_settings(run).lines
    assert prompt_family(run).lines[0].startswith("this run: not recorded")
