"""The catalog as data: every row well-formed, every class importable and built with the row's options, every
scorer as the row says, the refusals of what vlmkit cannot score, and the errors a malformed row gets."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from datasets_tsv.kinds.base import TSVDataset
from datasets_tsv.catalog.entries import KINDS, CatalogError, catalog_rows, parse_rows
from datasets_tsv.catalog.registry import NotScorableError, build_dataset, build_row, scorer_id
from vlmkit.scoring.ids import catalog_kinds, module_scorer
from tests.support.video_snapshots import minimal_snapshot
from vlmkit.core.errors import DataError

from tests.support.tsvs import b64, image_bytes, write_tsv

# VLMEvalKit's catalog, in the shared/ folder that sits beside the checkout (and beside CI's clone), where present
REFERENCE = Path(__file__).resolve().parents[4] / "shared" / "reference" / "vlmevalkit_catalog.tsv"
JPEG = b64(image_bytes())
HEADER = "name\tkind\tstatus\tscorer\tjudge\trows\tclass\tkwargs\turl\tmd5\tdescription\tnotes\n"
MCQ = "datasets_tsv.kinds.mcq:ImageMCQDataset"


def any_shape_rows() -> list[dict]:
    """Rows with every column some catalog class asks for (question, options, prompt, groups, answers, ...)."""
    return [
        {"index": i, "image": JPEG, "question": f"Q{i}? <image 1>", "A": "x", "B": "y", "answer": "A",
         "answers": "['x', 'x', 'y']", "prompt": f"P{i}", "source": "COCO", "cycle_category": "c1",
         "query_cot": f"C{i}", "category": "OCR", "l2-category": "VS", "options": "['x', 'y']",
         "candidates": "['A. x', 'B. y']", "input_prompt": f"<image>P{i}?", "question_raw": f"<image>Q{i}?",
         "multi-choice options": "(A) x\n(B) y", "type": "yes_no"}
        for i in range(2)
    ]  # fmt: skip


def chartqapro_rows() -> list[dict]:
    """ChartQAPro's cells are Python lists (question, answer, Year) and a question type."""
    return [{**row, "question": f"['Q{row['index']}?']", "answer": "['x']", "question_type": "Factoid",
             "Year": "['NO']"} for row in any_shape_rows()]  # fmt: skip


def dynamath_rows() -> list[dict]:
    return [{**row, "answer_type": "float"} for row in any_shape_rows()]


def m4bench_rows() -> list[dict]:
    """M4Bench's two images in their own columns, with their addresses, and the query."""
    return [{"index": i, "image1": JPEG, "image2": JPEG, "image1_path": f"https://x.org/{i}_1.jpg",
             "image2_path": f"https://x.org/{i}_2.jpg", "query": f"Q{i}?\n(A) x\n(B) y", "response": "A"}
            for i in range(2)]  # fmt: skip


def spatial457_rows() -> list[dict]:
    return [{**row, "category": "L1_single"} for row in any_shape_rows()]


def mmoral_rows() -> list[dict]:
    return [{**row, "option1": "x", "option2": "y", "option3": "z", "option4": "w", "category": "Teeth"}
            for row in any_shape_rows()]  # fmt: skip


def vl_rewardbench_rows() -> list[dict]:
    """VL-RewardBench's two responses to compare, in one list cell."""
    return [{**row, "response": "['x', 'yy']", "answer": "[0, 1]"} for row in any_shape_rows()]


def spbench_rows() -> list[dict]:
    """SPBench's question type chooses its post-prompt."""
    return [{**row, "question_type": "object_counting"} for row in any_shape_rows()]


def sparbench_rows() -> list[dict]:
    """SPAR-Bench's task chooses its prompt."""
    return [{**row, "task": "depth_prediction_oc"} for row in any_shape_rows()]


def perceptionbench_rows() -> list[dict]:
    """PerceptionBench's problems place their images with <|image_N|> placeholders."""
    return [{**row, "question": f"Look at <|image_1|> and answer Q{row['index']}."} for row in any_shape_rows()]


