"""`vlmkit run ... --data-parallel N`: N copies of a local model on one host, each on its own GPUs, then one score.

The decision: N child processes of `vlmkit run` itself, each `--shard i/N` over the same work dir (vlmkit.run.shards),
then this process scores exactly as `--merge` does. Not vLLM's own `data_parallel_size`: offline, vLLM's data
parallelism is also one engine per process (its example starts the processes itself), and processes of our own work
the same way for both backends (transformers and vllm) and inherit what shards already give: answers journalled per
shard, a dead process costing only its unjournalled rows, a rerun asking only what is missing, any later split (or
a plain run) reusing every answer, because the journal's fingerprint ignores how the work was split.

- GPUs: with `--tensor-parallel T` (1 on the transformers backend), child i gets CUDA_VISIBLE_DEVICES =
  visible[i*T:(i+1)*T], where `visible` is the GPUs this process sees (CUDA_VISIBLE_DEVICES as written, indices or
  UUIDs, else 0..count-1). N*T above the visible count is refused in one line before anything starts; GPUs beyond
  N*T stay idle. Without a GPU nothing is set, and each child gets OMP_NUM_THREADS = cores // N unless the user set
  it (N processes each taking every core would only slow each other down).
- Children: `python -m vlmkit.cli run` with the command as the user typed it (before --config is merged: each child
  reads the config itself), plus `--data-parallel=1 --shard=i/N`. Their environment is this process's
  (vlmkit.core.config.environment()) plus the variables above, passed as env=. Each child writes to
  `<work_dir>/logs/data_parallel.shard<I>of<N>.log` (appended; a header line per start, the command line without
  secrets); the console gets one line per child as it starts (pid, GPUs, log) and as it ends.
- A child that ends otherwise than done (exit 0) or done with failed samples (exit 3, the merge says partial) is
  reported in one line naming its shard, how it ended, its log and the log's last line; the other children's answers
  are journalled and kept, the merge then scores or names the rows that are missing (exit 3), and running the same
  command again asks only those.
- Ctrl-C (or SIGTERM) in this process: each child runs in its own process group and gets SIGINT (the children stop
  as a Ctrl-C stops `vlmkit run`: every answer received is journalled already); a child still running after
  STOP_GRACE_S is killed. Then the interruption goes on as usual (exit 130, rerun to resume).
- results.json of each pair scored records `run.data_parallel` (N), `run.tensor_parallel` (T) and
  `run.data_parallel_devices` (each child's GPUs; None on CPU).
- Refused in one line: a served model (its concurrency is `--nproc`, and replicas are `--api-base A,B,...`),
  `--shard`/`--merge` (these processes are shards already), another `--mode` than all, and a launch under torchrun.
  `--data-parallel 1` is a plain run in this process.
"""

from __future__ import annotations

import argparse
import json
import os
import shlex
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from vlmkit.core import config
from vlmkit.core.errors import ConfigError
from vlmkit.core.secrets import one_line, redacted_argv
from vlmkit.outputs.json_files import write_json
from vlmkit.outputs.provenance import now_iso
from vlmkit.run.distributed import rank_world
from vlmkit.run.resolve import ModelOptions, resolve_model
from vlmkit.run.shards import Shard

LOG_DIR = "logs"  # under the work dir: one log per child
STOP_GRACE_S = 30.0  # after Ctrl-C: how long the children have to stop on SIGINT before they are killed
# Child exit codes that are not a failure of the child (vlmkit.cli.exit_codes: OK, SAMPLES_FAILED).
_FINISHED = (0, 3)
# What the children never take from the parent's command line: their own shard is set, and the merge is ours.
_NOT_PASSED = frozenset({"help", "data_parallel", "shard", "merge"})
_HEADER = "==== "  # starts the line each start of a child writes to its log


def log_path(work_dir: Path, shard: Shard) -> Path:
    """Where child `shard` writes its output."""
    return Path(work_dir) / LOG_DIR / f"data_parallel.shard{shard.index}of{shard.count}.log"


