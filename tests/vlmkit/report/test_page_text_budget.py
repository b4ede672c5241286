"""The page keeps its size budget (issue 22): a multi-megabyte reply, reasoning or judge's analysis is cut to the
sample's share of the page, the cut marked with where the whole text is (the run's predictions.jsonl and the
record's index); short texts are as they were."""

from __future__ import annotations

import json
import re
from pathlib import Path

from tests.support.workdirs import FRACTION, record, scoring, write_run
from vlmkit.report.cli import main
from vlmkit.report.cuts import fair_shares, head
from vlmkit.report.page import PAGE_TARGET, SAMPLE_TEXT_MAX, SAMPLE_TEXT_MIN, sample_text_budget

MB = 1_000_000


def _payload(page: Path) -> dict:
    text = page.read_text(encoding="utf-8")
    return json.loads(re.search(r'id="vlmkit-data">(.*?)</script>', text, re.S).group(1))


def _utf8(text: str) -> int:
    return len(text.encode("utf-8"))


def test_fair_shares_keep_what_fits_and_split_the_rest_evenly() -> None:
    assert fair_shares([100, 200], 1000) == [100, 200]
    assert fair_shares([100, 5000, 10], 1000) == [100, 890, 10]  # worked by hand: 10, 100, then 890 left
    assert fair_shares([5000, 40, 5000, 7000], 1000) == [320, 40, 320, 320]
    assert fair_shares([], 1000) == []
    for sizes in ([1, 2, 3], [999, 999, 999], [0, 10**9], [400, 300, 300, 1]):
        shares = fair_shares(sizes, 1000)
        assert sum(shares) <= 1000 and all(0 <= s <= n for s, n in zip(shares, sizes))


def test_a_cut_never_splits_a_character() -> None:
    assert head("éééé", 5) == "éé"
    assert head("a🐱b", 4) == "a"
    assert head("abc", 10) == "abc"


def test_the_budget_follows_the_number_of_samples() -> None:
    assert sample_text_budget(1) == SAMPLE_TEXT_MAX
    assert sample_text_budget(10**6) == SAMPLE_TEXT_MIN
    assert SAMPLE_TEXT_MIN <= sample_text_budget(4000) and 4000 * sample_text_budget(4000) < PAGE_TARGET


def test_a_multi_megabyte_reply_is_cut_and_says_where_the_whole_text_is(tmp_path: Path) -> None:
    work = tmp_path / "outputs"
    reply = "".join(f"line {i}: the model keeps talking é\n" for i in range(150_000))  # ~5.5 MB
    reasoning = "because " * 400_000  # 3.2 MB
    judge = "The reply rambles. " * 100_000  # 1.9 MB
    assert _utf8(reply) > 5 * MB
    short = "The answer is B."
    records = [
        record(0, reply, "A", hit=False, extracted=None, method="unparsed", reasoning=reasoning, judge=judge),
        record(1, short, "B", hit=True, extracted="B", method="marker", question="Which one is red?"),
    ]
    results = write_run(work, "talker", "MCQBench", block=scoring("mcq", 0.5, scale=FRACTION), records=records)
    predictions = results.parent / "predictions.jsonl"
    page = tmp_path / "page.html"
    assert main(["report", str(work), "--out", str(tmp_path / "tables"), "--html", str(page)]) == 0

    size = page.stat().st_size
    assert size < 300_000, size  # the texts alone were over 10 MB
    long, plain = _payload(page)["runs"][0]["samples"]
    budget = sample_text_budget(2)
    assert long["k"] == {"p": len(reply), "r": len(reasoning), "j": len(judge)}  # whole lengths, in characters
    for key, whole in (("p", reply), ("r", reasoning), ("j", judge)):
        kept, _, note = long[key].rpartition("\n[… ")
        assert whole.startswith(kept) and _utf8(kept) > budget // 4  # each long text keeps a fair part
        more = len(whole) - len(kept)
        where = f"the whole text is in {predictions}, the record with index 0]"
        assert note == f"{more:,} more characters cut here; {where}"
    assert sum(_utf8(long[k]) for k in ("p", "r", "j", "q", "t")) <= budget  # the notes included
    # the short texts of both samples are whole and unmarked
    assert long["q"] == "What colour is the shape?" and long["t"] == "A"
    assert plain["p"] == short and plain["q"] == "Which one is red?" and plain["x"] == "B" and "k" not in plain
    # the whole text is where the note says
    first = json.loads(predictions.read_text(encoding="utf-8").splitlines()[0])
    assert first["index"] == 0 and first["prediction"] == reply


def test_a_4000_sample_page_of_long_replies_stays_under_its_target(tmp_path: Path) -> None:
    work = tmp_path / "outputs"
    question = "Describe what the picture shows and pick one option. " * 20  # ~1 KB
    reply = "It shows a long and winding road through the hills. " * 120  # ~6 KB, every sample
    records = [record(i, f"{i} {reply}", "A", hit=bool(i % 2), extracted="A", method="fuzzy", question=question)
               for i in range(4000)]
    write_run(work, "verbose", "BigBench", block=scoring("mcq", 0.5, scale=FRACTION), records=records)
    page = tmp_path / "page.html"
    assert main(["report", str(work), "--out", str(tmp_path / "tables"), "--html", str(page)]) == 0
    assert page.stat().st_size < PAGE_TARGET  # the texts alone are 28 MB
    samples = _payload(page)["runs"][0]["samples"]
    budget = sample_text_budget(4000)
    assert len(samples) == 4000
    for sample in samples:  # the prompt and the reply share the budget, both cut; the target and answer whole
        assert sample["k"] == {"q": len(question), "p": len(f"{sample['i']} {reply}")}
        assert sample["t"] == sample["x"] == "A"
        assert sum(_utf8(sample[k]) for k in ("q", "p", "t", "x")) <= budget
