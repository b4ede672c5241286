"""Hand-made work dirs for the report tests: results.json and predictions.jsonl laid out as `vlmkit run` writes
them (docs/outputs.md), with real images made by Pillow."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from PIL import Image, ImageDraw

from vlmkit.outputs.layout import RESULTS, predictions_beside, stale_name
from vlmkit.outputs.schema import SCHEMA_VERSION


def image(path: Path, colour: str, size: tuple[int, int] = (320, 240)) -> str:
    """A JPEG with a shape on it (so a thumbnail has something to show); returns its path as a string."""
    path.parent.mkdir(parents=True, exist_ok=True)
    picture = Image.new("RGB", size, "white")
    draw = ImageDraw.Draw(picture)
    draw.ellipse((size[0] // 5, size[1] // 5, size[0] * 4 // 5, size[1] * 4 // 5), fill=colour)
    picture.save(path, format="JPEG", quality=85)
    return str(path)


def record(index: Any, prediction: str | None, target: Any, *, hit: bool | None = None, extracted: Any = None,
           method: str | None = None, score: float | None = None, image_path: str | None = None,
           question: str = "What colour is the shape?", category: str = "colour", error: dict | None = None,
           **extra: Any) -> dict[str, Any]:
    """One predictions.jsonl line; scorer fields only where given."""
    content = ([{"type": "image", "value": image_path}] if image_path else []) + [{"type": "text", "value": question}]
    rec: dict[str, Any] = {
        "index": index,
        "prompt": [{"role": "user", "content": content}],
        "prompt_hash": "0" * 16,
        "target": target,
        "prediction": prediction,
        "error": error if error is not None else (None if prediction is not None else {"kind": "not_run"}),
        "usage": None,
        "latency_ms": 12.0,
        "metadata": {"question": question, "category": category},
    }
    for key, value in (("extracted", extracted), ("method", method), ("hit", hit), ("score", score)):
        if value is not None:
            rec[key] = value
    rec.update(extra)
    return rec


def scoring(scorer: str, value: float, *, metric: str = "Overall", scale: dict | None = None,
            breakdown: list[dict] | None = None, counts: dict | None = None, metric_scales: dict | None = None
            ) -> dict[str, Any]:
    """A `scoring` block; scale None writes it as results.json did before scales were recorded."""
    primary: dict[str, Any] = {"name": metric, "value": value}
    block: dict[str, Any] = {"scorer": scorer, "primary_metric": primary, "metrics": {metric: value},
                             "breakdown": breakdown, "counts": counts or {}, "notes": []}
    if scale is not None:
        primary.update(scale)
        block["scale"] = scale
        block["metric_scales"] = metric_scales or {metric: scale}
    return block


def write_run(work: Path, model: str, dataset: str, *, status: str = "success", block: dict | None = None,
              records: list[dict] | None = None, completed_at: str = "2026-11-20T10:00:00+00:00",
              stale: int | None = None, total: int | None = None, completed: int | None = None,
              errors: int = 0) -> Path:
    """Write <work>/<model>/<dataset>/results.json (or results.staleN.json) and its predictions; returns the
    results file."""
    run_dir = work / model / dataset
    run_dir.mkdir(parents=True, exist_ok=True)
    records = records or []
    total = len(records) if total is None else total
    done = sum(r["prediction"] is not None for r in records) if completed is None else completed
    results = {
        "schema_version": SCHEMA_VERSION,
        "status": status,
        "started_at": completed_at,
        "completed_at": completed_at,
        "model": {"name": model},
        "dataset": {"name": dataset, "md5": "d41d8cd98f00b204e9800998ecf8427e"},
        "counts": {"total": total, "completed": done, "inference_errors": errors, "not_run": total - done - errors},
        "scoring": block,
        "errors_by_kind": {},
        "notes": [],
    }
    path = run_dir / (stale_name(RESULTS, stale) if stale else RESULTS)
    path.write_text(json.dumps(results, indent=2), encoding="utf-8")
    with open(predictions_beside(path), "w", encoding="utf-8") as handle:
        for rec in records:
            handle.write(json.dumps(rec) + "\n")
    return path


FRACTION = {"scale": "fraction", "higher_is_better": True}
PERCENT = {"scale": "percent", "higher_is_better": True}


def points(out_of: float) -> dict[str, Any]:
    return {"scale": "points", "higher_is_better": True, "out_of": out_of}
