"""How much the `vlmkit run` loop costs over the requests themselves, against an instant local server.

    python tools/bench_run_loop.py [--rows 2000] [--nproc 8] [--repeats 1] [--no-pin] [--image-rows]

One invocation, one mock server (tools/mock_openai_server.py, no delay, 4 tokens, plain JSON answers: `vlmkit run`
does not stream), pinned to one core; each client pinned to the other:

1. `vlmkit run` (vlmkit.cli.main.main in this process, as the command line runs it): a served model (`--api-base`) on a
   text-only custom QA dataset of N rows written to a temporary folder, `--nproc` requests at once, a fresh work
   dir: the whole command (dataset load, inference with each answer journalled as it arrives, scoring, results
   files). The progress bar is drawn only on a terminal; here it is off, as in a script.
2. the run loop alone: vlmkit.run.inference.run_api, what `vlmkit run` calls to infer (`--nproc` requests at once,
   each answer's record appended to the journal as it arrives, the records of one turn of the event loop in one
   write; the progress bar drawn to a discarded stream), on the same rows, with the same model class; without the dataset load, the scoring and the
   result files (xlsx, jsonl, csv, results.json) the whole command adds (its CPU figure counts run_api alone);
3. the floor: a bare aiohttp loop sending the same N request bodies (built by the same model class before the
   clock starts) with the same concurrency, reading and JSON-parsing each answer, nothing else.

4. the ceiling: the bare loop of 3. plus only the per-sample work no vlmkit run loop can skip, done by vlmkit's own
   functions (the body built from the message and encoded, the reply read into a Generation, the record with its
   prompt identity, its journal line, one write per `--nproc` answers); no retries, deadline, pool check, lock or bar.
   Its ratio to the bare loop bounds what any run loop doing that work reaches.

5. with `--image-rows`: the run loop again on N rows that all show one image (a 336x336 JPEG file, the same for every
   row: what an image benchmark whose rows share a picture asks), beside the text rows of 2., with the image
   encodes of the run (vlmkit.formats.image_cache: one, when each image is encoded once) and the client CPU a sample
   of each: image rows should cost about what text rows cost.

Printed: samples/s of each and the ratios to the bare loop (the goal: >= 0.8), the load average before and after.
Load on the machine from other work skews all; compare figures from one invocation. On a shared machine the client
CPU time per sample (this process's, best of the repeats) is printed too: it moves far less with other work than the
wall clock does (a client of several threads also gets more of a contended core than a one-thread loop).
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import io
import json
import os
import sys
import tempfile
import time
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from mock_openai_server import running_server  # noqa: E402  (tools/, this script's folder)

_PIN = True


def write_dataset(folder: Path, rows: int) -> Path:
    path = folder / "loop_qa.jsonl"
    path.write_text("".join(json.dumps({"question": f"What is item {i}? Answer in one word.", "answer": "tok"}) + "\n"
                            for i in range(rows)))
    return path


class CpuClock:
    """This process's CPU seconds (all threads) over a block: `with CpuClock() as cpu: ...; cpu.seconds`."""

    def __enter__(self) -> "CpuClock":
        self._began = time.process_time()
        return self

    def __exit__(self, *exc: object) -> None:
        self.seconds = time.process_time() - self._began


def run_vlmkit(data: Path, url: str, work: Path, nproc: int) -> tuple[float, int]:
    """Seconds for the whole `vlmkit run`, and the predictions it wrote."""
    from vlmkit.cli.main import main

    argv = ["run", "--model", "served", "--api-base", url, "--custom-dataset-path", str(data), "--nproc", str(nproc),
            "--work-dir", str(work)]
    out, err = io.StringIO(), io.StringIO()
    began = time.perf_counter()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = main(argv)
    seconds = time.perf_counter() - began
    if code != 0:
        raise RuntimeError(f"vlmkit run exited {code}: {err.getvalue()[-2000:]}")
    found = list(work.rglob("predictions.jsonl"))
    rows = sum(1 for line in found[0].read_text().splitlines() if line.strip()) if found else 0
    return seconds, rows