SHAPED_ROWS = {  # class -> its rows
    "datasets_tsv.benchmarks.perceptionbench:PerceptionBenchDataset": perceptionbench_rows,
    "datasets_tsv.benchmarks.spbench:SPBenchDataset": spbench_rows,
    "datasets_tsv.benchmarks.sparbench:SparBenchDataset": sparbench_rows,
    "datasets_tsv.benchmarks.vl_rewardbench:VLRewardBenchDataset": vl_rewardbench_rows,
    "datasets_tsv.benchmarks.mmoral_opg:MMOralOPGClosedDataset": mmoral_rows,
    "datasets_tsv.benchmarks.spatial457:Spatial457Dataset": spatial457_rows,
    "datasets_tsv.benchmarks.m4bench:M4BenchDataset": m4bench_rows,
    "datasets_tsv.benchmarks.chartqapro:ChartQAProDataset": chartqapro_rows,
    "datasets_tsv.benchmarks.dynamath:DynaMathDataset": dynamath_rows,
}


def test_catalog_rows_are_well_formed():
    rows = catalog_rows()
    assert rows is catalog_rows()  # read once
    assert len(rows) == len(set(rows))
    for row in rows.values():
        assert row.kind in KINDS and row.description, row.name
        if row.url:
            assert re.fullmatch(r"https?://[^\s]+\.tsv(\?download=true)?", row.url), row.name
        if row.md5:
            assert row.url and re.fullmatch(r"[0-9a-f]{32}", row.md5), row.name
        if row.status == "ok":
            assert (row.scorer in catalog_kinds() or module_scorer(row.scorer)) and row.cls, row.name
            assert row.judge != "required", row.name
            assert row.url or "bundled" in row.kwargs or row.notes, row.name  # no URL: the notes say where from
        elif row.status == "judge":  # scored with --judge; refused in one line without one
            assert row.scorable and row.cls and row.judge == "required", row.name
            assert row.refusal() and "\n" not in row.refusal() and row.refusal(judge=True) is None, row.name
        else:
            assert not row.scorable and row.refusal() and "\n" not in row.refusal(), row.name
            assert row.refusal(judge=True) == row.refusal(), row.name  # a judge does not help: no scorer yet


def test_an_ok_row_without_a_download_says_in_one_line_where_its_tsv_comes_from(tmp_path):
    rows = [r for r in catalog_rows().values() if r.status == "ok" and not r.url and "bundled" not in r.kwargs]
    assert rows  # MME-RealWorld, the MedQ rows, Spatial-DISE: VLMEvalKit builds or fetches them otherwise
    for row in rows:
        with pytest.raises(DataError) as caught:
            build_row(row, root=tmp_path / "empty", progress=False).prepare_images()
        assert "\n" not in str(caught.value) and row.name in str(caught.value), row.name


def test_at_least_150_image_benchmarks_by_vlmevalkit_names():
    rows = catalog_rows().values()
    image = [r for r in rows if r.kind != "video" and not r.name.startswith("vlmkit_demo")]
    assert len(image) >= 150
    assert sum(r.status == "ok" for r in image) >= 100
    if REFERENCE.is_file():  # every benchmark VLMEvalKit downloads is listed under its name
        names = {line.split("\t")[0] for line in REFERENCE.read_text(encoding="utf-8").splitlines()[1:]}
        assert names <= set(catalog_rows())


