"""`vlmkit run --data-parallel N` (vlmkit.run.data_parallel): N child processes, each `--shard i/N`, then one merge.

End to end on the shipped vlmkit-tiny through the CLI in subprocesses (CPU, --batch-size 1 so that no padded batch
differs between one process and a shard): two processes give the predictions and the score one process gives, and
results.json records the split; a child killed is named in one line with its log, the other's answers are kept, a
Ctrl-C stops the children and loses nothing journalled, and a rerun asks only what is missing. What is refused is
checked without starting anything: more GPUs than visible, a served model, --shard/--merge, another --mode.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from tests.support.run_helpers import ctrl_c_as_a_terminal_gives_it, stderr_lines, vlmkit_cli
from vlmkit.cli.main import _run_actions, build_parser
from vlmkit.core.errors import ConfigError
from vlmkit.run.data_parallel import (assign_devices, check_request, child_environment, command_line, log_path,
                                      run_children)
from vlmkit.run.shards import Shard

DATASET = "vlmkit_demo_yorn"
LIMIT = 6
RUN = ("run", "--data", DATASET, "--model", "vlmkit-tiny", "--limit", str(LIMIT), "--batch-size", "1")


def cli_env(lmu: Path) -> dict[str, str]:
    return {"LMUData": str(lmu), "OMP_NUM_THREADS": "1"}


def run_dir(work: Path) -> Path:
    return work / "vlmkit-tiny" / DATASET


def predictions(work: Path) -> dict[Any, Any]:
    lines = (run_dir(work) / "predictions.jsonl").read_text().splitlines()
    return {json.loads(x)["index"]: json.loads(x)["prediction"] for x in lines if x.strip()}


def results(work: Path) -> dict[str, Any]:
    return json.loads((run_dir(work) / "results.json").read_text())


def journalled(path: Path) -> list[Any]:
    """The indexes a journal holds records for (its first line is the header)."""
    if not path.exists():
        return []
    return [json.loads(x)["index"] for x in path.read_text().splitlines()[1:] if x.strip()]


def last_section(log: Path) -> str:
    """What a child's log holds since its last start (each start writes a `====` header line)."""
    return log.read_text().rsplit("\n==== ", 1)[-1]


def popen(work: Path, lmu: Path, **kwargs: Any) -> subprocess.Popen:
    return subprocess.Popen([sys.executable, "-m", "vlmkit.cli", *RUN, "--work-dir", str(work), "--data-parallel", "2"],
                            env={**os.environ, **cli_env(lmu)}, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            text=True, **kwargs)


def pid_of_shard(process: subprocess.Popen, shard: str, seen: list[str]) -> int:
    """Read the parent's stdout until it says that `shard` started; its pid."""
    while True:
        line = process.stdout.readline()
        assert line, f"the parent ended before starting shard {shard}: {seen}"
        seen.append(line)
        if line.startswith(f"data-parallel: shard {shard} started (pid "):
            return int(line.split("(pid ", 1)[1].split(",", 1)[0])