def write_image_dataset(folder: Path, rows: int) -> Path:
    """N mm_custom rows that all show one image file (a 336x336 JPEG gradient, ~7 KB)."""
    from PIL import Image

    image = Image.linear_gradient("L").resize((336, 336)).convert("RGB")
    image.save(folder / "shared.jpg", quality=90)
    path = folder / "loop_images.jsonl"
    path.write_text("".join(json.dumps({"type": "image", "path": ["shared.jpg"], "question": f"What is item {i}?",
                                        "answer": "tok"}) + "\n" for i in range(rows)))
    return path


def tasks_of(data: Path) -> list[Any]:
    """The run loop's tasks for the rows of a custom dataset file (its prompts built as `vlmkit run` builds them)."""
    from datasets_tsv.custom import build_custom_dataset
    from vlmkit.run.inference import Task

    dataset = build_custom_dataset(data)
    lines = [dataset.line(i) for i in range(len(dataset.data))]
    return [Task(line["index"], dataset.build_prompt(line), line.get("answer")) for line in lines]


def run_loop(data: Path, url: str, work: Path, nproc: int) -> tuple[float, int, float]:
    """Seconds for vlmkit.run.inference.run_api over the rows (journal, progress bar, records), its errors, and the
    CPU seconds of this process over run_api alone (not the dataset load before it)."""
    from vlm.api.openai_compat import OpenAICompatModel
    from vlmkit.run.inference import run_api
    from vlmkit.run.journal import Journal

    tasks = tasks_of(data)
    model = OpenAICompatModel("served", api_base=url)
    journal = Journal(work / "journal.jsonl", {"bench": "run_loop"})
    journal.open()
    began, cpu_began = time.perf_counter(), time.process_time()
    try:
        with contextlib.redirect_stderr(io.StringIO()):
            errors = run_api(model, tasks, journal, dataset=data.stem, nproc=nproc, desc="bench", progress=True)
    finally:
        seconds, cpu = time.perf_counter() - began, time.process_time() - cpu_began
        journal.close()
        model.close()
    return seconds, errors, cpu


def image_encodes() -> int:
    """Image data URLs encoded so far in this process (0 where the kit has no encode-once cache)."""
    try:
        from vlmkit.formats.image_cache import image_cache_stats
    except ImportError:
        return 0
    return image_cache_stats()["encodes"]


def bodies_for(data: Path, url: str) -> list[bytes]:
    """The bodies `vlmkit run` sends for these rows (the same model class builds them), before any clock starts."""
    from vlm.api.openai_compat import OpenAICompatModel

    model = OpenAICompatModel("served", api_base=url)
    rows = [json.loads(line) for line in data.read_text().splitlines()]
    return [json.dumps(model.request_body([{"type": "text", "value": r["question"]}])).encode() for r in rows]


def aiohttp_loop(items: list[Any], url: str, nproc: int,
                 handle: Callable[[Any, str, Any], Awaitable[bool]]) -> tuple[float, int, float]:
    """`await handle(session, target, item)` for every item, `nproc` at once, over one aiohttp session with the default
    pool: seconds, the items handled that got an answer, and this process's CPU seconds over the loop."""
    import aiohttp

    target = url + "/chat/completions"

    async def main() -> tuple[float, int, float]:
        answered = 0
        async with aiohttp.ClientSession(connector=aiohttp.TCPConnector(limit=nproc)) as session:
            todo = iter(items)

            async def worker() -> None:
                nonlocal answered
                for item in todo:
                    got = await handle(session, target, item)  # awaited before the sum is read: no lost count
                    answered += got

            began, cpu_began = time.perf_counter(), time.process_time()
            await asyncio.gather(*(worker() for _ in range(nproc)))
            return time.perf_counter() - began, answered, time.process_time() - cpu_began

    return asyncio.run(main())


_HEADERS = {"Content-Type": "application/json"}


