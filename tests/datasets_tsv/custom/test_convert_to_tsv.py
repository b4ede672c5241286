"""tools/convert_to_tsv.py: custom formats (and a folder of images + a jsonl) -> a benchmark TSV that
datasets_tsv.catalog.registry.build_dataset reads, with images that decode to the original bytes."""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path

import pandas as pd
import pytest
from PIL import Image

from datasets_tsv.catalog.registry import build_dataset

from tests.datasets_tsv.custom.conftest import FIXTURES, make_image, write

TOOL = Path(__file__).resolve().parents[3] / "tools" / "convert_to_tsv.py"


@pytest.fixture(scope="module")
def tool():
    spec = importlib.util.spec_from_file_location("convert_to_tsv", TOOL)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_text_mcq_round_trip(tool, lmu_root, capsys):
    out = lmu_root / "ais_mcq.tsv"
    assert tool.main([str(FIXTURES / "aisbench" / "test_mcq.csv"), str(out)]) == 0
    assert "wrote 4 row(s), 0 with images, kind mcq" in capsys.readouterr().out
    table = pd.read_csv(out, sep="\t", dtype=str)
    assert list(table.columns[:7]) == ["index", "image", "question", "A", "B", "C", "answer"]
    assert table["image"].isna().all()
    ds = build_dataset(str(out), root=lmu_root, progress=False)
    assert ds.kind == "mcq" and len(ds) == 4
    assert ds.build_prompt(0) == [{"type": "text", "value": "Question: 127+545+588+620+556+199=\nOptions:\nA. 2632\nB. 2635\nC. 2645\nPlease select the correct answer from the options above. \n"}]


def test_image_folder_with_jsonl_round_trip(tool, lmu_root, tmp_path):
    folder = tmp_path / "shots"
    red = make_image(folder / "red.jpg", "red")
    blue = make_image(folder / "pics" / "blue.png", "blue", size=(20, 10))
    rows = [
        {"id": 1, "image": "red.jpg", "question": "What colour?", "A": "red", "B": "blue", "answer": "red", "category": "colour"},
        {"id": 2, "image": "pics/blue.png", "question": "And this one?", "A": "red", "B": "blue", "answer": "B", "category": "colour"},
        {"id": 3, "image": "red.jpg", "question": "Again?", "A": "red", "B": "blue", "answer": "A", "category": "repeat"},
        {"id": 4, "image": ["red.jpg", "pics/blue.png"], "question": "Which is first?", "A": "red", "B": "blue", "answer": "A", "category": "pair"},
    ]
    write(folder / "rows.jsonl", "".join(json.dumps(r) + "\n" for r in rows))
    out = lmu_root / "shots.tsv"
    assert tool.main([str(folder), str(out)]) == 0
    table = pd.read_csv(out, sep="\t", dtype=str)
    assert table["answer"].tolist() == ["A", "B", "A", "A"]  # the option text "red" became its letter
    assert table.loc[2, "image"] == "1"  # a repeated image is referenced by its first row's index
    ds = build_dataset(str(out), root=lmu_root, progress=False)
    assert ds.kind == "mcq" and ds.data["index"].tolist() == [1, 2, 3, 4]
    first, fourth = ds.build_prompt(0), ds.build_prompt(3)
    assert first[0]["type"] == "image" and Path(first[0]["value"]).read_bytes() == red.read_bytes()
    assert Path(ds.build_prompt(1)[0]["value"]).read_bytes() == blue.read_bytes()
    assert ds.image_paths(2) == ds.image_paths(0)
    assert [p["type"] for p in fourth] == ["image", "image", "text"]
    with Image.open(fourth[1]["value"]) as img:
        assert img.size == (20, 10)
    assert "category" in ds.data.columns and fourth[-1]["value"].startswith("Question: Which is first?\n")


def test_mm_custom_image_scene_and_qa(tool, lmu_root, seed_mm, tmp_path):
    out = lmu_root / "scene3.tsv"
    assert tool.main([str(seed_mm / "scene3_multi_image.jsonl"), str(out)]) == 0
    ds = build_dataset(str(out), root=lmu_root, progress=False)
    assert ds.kind == "vqa" and [len(ds.image_paths(i)) for i in range(2)] == [2, 3]
    qa = lmu_root / "qa.tsv"
    assert tool.main([str(FIXTURES / "aisbench" / "test_qa.jsonl"), str(qa)]) == 0
    assert build_dataset(str(qa), root=lmu_root, progress=False).data["answer"].astype(str).tolist()[0] == "3448"


def test_rows_a_tsv_cannot_hold(tool, lmu_root, seed_mm, tmp_path, capsys):
    assert tool.main([str(seed_mm / "scene2_mixed.jsonl"), str(lmu_root / "x.tsv")]) == 2
    assert "row index 1, field type: video rows cannot go into a benchmark TSV" in capsys.readouterr().err
    assert tool.main([str(FIXTURES / "ark" / "single_turn.jsonl"), str(lmu_root / "y.tsv")]) == 2
    assert "row index 0, field messages: a system prompt or several turns cannot go into a benchmark TSV" in capsys.readouterr().err
    write(tmp_path / "broken.jpg", "not an image")
    write(tmp_path / "b.jsonl", '{"image": "broken.jpg", "question": "q"}\n')
    assert tool.main([str(tmp_path / "b.jsonl"), str(lmu_root / "z.tsv")]) == 2
    assert "broken.jpg is not a readable image" in capsys.readouterr().err
    assert not (lmu_root / "x.tsv").exists() and not (lmu_root / "z.tsv").exists()
