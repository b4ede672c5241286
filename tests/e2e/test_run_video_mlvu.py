"""`vlmkit run --data MLVU_MCQ --data-root DIR` end to end on a miniature snapshot (tests.support.video_snapshots.
write_mlvu) through an API model (an in-test OpenAI-compatible server): VLMEvalKit's system turn and texts arrive
with the frames VLMEvalKit samples (indexed videos: each frame shows its number), and results.json holds the
hand-worked scores, VLMEvalKit's figure and the frame settings.

The catalog row is the one proposed for datasets_tsv/catalog/catalog.tsv (`ROW`, checked with the catalog's own
parser); while the packaged catalog does not have it yet, the test adds it for the run."""

from __future__ import annotations

import base64
import io
import json
from pathlib import Path

import pytest
from PIL import Image

from tests.datasets_tsv.benchmarks.test_mlvu import FRAMES, ITEMS, SYSTEM
from tests.support.indexed_video import frame_number
from tests.support.run_helpers import chat_only, chat_requests, row_of
from tests.support.servers import FaultServer, chat_reply
from tests.support.video_snapshots import write_mlvu

HEADER = ("name\tkind\tstatus\tscorer\tjudge\trows\tclass\tkwargs\turl\tmd5\tdescription\tnotes\tvlmevalkit_type\t"
          "vlmevalkit_prompt\n")
ROW = (
    "MLVU_MCQ\tvideo\tok\tmlvu_mcq\toptional\t\tdatasets_tsv.benchmarks.mlvu:MLVUMCQ\t{}\t\t\t"
    "MLVU_MCQ from a local snapshot of MLVU/MVLU (--data-root DIR, or the Hugging Face cache)\t"
    "no download: the rows are read from a local snapshot of MLVU/MVLU (MLVU/json/<n>_<task>.json); VLMEvalKit's "
    "MLVU_MCQ.tsv MD5 bb5c37e7cf8d43fc9a25c23d2b4633f5 is of a TSV vlmkit does not build\tVideo-MCQ\twrapper\n"
)
# by question number: [0] right (C before ')'), [1] B for A, [2] reads nothing, [3] right (dog), [4] right
REPLIES = {0: "(C) Cid", 1: "The answer is B) green", 2: "N/A", 3: "B", 4: "A"}


def with_rows(monkeypatch: pytest.MonkeyPatch, rows_text: str) -> dict:
    """The packaged catalog plus the proposed rows (parsed and validated by the catalog's parser): once a row is in
    the packaged catalog it must build the same class, scorer and options."""
    from datasets_tsv.catalog import entries as catalog_module
    from datasets_tsv.catalog import registry

    rows = {row.name: row for row in catalog_module.parse_rows(HEADER + rows_text, "proposed rows")}
    packaged = catalog_module.catalog_rows()
    for name, row in rows.items():
        if packaged.get(name) is not None and packaged[name].status == "ok":
            assert (packaged[name].cls, packaged[name].scorer, packaged[name].kwargs) == (row.cls, row.scorer,
                                                                                          row.kwargs)
    merged = {**packaged, **rows}
    monkeypatch.setattr(registry, "catalog_rows", lambda: merged)
    return merged


@pytest.fixture
def catalog(monkeypatch: pytest.MonkeyPatch) -> dict:
    return with_rows(monkeypatch, ROW)


def run(*args: str) -> int:
    from vlmkit.cli.main import main

    return main(["run", *args])


def frames_sent(content: list[dict]) -> list[int]:
    out = []
    for part in content:
        if part["type"] == "image_url":
            data = base64.b64decode(part["image_url"]["url"].split(",", 1)[1])
            out.append(frame_number(Image.open(io.BytesIO(data)).convert("RGB")))
    return out


def test_mlvu_mcq_through_an_api_model(catalog: dict, lmu_root: Path, tmp_path: Path):
    snapshot = write_mlvu(tmp_path / "MLVU", ITEMS, frames=FRAMES)
    work = tmp_path / "out"
    with FaultServer(chat_only(lambda request: chat_reply(REPLIES[row_of(request)]))) as server:
        code = run("--data", "MLVU_MCQ", "--data-root", str(snapshot), "--model", "served", "--api-base",
                   server.base_url, "--work-dir", str(work), "--nframe", "4")
        requests = sorted(chat_requests(server.requests), key=row_of)
    assert code == 0 and len(requests) == 5
    for request in requests:
        system, user = request.body["messages"]
        assert system == {"role": "system", "content": SYSTEM}
        kinds = [p["type"] for p in user["content"]]
        assert kinds == ["image_url"] * 4 + ["text", "text"]
        assert user["content"][-1]["text"] == "\nOnly give the best option."
    first = requests[0].body["messages"][1]["content"]
    assert first[4]["text"] == "Question: [0] Who leaves?\nOptions:\n(A) Ann\n(B) Bob\n(C) Cid"
    # VLMEvalKit's frames int(i * n / 5), i = 1..4: 50 frames -> 10 20 30 40; 137 frames -> 27 54 82 109
    assert frames_sent(first) == [10, 20, 30, 40]
    assert frames_sent(requests[2].body["messages"][1]["content"]) == [27, 54, 82, 109]
    results = json.loads((work / "served" / "MLVU_MCQ" / "results.json").read_text())
    assert results["status"] == "success" and results["dataset"]["kind"] == "video"
    assert results["dataset"]["frames"]["sampler"].startswith("vlmevalkit")
    assert results["model"]["settings"]["nframe"] == 4
    scoring = results["scoring"]
    assert scoring["scale"]["scale"] == "percent"
    assert scoring["metrics"] == pytest.approx({"M-Avg": 60.0, "plotQA": 50.0, "needle": 100.0, "count": 50.0})
    assert scoring["vlmevalkit"]["metrics"] == {"M-Avg": 60.0, "plotQA": 50.0, "needle": 100.0, "count": 50.0}
    assert scoring["counts"]["unread"] == 1
    records = [json.loads(line) for line in (work / "served" / "MLVU_MCQ" / "predictions.jsonl").open()]
    assert [r["hit"] for r in records] == [True, False, True, False, True]  # rows: [0] [1] [4] [2] [3]
