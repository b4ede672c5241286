"""results.json says where the dataset's MD5 came from: hashed on this run ("computed") or the stamp of the unchanged
file ("stamp"), and it is the file's MD5 either way."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

from tests.support.run_helpers import answer_yes, chat_only, run_served, write_yorn_tsv
from tests.support.servers import FaultServer

from tests.datasets_tsv.io.test_tsv_stamp import settle


def dataset_of(work: Path) -> dict:
    return json.loads((work / "served" / "MyYN" / "results.json").read_text())["dataset"]


def test_results_json_records_the_md5_source(lmu_root: Path, tmp_path: Path):
    tsv = write_yorn_tsv(lmu_root / "MyYN.tsv", n=4)
    settle()
    digest = hashlib.md5(tsv.read_bytes()).hexdigest()
    with FaultServer(chat_only(answer_yes)) as server:
        runs = [run_served(server.base_url, tmp_path / work, lmu_root) for work in ("a", "b")]
        write_yorn_tsv(tsv, n=5)
        settle()
        runs.append(run_served(server.base_url, tmp_path / "c", lmu_root))
    for run in runs:
        assert run.returncode == 0, run.stderr
    first, second, changed = (dataset_of(tmp_path / work) for work in ("a", "b", "c"))
    assert (first["md5"], first["md5_source"]) == (digest, "computed")
    assert (second["md5"], second["md5_source"]) == (digest, "stamp")
    assert (changed["md5"], changed["md5_source"]) == (hashlib.md5(tsv.read_bytes()).hexdigest(), "computed")
