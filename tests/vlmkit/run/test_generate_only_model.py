"""DESIGN.md's model contract through the real runner: a class that is not a BaseModel and has only
`generate(msgs, dataset=None)` runs a benchmark and a custom file; one that also has `use_custom_prompt` /
`build_prompt` writes its own prompts; and every dataset class that reaches the runner offers the optional members
of vlmkit.core.contracts.Dataset with their defaults."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

from datasets_tsv.custom import build_custom_dataset
from datasets_tsv.kinds.video_snapshot import SnapshotVideoDataset
from datasets_tsv.kinds.yorn import ImageYORNDataset
from tests.support.run_helpers import write_yorn_tsv
from vlmkit.run.resolve import ModelSpec
from vlmkit.run.runner import RunOptions, Runner

N = 6
OPTIONAL = ("answer_columns", "scorer_reason", "output_format", "subtitle_sampling", "generation_params",
            "scoring_problem")


class SaysYes:
    """Nothing but generate: no BaseModel, no settings, no close, no generate_batch."""

    def generate(self, msgs: Any, dataset: Any = None) -> str:
        return "Yes"


class Adds:
    """Nothing but generate: sums the numbers of the question (`1+2=` -> `3`)."""

    def generate(self, msgs: Any, dataset: Any = None) -> str:
        text = "".join(p["value"] if isinstance(p, dict) else str(p) for p in msgs)
        return str(sum(int(n) for n in re.findall(r"\d+", text)))


class OwnPrompts(SaysYes):
    """Writes its own prompts for Y/N datasets, still without BaseModel."""

    def use_custom_prompt(self, dataset: Any) -> bool:
        return dataset.kind == "yorn"

    def build_prompt(self, line: dict, dataset: Any) -> list[dict[str, str]]:
        return [{"type": "text", "value": f"own: {line['question']}"}]


def spec(name: str, cls: type) -> ModelSpec:
    return ModelSpec(name, f"{__name__}:{cls.__name__}", {})


def predictions(outcome: Any) -> list[dict]:
    return [json.loads(line) for line in Path(outcome.files["predictions"]).read_text().splitlines()]


def test_a_class_with_only_generate_runs_a_benchmark(lmu_root: Path, tmp_path: Path):
    write_yorn_tsv(lmu_root / "MyYN.tsv", n=N)  # answer "Yes" where index % 3 != 0: rows 1, 2, 4, 5
    runner = Runner(RunOptions(work_dir=tmp_path / "out", root=lmu_root, progress=False, batch_size=4))
    [outcome] = runner.run(["MyYN"], [spec("yes", SaysYes)])
    assert (outcome.status, outcome.n_completed, outcome.n_errors) == ("success", N, 0)
    assert outcome.evaluation.primary_value == 100 * 4 / 6
    assert [r["prediction"] for r in predictions(outcome)] == ["Yes"] * N
    results = json.loads(Path(outcome.files["results"]).read_text())
    assert results["model"]["settings"] == {"class": f"{__name__}.SaysYes"}  # the default settings()
    assert results["model"]["probe"] is None and results["run"]["prompts_from"] == "dataset"


def test_a_class_with_only_generate_runs_a_custom_file_and_refuses_row_parameters(tmp_path: Path):
    rows = [{"question": "1+2=", "answer": "3"}, {"question": "4+5=", "answer": "9", "max_tokens": 8},
            {"question": "10+20=", "answer": "30"}]
    data = tmp_path / "sums.jsonl"
    data.write_text("".join(json.dumps(r) + "\n" for r in rows))
    dataset = build_custom_dataset(data)
    outcome = Runner(RunOptions(work_dir=tmp_path / "out", progress=False)).run_one(spec("adds", Adds), dataset)
    records = {r["index"]: r for r in predictions(outcome)}
    assert [records[i]["prediction"] for i in (0, 2)] == ["3", "30"]
    # the row that asks for max_tokens is an error record (the class cannot apply it), never a prediction
    assert records[1]["prediction"] is None and records[1]["error"]["kind"] == "unsupported_input"
    assert (outcome.status, outcome.n_completed, outcome.n_errors) == ("partial", 2, 1)
    assert set(outcome.errors) == {"unsupported_input"}


def test_a_class_outside_base_model_may_write_its_own_prompts(lmu_root: Path, tmp_path: Path):
    write_yorn_tsv(lmu_root / "MyYN.tsv", n=N)
    runner = Runner(RunOptions(work_dir=tmp_path / "out", root=lmu_root, progress=False))
    [outcome] = runner.run(["MyYN"], [spec("own", OwnPrompts)])
    assert outcome.status == "success"
    prompts = [r["prompt"] for r in predictions(outcome)]
    assert prompts[3] == [{"role": "user", "content": [{"type": "text", "value": "own: [3] Is the picture blue?"}]}]
    results = json.loads(Path(outcome.files["results"]).read_text())
    assert results["run"]["prompts_from"] == "model (OwnPrompts)"
    assert results["run"]["vlmevalkit_prompts_from"] == "model (OwnPrompts)"


class CountsServers(SaysYes):
    """Says which server answered how often, as the API model with several --api-base URLs does."""

    def server_counts(self) -> dict[str, dict[str, int]]:
        return {"http://a/v1": {"requests": 4}, "http://b/v1": {"requests": 2}}


def test_results_say_who_vlmevalkit_lets_write_prompts_and_the_servers(lmu_root: Path, tmp_path: Path):
    """run.vlmevalkit_prompts_from is what VLMEvalKit would do (the model's use_custom_prompt), whatever
    --prompt-style says; run.servers is the model's server_counts(), absent for a model without it."""
    write_yorn_tsv(lmu_root / "MyYN.tsv", n=N)
    runner = Runner(RunOptions(work_dir=tmp_path / "out", root=lmu_root, progress=False, prompt_style="dataset"))
    [own, counted, plain] = runner.run(["MyYN"], [spec("own", OwnPrompts), spec("counted", CountsServers),
                                                  spec("plain", SaysYes)])
    run = json.loads(Path(own.files["results"]).read_text())["run"]
    assert run["prompts_from"] == "dataset" and run["vlmevalkit_prompts_from"] == "model (OwnPrompts)"
    assert "servers" not in run
    run = json.loads(Path(counted.files["results"]).read_text())["run"]
    assert run["servers"] == {"http://a/v1": {"requests": 4}, "http://b/v1": {"requests": 2}}
    assert run["vlmevalkit_prompts_from"] == "dataset"  # no use_custom_prompt: the dataset's, as VLMEvalKit
    run = json.loads(Path(plain.files["results"]).read_text())["run"]
    assert "servers" not in run and run["vlmevalkit_prompts_from"] == "dataset"


def test_every_dataset_class_offers_the_optional_members(lmu_root: Path, tmp_path: Path):
    tsv = ImageYORNDataset("MyYN", tsv_path=write_yorn_tsv(lmu_root / "MyYN.tsv", n=2), root=lmu_root, progress=False)
    data = tmp_path / "qa.jsonl"
    data.write_text(json.dumps({"question": "q", "answer": "a"}) + "\n")
    custom = build_custom_dataset(data)
    for dataset in (tsv, custom):
        assert (dataset.answer_columns, dataset.scorer_reason, dataset.output_format, dataset.subtitle_sampling) == (
            ("answer",), None, None, None)
        assert dataset.generation_params(0) is None and dataset.scoring_problem() is None
    assert tsv.source_file == lmu_root / "MyYN.tsv" and custom.source_file == data
    assert all(hasattr(SnapshotVideoDataset, name) for name in OPTIONAL)  # built from a snapshot only: the class
