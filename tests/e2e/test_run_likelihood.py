"""`vlmkit run --mcq-mode logits|continuation` end to end on the shipped vlmkit-tiny (issue 28).

Runs go through the CLI in a subprocess on the demo MCQ and Y/N benchmarks (--limit). The expected figures are worked
out here apart from the run: the model built through the registry, its `option_logprobs` / `continuation_logprobs`
called one row at a time on the prompt each record holds, the options read from the TSV's own columns, and the argmax
(ties: the first option) and the character normalisation written out in the test.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pandas as pd
import pytest

from tests.support.run_helpers import stderr_lines, vlmkit_cli

DATASETS = ("vlmkit_demo_mcq", "vlmkit_demo_yorn")
LIMIT = 8
TOL = 1e-4  # float32 on CPU: a padded batch and one row alone differ by rounding only


def run(lmu: Path, work: Path, *args: str) -> Any:
    return vlmkit_cli("run", "--model", "vlmkit-tiny", "--work-dir", str(work), *args,
                      env={"LMUData": str(lmu), "OMP_NUM_THREADS": "2"}, timeout=600)


def records(folder: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in (folder / "predictions.jsonl").read_text().splitlines()]


def argmax_first(scores: dict[str, float], order: list[str]) -> str:
    best = order[0]
    for letter in order[1:]:
        if scores[letter] > scores[best]:
            best = letter
    return best


def tsv_options(lmu: Path, dataset: str) -> dict[str, dict[str, str]]:
    """index -> {letter: text} from the TSV's columns; Y/N rows: Yes and No."""
    table = pd.read_csv(lmu / f"{dataset}.tsv", sep="\t", dtype=str, keep_default_na=False)
    out: dict[str, dict[str, str]] = {}
    for _, row in table.iterrows():
        if dataset.endswith("yorn"):
            out[str(row["index"])] = {"Yes": "Yes", "No": "No"}
        else:
            out[str(row["index"])] = {L: row[L] for L in "ABCDEFGH" if L in table.columns and row[L] != ""}
    return out


