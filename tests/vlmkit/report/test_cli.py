"""`vlmkit report` from its command line (the parser vlmkit.cli.main registers): where files go, exit codes, one-line
errors, and what the page carries (samples, thumbnails, perf runs, the diff)."""

from __future__ import annotations

import argparse
import json
import re
from pathlib import Path

import pytest
from PIL import Image

from tests.support.workdirs import FRACTION, record, scoring, write_run
from vlmkit.report.cli import add_report_parser, main


def _payload(page: Path) -> dict:
    text = page.read_text(encoding="utf-8")
    return json.loads(re.search(r'id="vlmkit-data">(.*?)</script>', text, re.S).group(1))


def test_parser_plugs_into_a_subcommand_table() -> None:
    parser = argparse.ArgumentParser(prog="vlmkit")
    add_report_parser(parser.add_subparsers(dest="command", required=True))
    args = parser.parse_args(["report"])
    assert args.work_dirs == [Path("outputs")] and args.func.__name__ == "run_report_command"
    args = parser.parse_args(["report", "a", "b", "--models", "m*", "--all", "--diff", "x", "y"])
    assert args.work_dirs == [Path("a"), Path("b")] and args.every_run and args.diff == ["x", "y"]


def test_tables_go_beside_the_work_dir_by_default_and_to_out(work: Path, tmp_path: Path, capsys) -> None:
    assert main(["report", str(work)]) == 0
    printed = capsys.readouterr().out
    assert (work / "report.csv").is_file() and (work / "report.md").is_file()
    assert "0.7500*" in printed and f"written: {work / 'report.csv'}" in printed
    assert main(["report", str(work), "--out", str(tmp_path / "tables"), "--datasets", "YNBench"]) == 0
    rows = (tmp_path / "tables" / "report.csv").read_text().splitlines()
    assert len(rows) == 3 and all(",YNBench," in row for row in rows[1:])