def gone(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return True
    return False


@pytest.fixture(scope="module")
def one_process(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    """The same run in one process: what --data-parallel must reproduce."""
    lmu, work = tmp_path_factory.mktemp("LMUData"), tmp_path_factory.mktemp("one")
    done = vlmkit_cli(*RUN, "--work-dir", str(work), env=cli_env(lmu), timeout=600)
    assert done.returncode == 0, done.stderr[-3000:]
    return {"predictions": predictions(work), "results": results(work)}


# -- without starting anything ---------------------------------------------------------------------------------------
def test_child_command_line_parses_back_to_what_was_typed():
    parser = build_parser()
    typed = ["run", "--data", "A", "B", "--model", "m", "--work-dir", "out dir", "--temperature", "0.5",
             "--system-prompt", "-starts with a dash", "--vllm-arg", "a=1", "--vllm-arg", "b=x y", "--fuzzy",
             "--backend", "vllm", "--tensor-parallel", "2", "--data-parallel", "4", "--merge", "--shard", "1/4",
             "--config", "run.yaml", "--nproc", "7"]
    given = vars(parser.parse_args(typed))
    rebuilt = command_line(given, _run_actions(parser))
    again = vars(parser.parse_args(["run", *rebuilt]))
    for dest in ("data_parallel", "shard", "merge"):  # a child gets its own shard; the merge is the parent's
        assert again[dest] == parser.parse_args(["run"]).__dict__[dest]
        given.pop(dest), again.pop(dest)
    assert again == given


def test_each_child_takes_its_own_gpus_and_too_many_are_refused():
    # child i takes visible[i*T:(i+1)*T], worked by hand
    assert assign_devices(2, 2, ["0", "1", "2", "3"]) == [("0", "1"), ("2", "3")]
    assert assign_devices(3, 1, ["4", "6", "7"]) == [("4",), ("6",), ("7",)]  # CUDA_VISIBLE_DEVICES=4,6,7
    assert assign_devices(2, 1, ["GPU-a", "GPU-b", "GPU-c"]) == [("GPU-a",), ("GPU-b",)]  # one left idle
    assert assign_devices(3, 2, []) == [(), (), ()]  # CPU: nothing set
    with pytest.raises(ConfigError) as refused:
        assign_devices(3, 2, ["0", "1", "2", "3"])
    assert "--data-parallel 3 x --tensor-parallel 2 needs 6 GPUs; 4 visible (0,1,2,3)" in str(refused.value)
    assert "\n" not in str(refused.value)
    with pytest.raises(ConfigError, match="needs 2 GPUs; 1 visible"):
        assign_devices(2, 1, ["0"])


def test_a_childs_environment_sets_its_gpus_or_its_share_of_the_cores():
    base = {"PATH": "/bin", "LMUData": "/data"}
    assert child_environment(base, ("2", "3"), 2, 16) == {**base, "CUDA_VISIBLE_DEVICES": "2,3"}
    assert child_environment(base, (), 2, 16) == {**base, "OMP_NUM_THREADS": "8"}
    assert child_environment(base, (), 4, 2)["OMP_NUM_THREADS"] == "1"
    assert child_environment({**base, "OMP_NUM_THREADS": "3"}, (), 2, 16)["OMP_NUM_THREADS"] == "3"  # the user's
    assert "CUDA_VISIBLE_DEVICES" not in base  # the base is not changed


@pytest.mark.parametrize("kwargs, words", [
    ({"count": 0}, "--data-parallel must be a whole number"),
    ({"shard": "0/2"}, "leave out --shard and --merge"),
    ({"merge": True}, "leave out --shard and --merge"),
    ({"mode": "infer"}, "goes with --mode all"),
    ({"served": lambda: ["gpt-x"]}, "gpt-x is served"),
])
def test_what_data_parallel_refuses(kwargs: dict[str, Any], words: str):
    request = {"count": 2, "shard": None, "merge": False, "mode": "all", "served": lambda: [], **kwargs}
    with pytest.raises(ConfigError, match=words):
        check_request(**request)
    assert check_request(**{**request, "count": 1}) == 1  # --data-parallel 1: a plain run


def test_a_served_model_is_refused_in_one_line_pointing_at_nproc_and_replicas(lmu_root: Path, tmp_path: Path):
    done = vlmkit_cli("run", "--data", DATASET, "--model", "served-id", "--api-base", "http://127.0.0.1:9/v1",
                      "--work-dir", str(tmp_path / "out"), "--data-parallel", "2", env={"LMUData": str(lmu_root)})
    assert done.returncode == 2, done.stderr
    lines = stderr_lines(done)
    assert len(lines) == 1 and "served-id is served" in lines[0], done.stderr
    assert "--nproc" in lines[0] and "--api-base URL1,URL2" in lines[0]
    assert not (tmp_path / "out").exists()  # no child was started, nothing written


def test_a_childs_log_holds_no_key_and_a_failure_is_one_line_with_the_log_and_its_last_words(tmp_path: Path):
    said = "import sys; print('vlmkit: error: no such dataset'); sys.exit(int(sys.argv[-1].split('=')[1][0]) * 2)"
    base = [sys.executable, "-c", said, "--judge-api-key=sk-first-secret", "--judge-api-key", "sk-second-secret"]
    ends = run_children([Shard(0, 2), Shard(1, 2)], base, [(), ()], tmp_path, dict(os.environ))
    assert [end.code for end in ends] == [0, 2]  # shard 0 exits 0, shard 1 exits 2 (the script reads its --shard)
    for shard in (0, 1):
        text = log_path(tmp_path, Shard(shard, 2)).read_text()
        assert "sk-first-secret" not in text and "sk-second-secret" not in text
        assert f"--shard={shard}/2" in text.splitlines()[0]
    assert not ends[0].failed and ends[1].failed
    line = ends[1].message()
    assert "\n" not in line and line.startswith("data-parallel shard 1/2 failed (exit 2)")
    assert str(log_path(tmp_path, Shard(1, 2))) in line and "it said: vlmkit: error: no such dataset" in line


# -- real processes --------------------------------------------------------------------------------------------------
def test_two_processes_give_what_one_process_gives(one_process: dict[str, Any], tmp_path: Path, lmu_root: Path):
    work = tmp_path / "dp"
    done = vlmkit_cli(*RUN, "--work-dir", str(work), "--data-parallel", "2", env=cli_env(lmu_root), timeout=600)
    assert done.returncode == 0, done.stderr[-3000:]
    assert predictions(work) == one_process["predictions"]
    ours, theirs = results(work), one_process["results"]
    assert ours["scoring"]["metrics"] == theirs["scoring"]["metrics"]
    assert ours["status"] == theirs["status"] == "success" and ours["counts"]["completed"] == LIMIT
    assert ours["run"]["data_parallel"] == 2 and ours["run"]["tensor_parallel"] == 1
    assert ours["run"]["data_parallel_devices"] is None  # CPU: no GPU set
    # each child answered its own shard: rows at positions i, i+2, ... (all of one index per row here)
    indexes = list(one_process["predictions"])
    for i in (0, 1):
        assert journalled(run_dir(work) / f"journal.shard{i}of2.jsonl") == indexes[i::2]
        log = work / "logs" / f"data_parallel.shard{i}of2.log"
        assert f"--shard={i}/2" in log.read_text().splitlines()[0]
        assert f"data-parallel: shard {i}/2 started" in done.stdout


def test_a_killed_child_is_named_ctrl_c_stops_the_children_and_a_rerun_asks_only_what_is_missing(
        one_process: dict[str, Any], tmp_path: Path, lmu_root: Path):
    work = tmp_path / "dp"
    journal = {i: run_dir(work) / f"journal.shard{i}of2.jsonl" for i in (0, 1)}
    log = {i: work / "logs" / f"data_parallel.shard{i}of2.log" for i in (0, 1)}
    indexes = list(one_process["predictions"])

    # 1. shard 1 killed as soon as it starts: one line names it and its log; shard 0's answers are kept
    parent, seen = popen(work, lmu_root), []
    try:
        os.kill(pid_of_shard(parent, "1/2", seen), signal.SIGKILL)
        out, err = parent.communicate(timeout=600)
    finally:
        if parent.poll() is None:
            parent.kill()
            parent.wait()
    assert parent.returncode == 3, err  # the merge: rows missing, nothing scored
    named = [line for line in err.splitlines() if "shard 1/2" in line and "killed" in line]
    assert len(named) == 1 and "(SIGKILL)" in named[0] and str(log[1]) in named[0], err
    assert "run the same command again" in named[0]
    assert not any("shard 0/2" in line for line in err.splitlines())
    assert journalled(journal[0]) == indexes[0::2]
    assert not (run_dir(work) / "results.json").exists()

    # 2. Ctrl-C in the parent once shard 1 has journalled something: both children stop, nothing journalled is lost
    parent, seen = popen(work, lmu_root, preexec_fn=ctrl_c_as_a_terminal_gives_it), []
    try:
        pids = [pid_of_shard(parent, "0/2", seen), pid_of_shard(parent, "1/2", seen)]
        deadline = time.monotonic() + 300  # a bound on getting there, not a timing assertion
        while time.monotonic() < deadline and not journalled(journal[1]) and parent.poll() is None:
            time.sleep(0.05)
        parent.send_signal(signal.SIGINT)
        out, err = parent.communicate(timeout=300)
    finally:
        if parent.poll() is None:
            parent.kill()
            parent.wait()
    assert parent.returncode == 130, err
    assert all(gone(pid) for pid in pids)  # stopped and reaped by the parent
    kept = journalled(journal[1])
    assert kept and set(kept) <= set(indexes[1::2])

    # 3. the same command again: shard 0 asks nothing, shard 1 only what it had not answered; then the merge
    done = vlmkit_cli(*RUN, "--work-dir", str(work), "--data-parallel", "2", env=cli_env(lmu_root), timeout=600)
    assert done.returncode == 0, done.stderr[-3000:]
    assert f"all {len(indexes[0::2])} already answered, nothing to ask" in last_section(log[0])
    share = len(indexes[1::2])
    if len(kept) < share:
        assert f"{len(kept)} of {share} already answered, asking {share - len(kept)}" in last_section(log[1])
    else:
        assert f"all {share} already answered, nothing to ask" in last_section(log[1])
    assert predictions(work) == one_process["predictions"]
    assert results(work)["scoring"]["metrics"] == one_process["results"]["scoring"]["metrics"]
    assert sorted(journalled(journal[1])) == sorted(indexes[1::2])  # each row journalled once


def test_repeats_and_retries_are_refused_with_data_parallel_in_one_line(lmu_root: Path, tmp_path: Path):
    for flags in (["--repeats", "2", "--temperature", "0.5"], ["--retry-truncated", "64"]):
        done = vlmkit_cli("run", "--data", DATASET, "--model", "vlmkit-tiny", "--work-dir", str(tmp_path / "out"),
                          "--data-parallel", "2", *flags, env={"LMUData": str(lmu_root)})
        assert done.returncode == 2, done.stderr
        lines = stderr_lines(done)
        assert lines == ["vlmkit: error: --repeats and --retry-truncated go with a single process, not "
                         "--data-parallel"], done.stderr
        assert not (tmp_path / "out").exists()  # no child was started