@pytest.fixture(scope="module")
def runs(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    """A logits run, then the same command in continuation mode in the same work dir, then that command again."""
    lmu, work = tmp_path_factory.mktemp("LMUData"), tmp_path_factory.mktemp("likelihood_out")
    saved = tmp_path_factory.mktemp("logits_saved")
    first = run(lmu, work, "--data", *DATASETS, "--limit", str(LIMIT), "--mcq-mode", "logits")
    assert first.returncode == 0, first.stderr[-3000:]
    for dataset in DATASETS:
        shutil.copytree(work / "vlmkit-tiny" / dataset, saved / dataset)
    second = run(lmu, work, "--data", *DATASETS, "--limit", str(LIMIT), "--mcq-mode", "continuation")
    assert second.returncode == 0, second.stderr[-3000:]
    third = run(lmu, work, "--data", *DATASETS, "--limit", str(LIMIT), "--mcq-mode", "continuation")
    assert third.returncode == 0, third.stderr[-3000:]
    return {"lmu": lmu, "work": work, "logits": saved, "second": second, "third": third}


@pytest.fixture(scope="module")
def model() -> Any:
    from vlmkit.run.resolve import ModelOptions, resolve_model

    built = resolve_model("vlmkit-tiny", ModelOptions()).build()
    yield built
    built.close()


@pytest.mark.parametrize("dataset", DATASETS)
def test_logits_mode_chooses_the_argmax_of_option_logprobs(runs: dict[str, Any], model: Any, dataset: str) -> None:
    options = tsv_options(runs["lmu"], dataset)
    found = records(runs["logits"] / dataset)
    assert len(found) == LIMIT
    for record in found:
        letters = list(options[str(record["index"])])
        direct = model.option_logprobs(record["prompt"], letters, dataset)
        assert record["error"] is None
        assert record["prediction"] == argmax_first(direct, letters)
        stored = record["extra"]["likelihood"]
        assert stored["mode"] == "logits"
        assert list(stored["logprobs"]) == letters
        for letter in letters:
            assert stored["logprobs"][letter] == pytest.approx(direct[letter], abs=TOL)
            assert stored["logprobs"][letter] <= 0.0  # a log-probability, never a loss
    results = json.loads((runs["logits"] / dataset / "results.json").read_text())
    assert results["run"]["mcq_mode"] == "logits"
    assert results["scoring"]["likelihood"] == {"mode": "logits"}


@pytest.mark.parametrize("dataset", DATASETS)
def test_continuation_mode_scores_option_texts_and_acc_norm(runs: dict[str, Any], model: Any, dataset: str) -> None:
    options = tsv_options(runs["lmu"], dataset)
    found = records(runs["work"] / "vlmkit-tiny" / dataset)
    hits = hits_norm = 0
    for record in found:
        choices = options[str(record["index"])]
        letters = list(choices)
        direct = model.continuation_logprobs(record["prompt"], list(choices.values()), dataset)
        raw = {L: lp for L, (lp, _) in zip(letters, direct)}
        norm = {L: raw[L] / len(choices[L]) for L in letters}
        stored = record["extra"]["likelihood"]
        assert stored["mode"] == "continuation"
        assert record["prediction"] == argmax_first(raw, letters)
        assert stored["choice_norm"] == argmax_first(norm, letters)
        assert stored["tokens"] == {L: n for L, (_, n) in zip(letters, direct)}
        for letter in letters:
            assert stored["logprobs"][letter] == pytest.approx(raw[letter], abs=TOL)
            assert stored["normalised"][letter] == pytest.approx(norm[letter], abs=TOL)
        hits += record["prediction"] == str(record["target"])
        hits_norm += stored["choice_norm"] == str(record["target"])
    results = json.loads((runs["work"] / "vlmkit-tiny" / dataset / "results.json").read_text())
    assert results["run"]["mcq_mode"] == "continuation"
    summary = results["scoring"]["likelihood"]
    assert summary["n"] == LIMIT
    assert summary["acc"] == pytest.approx(hits / LIMIT)
    assert summary["acc_norm"] == pytest.approx(hits_norm / LIMIT)


def test_a_rerun_in_another_mode_asks_everything_again(runs: dict[str, Any]) -> None:
    # the continuation run found the logits journal under other settings: set aside, every row asked again
    said = runs["second"].stderr
    assert "mcq_mode" in said and "already answered" not in runs["second"].stdout
    for dataset in DATASETS:
        folder = runs["work"] / "vlmkit-tiny" / dataset
        assert all(r["extra"]["likelihood"]["mode"] == "continuation" for r in records(folder))
        kept = [p for p in folder.iterdir() if p.name != "journal.jsonl" and p.name.startswith("journal")]
        assert kept, sorted(p.name for p in folder.iterdir())  # the logits answers are kept aside, not lost
    # the same mode again reuses every answer
    assert runs["third"].stdout.count(f"all {LIMIT} already answered") == len(DATASETS)


def test_a_vqa_dataset_is_refused_in_one_line(tmp_path: Path) -> None:
    result = run(tmp_path / "lmu", tmp_path / "out", "--data", "vlmkit_demo_vqa", "--limit", "2",
                 "--mcq-mode", "logits")
    assert result.returncode != 0
    lines = stderr_lines(result)
    assert len(lines) == 1 and "vlmkit_demo_vqa" in lines[0] and "MCQ or Y/N" in lines[0], lines
    assert not list((tmp_path / "out").rglob("journal*.jsonl"))


def test_a_served_model_is_refused_in_one_line(tmp_path: Path) -> None:
    # nothing listens on this port: the refusal comes before any request (a probe would fail differently)
    result = vlmkit_cli("run", "--data", "vlmkit_demo_yorn", "--limit", "2", "--model", "served",
                        "--api-base", "http://127.0.0.1:9/v1", "--work-dir", str(tmp_path / "out"),
                        "--mcq-mode", "continuation", env={"LMUData": str(tmp_path / "lmu")})
    assert result.returncode != 0
    lines = stderr_lines(result)
    assert len(lines) == 1 and "served" in lines[0] and "no log-probabilities of the prompt" in lines[0], lines
    assert not list((tmp_path / "out").rglob("journal*.jsonl"))
