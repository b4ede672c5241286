"""The `vlmkit` command as a user meets it: listings, one-line errors, and a local model through the run loop."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.support.tsvs import b64, image_bytes, write_tsv
from tests.support.run_helpers import chat_only, chat_requests


def vlmkit(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "vlmkit.cli", *args], capture_output=True, text=True, env={**os.environ, **(env or {})}, timeout=300
    )


def test_version_and_examples_in_help():
    import vlmkit as package

    version = vlmkit("--version")
    assert version.returncode == 0 and version.stdout.strip() == f"vlmkit {package.__version__}"
    as_module = subprocess.run([sys.executable, "-m", "vlmkit", "--version"], capture_output=True, text=True)
    assert as_module.stdout == version.stdout
    top = vlmkit("--help").stdout
    run = vlmkit("run", "--help").stdout
    assert "examples:" in top and "vlmkit run --data vlmkit_demo_mcq --model vlmkit-tiny" in top
    assert "examples:" in run and "--custom-dataset-path" in run.split("examples:")[1] and "exit codes:" in run
    # every example names only flags the command has
    for flag in ("--batch-size", "--nproc", "--judge", "--metric", "--api-base"):
        assert flag in run.split("examples:")[0]


def test_list_models_shows_alias_targets():
    out = vlmkit("list", "models").stdout
    assert "qwen-vl" in out and "alias of Qwen2.5-VL-7B-Instruct" in out
    assert "llava-1.5-7b-hf" in out and "gpt-4o-mini" in out


def test_list_datasets_shows_the_catalog():
    out = vlmkit("list", "datasets").stdout
    assert "MMBench_DEV_EN" in out and "POPE" in out and "vlmkit_demo_mcq" in out


def test_unknown_names_are_one_line_errors_with_did_you_mean(lmu_root: Path):
    result = vlmkit("run", "--data", "MMBench_DEV_EM", "--model", "gpt-4o-mini", env={"LMUData": str(lmu_root)})
    assert result.returncode == 2
    assert result.stderr.strip().count("\n") == 0 and "Did you mean: MMBench_DEV_EN" in result.stderr
    result = vlmkit("run", "--data", "MMBench_DEV_EN", "--model", "qwen-v")
    assert result.returncode == 2 and "Did you mean: qwen-vl" in result.stderr


def yorn_tsv(path: Path, n: int = 6) -> Path:
    colours = ["red", "blue"]
    rows = [
        {"index": i, "image": b64(image_bytes(colours[i % 2])), "question": f"Is the picture {colours[i % 2]}?",
         "answer": "Yes" if i % 3 else "No", "category": "colour"}
        for i in range(n)
    ]
    return write_tsv(path, rows)


def test_missing_local_weights_say_how_to_point_at_them(lmu_root: Path, tmp_path: Path):
    yorn_tsv(lmu_root / "MyYN.tsv")
    cache = tmp_path / "empty-hf-cache"
    cache.mkdir()
    result = vlmkit(
        "run", "--data", "MyYN", "--model", "qwen-vl", "--work-dir", str(tmp_path / "out"),
        env={"LMUData": str(lmu_root), "HF_HUB_CACHE": str(cache), "HF_HUB_OFFLINE": "1"},
    )
    assert result.returncode == 2, result.stderr
    assert "Qwen/Qwen2.5-VL-7B-Instruct" in result.stderr and "--model-path DIR" in result.stderr
    assert "Traceback" not in result.stderr


@pytest.fixture(scope="module")
def tiny_llava(tmp_path_factory) -> Path:
    from tests.support.tiny_models import build_tiny_llava

    return build_tiny_llava(tmp_path_factory.mktemp("models") / "tiny-llava")


def test_local_model_runs_through_the_cli_with_batching(lmu_root: Path, tmp_path: Path, tiny_llava: Path):
    yorn_tsv(lmu_root / "MyYN.tsv")
    work = tmp_path / "out"
    args = ["run", "--data", "MyYN", "--model", "tiny", "--model-path", str(tiny_llava), "--batch-size", "4",
            "--max-tokens", "4", "--work-dir", str(work)]
    result = vlmkit(*args, env={"LMUData": str(lmu_root), "OMP_NUM_THREADS": "1"})
    assert result.returncode == 0, result.stderr
    results = json.loads((work / "tiny" / "MyYN" / "results.json").read_text())
    assert results["status"] == "success" and results["counts"]["completed"] == 6
    assert results["model"]["settings"]["batch_size"] == 4 and results["model"]["settings"]["max_new_tokens"] == 4
    assert results["dataset"]["kind"] == "yorn" and results["scoring"]["scorer"] == "yorn_acc"
    assert results["usage"]["output_tokens"] > 0
    records = [json.loads(line) for line in (work / "tiny" / "MyYN" / "predictions.jsonl").open()]
    assert all(isinstance(r["prediction"], str) and r["error"] is None for r in records)
    assert records[0]["prompt"][0]["content"][0]["type"] == "image"  # a path, never base64
    assert Path(records[0]["prompt"][0]["content"][0]["value"]).is_file()
    assert (work / "tiny" / "tiny_MyYN_score.csv").is_file()

    again = vlmkit(*args, env={"LMUData": str(lmu_root), "OMP_NUM_THREADS": "1"})  # all done: nothing asked
    assert again.returncode == 0
    assert len((work / "tiny" / "MyYN" / "journal.jsonl").read_text().splitlines()) == 1 + 6


CUSTOM = Path(__file__).resolve().parents[1] / "datasets_tsv" / "custom" / "fixtures" / "aisbench"


def _sum_answer(request):
    """Answers an addition question right: by option letter for MCQ prompts, by the number for QA prompts."""
    import re

    from tests.support.servers import chat_reply

    content = request.body["messages"][-1]["content"]
    text = content if isinstance(content, str) else "".join(p.get("text", "") for p in content if p.get("type") == "text")
    total = str(sum(int(n) for n in re.search(r"([\d+]+)=", text).group(1).split("+")))
    letter = re.search(rf"^([A-Z])\. {total}$", text, flags=re.M)
    return chat_reply(letter.group(1) if letter else total)


def test_custom_files_by_flags_and_by_config_file(tmp_path: Path):
    from tests.support.servers import FaultServer

    work = tmp_path / "out"
    with FaultServer(chat_only(_sum_answer)) as server:
        result = vlmkit(
            "run", "--model", "served", "--api-base", server.base_url, "--work-dir", str(work),
            "--custom-dataset-path", str(CUSTOM / "test_mcq.csv"), str(CUSTOM / "test_qa.jsonl"),
        )
        assert result.returncode == 0, result.stderr
        mcq = json.loads((work / "served" / "test_mcq" / "results.json").read_text())
        qa = json.loads((work / "served" / "test_qa" / "results.json").read_text())
        assert mcq["scoring"]["metrics"]["Overall"] == 1.0 and qa["scoring"]["metrics"]["exact_match"] == 100.0

        config = tmp_path / "run.yaml"
        config.write_text(
            "model: [served]\n"
            "custom_datasets:\n"
            f"  - path: {CUSTOM / 'test_mcq.csv'}\n"
            f"    meta_path: {CUSTOM / 'uniform.meta.json'}\n"
            f"options: {{api_base: '{server.base_url}', work_dir: '{tmp_path / 'out2'}', nproc: 3}}\n"
        )
        before = len(server.requests)
        result = vlmkit("run", "--config", str(config))
        assert result.returncode == 0, result.stderr
        bodies = [r.body for r in chat_requests(server.requests[before:])]
    assert bodies and all(100 <= b["max_tokens"] <= 200 for b in bodies)  # the meta's output_config reached them
    run = json.loads((tmp_path / "out2" / "served" / "test_mcq" / "results.json").read_text())
    assert run["run"]["nproc"] == 3 and run["status"] == "success"


def test_custom_dataset_flag_errors_are_one_line(tmp_path: Path):
    result = vlmkit("run", "--model", "gpt-4o-mini", "--custom-dataset-path", "a.csv", "b.csv",
                    "--custom-dataset-meta-path", "m.json")
    assert result.returncode == 2 and "exactly one --custom-dataset-path" in result.stderr
    config = tmp_path / "bad.yaml"
    config.write_text("model: [m]\ndataset: [x]\n")
    result = vlmkit("run", "--config", str(config))
    assert result.returncode == 2 and "unknown key(s) dataset" in result.stderr
    result = vlmkit("run", "--model", "gpt-4o-mini", "--custom-dataset-path", str(tmp_path / "missing.csv"))
    assert result.returncode == 2 and "missing.csv" in result.stderr and "Traceback" not in result.stderr


def test_list_datasets_filters_and_columns():
    result = vlmkit("list", "datasets", "--kind", "yorn", "--search", "hallu")
    lines = result.stdout.splitlines()
    assert result.returncode == 0 and lines[0].split() == ["NAME", "KIND", "SCORER", "JUDGE", "ROWS", "DESCRIPTION"]
    assert lines[1].split()[:5] == ["HallusionBench", "yorn", "hallusion", "optional", "951"]
    bad = vlmkit("list", "datasets", "--kind", "quiz")
    assert bad.returncode == 2 and "kinds: caption, mcq" in bad.stderr


def test_a_user_tsv_is_scored_by_the_metric_asked_for_and_the_run_says_why(tmp_path: Path):
    from tests.support.servers import FaultServer, chat_reply

    lmu = tmp_path / "LMUData"
    rows = [{"index": i, "image": b64(image_bytes("red")), "question": f"Total on page {i}?", "answer": "$1,250.00"}
            for i in range(3)]
    write_tsv(lmu / "MyDocs.tsv", rows)
    with FaultServer(chat_only(lambda request: chat_reply("1,250.00"))) as server:
        result = vlmkit("run", "--data", "MyDocs", "--model", "served", "--api-base", server.base_url, "--metric", "anls",
                        "--work-dir", str(tmp_path / "out"), env={"LMUData": str(lmu)})
    assert result.returncode == 0, result.stderr
    assert "MyDocs: scorer anls: given metric=anls" in result.stdout
    results = json.loads((tmp_path / "out" / "served" / "MyDocs" / "results.json").read_text())
    assert results["dataset"]["scorer_reason"] == "anls: given metric=anls"
    assert results["scoring"]["primary_metric"]["value"] == pytest.approx(100 * 8 / 9)  # ANLS, not VQA score (0)
