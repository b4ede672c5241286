"""tools/make_mmbench_like.py: an MMBench-shaped TSV that the dataset code reads as circular MCQ."""

from __future__ import annotations

import hashlib
import importlib.util
import subprocess
import sys
from pathlib import Path

import pytest

from datasets_tsv.catalog.registry import build_dataset

from tests.support.tsvs import files_under

TOOL = Path(__file__).resolve().parents[2] / "tools" / "make_mmbench_like.py"


@pytest.fixture(scope="module")
def tool():
    spec = importlib.util.spec_from_file_location("make_mmbench_like", TOOL)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_small_mmbench_like_tsv_reads_as_circular_mcq(tool, lmu_root):
    path = tool.make_mmbench_like(lmu_root / "Mini.tsv", rows=40, seed=3, width=64, height=48)
    ds = build_dataset("Mini", root=lmu_root, progress=False)
    assert len(ds) == 40 and ds.kind == "mcq" and ds.circular
    copies = ds.data[ds.data["index"] >= 1_000_000]
    assert len(copies) == 10
    for pos in copies.index:
        main = ds.data.index[ds.data["index"] == ds.data.loc[pos, "index"] % 1_000_000][0]
        assert ds.image_paths(int(pos)) == ds.image_paths(int(main))
        assert ds.line(int(pos))["question"] == ds.line(int(main))["question"]
    assert len(files_under(lmu_root / "images" / "Mini")) == 30  # one file per main row
    assert ds.data["hint"].isna().any() and ds.data["hint"].notna().any()
    assert {"category", "l2-category", "split"} <= set(ds.data.columns)
    texts = [ds.build_prompt(i)[-1]["value"] for i in range(len(ds))]
    assert all(t.endswith("Please select the correct answer from the options above. \n") for t in texts)
    again = tool.make_mmbench_like(lmu_root / "Again.tsv", rows=40, seed=3, width=64, height=48)
    assert hashlib.md5(again.read_bytes()).digest() == hashlib.md5(path.read_bytes()).digest()


def test_rotations_keep_the_answer_text(tool, tmp_path):
    import pandas as pd

    path = tool.make_mmbench_like(tmp_path / "R.tsv", rows=24, seed=1, width=32, height=24)
    table = pd.read_csv(path, sep="\t", usecols=lambda c: c != "image", keep_default_na=False)
    truth = {int(r["index"]) % 1_000_000: r[r["answer"]] for _, r in table.iterrows() if r["index"] < 1_000_000}
    for _, r in table.iterrows():
        assert r[r["answer"]] == truth[int(r["index"]) % 1_000_000]


def test_command_line(tmp_path):
    out = tmp_path / "cli.tsv"
    done = subprocess.run([sys.executable, str(TOOL), str(out), "--rows", "8", "--seed", "0", "--width", "32",
                           "--height", "24"], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert out.read_text().count("\n") == 9 and "8 rows" in done.stderr
