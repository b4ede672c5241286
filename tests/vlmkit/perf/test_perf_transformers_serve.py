"""A real third-party server: `transformers serve` on a tiny random LLaVA built in the test session (the session
fixture `served_llava` of tests/conftest.py), load-tested from a TSV dataset with images; a full report."""

from __future__ import annotations

import csv
import json
from pathlib import Path

from PIL import Image

from datasets_tsv.catalog.registry import build_dataset
from tests.support.tsvs import b64, image_bytes, write_tsv
from vlmkit.perf import PerfOptions, run_perf


def test_full_report_against_transformers_serve(served_llava: tuple[str, str], tmp_path: Path) -> None:
    api_base, model_path = served_llava
    root = tmp_path / "LMUData"
    rows = [{"index": i, "image": b64(image_bytes(c)), "question": f"What colour is this? {i}", "answer": c}
            for i, c in enumerate(["red", "green", "blue"])]
    dataset = build_dataset(str(write_tsv(root / "colours.tsv", rows)), root=root, progress=False)
    out = tmp_path / "perf"
    options = PerfOptions(model=model_path, api_base=api_base, concurrency=[1, 2], num_requests=4, warmup=1,
                          max_tokens=4, timeout=120, out_dir=out, quiet=True, slo={"e2el": 60_000})
    result = run_perf(dataset, options)

    assert not result.interrupted and result.summary["status"] == "complete"
    for level in result.levels:
        assert level["requests"]["successful"] == 4, level["requests"]
        assert level["ttft_ms"]["n"] == 4 and level["e2el_ms"]["mean"] > 0
        assert level["input_token_throughput"] > 0  # the server's usage (image tokens included)
        assert 0 < level["tokens"]["output_total"] <= 4 * 4 and level["tokens"]["output_source"] == "usage"
        assert level["goodput"]["good_requests"] == 4
    summary = json.loads((out / "perf_summary.json").read_text())
    assert summary["target"]["model"] == model_path and "api_key" not in json.dumps(summary["options"]).replace("api_key_given", "")
    with open(out / "perf_summary.csv", newline="") as handle:
        assert [row["level"] for row in csv.DictReader(handle)] == ["c=1", "c=2"]
    lines = [json.loads(x) for x in (out / "perf_requests.jsonl").read_text().splitlines()]
    assert len(lines) == 2 * 5 and sum(line["warmup"] for line in lines) == 2
    assert all(line["ok"] and line["input_tokens"] > 0 for line in lines)
    pngs = sorted(p.name for p in (out / "plots").glob("*.png"))
    assert pngs == ["latency_cdf_c_1.png", "latency_cdf_c_2.png", "sweep.png", "timeline_c_1.png", "timeline_c_2.png"]
    for png in (out / "plots").glob("*.png"):
        with Image.open(png) as image:
            assert image.format == "PNG" and image.size[0] > 300