def test_nothing_found_is_one_line_and_exit_2(tmp_path: Path, work: Path, capsys) -> None:
    (tmp_path / "empty").mkdir()
    assert main(["report", str(tmp_path / "empty")]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert err == [f"vlmkit report: error: no results.json under {tmp_path / 'empty'}"]
    assert main(["report", str(work), "--models", "nobody"]) == 2
    assert "matching --models nobody" in capsys.readouterr().err
    assert main(["report", str(tmp_path / "missing")]) == 2
    assert "no such folder" in capsys.readouterr().err


def test_a_broken_file_is_a_warning_not_a_failure(work: Path, capsys) -> None:
    bad = work / "m" / "D" / "results.json"
    bad.parent.mkdir(parents=True)
    bad.write_text("[]", encoding="utf-8")
    assert main(["report", str(work)]) == 0
    assert f"vlmkit report: warning: skipped {bad}: not a vlmkit results.json" in capsys.readouterr().err


def _edit(path: Path, **fields: object) -> None:
    data = json.loads(path.read_text(encoding="utf-8"))
    data.update(fields)
    path.write_text(json.dumps(data, indent=2), encoding="utf-8")


def test_a_hand_edited_results_json_is_one_warning_and_the_rest_is_read(work: Path, tmp_path: Path, capsys) -> None:
    """`notes` typed as a string (issue 22) and `scoring` as a list: each left out with one line naming the file and
    the field; the page and tables are written, the run is listed."""
    notes_file = work / "model-a" / "MCQBench" / "results.json"
    scoring_file = work / "model-a" / "YNBench" / "results.json"
    _edit(notes_file, notes="checked by hand on Monday")
    _edit(scoring_file, scoring=["Overall", 90.0])
    page = tmp_path / "page.html"
    assert main(["report", str(work), "--html", str(page), "--out", str(tmp_path / "t")]) == 0
    out, err = capsys.readouterr()
    warnings = [line for line in err.splitlines() if line.startswith("vlmkit report: warning:")]
    assert len(warnings) == 2, err
    assert any(str(notes_file) in w and "`notes`" in w for w in warnings)
    assert any(str(scoring_file) in w and "`scoring`" in w for w in warnings)
    runs = {(r["model"], r["dataset"]): r for r in _payload(page)["runs"]}
    assert runs[("model-a", "MCQBench")]["value"] == 0.5  # the rest of the file is read
    assert "checked by hand" not in json.dumps(runs[("model-a", "MCQBench")]["notes"])
    assert runs[("model-a", "YNBench")]["value"] is None and runs[("model-a", "YNBench")]["status"] == "success"
    assert "model-a" in (tmp_path / "t" / "report.csv").read_text(encoding="utf-8")


def test_a_damaged_prediction_field_is_left_out_and_said_on_the_page(work: Path, tmp_path: Path, capsys) -> None:
    predictions = work / "model-c" / "VQABench" / "predictions.jsonl"
    lines = predictions.read_text(encoding="utf-8").splitlines()
    first = json.loads(lines[0])
    first["prompt"] = "what is it?"  # turns, not a string
    predictions.write_text("\n".join([json.dumps(first), *lines[1:]]) + "\n", encoding="utf-8")
    page = tmp_path / "page.html"
    assert main(["report", str(work), "--html", str(page)]) == 0
    (run,) = [r for r in _payload(page)["runs"] if r["model"] == "model-c"]
    assert len(run["samples"]) == 3 and "q" not in run["samples"][0]  # the sample is kept, without its prompt
    assert str(predictions) in run["sample_note"] and "line 1: `prompt`" in run["sample_note"]


def test_page_embeds_samples_and_each_image_once(work: Path, tmp_path: Path, capsys) -> None:
    page = tmp_path / "page.html"
    assert main(["report", str(work), "--html", str(page)]) == 0
    assert f"page: {page}" in capsys.readouterr().out
    data = _payload(page)
    assert len(data["images"]) == 3  # red, blue, green: shared by two runs, stored once
    thumb = next(iter(data["images"].values()))
    assert thumb.startswith("data:image/jpeg;base64,")
    import base64
    import io

    with Image.open(io.BytesIO(base64.b64decode(thumb.split(",", 1)[1]))) as small:
        assert max(small.size) == 160  # 320 x 240 source; few images: the largest size
    assert data["thumb_size"] == 160
    run = next(r for r in data["runs"] if (r["model"], r["dataset"]) == ("model-a", "MCQBench"))
    assert [s["v"] for s in run["samples"]] == ["hit", "miss", "unread", "hit"]
    assert run["samples"][3]["r"] == "it is round" and run["samples"][3]["p"] == "D"
    assert run["breakdown"]["columns"] == ["dev"] and run["breakdown"]["rows"][0][1][0][1] == "0.5000"
    failed = next(r for r in data["runs"] if r["status"] == "failed")
    assert failed["value"] is None and failed["display"] == ""


def test_samples_wrong_and_no_thumbnails(work: Path, tmp_path: Path) -> None:
    page = tmp_path / "page.html"
    assert main(["report", str(work), "--html", str(page), "--samples", "wrong", "--thumb-size", "0"]) == 0
    data = _payload(page)
    run = next(r for r in data["runs"] if (r["model"], r["dataset"]) == ("model-a", "MCQBench"))
    assert [s["v"] for s in run["samples"]] == ["miss", "unread"] and "2 of 4 samples embedded" in run["sample_note"]
    assert data["images"] == {} and run["samples"][0]["m"][0][1] is None  # the path is kept, no thumbnail


def test_page_is_self_contained(work: Path, tmp_path: Path) -> None:
    page = tmp_path / "page.html"
    assert main(["report", str(work), "--html", str(page)]) == 0
    text = page.read_text(encoding="utf-8")
    # no resource from elsewhere: no script/style/img source on the network (links to local files are fine)
    assert not re.search(r'(src|href)="(https?:)?//', text)
    assert "<link" not in text and "@import" not in text and "<script src" not in text


def test_a_reply_cannot_end_the_data_block(tmp_path: Path) -> None:
    evil = "</script><script>alert(1)</script>"
    write_run(tmp_path / "w", "m", "D", block=scoring("mcq", 0.0, scale=FRACTION),
              records=[record(0, evil, "A", hit=False, method="unparsed")])
    page = tmp_path / "page.html"
    assert main(["report", str(tmp_path / "w"), "--html", str(page)]) == 0
    text = page.read_text(encoding="utf-8")
    assert text.count("</script>") == 2  # the data block's and the code's own
    assert _payload(page)["runs"][0]["samples"][0]["p"] == evil


def test_perf_runs_are_on_the_page_with_their_plots(work: Path, tmp_path: Path) -> None:
    out = work / "perf" / "served" / "20261120-100000"
    level = {
        "label": "c=4", "mode": "closed", "concurrency": 4, "status": "complete", "interrupted": False,
        "requests": {"measured": 10, "successful": 9, "failed": 1, "errors_by_kind": {"timeout": 1}},
        "duration_s": 2.0, "request_throughput": 4.5, "input_token_throughput": 100.0, "output_token_throughput": 80.0,
        "ttft_ms": {"mean": 50.0, "p99": 90.0}, "tpot_ms": {"mean": 10.0, "p99": 12.0}, "itl_ms": {"p99": 15.0},
        "e2el_ms": {"mean": 400.0, "p99": 700.0}, "achieved_concurrency": {"mean": 3.9, "max": 4},
    }
    summary = {"kind": "vlmkit-perf", "status": "complete", "completed_at": "2026-11-20T10:00:00+00:00",
               "target": {"model": "served"}, "dataset": {"name": "MCQBench"}, "levels": [level], "notes": [],
               "warnings": []}
    out.mkdir(parents=True)
    (out / "perf_summary.json").write_text(json.dumps(summary))  # the fields vlmkit.perf.api writes that we read
    (out / "plots").mkdir()
    Image.new("RGB", (60, 40), "purple").save(out / "plots" / "latency_cdf_c_4.png", format="PNG")
    page = tmp_path / "page.html"
    assert main(["report", str(work), "--html", str(page)]) == 0
    (perf,) = _payload(page)["perf"]
    assert perf["model"] == "served" and perf["levels"][0]["ok/sent"] == "9/10"
    assert perf["levels"][0]["TTFT p99"] == 90.0
    assert [name for name, _ in perf["plots"]] == ["latency_cdf_c_4.png"]
    assert perf["plots"][0][1].startswith("data:image/png;base64,")


def test_diff_prints_the_changes_and_writes_a_page(work: Path, tmp_path: Path, capsys) -> None:
    a, b = work / "model-a" / "MCQBench", work / "model-b" / "MCQBench" / "results.json"
    page = tmp_path / "diff.html"
    assert main(["report", "--diff", str(a), str(b), "--html", str(page), "--samples", "none"]) == 0
    out = capsys.readouterr().out
    assert "4 of 4 sample(s) changed verdict" in out and not (work / "report.csv").exists()
    data = _payload(page)
    assert [c["from"] + ">" + c["to"] for c in data["diff"]["changes"]][:2] == ["hit>miss", "hit>error"]
    assert all(len(r["samples"]) == 4 for r in data["runs"])  # the changed samples, even with --samples none
    assert main(["report", "--diff", str(a), str(work / "model-a" / "YNBench")]) == 2
    assert "one dataset" in capsys.readouterr().err


def test_max_rows_cuts_the_printed_diff(work: Path, capsys) -> None:
    a, b = work / "model-a" / "MCQBench", work / "model-b" / "MCQBench"
    assert main(["report", "--diff", str(a), str(b), "--max-rows", "1"]) == 0
    assert "... and 3 more" in capsys.readouterr().out


@pytest.mark.parametrize("flag", [["--thumb-size", "-1"], ["--max-rows", "-2"]])
def test_bad_numbers_are_one_line(work: Path, flag: list[str], capsys) -> None:
    assert main(["report", str(work), *flag]) == 2
    assert capsys.readouterr().err.startswith("vlmkit report: error: --")


def test_the_report_reads_files_only(work: Path, tmp_path: Path) -> None:
    """DESIGN: the report never imports models or datasets (it works on results copied from another machine)."""
    import subprocess
    import sys

    code = (
        "import sys; from vlmkit.report.cli import main; "
        f"assert main(['report', {str(work)!r}, '--out', {str(tmp_path)!r}, '--html', {str(tmp_path / 'p.html')!r}, "
        f"'--diff', {str(work / 'model-a' / 'MCQBench')!r}, {str(work / 'model-b' / 'MCQBench')!r}]) == 0; "
        f"assert main(['report', {str(work)!r}, '--out', {str(tmp_path)!r}, '--html', {str(tmp_path / 'q.html')!r}]) == 0; "
        "bad = sorted(m for m in sys.modules if m.split('.')[0] in ('vlm', 'datasets_tsv', 'torch', 'transformers')); "
        "assert not bad, bad"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr


def test_thumbnails_get_what_the_text_leaves_of_the_page_target(work: Path, tmp_path: Path, monkeypatch) -> None:
    from vlmkit.report import page as page_module

    monkeypatch.setattr(page_module, "MIN_THUMB_BUDGET", 0)
    monkeypatch.setattr(page_module, "PAGE_TARGET", page_module.CODE_BYTES)  # the text alone overfills it
    out = tmp_path / "page.html"
    assert main(["report", str(work), "--html", str(out)]) == 0
    assert _payload(out)["thumb_size"] == 64  # the smallest
    monkeypatch.setattr(page_module, "PAGE_TARGET", 10_000_000)
    assert main(["report", str(work), "--html", str(out)]) == 0
    assert _payload(out)["thumb_size"] == 160
