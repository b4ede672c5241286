"""`vlmkit perf` and `vlmkit run --mode perf` through the one `vlmkit` command (AISBench's perf mode)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from vlmkit.cli.main import main

AISBENCH = Path(__file__).resolve().parents[2] / "datasets_tsv" / "custom" / "fixtures" / "aisbench"


def test_run_mode_perf_load_tests_each_custom_file_with_its_meta(tmp_path: Path, mock_server, capsys) -> None:
    mock = mock_server("--tokens", "3")
    work = tmp_path / "out"
    code = main([
        "run", "--mode", "perf", "--model", "served", "--api-base", mock.base_url, "--nproc", "2",
        "--custom-dataset-path", str(AISBENCH / "test_mcq.csv"),
        "--custom-dataset-meta-path", str(AISBENCH / "uniform.meta.json"), "--work-dir", str(work),
    ])
    assert code == 0, capsys.readouterr().err
    summary = json.loads((work / "served" / "test_mcq" / "perf" / "perf_summary.json").read_text())
    rows = len((AISBENCH / "test_mcq.csv").read_text(encoding="utf-8-sig").strip().splitlines()) - 1
    level = summary["levels"][0]
    assert level["concurrency"] == 2 and level["requests"]["successful"] == rows
    bodies = [b for b in mock.bodies() if b.get("stream")]
    measured = bodies[-rows:]  # the probe's one-token request comes first
    assert all(100 <= b["max_tokens"] <= 200 for b in measured)  # the meta's uniform output_config
    assert len({b["max_tokens"] for b in measured}) > 1


def test_run_mode_perf_with_limit_and_a_tsv(tmp_path: Path, mock_server, capsys) -> None:
    from tests.support.tsvs import b64, image_bytes, write_tsv

    root = tmp_path / "LMUData"
    rows = [{"index": i, "image": b64(image_bytes(c)), "question": f"colour {i}?", "answer": c}
            for i, c in enumerate(["red", "green", "blue", "white", "black"])]
    write_tsv(root / "Colours.tsv", rows)
    mock = mock_server("--tokens", "2")
    code = main([
        "run", "--mode", "perf", "--model", "served", "--api-base", mock.base_url, "--data", "Colours",
        "--lmudata", str(root), "--limit", "3", "--max-tokens", "7", "--work-dir", str(tmp_path / "w"),
    ])
    assert code == 0, capsys.readouterr().err
    summary = json.loads((tmp_path / "w" / "served" / "Colours" / "perf" / "perf_summary.json").read_text())
    assert summary["levels"][0]["requests"]["successful"] == 3
    measured = [b for b in mock.bodies() if b.get("stream")][-3:]
    assert [b["max_tokens"] for b in measured] == [7, 7, 7]
    assert all(part["type"] == "image_url" for b in measured for part in b["messages"][-1]["content"][:1])


def test_run_mode_perf_refuses_a_local_model(tmp_path: Path, capsys) -> None:
    code = main(["run", "--mode", "perf", "--model", "vlmkit-tiny", "--custom-dataset-path",
                 str(AISBENCH / "test_qa.jsonl"), "--work-dir", str(tmp_path)])
    err = capsys.readouterr().err
    assert code == 2 and "--mode perf load-tests a served model" in err and "Traceback" not in err


def test_perf_is_a_subcommand_of_vlmkit(capsys) -> None:
    with pytest.raises(SystemExit) as exit_info:
        main(["perf", "--help"])
    assert exit_info.value.code == 0
    out = capsys.readouterr().out
    assert "--concurrency" in out and "--request-rate" in out and "--slo" in out


def test_run_mode_perf_sends_the_system_prompt_as_run_does(tmp_path: Path, mock_server, capsys) -> None:
    from vlm.api.openai_compat import OpenAICompatModel
    from vlmkit.run.resolve import ModelOptions, resolve_model

    mock = mock_server("--tokens", "2")
    system = "Answer with one letter."
    code = main([
        "run", "--mode", "perf", "--model", "served", "--api-base", mock.base_url, "--nproc", "2",
        "--system-prompt", system, "--custom-dataset-path", str(AISBENCH / "test_qa.jsonl"),
        "--limit", "3", "--work-dir", str(tmp_path / "w"),
    ])
    assert code == 0, capsys.readouterr().err
    measured = [b for b in mock.bodies() if b.get("stream")][-3:]  # after the probe's one-token request
    assert len(measured) == 3
    assert all(b["messages"][0] == {"role": "system", "content": system} for b in measured)
    assert all(b["messages"][1]["role"] == "user" for b in measured)
    # the same system turn `vlmkit run` sends for the same option
    spec = resolve_model("served", ModelOptions(api_base=mock.base_url, system_prompt=system))
    run_body = OpenAICompatModel(**spec.kwargs).request_body([{"type": "text", "value": "hi"}])
    assert run_body["messages"][0] == measured[0]["messages"][0]


def test_run_mode_perf_without_a_system_prompt_sends_none(tmp_path: Path, mock_server, capsys) -> None:
    mock = mock_server("--tokens", "2")
    code = main([
        "run", "--mode", "perf", "--model", "served", "--api-base", mock.base_url, "--limit", "2",
        "--custom-dataset-path", str(AISBENCH / "test_qa.jsonl"), "--work-dir", str(tmp_path / "w"),
    ])
    assert code == 0, capsys.readouterr().err
    measured = [b for b in mock.bodies() if b.get("stream")][-2:]
    assert [b["messages"][0]["role"] for b in measured] == ["user", "user"]