def run_bare(bodies: list[bytes], url: str, nproc: int) -> tuple[float, int]:
    """Seconds for a bare aiohttp loop over the same bodies, `nproc` at once, and the answers it parsed."""

    async def post(session: Any, target: str, body: bytes) -> bool:
        async with session.post(target, data=body, headers=_HEADERS) as resp:
            reply = json.loads(await resp.read())
        return bool(reply["choices"][0]["message"]["content"])

    seconds, answered, _ = aiohttp_loop(bodies, url, nproc, post)
    return seconds, answered


def run_bare_plus(data: Path, url: str, work: Path, nproc: int) -> tuple[float, int, float]:
    """The bare loop plus only the work no run loop of vlmkit can skip, each done by vlmkit's own function: the request
    body built from the row's message and encoded, the reply read into a Generation, the record with its prompt
    identity (what a rerun compares), its journal line (one write for every `nproc` answers, as the run loop writes
    one turn's answers together). No retry policy, no deadline, no check of the pooled connection, no progress bar,
    no lock. Its ratio to the bare loop is the most any run loop doing that work can reach here: seconds, answers,
    CPU seconds."""
    from vlm.api.http import Response, encode_body
    from vlm.api.openai_compat import OpenAICompatModel, _generation
    from vlmkit.run.inference import Task, _record
    from vlmkit.run.journal import Journal

    tasks = tasks_of(data)
    model = OpenAICompatModel("served", api_base=url)
    journal = Journal(work / "journal.jsonl", {"bench": "bare_plus"})
    journal.open()

    async def ask(session: Any, target: str, task: Task) -> bool:
        start = time.perf_counter()
        body = encode_body(model.request_body(task.msgs))
        async with session.post(target, data=body, headers=_HEADERS) as resp:
            reply = json.loads(await resp.read())
        generation = _generation(Response(data=reply, latency_ms=None, attempts=1))
        journal.append(_record(task, generation, (time.perf_counter() - start) * 1000), defer=True)
        if journal.pending >= nproc:
            journal.flush()
        return bool(generation.text)

    try:
        return aiohttp_loop(tasks, url, nproc, ask)
    finally:
        journal.flush()  # the last few answers (fewer than nproc)
        journal.close()
        model.close()