def test_every_class_imports_and_takes_its_options(tmp_path):
    """Each row with a class is built from a small TSV under its name (the catalog's MD5 is of the real file, so
    the local one is accepted with keep_local_tsv) and is scored as the row says."""
    root = tmp_path / "LMUData"
    built = 0
    for row in catalog_rows().values():
        if not row.cls:
            continue
        folder = minimal_snapshot(row.cls, tmp_path / "snapshots" / row.name)
        if folder is not None:  # a video benchmark, built from a snapshot folder
            ds = build_row(row, root=root, progress=False, inference_only=True, data_root=folder)
            assert (ds.name, ds.kind, scorer_id(ds)) == (row.name, row.kind, row.scorer)
            assert set(row.notes) <= set(ds.info()["notes"])
            built += 1
            continue
        if "bundled" not in row.kwargs:
            write_tsv(root / f"{row.name}.tsv", SHAPED_ROWS.get(row.cls, any_shape_rows)())
        ds = build_row(row, root=root, progress=False, keep_local_tsv=True, inference_only=True)
        assert isinstance(ds, TSVDataset) and ds.name == row.name
        assert ds.kind == row.kind, row.name
        if row.status == "ok":
            assert scorer_id(ds) == row.scorer, row.name
        elif row.status == "judge":
            with pytest.raises(DataError, match=f"{row.name} is scored by an LLM judge .*--judge MODEL"):
                ds.evaluate(ds.data.assign(prediction="x"))
        else:
            with pytest.raises(DataError, match=f"{row.name} is scored by an LLM judge in VLMEvalKit and vlmkit has no "
                                                "scorer for it yet"):
                ds.evaluate(ds.data.assign(prediction="x"))
        prompt = ds.build_prompt(0)
        last = prompt[-1]["content"][-1] if "role" in prompt[-1] else prompt[-1]  # a conversation ends in its turn
        assert last["type"] == "text", row.name
        assert set(row.notes) <= set(ds.info()["notes"])
        built += 1
    assert built >= 120


def test_image_folders_are_shared_by_the_mmbench_variants():
    rows = catalog_rows()
    v10 = ["MMBench_DEV_EN", "MMBench_TEST_EN", "MMBench_DEV_CN", "MMBench_TEST_CN", "MMBench", "MMBench_CN"]
    v11 = [f"{n}_V11" for n in v10]
    assert {rows[n].kwargs["image_folder"] for n in v10} == {"MMBench"}
    assert {rows[n].kwargs["image_folder"] for n in v11} == {"MMBench_V11"}
    assert all(rows[n].scorer == "mcq-circular" for n in v10 + v11)
    assert rows["MMMU_TEST"].kwargs["image_folder"] == rows["MMMU_DEV_VAL"].kwargs["image_folder"] == "MMMU"


def test_defects_of_vlmevalkits_catalog_are_fixed_and_said():
    rows = catalog_rows()
    assert "/resolve/" in rows["MME-Reasoning"].url and "blob" in " ".join(rows["MME-Reasoning"].notes)
    assert rows["LENS-CN-QA"].md5 == rows["LENS-CN-QA"].md5.lower() != ""
    assert "never downloads" in " ".join(rows["GMAI-MMBench_VAL"].notes)
    assert rows["ERQA"].status == "todo" and "shadowed" in " ".join(rows["ERQA"].notes)


def test_a_benchmark_vlmkit_cannot_score_is_refused_in_one_line(lmu_root):
    with pytest.raises(NotScorableError) as info:
        build_dataset("OCRBench_v2", root=lmu_root)
    assert str(info.value).startswith("OCRBench_v2 is not scorable by vlmkit yet (VLMEvalKit: OCRBench v2 task")
    judged = next(r.name for r in catalog_rows().values() if r.status == "judge")
    with pytest.raises(NotScorableError, match=rf"{judged} is scored by an LLM judge .*--judge MODEL .*--mode infer"):
        build_dataset(judged, root=lmu_root)
    prompt_only = next(r.name for r in catalog_rows().values() if r.status == "prompt")
    with pytest.raises(NotScorableError, match=rf"{prompt_only} is scored in VLMEvalKit by .* --mode infer"):
        build_dataset(prompt_only, root=lmu_root, judge=True)
    with pytest.raises(NotScorableError, match=r"MMDU is not scorable by vlmkit yet"):
        build_dataset("MMDU", root=lmu_root, inference_only=True)
    assert list(lmu_root.iterdir()) == []  # nothing downloaded to say no


