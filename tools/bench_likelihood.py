"""Likelihood scoring against generation: rows per second on the demo MCQ, locally, on vLLM and served (issue 28).

    python tools/bench_likelihood.py [--model vlmkit-tiny] [--rows 180] [--batch-size 16] [--repeats 3]
    python tools/bench_likelihood.py --vllm-python /tmp/vllm-venv/bin/python [--model-path DIR]
    python tools/bench_likelihood.py --api-base http://127.0.0.1:8000/v1 --served-model NAME [--nproc 8]

--vllm-python: the same rows on vLLM's offline engine (vlm.local.vllm_engine) in that interpreter (this checkout on its
PYTHONPATH; `--model-path` a folder vLLM can load, e.g. tools/check_vllm.py's renamed copy of vlmkit-tiny): generation,
the letter mode, the continuation mode and the letter mode on the option texts, each timed after a warm-up as below
(the engine start is not counted). vlmkit-tiny's letters take two tokens each ("Ġ" "B"), so each of its letter rows
takes the prompt pass and one step pass on the shared first token (vlm.local.vllm_likelihood); options of one token
listed in the top 20 (its option words) take the prompt pass alone.
--api-base: the letter mode through a server's top_logprobs (vlm.api.letter_logprobs: one token per row, --nproc rows
at once) against generation on the same server (`generate_full`, --nproc at once); the server must give top_logprobs
(vLLM, SGLang).

The demo MCQ's rows (`vlmkit_demo_mcq`, the dataset's own prompts) go through the same loaded model three ways,
each `--repeats` times after a warm-up, and the median wall time of each is printed as rows per second:
- generation: `generate_batch` (greedy, the model's answer budget; vlmkit-tiny's is 8 tokens);
- letter mode: `option_logprobs_batch` with the row's option letters (one padded forward pass per batch when
  every letter is one token; a row whose letters take several tokens is scored as continuations, its prompt once);
- continuation mode: `continuation_logprobs_batch` with the options' texts (one row at a time, prompt once, each
  option on the prompt's cache).
Each line also gives the accuracy the mode reaches (generation read with VLMEvalKit's choice extraction; the
likelihood modes' argmax; the continuation mode raw and length-normalised by characters, as lm-eval's acc and
acc_norm). vlmkit-tiny was trained to answer with the option's text, never a letter, so its letter-mode accuracy
says nothing about the method; the speed does. "rows in one pass" says how many rows took the one-pass path
(vlmkit-tiny writes " B" as two tokens, so its letter rows do not). The last mode runs the letter mode with the
options' texts as the answers ("purple": one token each for vlmkit-tiny, the form it answers in), which shows the
one-pass path's speed on this model.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import string
import subprocess
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from collections.abc import Callable
from pathlib import Path
from typing import Any

import vlmkit
from vlm.local.likelihood import length_normalised, one_pass


def demo_rows(rows: int, root: Path) -> tuple[list[Any], list[list[str]], list[list[str]], list[str]]:
    """(messages, option letters, option texts, answer letters) of the first `rows` demo MCQ rows."""
    dataset = vlmkit.build_dataset("vlmkit_demo_mcq", root=root, progress=False)
    msgs, letters, texts, answers = [], [], [], []
    for pos in range(min(rows, len(dataset.data))):
        line = dataset.data.iloc[pos]
        filled = [L for L in string.ascii_uppercase if L in line and isinstance(line[L], str) and line[L].strip()]
        msgs.append(dataset.build_prompt(pos))
        letters.append(filled)
        texts.append([str(line[L]) for L in filled])
        answers.append(str(line["answer"]))
    return msgs, letters, texts, answers


def timed(run: Callable[[], list[Any]], repeats: int) -> tuple[float, float, list[Any]]:
    """(median wall seconds over `repeats` runs, median CPU seconds of this process, the last run's results)."""
    seconds, cpu, results = [], [], []
    for _ in range(repeats):
        start, start_cpu = time.perf_counter(), time.process_time()
        results = run()
        seconds.append(time.perf_counter() - start)
        cpu.append(time.process_time() - start_cpu)
    return statistics.median(seconds), statistics.median(cpu), results


def argmax_letter(scores: dict[str, float] | BaseException) -> str | None:
    return None if isinstance(scores, BaseException) else max(scores, key=scores.__getitem__)


def vllm_child(task_file: str) -> None:
    """In the vLLM interpreter: time generation, the letter mode and the continuation mode on the rows given."""
    from vlm.local.vllm_engine import VLLMModel

    task = json.loads(Path(task_file).read_text())
    msgs, letters, texts = task["msgs"], task["letters"], task["texts"]
    model = VLLMModel(task["model_path"], max_model_len=task.get("max_model_len"), batch_size=len(msgs))
    try:
        warm = slice(0, min(len(msgs), 8))
        model.generate_batch(msgs[warm]), model.option_logprobs_batch(msgs[warm], letters[warm])
        model.continuation_logprobs_batch(msgs[warm], texts[warm])
        out = {}
        for name, run in (("generation", lambda: model.generate_batch(msgs)),
                          ("letter", lambda: model.option_logprobs_batch(msgs, letters)),
                          ("continuation", lambda: model.continuation_logprobs_batch(msgs, texts)),
                          ("letter_texts", lambda: model.option_logprobs_batch(msgs, texts))):
            seconds, _, results = timed(run, task["repeats"])
            out[name] = {"seconds": seconds, "errors": sum(isinstance(r, BaseException) for r in results),
                         "picked": [None if isinstance(r, BaseException) else
                                    r.text if name == "generation" else
                                    argmax_letter(r) if name == "letter" else
                                    ls[ts.index(argmax_letter(r))] if name == "letter_texts" else
                                    argmax_letter({L: lp for L, (lp, _) in zip(ls, r)})
                                    for r, ls, ts in zip(results, letters, texts)]}
        out["vllm"] = model.vllm_version
    finally:
        model.close()
    print(json.dumps(out))


def bench_vllm(args: argparse.Namespace) -> None:
    """The rows built here, timed in the vLLM interpreter (`vllm_child`), printed as rows per second."""
    with tempfile.TemporaryDirectory() as tmp:
        msgs, letters, texts, answers = demo_rows(args.rows, Path(tmp) / "LMUData")
        task = Path(tmp) / "task.json"
        task.write_text(json.dumps({"model_path": args.model_path, "msgs": msgs, "letters": letters, "texts": texts,
                                    "repeats": args.repeats, "max_model_len": args.max_model_len}))
        env = {**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, [os.environ.get("PYTHONPATH"),
                                                                           str(Path(__file__).resolve().parents[1])]))}
        done = subprocess.run([args.vllm_python, __file__, "--vllm-child", str(task)], capture_output=True, text=True,
                              env=env, check=False)
    if done.returncode != 0:
        raise SystemExit(f"the vLLM child failed:\n{done.stderr[-3000:]}")
    out = json.loads(done.stdout.strip().splitlines()[-1])
    n = len(msgs)
    print(f"vLLM ({out['vllm']}) model_path={args.model_path} rows={n} repeats={args.repeats}")
    for name in ("generation", "letter", "continuation", "letter_texts"):
        figure = out[name]
        picked = figure["picked"]
        if name == "generation":
            picked = [None if p is None else vlmkit.extract_choice(p, dict(zip(ls, ts)))[0]
                      for p, ls, ts in zip(picked, letters, texts)]
        accuracy = sum(p == a for p, a in zip(picked, answers)) / n
        print(f"{name + ':':14s} {n / figure['seconds']:8.1f} rows/s  (median {figure['seconds']:.2f} s)  accuracy "
              f"{accuracy:.3f}  errors {figure['errors']}")
    print(f"letter mode vs generation on vLLM: {out['generation']['seconds'] / out['letter']['seconds']:.2f}x; on the "
          f"option texts (one token each for vlmkit-tiny: the prompt pass alone) "
          f"{out['generation']['seconds'] / out['letter_texts']['seconds']:.2f}x")


