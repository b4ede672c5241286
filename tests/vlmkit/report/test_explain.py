"""`vlmkit report --explain RUN` (issue 23): for one run, each difference from VLMEvalKit and how far it moves the
score, on hand-made runs whose figures are worked out by hand below, and on a real `vlmkit run` with a judge."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.support.run_helpers import chat_only, question_of, row_of, vlmkit_cli, write_yorn_tsv
from tests.support.servers import FaultServer, Recorded, Reply, chat_reply
from tests.support.workdirs import FRACTION, PERCENT, record, scoring, write_run
from tests.vlmkit.report.test_vlmevalkit_column import vlmevalkit_block, with_block
from vlmkit.report.cli import main


def _edit(path: Path, **fields: object) -> None:
    data = json.loads(path.read_text(encoding="utf-8"))
    data.update(fields)
    path.write_text(json.dumps(data, indent=2), encoding="utf-8")


def _explain(capsys, *args: str) -> tuple[int, str, str]:
    code = main(["report", *args])
    out, err = capsys.readouterr()
    return code, out, err


def _section(out: str, title: str) -> str:
    """The lines of the section whose title starts with `title` (sections are separated by a blank line)."""
    return next(block for block in out.split("\n\n") if block.startswith(title))


@pytest.fixture
def judged(tmp_path: Path) -> Path:
    """10 MCQ rows: 6 read by rule and right, 2 the judge read and right, 1 the judge could not read, 1 wrong:
    vlmkit 8/10 = 0.8; VLMEvalKit 0.7 with 5 rows read differently (3 listed); a local model whose preset's
    max_new_tokens 2048 the run replaced by 512, whose family wrote the prompts where VLMEvalKit uses the dataset's."""
    rows = [record(i, "A", "A", hit=True, extracted="A", method="exact") for i in range(6)]
    rows += [record(i, "it is A surely", "A", hit=True, extracted="A", method="judge", judge="A") for i in (6, 7)]
    rows += [record(8, "hmm", "B", hit=False, method="judge_unread"), record(9, "C", "D", hit=False, method="exact")]
    block = scoring("mcq", 0.8, scale=FRACTION, counts={"by_rule": 7, "by_judge": 2, "unread": 1, "judge_errors": 0})
    block["metrics"]["colour"] = 0.75
    figure = vlmevalkit_block("Overall", 0.7, differing=5, metrics={"Overall": 0.7, "colour": 0.65}, rows=[
        {"index": 6, "vlmkit": "A", "vlmevalkit": None, "vlmkit_score": 1.0, "vlmevalkit_score": 0.0},
        {"index": 7, "vlmkit": "A", "vlmevalkit": "Z", "vlmkit_score": 1.0, "vlmevalkit_score": 0.0},
        {"index": 9, "vlmkit": "C", "vlmevalkit": "D", "vlmkit_score": 0.0, "vlmevalkit_score": 1.0},
    ], notes=["1 empty reply is the text 'nan' in VLMEvalKit (its xlsx round trip)"])
    path = write_run(tmp_path / "outputs", "qwen-local", "MCQ", block=with_block(block, figure), records=rows)
    preset = {"name": "qwen2-vl-2b", "vlmeval": "Qwen2-VL-2B-Instruct", "vlmeval_prompt": "model",
              "prompt_style": "qwen2vl", "values": {"max_new_tokens": 2048, "min_pixels": 1003520},
              "overridden": ["max_new_tokens"]}
    settings = {"temperature": 0.0, "max_new_tokens": 512, "device": "cpu", "preset": preset,
                "prompt_family": {"name": "qwen2vl", "own_prompts": True,
                                  "dataset_image_settings": {"MCQ": {"min_pixels": 12845056}, "Other": {}}},
                "generation": {"passed": {"do_sample": False, "max_new_tokens": 512}, "max_new_tokens_source": "user"}}
    _edit(path, model={"name": "qwen-local", "settings": settings},
          dataset={"name": "MCQ", "vlmevalkit_type": "MCQ_MMMU_Pro", "vlmevalkit_prompt": "dataset"},
          run={"prompt_style": "model", "prompts_from": "model (Qwen2VLPrompts)", "vlmevalkit_prompts_from": "dataset"},
          judge={"name": "judge-m", "base_url": "http://127.0.0.1:9/v1", "replies": 3, "asked_this_run": 3,
                 "from_journal": 0, "errors": 0})
    return path.parent