def test_a_judge_benchmark_runs_for_inference_only(lmu_root):
    write_tsv(lmu_root / "MathVerse_MINI_Vision_Only_cot.tsv", [
        {"index": 7, "image": JPEG, "question": "plain", "query_cot": "Think, then answer.", "answer": "3"}])
    ds = build_dataset("MathVerse_MINI_Vision_Only_cot", root=lmu_root, progress=False, keep_local_tsv=True,
                       inference_only=True)
    assert [p["type"] for p in ds.build_prompt(0)] == ["image", "text"]
    assert ds.build_prompt(0)[1]["value"] == "Think, then answer."
    write_tsv(lmu_root / "hle.tsv", [{"index": 1, "image": JPEG, "question": "Why?", "answer": "so"}])
    hle = build_dataset("hle", root=lmu_root, progress=False, keep_local_tsv=True, inference_only=True)
    assert hle.build_prompt(0)[-1]["value"] == "Why?\nPlease directly provide a short answer to the question. "
    with pytest.raises(DataError, match=r"hle is scored by an LLM judge .*--judge MODEL"):
        hle.evaluate(hle.data.assign(prediction="so"))


def test_catalog_notes_reach_results_notes(lmu_root):
    write_tsv(lmu_root / "GMAI-MMBench_VAL.tsv", any_shape_rows())
    ds = build_dataset("GMAI-MMBench_VAL", root=lmu_root, progress=False, keep_local_tsv=True)
    assert any("never downloads" in note for note in ds.info()["notes"])
    assert ds.scorer_reason == "mcq: catalog entry GMAI-MMBench_VAL (VLMEvalKit's rules for it)"


@pytest.mark.parametrize(
    ("line", "message"),
    [
        (f"X\tmcq\tok\tmcq\tnone\t\t{MCQ}\t\thttps://h/x.tsv\tABC\td\t", r"line 2, field md5: 'ABC'"),
        (f"X\tpuzzle\tok\tmcq\tnone\t\t{MCQ}\t\t\t\td\t", r"line 2, field kind: 'puzzle'"),
        (f"X\tmcq\tok\tbleu\tnone\t\t{MCQ}\t\t\t\td\t", r"line 2, field scorer: 'bleu' is not a vlmkit scorer"),
        (f"X\tmcq\tok\tanls\tnone\t\t{MCQ}\t\t\t\td\t", r"field scorer: anls scores vqa benchmarks, not mcq"),
        (f"X\tmcq\ttodo\tregex\tnone\t\t{MCQ}\t\t\t\td\t", r"field class: a todo benchmark is never built"),
        (f"X\tmcq\tok\tmcq\tnone\t\t{MCQ}\t[1]\t\t\td\t", r"field kwargs: must be a JSON object"),
        (f"X\tmcq\tok\tmcq\tnone\t\t{MCQ}\t{{\"md5\": \"a\"}}\t\t\td\t", r"field kwargs: md5 belong in their own"),
        (f"X\tmcq\tok\tmcq\tnone\tmany\t{MCQ}\t\t\t\td\t", r"field rows: 'many' is not a whole number"),
        (f"X\tmcq\tok\tmcq\tnone\t\t{MCQ}\t\tftp://h/x.tsv\t\td\t", r"field url: 'ftp://h/x.tsv'"),
        ("X\tmcq\tjudge\tGPT\toptional\t\t\t\t\t\td\t", r"field judge: status judge means"),
        ("X\tmcq\tjudge\tGPT\trequired\t\t\t\t\t\td\t", r"field class: a judge benchmark is built"),
        (f"X\tmcq\tok\tmcq\tnone\t\t{MCQ}\t\t\t\td\t\n# c\nX\tmcq\tok\tmcq\tnone\t\t{MCQ}\t\t\t\td\t",
         r"line 4, field name: X repeats line 2"),
        ("X\tmcq\tok\n", r"line 2: 3 fields, the header has 12"),
    ],
)
def test_a_malformed_row_names_its_line_and_field(line, message):
    with pytest.raises(CatalogError, match=message):
        parse_rows(HEADER + line + ("\n" if not line.endswith("\n") else ""), "cat.tsv")


def test_the_older_six_column_layout_is_still_read():
    rows = parse_rows(f"name\tclass\turl\tmd5\tkwargs\tdescription\nOld\t{MCQ}\t\t\t{{\"circular\": true}}\tolder\n")
    assert rows[0].status == "ok" and rows[0].kwargs == {"circular": True} and rows[0].description == "older"
