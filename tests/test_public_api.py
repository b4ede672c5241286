"""The public Python API (vlmkit/__init__.py, vlmkit/api.py): cheap to import, each name reachable, a whole run from
Python, and the tools in tools/ using it (or the CLI) rather than the kit's inner modules."""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

import pytest

import vlmkit
from tests.support.servers import FaultServer, chat_reply, models_reply

ROOT = Path(__file__).resolve().parents[1]
# Benchmarks that time one inner component import that component; every other tool uses the public API or the CLI.
BENCHMARKS_OF_ONE_COMPONENT = {
    "bench_dataset_prep.py", "bench_length_batches.py", "bench_perf.py", "bench_report.py", "bench_run_loop.py",
    "bench_scoring.py", "bench_xlsx.py", "bench_train_step.py", "bench_startup.py", "mutation_test.py",
    "bench_likelihood.py",  # the likelihood methods against generate, on one loaded model
    "bench_video_decode.py",  # frame decoding alone (vlmkit.core.video) against a bare opencv floor
    "mock_openai_server.py",  # the perf benchmark's server: stamps receive times with vlmkit.perf.wire's reader
}


def test_importing_vlmkit_imports_nothing_heavy():
    code = ("import sys, vlmkit; print(vlmkit.__version__); "
            "print(sorted(m for m in ('pandas', 'numpy', 'torch', 'vlmkit.api', 'vlmkit.run') if m in sys.modules))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout.split("\n")
    assert out[0] == vlmkit.__version__ and out[1] == "[]"


def test_every_public_name_is_reachable_and_unknown_ones_are_not():
    for name in vlmkit.__all__:
        assert getattr(vlmkit, name) is not None, name
    with pytest.raises(AttributeError):
        vlmkit.no_such_name  # noqa: B018
    assert issubclass(vlmkit.DataError, ValueError)


def test_the_answer_readers_are_the_kits():
    assert vlmkit.extract_choice("I would say (B) blue.", {"A": "red", "B": "blue"})[0] == "B"
    assert vlmkit.extract_choice("no idea", {"A": "red", "B": "blue"})[0] is None
    assert vlmkit.extract_yes_no("No, it is not.") == "No"
    assert vlmkit.normalise_message(["hello"]) == [{"type": "text", "value": "hello"}]


def _write_yn_tsv(path: Path) -> None:
    rows = ["index\tquestion\tanswer"] + [f"{i}\tIs {i} even?\t{'Yes' if i % 2 == 0 else 'No'}" for i in range(4)]
    path.write_text("\n".join(rows) + "\n", encoding="utf-8")


def test_evaluate_runs_and_load_results_reads_the_run_back(tmp_path):
    _write_yn_tsv(tmp_path / "Evens.tsv")
    # the server says Yes to everything: rows 0 and 2 right, 1 and 3 wrong
    def answer(request):
        return chat_reply("Yes") if request.method == "POST" else models_reply("served")

    with FaultServer(answer) as server:
        runs = vlmkit.evaluate("Evens", "served", api_base=server.base_url, root=tmp_path, work_dir=tmp_path / "out",
                               kind="yorn", nproc=1)
    assert [(r.status, r.n_completed) for r in runs] == [("success", 4)]
    assert runs[0].evaluation.metrics["Overall"] == pytest.approx(50.0)
    (loaded,) = vlmkit.load_results(tmp_path / "out")
    assert loaded.model["name"] == "served" and loaded.dataset["name"] == "Evens"
    assert loaded.scoring["metrics"]["Overall"] == pytest.approx(50.0)


def test_evaluate_names_an_unknown_option():
    with pytest.raises(TypeError, match="nprocs"):
        vlmkit.evaluate("x", "y", nprocs=2)


def _inner_imports(path: Path) -> list[str]:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    names = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names += [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom) and not node.level:
            names.append(node.module or "")
    return [n for n in names if n.split(".")[0] in ("vlm", "datasets_tsv") or n.startswith("vlmkit.")]


def test_tools_use_the_public_api_or_the_cli():
    reaching_in = {p.name: _inner_imports(p) for p in sorted((ROOT / "tools").glob("*.py"))
                   if p.name not in BENCHMARKS_OF_ONE_COMPONENT}
    assert {name: found for name, found in reaching_in.items() if found} == {}