def test_every_section_with_its_worked_out_difference(judged: Path, capsys) -> None:
    code, out, err = _explain(capsys, "--explain", str(judged))
    assert code == 0 and err == ""
    assert out.startswith("qwen-local x MCQ: success; Overall 0.8000 (fraction)")
    reading = _section(out, "Reading")
    assert "open-compass/VLMEvalKit @ e8e78f05" in reading
    assert "VLMEvalKit  Overall: 0.7000" in reading
    assert "difference (vlmkit - VLMEvalKit) on Overall: +10.00 percentage points" in reading  # (0.8 - 0.7) x 100
    assert "rows read differently: 5 of 10" in reading
    assert "vlmkit scores higher on 2, VLMEvalKit on 1, equal on 0" in reading
    lines = reading.splitlines()
    start = next(i for i, line in enumerate(lines) if line.split()[:1] == ["index"])
    table = [line.split() for line in lines[start:start + 5]]
    assert table[0][:3] == ["index", "vlmkit", "VLMEvalKit"]
    assert [row[:3] for row in table[2:]] == [["6", "A", "-"], ["7", "A", "Z"], ["9", "C", "D"]]
    assert "... and 2 more" in reading
    colour = next(line for line in reading.splitlines() if line.strip().startswith("colour"))
    assert colour.split()[1:3] == ["0.7500", "0.6500"] and "+10.00 percentage points" in colour
    assert "- 1 empty reply is the text 'nan' in VLMEvalKit (its xlsx round trip)" in reading

    prompts = _section(out, "Prompt family")
    assert "the model's own prompt, model (Qwen2VLPrompts)" in prompts
    assert "VLMEvalKit for this benchmark: dataset (not the same as this run)" in prompts
    assert "VLMEvalKit's dataset TYPE: MCQ_MMMU_Pro" in prompts and "forces this benchmark's own prompt" in prompts
    assert "cannot be measured from the files" in prompts

    settings = _section(out, "Preset / generation settings")
    assert "temperature 0.0" in settings and "max_new_tokens 512" in settings and "device" not in settings
    assert "max_new_tokens from: user" in settings
    assert "the family's image settings for MCQ: {'min_pixels': 12845056}" in settings
    assert "this run replaced the preset's max_new_tokens (2048 -> 512)" in settings
    assert "cannot be measured from the files" in settings

    judge = _section(out, "Judge")
    assert "judge: judge-m at http://127.0.0.1:9/v1" in judge
    assert "by_rule 7, by_judge 2, unread 1, judge_errors 0" in judge
    assert "without the judge: 0.6000" in judge  # rows 6 and 7 become misses: 6/10
    assert "the judge moves the score by +20.00 percentage points" in judge
    assert _section(out, "How far each moves the score").splitlines()[1:] == [
        "  reading: +10.00 percentage points", "  prompt family: needs a rerun to be measured",
        "  preset: needs a rerun to be measured", "  judge: +20.00 percentage points"]


def test_max_rows_and_the_run_before_the_flag(judged: Path, capsys) -> None:
    code, out, _ = _explain(capsys, str(judged), "--explain", "--max-rows", "1")
    assert code == 0
    reading = _section(out, "Reading")
    assert "the first 1, with both readings:" in reading and "... and 4 more" in reading
    code, out, _ = _explain(capsys, "--explain", str(judged / "results.json"), "--max-rows", "0")
    assert code == 0 and "... and 2 more" in out  # every listed row; 2 of the 5 are not in results.json


