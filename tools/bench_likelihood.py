"""Likelihood scoring against generation: rows per second on the demo MCQ with a local model (issue 28).

    python tools/bench_likelihood.py [--model vlmkit-tiny] [--rows 180] [--batch-size 16] [--repeats 3]

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
import statistics
import string
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import vlmkit
from vlm.local.likelihood import length_normalised, one_pass
from vlmkit.run.resolve import resolve_model


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


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model", default="vlmkit-tiny", help="a local model name or path (default vlmkit-tiny)")
    parser.add_argument("--rows", type=int, default=180)
    parser.add_argument("--batch-size", type=int, default=16)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--threads", type=int, default=None,
                        help="torch CPU threads (default: torch's own; 1 gives steadier figures on a busy machine)")
    args = parser.parse_args()
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
