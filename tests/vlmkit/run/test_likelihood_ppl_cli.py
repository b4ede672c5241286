"""`vlmkit run --mcq-mode ppl` through the CLI on a custom QA file and the shipped vlmkit-tiny (issue 28): every row's
perplexity figures in predictions.jsonl, the overall figure in results.json's `scoring.likelihood` (the token-weighted
mean worked out here from the rows' own figures), and the one-line refusals (an MCQ dataset, a served model)."""

from __future__ import annotations

import json
import math
from pathlib import Path

from tests.support.run_helpers import stderr_lines, vlmkit_cli

ROWS = [("Which colour is the sky?", "blue"), ("Name a shape with four equal sides.", "a square"),
        ("What colour is grass?", "green")]


def _qa_file(folder: Path) -> Path:
    path = folder / "colours_qa.jsonl"
    path.write_text("".join(json.dumps({"question": q, "answer": a}) + "\n" for q, a in ROWS))
    return path


def test_ppl_run_writes_each_rows_figures_and_the_token_weighted_overall(tmp_path: Path) -> None:
    work = tmp_path / "out"
    result = vlmkit_cli("run", "--model", "vlmkit-tiny", "--custom-dataset-path", str(_qa_file(tmp_path)),
                        "--work-dir", str(work), "--mcq-mode", "ppl",
                        env={"LMUData": str(tmp_path / "lmu"), "OMP_NUM_THREADS": "1"}, timeout=600)
    assert result.returncode == 0, result.stderr[-3000:]
    folder = work / "vlmkit-tiny" / "colours_qa"
    records = [json.loads(line) for line in (folder / "predictions.jsonl").read_text().splitlines()]
    assert len(records) == len(ROWS)
    total_lp = total_tokens = 0.0
    for record in records:
        found = record["extra"]["likelihood"]
        assert found["mode"] == "ppl" and list(found["logprobs"]) == ["1"]
        lp, n = found["logprobs"]["1"], found["tokens"]["1"]
        assert lp < 0 and n >= 1
        assert found["ppl"] == math.exp(-lp / n) and float(record["prediction"]) == float(f"{math.exp(-lp / n):.6g}")
        total_lp, total_tokens = total_lp + lp, total_tokens + n
    summary = json.loads((folder / "results.json").read_text())["scoring"]["likelihood"]
    assert summary["mode"] == "ppl" and summary["rows"] == len(ROWS) and summary["tokens"] == total_tokens
    assert math.isclose(summary["ppl"], math.exp(-total_lp / total_tokens), rel_tol=1e-9)


def test_ppl_is_refused_for_mcq_data_and_served_models_in_one_line(tmp_path: Path) -> None:
    mcq = vlmkit_cli("run", "--model", "vlmkit-tiny", "--data", "vlmkit_demo_mcq", "--limit", "2",
                     "--work-dir", str(tmp_path / "a"), "--mcq-mode", "ppl", env={"LMUData": str(tmp_path / "lmu")})
    lines = stderr_lines(mcq)
    assert mcq.returncode != 0 and len(lines) == 1 and "perplexity takes QA or caption" in lines[0], lines
    served = vlmkit_cli("run", "--model", "served", "--api-base", "http://127.0.0.1:9/v1",
                        "--custom-dataset-path", str(_qa_file(tmp_path)), "--work-dir", str(tmp_path / "b"),
                        "--mcq-mode", "ppl", env={"LMUData": str(tmp_path / "lmu")})
    lines = stderr_lines(served)
    assert served.returncode != 0 and len(lines) == 1 and "served model" in lines[0], lines
    assert not list(tmp_path.rglob("journal*.jsonl"))  # refused before anything was asked