def test_another_headline_is_compared_on_vlmevalkits_metric(tmp_path: Path, capsys) -> None:
    block = scoring("mmmu", 0.62, scale=FRACTION)
    block["metrics"]["validation"] = 0.6
    figure = vlmevalkit_block("validation", 0.55, metrics={"validation": 0.55})
    path = write_run(tmp_path, "m", "MMMU", block=with_block(block, figure), records=[])
    _edit(path, run={"prompt_style": "dataset", "prompts_from": "dataset"},
          model={"name": "m", "settings": {"preset": {"name": "p", "vlmeval_prompt": "model", "values": {}}}})
    code, out, _ = _explain(capsys, "--explain", str(path))
    assert "this run forced the benchmark's prompt (--prompt-style dataset) where VLMEvalKit lets the model's " \
           "wrapper choose" in _section(out, "Prompt family")
    assert "this run kept every preset value" in _section(out, "Preset")
    reading = _section(out, "Reading")
    assert code == 0 and "VLMEvalKit reports another headline, validation; vlmkit's validation: 0.6000" in reading
    assert "on validation: +5.00 percentage points" in reading and "rows read differently: 0 of 0" in reading
    assert "reading: +5.00 percentage points (on validation)" in out


def test_a_run_without_the_figure_or_a_judge(tmp_path: Path, capsys) -> None:
    """Y/N, 4 rows: 2 right, 1 no rule read, 1 wrong: 50.00; a judge could turn the unread row into a hit at most:
    75.00, +25 points. No figure of VLMEvalKit's; an older file without prompts_from; an API model's kwargs."""
    rows = [record(0, "Yes", "Yes", hit=True, method="parsed"), record(1, "No", "No", hit=True, method="parsed"),
            record(2, "maybe", "Yes", hit=False, method="unparsed"), record(3, "Yes", "No", hit=False, method="parsed")]
    block = scoring("yorn_acc", 50.0, scale=PERCENT, counts={"by_rule": 3, "by_judge": 0, "unread": 1})
    path = write_run(tmp_path, "api", "YN", block=block, records=rows)
    _edit(path, model={"name": "api", "kwargs": {"temperature": 0.5, "api_base": "http://x"}},
          judge={"name": None, "note": "rules alone: answers no rule reads count as misses"})
    code, out, _ = _explain(capsys, "--explain", str(path))
    assert code == 0
    assert "VLMEvalKit's figure: not computed (scorer `yorn_acc`" in _section(out, "Reading")
    prompts = _section(out, "Prompt family")
    assert "this run: not recorded" in prompts and "TYPE" not in prompts and "forces" not in prompts
    settings = _section(out, "Preset / generation settings")
    assert "model.kwargs: temperature 0.5" in settings and "api_base" not in settings and "preset: none" in settings
    judge = _section(out, "Judge")
    assert "no judge: rules alone (rules alone: answers no rule reads count as misses)" in judge
    assert "a judge could add at most +25.00 percentage points (1 unread row(s) of 4" in judge
    summary = _section(out, "How far each moves the score")
    assert "reading: cannot be told (VLMEvalKit's figure not computed for this run)" in summary
    assert "judge: no judge; one could add at most +25.00 percentage points" in summary


def test_what_the_files_cannot_tell_is_said(tmp_path: Path, capsys) -> None:
    # a headline that is not the rows' mean (3 of 4 rows right, headline 0.25: groups): the judge's share is unknown
    rows = [record(i, "A", "A", hit=True, method="judge" if i == 0 else "exact") for i in range(3)]
    rows.append(record(3, "B", "A", hit=False, method="exact"))
    circular = write_run(tmp_path, "m", "Circ", block=scoring("mcq_circular", 0.25, scale=FRACTION), records=rows)
    _edit(circular, judge={"name": "j"})
    code, out, _ = _explain(capsys, "--explain", str(circular))
    assert code == 0 and "without the judge: cannot be told (the headline (Overall) is not the plain mean" in out
    # a benchmark the judge scores whole
    scored = [record(i, "x", "y", score=s, method="judge") for i, s in enumerate((1.0, 0.5))]
    whole = write_run(tmp_path, "m", "Judged", block=scoring("qa_judge", 75.0, scale=PERCENT,
                                                             counts={"by_rule": 0, "by_judge": 2}), records=scored)
    _edit(whole, judge={"name": "j"})
    code, out, _ = _explain(capsys, "--explain", str(whole))
    assert code == 0 and "the judge scored every row (counts.by_rule 0): without it the benchmark has no figure" in out
    # a damaged predictions.jsonl: the judge's effect cannot be told, the rest is printed
    (whole.parent / "predictions.jsonl").write_text('{"index": 0}\nnot json\n', encoding="utf-8")
    code, out, _ = _explain(capsys, "--explain", str(whole))
    assert code == 0 and "line 2 is not JSON" in _section(out, "Judge") and "Reading" in out
    # an unscored run
    failed = write_run(tmp_path, "m", "Failed", status="failed", block=None, records=[])
    code, out, _ = _explain(capsys, "--explain", str(failed))
    assert code == 0 and "no scored figure (status failed): nothing to compare" in out