def check_request(count: Any, *, shard: Any, merge: bool, mode: str, served: Callable[[], Sequence[str]],
                  attempts: bool = False) -> int:
    """The number of processes, or ConfigError (one line naming the flag) for a run --data-parallel cannot make.
    served: the served models among --model (asked last: it resolves the names); attempts: --repeats or
    --retry-truncated was given (their attempts and retries are read back by one process)."""
    if isinstance(count, bool) or not isinstance(count, int) or count < 1:
        raise ConfigError(f"--data-parallel must be a whole number, 1 or more; got {count!r}")
    if count == 1:
        return 1
    if shard is not None or merge:
        raise ConfigError("--data-parallel starts its own shards and merges them: leave out --shard and --merge (to "
                          "spread a run over hosts or a scheduler, run --shard I/N yourself)")
    if rank_world()[1] > 1:
        raise ConfigError("--data-parallel starts its own processes; under torchrun each rank is one already (leave "
                          "out --data-parallel, or run it without torchrun)")
    if mode != "all":
        raise ConfigError(f"--data-parallel goes with --mode all (each process infers its shard, this one scores), "
                          f"not --mode {mode}")
    if attempts:
        raise ConfigError("--repeats and --retry-truncated go with a single process, not --data-parallel")
    api = served()
    if api:
        raise ConfigError(f"--data-parallel runs copies of a local model; {api[0]} is served (--api-base or an API "
                          "entry): raise --nproc for more concurrent requests, or spread them over replicas with "
                          "--api-base URL1,URL2,...")
    return count


def visible_gpus() -> list[str]:
    """The GPUs this process sees, as CUDA_VISIBLE_DEVICES names them for a child (indices or UUIDs); [] without
    CUDA. Counted by torch without creating a context on any of them."""
    try:
        import torch
    except ImportError:
        return []
    count = torch.cuda.device_count()
    if count < 1:
        return []
    named = config.cuda_visible_devices()
    return list(named[:count]) if named is not None else [str(i) for i in range(count)]


def assign_devices(count: int, tensor_parallel: int, visible: Sequence[str]) -> list[tuple[str, ...]]:
    """Each child's GPUs: child i takes visible[i*T:(i+1)*T]; every child takes none where there is no GPU.
    ConfigError (one line) when count*T GPUs are more than the visible ones."""
    if not visible:
        return [()] * count
    need = count * tensor_parallel
    if need > len(visible):
        split = f" x --tensor-parallel {tensor_parallel}" if tensor_parallel > 1 else " (one GPU each)"
        raise ConfigError(f"--data-parallel {count}{split} needs {need} GPUs; {len(visible)} visible "
                          f"({','.join(visible)}): lower --data-parallel, or make more GPUs visible "
                          "(CUDA_VISIBLE_DEVICES)")
    return [tuple(visible[i * tensor_parallel:(i + 1) * tensor_parallel]) for i in range(count)]


def command_line(given: Mapping[str, Any], actions: Mapping[str, argparse.Action]) -> list[str]:
    """`vlmkit run`'s arguments that reproduce `given` (the parsed values as typed) for a child: every option whose
    value is not its default, written with its first spelling; --data-parallel, --shard and --merge left out."""
    out: list[str] = []
    for dest, action in actions.items():
        if dest in _NOT_PASSED or not action.option_strings or dest not in given:
            continue
        value, flag = given[dest], action.option_strings[0]
        if value == action.default or value is None:
            continue
        if isinstance(action, argparse._StoreTrueAction):
            out.append(flag)
        elif isinstance(action, argparse._AppendAction):
            out += [f"{flag}={item}" for item in value]
        elif action.nargs in ("+", "*"):
            out += [flag, *map(str, value)]
        else:
            out.append(f"{flag}={value}")  # `=`: a value that starts with "-" stays the value
    return out