def main(argv: list[str] | None = None) -> int:
    global _PIN
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rows", type=int, default=2000)
    parser.add_argument("--nproc", type=int, default=8, help="concurrent requests, for both (vlmkit run --nproc)")
    parser.add_argument("--repeats", type=int, default=1, help="run both this many times, alternating; best of each")
    parser.add_argument("--no-pin", action="store_true", help="let the OS place client and server (busy machines)")
    parser.add_argument("--image-rows", action="store_true",
                        help="also run the loop on rows that all share one image, beside the text rows")
    args = parser.parse_args(argv)
    _PIN = not args.no_pin
    cores = sorted(os.sched_getaffinity(0))
    client, server = cores[0], (cores[1] if len(cores) > 1 else cores[0])
    if _PIN:
        os.sched_setaffinity(0, {client})
    load_before = os.getloadavg()
    run_s: list[float] = []
    loop_s: list[float] = []
    bare_s: list[float] = []
    image_s: list[float] = []
    plus_s: list[float] = []
    cpu: dict[str, list[float]] = {"run": [], "loop": [], "bare": [], "plus": [], "image": []}
    encodes: list[int] = []
    mock = running_server("--tokens", "4", core=server if _PIN else None)
    with tempfile.TemporaryDirectory(prefix="bench_run_loop_") as folder, mock as url:
        tmp = Path(folder)
        data = write_dataset(tmp, args.rows)
        images = write_image_dataset(tmp, args.rows) if args.image_rows else None
        bodies = bodies_for(data, url)
        for i in range(args.repeats):
            with CpuClock() as clock:
                seconds, rows = run_vlmkit(data, url, tmp / f"work{i}", args.nproc)
            if rows != args.rows:
                raise RuntimeError(f"vlmkit run wrote {rows} predictions, not {args.rows}")
            run_s.append(seconds)
            cpu["run"].append(clock.seconds)
            seconds, errors, used = run_loop(data, url, tmp / f"loop{i}", args.nproc)
            if errors:
                raise RuntimeError(f"the run loop recorded {errors} errors")
            loop_s.append(seconds)
            cpu["loop"].append(used)
            if args.image_rows:
                before = image_encodes()
                seconds, errors, used = run_loop(images, url, tmp / f"images{i}", args.nproc)
                if errors:
                    raise RuntimeError(f"the run loop recorded {errors} errors on image rows")
                image_s.append(seconds)
                cpu["image"].append(used)
                encodes.append(image_encodes() - before)
            with CpuClock() as clock:
                seconds, answered = run_bare(bodies, url, args.nproc)
            if answered != args.rows:
                raise RuntimeError(f"the bare loop got {answered} answers, not {args.rows}")
            bare_s.append(seconds)
            cpu["bare"].append(clock.seconds)
            seconds, answered, used = run_bare_plus(data, url, tmp / f"plus{i}", args.nproc)
            if answered != args.rows:
                raise RuntimeError(f"the bare loop with vlmkit's work got {answered} answers, not {args.rows}")
            plus_s.append(seconds)
            cpu["plus"].append(used)
    run_rate, loop_rate, bare_rate = args.rows / min(run_s), args.rows / min(loop_s), args.rows / min(bare_s)
    print(f"load average before: {load_before}, after: {os.getloadavg()}")
    print(f"{f'client on core {client}, mock server on core {server}' if _PIN else 'not pinned'}; "
          f"{args.rows} rows, {args.nproc} requests at once, best of {args.repeats}")
    print(f"vlmkit run (whole command)  {run_rate:8.0f} samples/s  ({min(run_s):.2f} s; all: "
          f"{', '.join(f'{s:.2f}' for s in run_s)} s)")
    print(f"run loop (run_api)          {loop_rate:8.0f} samples/s  ({min(loop_s):.2f} s; all: "
          f"{', '.join(f'{s:.2f}' for s in loop_s)} s)")
    print(f"bare aiohttp loop           {bare_rate:8.0f} samples/s  ({min(bare_s):.2f} s; all: "
          f"{', '.join(f'{s:.2f}' for s in bare_s)} s)")
    plus_rate = args.rows / min(plus_s)
    print(f"bare + vlmkit's own work    {plus_rate:8.0f} samples/s  ({min(plus_s):.2f} s; all: "
          f"{', '.join(f'{s:.2f}' for s in plus_s)} s)")
    print(f"ratio run loop / bare       {loop_rate / bare_rate:8.2f}x  (goal >= 0.8x)")
    print(f"ratio bare + own work / bare {plus_rate / bare_rate:7.2f}x  (the most a loop doing vlmkit's work reaches)")
    print(f"ratio whole run / bare      {run_rate / bare_rate:8.2f}x  (the command adds dataset load, scoring, result files)")
    per = {name: min(values) / args.rows * 1e6 for name, values in cpu.items() if values}
    print(f"client CPU per sample       whole run {per['run']:.0f} us, run loop {per['loop']:.0f} us, bare {per['bare']:.0f} us;"
          f" bare / run loop {per['bare'] / per['loop']:.2f}x")
    print(f"client CPU per sample       bare + vlmkit's own work {per['plus']:.0f} us; bare / that {per['bare'] / per['plus']:.2f}x")
    if image_s:
        print(f"run loop, image rows        {args.rows / min(image_s):8.0f} samples/s  ({min(image_s):.2f} s; one "
              f"shared image, encoded {', '.join(map(str, encodes))} time(s) a run)")
        print(f"client CPU per sample       image rows {per['image']:.0f} us, text rows {per['loop']:.0f} us;"
              f" image / text {per['image'] / per['loop']:.2f}x")
    return 0


if __name__ == "__main__":
    sys.exit(main())