def test_bad_input_is_one_line_and_exit_2(tmp_path: Path, judged: Path, capsys) -> None:
    broken = tmp_path / "broken" / "results.json"
    broken.parent.mkdir()
    broken.write_text("{not json", encoding="utf-8")
    code, out, err = _explain(capsys, "--explain", str(broken))
    assert code == 2 and out == "" and len(err.strip().splitlines()) == 1
    assert err.startswith(f"vlmkit report: error: {broken}: not JSON")
    code, _, err = _explain(capsys, "--explain", str(tmp_path / "nowhere"))
    assert code == 2 and "no results.json there" in err
    code, _, err = _explain(capsys, "--explain", str(judged), "--diff", str(judged), str(judged))
    assert code == 2 and "--explain prints one run; it does not go with --diff" in err
    code, _, err = _explain(capsys, str(tmp_path), str(judged), "--explain")
    assert code == 2 and "--explain needs one run" in err


# -- a real run ---------------------------------------------------------------------------------------------------
def _model_or_judge(request: Recorded) -> Reply:
    """The model answers rows 1 and 2 with text no rule reads, the others Yes; the judge (asked by model id) reads
    every answer it is asked about as Yes."""
    if request.body.get("model") == "judge-m":
        return chat_reply("Yes")
    return chat_reply("Hard to say" if row_of(request) in (1, 2) else "Yes")


def test_explain_on_a_real_run_with_a_judge(tmp_path: Path) -> None:
    """write_yorn_tsv's answers for 6 rows: No, Yes, Yes, No, Yes, Yes. Replies: Yes everywhere but rows 1 and 2,
    which the judge reads as Yes: hits 1, 2, 4, 5 = 66.67; without the judge rows 1 and 2 are misses: 33.33."""
    lmu, work = tmp_path / "LMUData", tmp_path / "outputs"
    write_yorn_tsv(lmu / "MyYN.tsv", n=6)
    with FaultServer(chat_only(_model_or_judge)) as server:
        done = vlmkit_cli("run", "--data", "MyYN", "--model", "served", "--api-base", server.base_url,
                          "--work-dir", str(work), "--retries", "0", "--judge", "judge-m", "--judge-api-base",
                          server.base_url, "--temperature", "0", env={"LMUData": str(lmu)})
        judged = [r for r in server.requests if r.method == "POST" and r.body.get("model") == "judge-m"]
    assert done.returncode == 0, done.stderr
    assert sorted(question_of(r).count("Hard to say") > 0 for r in judged) == [True, True]
    run_dir = work / "served" / "MyYN"
    explained = vlmkit_cli("report", "--explain", str(run_dir))
    assert explained.returncode == 0, explained.stderr
    out = explained.stdout
    assert out.startswith("served x MyYN: success; Overall 66.67 (percent)")
    judge = _section(out, "Judge")
    assert "by_rule 4, by_judge 2" in judge
    assert "without the judge: 33.33" in judge and "the judge moves the score by +33.33 percentage points" in judge
    assert "this run: the benchmark's own prompt (run.prompts_from: dataset)" in _section(out, "Prompt family")
    assert "temperature 0.0" in _section(out, "Preset / generation settings")
    figure = json.loads((run_dir / "results.json").read_text())["scoring"].get("vlmevalkit")
    reading = _section(out, "Reading")
    if figure is None:  # the Y/N scorer does not compute VLMEvalKit's figure (yet)
        assert "VLMEvalKit's figure: not computed (scorer `yorn_acc`" in reading
    else:
        name, value = figure["primary_metric"]["name"], figure["primary_metric"]["value"]
        assert f"VLMEvalKit  {name}: {value:.2f}" in reading
        assert f"rows read differently: {figure['differing_rows']} of 6" in reading