def bench_served(args: argparse.Namespace) -> None:
    """The letter mode through a server's top_logprobs against generation on the same server."""
    from vlm.api.letter_logprobs import ask_letters_batch
    from vlm.api.openai_compat import OpenAICompatModel

    tmp = tempfile.TemporaryDirectory()  # the rows' images live there until the timings are done
    msgs, letters, texts, answers = demo_rows(args.rows, Path(tmp.name) / "LMUData")
    model = OpenAICompatModel(args.served_model, api_base=args.api_base, max_tokens=args.max_tokens)
    n = len(msgs)

    def generate() -> list[Any]:
        def one(m: Any) -> Any:
            try:
                return model.generate_full(m)
            except Exception as exc:
                return exc
        with ThreadPoolExecutor(args.nproc) as pool:
            return list(pool.map(one, msgs))

    asked = texts if args.option_texts else letters  # vlmkit-tiny answers with the option's word, never a letter
    try:
        ask_letters_batch(model, msgs[:4], asked[:4], workers=args.nproc), generate()  # warm-up
        t_gen, _, generated = timed(generate, args.repeats)
        t_letter, _, scored = timed(lambda: ask_letters_batch(model, msgs, asked, workers=args.nproc), args.repeats)
    finally:
        model.close()
        tmp.cleanup()
    gen_picked = [None if isinstance(g, BaseException) else vlmkit.extract_choice(g.text, dict(zip(ls, ts)))[0]
                  for g, ls, ts in zip(generated, letters, texts)]
    letter_picked = [None if isinstance(s, BaseException) else ls[a.index(argmax_letter(s.logprobs))]
                     for s, ls, a in zip(scored, letters, asked)]
    errors = [s for s in scored if isinstance(s, BaseException)]
    print(f"served {args.served_model} at {args.api_base} rows={n} nproc={args.nproc} repeats={args.repeats} "
          f"scored: {'the option texts' if args.option_texts else 'the option letters'}")
    print(f"generation:    {n / t_gen:8.1f} rows/s  (median {t_gen:.2f} s)  accuracy "
          f"{sum(p == a for p, a in zip(gen_picked, answers)) / n:.3f}")
    print(f"letter mode:   {n / t_letter:8.1f} rows/s  (median {t_letter:.2f} s)  accuracy "
          f"{sum(p == a for p, a in zip(letter_picked, answers)) / n:.3f}  failed rows {len(errors)}"
          + (f" (first: {errors[0]})" if errors else ""))
    print(f"letter mode vs generation, served: {t_gen / t_letter:.2f}x")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model", default="vlmkit-tiny", help="a local model name or path (default vlmkit-tiny)")
    parser.add_argument("--rows", type=int, default=180)
    parser.add_argument("--batch-size", type=int, default=16)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--threads", type=int, default=None,
                        help="torch CPU threads (default: torch's own; 1 gives steadier figures on a busy machine)")
    parser.add_argument("--vllm-python", default=None, help="time vLLM's offline engine in this interpreter")
    parser.add_argument("--model-path", default=None, help="with --vllm-python: the model folder vLLM loads")
    parser.add_argument("--max-model-len", type=int, default=None, help="with --vllm-python: vLLM's max_model_len")
    parser.add_argument("--vllm-child", default=None, help=argparse.SUPPRESS)
    parser.add_argument("--api-base", default=None, help="time the served letter mode against this server")
    parser.add_argument("--served-model", default=None, help="with --api-base: the served model's name")
    parser.add_argument("--nproc", type=int, default=8, help="with --api-base: requests at once")
    parser.add_argument("--max-tokens", type=int, default=16, help="with --api-base: generation's max_tokens")
    parser.add_argument("--option-texts", action="store_true",
                        help="with --api-base: score the options' texts as the answers (a model that answers in words, "
                             "as vlmkit-tiny does) instead of their letters")
    args = parser.parse_args()
    if args.vllm_child:
        vllm_child(args.vllm_child)
        return
    if args.vllm_python:
        if not args.model_path:
            parser.error("--vllm-python needs --model-path (a folder vLLM can load)")
        bench_vllm(args)
        return
    if args.api_base:
        if not args.served_model:
            parser.error("--api-base needs --served-model")
        bench_served(args)
        return
    from vlmkit.run.resolve import resolve_model  # here: the vLLM child's interpreter may lack pandas

    if args.threads:
        import torch

        torch.set_num_threads(args.threads)
    with tempfile.TemporaryDirectory() as tmp:
        msgs, letters, texts, answers = demo_rows(args.rows, Path(tmp) / "LMUData")
        model = resolve_model(args.model).build(batch_size=args.batch_size)
        n = len(msgs)
        warm = slice(0, min(n, args.batch_size))
        model.generate_batch(msgs[warm])
        model.option_logprobs_batch(msgs[warm], letters[warm])
        model.continuation_logprobs_batch(msgs[warm], texts[warm])

        t_gen, c_gen, generated = timed(lambda: model.generate_batch(msgs), args.repeats)
        t_letter, c_letter, letter_scores = timed(lambda: model.option_logprobs_batch(msgs, letters), args.repeats)
        t_cont, c_cont, cont_scores = timed(lambda: model.continuation_logprobs_batch(msgs, texts), args.repeats)
        t_word, c_word, word_scores = timed(lambda: model.option_logprobs_batch(msgs, texts), args.repeats)
        single = sum(one_pass(model.option_tokens(m, ls)) for m, ls in zip(msgs, letters))
        single_words = sum(one_pass(model.option_tokens(m, ts)) for m, ts in zip(msgs, texts))
        model.close()

    def accuracy(picked: list[str | None]) -> float:
        return sum(p == a for p, a in zip(picked, answers)) / n

    gen_picked = [None if isinstance(g, BaseException) else vlmkit.extract_choice(g.text, dict(zip(ls, ts)))[0]
                  for g, ls, ts in zip(generated, letters, texts)]
    letter_picked = [argmax_letter(s) for s in letter_scores]
    raw_picked, norm_picked = [], []
    for scores, ls, ts in zip(cont_scores, letters, texts):
        if isinstance(scores, BaseException):
            raw_picked.append(None), norm_picked.append(None)
            continue
        raw_picked.append(argmax_letter({L: lp for L, (lp, _) in zip(ls, scores)}))
        norm_picked.append(argmax_letter({L: length_normalised(lp, t) for L, t, (lp, _) in zip(ls, ts, scores)}))
    word_picked = [None if isinstance(s, BaseException) else ls[ts.index(argmax_letter(s))]
                   for s, ls, ts in zip(word_scores, letters, texts)]
    errors = sum(isinstance(r, BaseException) for r in [*generated, *letter_scores, *cont_scores, *word_scores])
    print(f"model={args.model} rows={n} batch_size={args.batch_size} repeats={args.repeats} errors={errors}")
    print(f"generation:        {n / t_gen:8.1f} rows/s  (median {t_gen:.2f} s, CPU {c_gen:.2f} s)  accuracy "
          f"{accuracy(gen_picked):.3f}")
    print(f"letter mode:       {n / t_letter:8.1f} rows/s  (median {t_letter:.2f} s, CPU {c_letter:.2f} s)  accuracy "
          f"{accuracy(letter_picked):.3f}  letter rows in one pass {single}/{n}")
    print(f"continuation mode: {n / t_cont:8.1f} rows/s  (median {t_cont:.2f} s, CPU {c_cont:.2f} s)  accuracy "
          f"{accuracy(raw_picked):.3f} (acc), {accuracy(norm_picked):.3f} (acc_norm)")
    print(f"letter mode on the option texts: {n / t_word:8.1f} rows/s  (median {t_word:.2f} s, CPU {c_word:.2f} s)  "
          f"accuracy {accuracy(word_picked):.3f}  rows in one pass {single_words}/{n}")
    print(f"letter mode vs generation: {t_gen / t_letter:.2f}x the rows per second; on the option texts "
          f"{t_gen / t_word:.2f}x")


if __name__ == "__main__":
    main()
