"""`--keep-local-tsv` (flag or config option) reaches the dataset: a user's own MMBench_DEV_EN.tsv whose MD5 is not the
catalog's is refused in one line and left as it is, or, with the flag, evaluated and recorded as such."""

from __future__ import annotations

import json
from pathlib import Path

from tests.support.run_helpers import answer_yes, chat_only, stderr_lines, vlmkit_cli
from tests.e2e.test_run_mmbench_like import write_circular_tsv
from tests.support.servers import FaultServer


def test_a_local_catalog_tsv_with_another_md5_runs_only_when_kept(lmu_root: Path, tmp_path: Path):
    tsv = lmu_root / "MMBench_DEV_EN.tsv"
    write_circular_tsv(tsv)
    mine = tsv.read_bytes()
    with FaultServer(chat_only(answer_yes)) as server:
        common = ["run", "--data", "MMBench_DEV_EN", "--model", "served", "--limit", "4"]
        refused = vlmkit_cli(*common, "--api-base", server.base_url, "--work-dir", str(tmp_path / "a"),
                             env={"LMUData": str(lmu_root)})
        kept = vlmkit_cli(*common, "--api-base", server.base_url, "--work-dir", str(tmp_path / "b"), "--keep-local-tsv",
                          env={"LMUData": str(lmu_root)})
        config = tmp_path / "run.yaml"
        config.write_text(f"options: {{api_base: '{server.base_url}', keep_local_tsv: true}}\n")
        by_config = vlmkit_cli(*common, "--config", str(config), "--work-dir", str(tmp_path / "c"),
                               env={"LMUData": str(lmu_root)})
    assert refused.returncode == 2
    [line] = stderr_lines(refused)
    assert "MD5" in line and "--keep-local-tsv" in line
    assert tsv.read_bytes() == mine  # never replaced
    for result, work in ((kept, "b"), (by_config, "c")):
        assert result.returncode == 0, result.stderr
        results = json.loads((tmp_path / work / "served" / "MMBench_DEV_EN" / "results.json").read_text())
        assert results["run"]["keep_local_tsv"] is True and results["counts"]["completed"] == 4
