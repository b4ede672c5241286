"""What a new user meets in the first hour (issue 24), through `python -m vlmkit` in a subprocess: a name typed in
the wrong case, an API-only install given a local model, `--mode eval` of a served model without its URL."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from tests.support.run_helpers import answer_yes, chat_only, chat_requests, stderr_lines, write_yorn_tsv
from tests.support.servers import FaultServer


def vlmkit(*args: str, env: dict[str, str] | None = None, drop: tuple[str, ...] = ()) -> subprocess.CompletedProcess:
    """`python -m vlmkit ARGS` (stdout and stderr as text); env is added to this process's, drop taken out."""
    environ = {k: v for k, v in {**os.environ, **(env or {})}.items() if k not in drop}
    return subprocess.run([sys.executable, "-m", "vlmkit", *args], capture_output=True, text=True, env=environ,
                          timeout=300)


def test_a_name_in_the_wrong_case_suggests_it_first(lmu_root: Path, tmp_path: Path):
    work = str(tmp_path / "out")
    # MMBench_dev_en is another benchmark (Parrot's): both are named, VLMEvalKit's first, and the case is the point
    data = vlmkit("run", "--data", "mmbench_dev_en", "--model", "gpt-4o-mini", "--work-dir", work,
                  env={"LMUData": str(lmu_root)})
    assert data.returncode == 2
    [line] = stderr_lines(data)
    assert "Did you mean MMBench_DEV_EN or MMBench_dev_en (names are case-sensitive)? Also close: " in line
    model = vlmkit("run", "--data", "vlmkit_demo_mcq", "--model", "VLMKIT-tiny", "--work-dir", work,
                   env={"LMUData": str(lmu_root)})
    assert model.returncode == 2
    [line] = stderr_lines(model)
    assert "unknown model 'VLMKIT-tiny'. Did you mean vlmkit-tiny (names are case-sensitive)?" in line


def test_an_api_only_install_given_a_local_model_says_what_to_install(lmu_root: Path, tmp_path: Path):
    """`pip install -e .` without the local extra, played by a sitecustomize that makes torch and transformers
    unimportable whether installed or not."""
    site = tmp_path / "api_only"
    site.mkdir()
    (site / "sitecustomize.py").write_text(
        'import sys\nsys.modules["torch"] = None\nsys.modules["transformers"] = None\n'
    )
    work = tmp_path / "out"
    result = vlmkit("run", "--data", "vlmkit_demo_mcq", "--model", "vlmkit-tiny", "--limit", "2", "--work-dir",
                    str(work), env={"LMUData": str(lmu_root), "PYTHONPATH": str(site)})
    assert result.returncode == 2, result.stderr  # bad input or usage, not a vlmkit bug (1)
    assert stderr_lines(result) == [
        "vlmkit: error: model 'vlmkit-tiny' (local weights) needs the optional dependency 'torch', which is not "
        'installed: pip install torch==2.13.0, then pip install -e ".[local]"'
    ]
    assert not work.exists() and list(lmu_root.iterdir()) == []  # said before anything ran


def test_eval_of_a_served_model_needs_no_url(lmu_root: Path, tmp_path: Path):
    write_yorn_tsv(lmu_root / "MyYN.tsv", n=6)
    work = tmp_path / "out"
    common = ("--data", "MyYN", "--model", "served", "--max-tokens", "9", "--work-dir", str(work))
    with FaultServer(chat_only(answer_yes)) as server:
        asked = vlmkit("run", *common, "--mode", "infer", "--api-base", server.base_url,
                       env={"LMUData": str(lmu_root)})
        assert asked.returncode == 0, asked.stderr
        assert len(chat_requests(server.requests)) == 6
        before = len(server.requests)  # the chat requests and the probe
        journal = (work / "served" / "MyYN" / "journal.jsonl").read_bytes()
        scored = vlmkit("run", *common, "--mode", "eval", env={"LMUData": str(lmu_root)}, drop=("OPENAI_API_BASE",))
        assert len(server.requests) == before  # scoring asked nothing
    assert scored.returncode == 0, scored.stderr
    assert "other settings" not in scored.stderr  # the journal's fingerprint is this spec's
    assert (work / "served" / "MyYN" / "journal.jsonl").read_bytes() == journal
    results = json.loads((work / "served" / "MyYN" / "results.json").read_text())
    assert results["status"] == "success" and results["counts"]["completed"] == 6
    # write_yorn_tsv: row i's answer is Yes when i % 3, so 4 of 6 rows answer Yes and the model said Yes to all
    assert abs(results["scoring"]["primary_metric"]["value"] - 100 * 4 / 6) < 1e-6
