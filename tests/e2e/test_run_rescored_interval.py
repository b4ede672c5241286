"""`vlmkit run` of a judge-scored benchmark whose headline is a ratio (LLaVABench's relative score = mean model score /
mean reference score x 100), through an in-test model server and an in-test judge server: results.json carries the
rescored bootstrap interval (vlmkit.scoring.common.resampled_interval), equal to a second implementation on the judge's
scores, and the judge server is asked once per row, never again by the bootstrap's 200 rescorings."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from tests.e2e.test_run_judged_benchmarks import judge_from_key, model_from_questions, run
from tests.support.run_helpers import chat_requests
from tests.support.servers import FaultServer
from tests.support.tsvs import b64, image_bytes, write_tsv

MODEL_POINTS = [6, 9, 4, 7, 8, 3, 10, 5, 7, 6, 9, 2]
REFERENCE_POINTS = [8, 9, 7, 8, 9, 6, 9, 8, 7, 8, 10, 5]


def test_a_judged_ratio_gets_its_interval_without_asking_the_judge_again(lmu_root: Path, tmp_path: Path):
    jpeg = b64(image_bytes())
    rows = [{"index": i, "image": jpeg, "question": f"Question {i}?", "caption": "A bus.", "gpt4_ans": f"Ref {i}",
             "category": "conv" if i % 2 else "detail"} for i in range(len(MODEL_POINTS))]
    write_tsv(lmu_root / "LLaVABench.tsv", rows)
    answers = {f"Question {i}?": f"Answer number {i}." for i in range(len(rows))}
    reviews = {f"Answer number {i}.": f"{ref} {mine}\nreasons" for i, (ref, mine) in
               enumerate(zip(REFERENCE_POINTS, MODEL_POINTS))}
    work = tmp_path / "out"
    with FaultServer(model_from_questions(answers)) as model, FaultServer(judge_from_key(reviews)) as judge:
        result = run("LLaVABench", model.base_url, work, lmu_root, "--judge", "judge-m", "--judge-api-base",
                     judge.base_url)
        asked = chat_requests(judge.requests)
    assert result.returncode == 0, result.stderr
    assert len(asked) == len(rows)  # one review per row: the rescorings replayed them
    scoring = json.loads((work / "served" / "LLaVABench" / "results.json").read_text())["scoring"]
    value = scoring["primary_metric"]["value"]
    assert value == pytest.approx(np.mean(MODEL_POINTS) / np.mean(REFERENCE_POINTS) * 100)
    ci = scoring["interval"]
    assert ci["method"] == "bootstrap_rescored" and ci["resamples"] == 200 and ci["seed"] == 0
    assert ci["estimate"] == value and ci["n"] == len(rows)
    # the second implementation: rows drawn as numpy default_rng(0).integers(0, 12, 12), the ratio of the means
    rng = np.random.default_rng(0)
    mine, ref = np.asarray(MODEL_POINTS, float), np.asarray(REFERENCE_POINTS, float)
    figures = []
    for _ in range(200):
        picks = rng.integers(0, len(rows), size=len(rows))
        figures.append(mine[picks].mean() / ref[picks].mean() * 100)
    low, high = np.percentile(figures, [2.5, 97.5])
    assert (ci["low"], ci["high"]) == (pytest.approx(low), pytest.approx(high))
    assert ci["se"] == pytest.approx(np.std(figures, ddof=1))
    assert any("the judge's replies reused, never asked again" in note for note in scoring["notes"])
    half = max(high - value, value - low)
    assert f"±{half:.2f}" in result.stdout  # the console's ci95 column (percent, 2 decimals)