def child_environment(base: Mapping[str, str], devices: Sequence[str], count: int, cores: int) -> dict[str, str]:
    """A child's environment: base, with CUDA_VISIBLE_DEVICES set to its GPUs, or on CPU OMP_NUM_THREADS set to
    its share of the cores (unless base sets it)."""
    env = dict(base)
    if devices:
        env["CUDA_VISIBLE_DEVICES"] = ",".join(devices)
    elif "OMP_NUM_THREADS" not in env:
        env["OMP_NUM_THREADS"] = str(max(1, cores // count))
    return env


def _cores() -> int:
    affinity = getattr(os, "sched_getaffinity", None)
    return len(affinity(0)) if affinity is not None else (os.cpu_count() or 1)


@dataclass
class ChildEnd:
    """How one child ended: its shard, exit code (negative: killed by that signal), log."""

    shard: Shard
    code: int
    log: Path

    @property
    def failed(self) -> bool:
        return self.code not in _FINISHED

    def message(self) -> str:
        """One line: the shard, how it ended, its log and the log's last line."""
        if self.code < 0:
            try:
                how = f"was killed ({signal.Signals(-self.code).name})"
            except ValueError:
                how = f"was killed (signal {-self.code})"
        elif self.code == 130:
            how = "was interrupted"
        else:
            how = f"failed (exit {self.code})"
        last = _last_line(self.log)
        said = f"; it said: {one_line(last, 240)}" if last else "; it wrote nothing"
        return (f"data-parallel shard {self.shard} {how}; its log: {self.log}{said}. The other shards' answers are "
                "kept: run the same command again to ask only the rows without an answer")


def _last_line(path: Path) -> str:
    """The last line the child wrote to its log since its start ("" when it wrote nothing)."""
    try:
        with open(path, "rb") as handle:
            handle.seek(max(0, handle.seek(0, os.SEEK_END) - 4096))
            tail = handle.read().decode("utf-8", "replace")
    except OSError:
        return ""
    lines = [line.strip() for line in tail.replace("\r", "\n").splitlines() if line.strip()]
    last = lines[-1] if lines else ""
    return "" if last.startswith(_HEADER) else last


@dataclass
class DataParallel:
    """One --data-parallel launch: its children, then the settings results.json records."""

    count: int
    tensor_parallel: int
    devices: list[tuple[str, ...]]
    ends: list[ChildEnd] = field(default_factory=list)

    @classmethod
    def launch(cls, count: Any, given: Mapping[str, Any], actions: Mapping[str, argparse.Action], options: Any,
               model_options: ModelOptions, models: Sequence[str]) -> DataParallel:
        """Check the request, start the children, wait for them (Ctrl-C stops them), and report each failed one
        on stderr. given: `vlmkit run`'s parsed values as typed (before --config is merged); actions: its options by
        dest; options: the run's RunOptions. Returns the launch; the caller then scores with options.merge set."""

        def served() -> list[str]:
            return [name for name in models if resolve_model(name, model_options).is_api]

        count = check_request(count, shard=options.shard, merge=options.merge, mode=options.mode, served=served,
                              attempts=options.repeats > 1 or bool(options.retry_truncated))
        tensor_parallel = int(model_options.tensor_parallel or 1)
        launch = cls(count, tensor_parallel, assign_devices(count, tensor_parallel, visible_gpus()))
        base = [sys.executable, "-m", "vlmkit.cli", "run", *command_line(given, actions), "--data-parallel=1"]
        launch.ends = run_children(launch.shards(), base, launch.devices, Path(options.work_dir), config.environment())
        for end in launch.ends:
            if end.failed:
                print(f"vlmkit: error: {end.message()}", file=sys.stderr, flush=True)
        return launch

    def shards(self) -> list[Shard]:
        return [Shard(i, self.count) for i in range(self.count)]

    def settings(self) -> dict[str, Any]:
        """What results.json's `run` block records of this launch."""
        on_gpus = any(self.devices)
        return {"data_parallel": self.count, "tensor_parallel": self.tensor_parallel,
                "data_parallel_devices": [list(d) for d in self.devices] if on_gpus else None}

    def record(self, outcomes: Sequence[Any]) -> None:
        """Add settings() to the `run` block of each results.json the merge wrote (outcome.files["results"])."""
        for outcome in outcomes:
            path = outcome.files.get("results") if isinstance(outcome.files, dict) else None
            if not path or not Path(path).is_file():
                continue
            document = json.loads(Path(path).read_text(encoding="utf-8"))
            document.setdefault("run", {}).update(self.settings())
            write_json(Path(path), document)


def run_children(shards: Sequence[Shard], base: Sequence[str], devices: Sequence[Sequence[str]], work_dir: Path,
                 environment: Mapping[str, str]) -> list[ChildEnd]:
    """Run `base --shard=I/N` for each shard at once, each with its devices and log, and wait for all of them.
    KeyboardInterrupt (Ctrl-C, or SIGTERM while waiting), or any other exception, stops every child first
    (stop_children), then goes on."""
    cores = _cores()
    started: list[tuple[Shard, subprocess.Popen, Path]] = []
    with _terminate_as_interrupt():
        try:
            for shard, own in zip(shards, devices):
                command = [*base, f"--shard={shard}"]
                log = log_path(work_dir, shard)
                process = _start(command, child_environment(environment, own, len(shards), cores), log)
                started.append((shard, process, log))
                where = f"GPU {','.join(own)}" if own else "CPU"
                print(f"data-parallel: shard {shard} started (pid {process.pid}, {where}); log: {log}", flush=True)
            ends = []
            for shard, process, log in started:
                code = process.wait()
                ends.append(ChildEnd(shard, code, log))
                if code in _FINISHED:
                    some = ", some samples failed (see its log; a rerun asks them again)" if code else ""
                    print(f"data-parallel: shard {shard} done{some}", flush=True)
            return ends
        except BaseException:  # Ctrl-C, or a child that could not start: none is left running
            stop_children([process for _, process, _ in started])
            raise


def _start(command: list[str], env: dict[str, str], log: Path) -> subprocess.Popen:
    """The child, in a process group of its own (so that only this process decides when it stops), writing to log."""
    log.parent.mkdir(parents=True, exist_ok=True)
    with open(log, "a", encoding="utf-8") as handle:
        handle.write(f"{_HEADER}{now_iso()} {shlex.join(redacted_argv(command))}\n")
        handle.flush()
        group = {"process_group": 0} if os.name == "posix" else {}
        return subprocess.Popen(command, stdin=subprocess.DEVNULL, stdout=handle, stderr=subprocess.STDOUT, env=env,
                                **group)


def stop_children(processes: Sequence[subprocess.Popen], grace: float = STOP_GRACE_S) -> None:
    """SIGINT to each running child's process group; after `grace` seconds (or a second Ctrl-C) SIGKILL to those
    still running. Every child is reaped before this returns."""
    _signal_groups(processes, signal.SIGINT)
    deadline = time.monotonic() + grace
    try:
        for process in processes:
            try:
                process.wait(timeout=max(0.01, deadline - time.monotonic()))
            except subprocess.TimeoutExpired:
                pass
    except KeyboardInterrupt:  # a second Ctrl-C: no more waiting
        pass
    _signal_groups([p for p in processes if p.poll() is None], getattr(signal, "SIGKILL", signal.SIGTERM))
    for process in processes:
        process.wait()


def _signal_groups(processes: Sequence[subprocess.Popen], sig: signal.Signals) -> None:
    for process in processes:
        if process.poll() is not None:
            continue
        try:
            if os.name == "posix":
                os.killpg(process.pid, sig)
            else:  # no process groups: SIGINT cannot be sent to a child alone
                process.terminate()
        except ProcessLookupError:
            pass


@contextmanager
def _terminate_as_interrupt() -> Iterator[None]:
    """While the children run, SIGTERM (a scheduler cancelling the job) stops them as Ctrl-C does."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    previous = signal.getsignal(signal.SIGTERM)

    def interrupt(signum: int, frame: Any) -> None:
        raise KeyboardInterrupt

    signal.signal(signal.SIGTERM, interrupt)
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, previous if previous is not None else signal.SIG_DFL)
