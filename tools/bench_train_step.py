"""Seconds per training step of tools/train_demo_model.py: one padded batch against buckets of one kind and image
count (`forward_backward`), on the same examples, starting from the shipped weights.

    python tools/bench_train_step.py --steps 6 --batch-size 32

Prints both timings (alternated twice, so a warm-up or a busy moment shows as a difference between rounds) and
the mean loss of each, which must agree: bucketing changes the cost, not the result.
"""

from __future__ import annotations

import argparse
import sys
import time
from collections.abc import Callable
from pathlib import Path

import torch
from transformers import AutoProcessor, LlavaForConditionalGeneration

sys.path.insert(0, str(Path(__file__).resolve().parent))
import demo_tasks  # noqa: E402
import train_demo_model  # noqa: E402

WEIGHTS = Path(__file__).resolve().parents[1] / "vlm" / "weights" / "vlmkit_tiny"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--steps", type=int, default=6)
    parser.add_argument("--batch-size", type=int, default=32)
    parser.add_argument("--threads", type=int, default=2)
    args = parser.parse_args(argv)
    torch.set_num_threads(args.threads)
    processor = AutoProcessor.from_pretrained(WEIGHTS)
    model = LlavaForConditionalGeneration.from_pretrained(WEIGHTS, dtype=torch.float32).train()
    stream = demo_tasks.training_examples(seed=11)
    batches = [[next(stream) for _ in range(args.batch_size)] for _ in range(args.steps + 1)]

    def padded(examples: list[demo_tasks.Example]) -> float:
        loss = model(**train_demo_model.encode_batch(processor, examples)).loss
        loss.backward()
        return loss.item()

    def bucketed(examples: list[demo_tasks.Example]) -> float:
        return train_demo_model.forward_backward(model, processor, examples)[0]

    def timed(step: Callable[[list[demo_tasks.Example]], float]) -> tuple[float, float]:
        step(batches[0])  # warm-up
        started = time.perf_counter()
        losses = [step(examples) for examples in batches[1:]]
        seconds = (time.perf_counter() - started) / args.steps
        model.zero_grad(set_to_none=True)
        return seconds, sum(losses) / len(losses)

    for _ in range(2):
        for name, step in (("one padded batch", padded), ("bucketed", bucketed)):
            seconds, loss = timed(step)
            print(f"{name:>16}: {seconds:.3f} s/step  mean loss {loss:.5f}", flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
