"""Catalog rows for VCR, MMMU-Pro and the MCQ benchmarks whose prompt or figures differ from the generic MCQ's, as
catalog text (catalog_mcq_rows.tsv beside this file): each is parsed by the catalog reader, built by the registry
from a small TSV of the benchmark's shape, prompts as VLMEvalKit (strings written from its code) and scores as
worked out by hand; the rows that stay `todo` are refused in one line that says why."""

from __future__ import annotations

from pathlib import Path

import pytest

from datasets_tsv.catalog.entries import CatalogRow, catalog_rows, parse_rows
from datasets_tsv.catalog.registry import NotScorableError, build_row, scorer_id

from tests.support.tsvs import b64, image_bytes, write_tsv

ROWS_FILE = Path(__file__).with_name("catalog_mcq_rows.tsv")
CLOSING = "Please select the correct answer from the options above. \n"
JPEG = b64(image_bytes())


@pytest.fixture
def rows() -> dict[str, CatalogRow]:
    parsed = parse_rows(ROWS_FILE.read_text(encoding="utf-8"), ROWS_FILE.name)
    return {row.name: row for row in parsed}


def build(row: CatalogRow, root: Path, tsv_rows: list[dict]):
    write_tsv(root / f"{row.name}.tsv", tsv_rows)
    ds = build_row(row, root=root, progress=False, keep_local_tsv=True)  # the catalog MD5 is the real file's
    assert ds.kind == row.kind and scorer_id(ds) == row.scorer, row.name
    assert set(row.notes) <= set(ds.info()["notes"])
    return ds


def mcq_row(i: int, question: str, answer: str = "A", **extra) -> dict:
    return {"index": i, "image": JPEG, "question": question, "A": "yes", "B": "no", "answer": answer, **extra}


def test_rows_parse_and_say_what_vlmkit_does(rows):
    assert len(rows) == 28  # VMCBench's two rows are scored now (tests/datasets_tsv/kinds/test_bespoke_mcq.py)
    ok = {n for n, r in rows.items() if r.status == "ok"}
    assert {f"VCR_{lang}_{level}_{size}" for lang in ("EN", "ZH") for level in ("EASY", "HARD")
            for size in ("500", "100", "ALL")} <= ok  # fmt: skip
    assert {"MMMU_Pro_10c", "MMMU_Pro_10c_COT", "MMMU_Pro_V", "MMMU_Pro_V_COT", "MMVP", "MMSci_DEV_MCQ",
            "MSEarthMCQ", "CVQA_EN", "CVQA_LOC"} <= ok  # fmt: skip
    assert {r.name for r in rows.values() if r.status == "todo"} == {
        "MicroBench", "OmniMedVQA", "SCAM", "WikiVQABench", "LEGO", "LEGO_circular", "MLLMGuard_DS",
    }  # fmt: skip
    for name in ("MMMU_Pro_10c", "MMMU_Pro_V"):  # a chain-of-thought variant shares its TSV's images
        assert rows[name].kwargs["image_folder"] == rows[f"{name}_COT"].kwargs["image_folder"] == name


def test_todo_rows_are_refused_in_one_line_that_says_why(rows, lmu_root):
    for row in rows.values():
        if row.status != "todo":
            continue
        assert row.notes, row.name  # the reason it stays todo
        with pytest.raises(NotScorableError, match=f"{row.name} is not scorable by vlmkit yet") as err:
            build_row(row, root=lmu_root, progress=False)
        assert "\n" not in str(err.value)


def test_packaged_catalog_agrees_once_merged(rows):
    """Every name is in the packaged catalog; a row the packaged catalog scores is this file's row exactly."""
    packaged = catalog_rows()
    for name, mine in rows.items():
        assert name in packaged, name
        if packaged[name].status == "ok":
            assert packaged[name] == mine, name


def test_vcr_rows(rows, lmu_root):
    question = "What is the covered texts in the image? Please restore the covered texts without outputting the " \
               "explanations."
    for name, spans, prediction, exact in [
        ("VCR_EN_EASY_100", "['New York City']", "He moved to New York in 1990.", 0.0),
        ("VCR_ZH_HARD_ALL", "['人民共和国']", "中华人民共和国成立", 1.0),
    ]:
        ds = build(rows[name], lmu_root, [{"index": 0, "image": JPEG, "question": question, "answer": spans}])
        assert ds.build_prompt(0)[1] == {"type": "text", "value": question}
        result = ds.evaluate(ds.data.assign(prediction=[prediction]))
        assert result.metrics["Exact_Match"] == exact
    assert result.metrics["Jaccard"] == 1.0
    en = build(rows["VCR_EN_EASY_100"], lmu_root, [{"index": 0, "image": JPEG, "question": "q", "answer": "['a']"}])
    assert en.scorer_params()["language"] == "en"


def test_mmmu_pro_rows(rows, lmu_root):
    two = "[" + ", ".join(f'"{b64(image_bytes(c))}"' for c in ("red", "blue")) + "]"
    standard = [{"index": 0, "image": two, "question": "Compare <image 1> and <image 2>.", "A": "same",
                 "B": "different", "answer": "B"}]  # fmt: skip
    block = ".\nOptions:\nA. same\nB. different\n"
    direct = build(rows["MMMU_Pro_10c"], lmu_root, standard)
    direct_text = block + "Answer directly with the option letter from the given choices. "
    assert direct.build_prompt(0)[-1]["value"] == direct_text
    cot = build(rows["MMMU_Pro_10c_COT"], lmu_root, standard)
    assert cot.build_prompt(0)[-1]["value"].startswith(block + "Answer the following multiple-choice question. ")
    assert cot.evaluate(cot.data.assign(prediction=["Look closely.\nAnswer: B"])).metrics["Overall"] == 1.0
    vision = [{"index": 0, "image": JPEG, "A": "same", "B": "different", "answer": "A"}]
    for name, tail in [("MMMU_Pro_V", "Answer directly with the option letter from the given choices. "),
                       ("MMMU_Pro_V_COT", "The last line of your response should be of the following format: ")]:
        ds = build(rows[name], lmu_root, vision)
        msgs = ds.build_prompt(0)
        assert [p["type"] for p in msgs] == ["image", "text"]
        assert msgs[1]["value"].startswith("Answer the following multiple-choice question in the image. " + tail)
        assert ds.evaluate(ds.data.assign(prediction=["Answer: A"])).metrics["Overall"] == 1.0


def test_mmvp_row_reports_pairs(rows, lmu_root):
    tsv = [mcq_row(i, f"Is the dog facing left? {i // 2}") for i in range(4)]
    ds = build(rows["MMVP"], lmu_root, tsv)
    assert ds.prompt_text(ds.line(0)) == "Question: Is the dog facing left? 0\nOptions:\nA. yes\nB. no\n" + CLOSING
    result = ds.evaluate(ds.data.assign(prediction=["A", "A", "A", "B"]))  # pair 0 both right, pair 1 one right
    assert result.metrics == {"Overall": 0.5, "Average": 0.75}
    assert result.primary == "Overall" and result.counts["pairs"] == 2
    bad = [mcq_row(i, f"Q{i}") for i in range(2)]
    ds = build(rows["MMVP"], lmu_root, bad)
    with pytest.raises(ValueError, match="rows 0 and 1 .* ask different questions"):
        ds.evaluate(ds.data.assign(prediction=["A", "A"]))


def test_mmsci_row_reports_settings(rows, lmu_root):
    cells = [  # (setting, subject, category, hit)
        ("Fig2Cap", "Bio", "Life", 1), ("Fig2Cap", "Chem", "Phys", 0), ("SubFig2Cap", "Bio", "Life", 1),
        ("SubCap2Fig", "Bio", "Life", 0), ("SubCap2Fig", "Chem", "Phys", 1), ("Other", "Bio", "Life", 1),
    ]  # fmt: skip
    tsv = [mcq_row(i, f"Q{i}", setting=s, subject=sub, category=cat) for i, (s, sub, cat, _) in enumerate(cells)]
    ds = build(rows["MMSci_DEV_MCQ"], lmu_root, tsv)
    result = ds.evaluate(ds.data.assign(prediction=["A" if hit else "B" for *_, hit in cells]))
    # Overall: Fig2Cap 1/2, SubFig2Cap 1, SubCap2Fig 1/2 -> Avg 2/3; Bio 1, 1, 0 -> 2/3; Chem 0, 0 (no row), 1 -> 1/3
    assert result.metrics["Overall"] == pytest.approx(2 / 3)
    assert result.metrics["Fig2Cap"] == pytest.approx(0.5) and result.metrics["SubFig2Cap"] == 1.0
    assert result.metrics["Bio"] == pytest.approx(2 / 3) and result.metrics["Chem"] == pytest.approx(1 / 3)
    assert result.metrics["CATEGORY_Phys"] == pytest.approx(1 / 3)
    assert list(result.table["split"]) == ["Fig2Cap", "SubFig2Cap", "SubCap2Fig", "Avg"]
    assert any("1 row(s) of another `setting`" in note for note in result.notes)
    no_setting = build(rows["MMSci_DEV_MCQ"], lmu_root, [mcq_row(0, "Q")])
    with pytest.raises(Exception, match="missing column `setting`"):
        no_setting.evaluate(no_setting.data.assign(prediction=["A"]))


def test_msearth_row_prompt(rows, lmu_root):
    tsv = [mcq_row(0, "Delineation of hazardous regions", hint="Aquifers"), mcq_row(1, "Which aquifer?", "B")]
    ds = build(rows["MSEarthMCQ"], lmu_root, tsv)
    lead = "You are tasked with answering a multiple-choice question about the given input image.\n\n"
    closing = ("Based on the image, select the correct option (e.g., 'A', 'B', 'C', 'D') or directly state the "
               "correct option content, Do not give any explaination.")
    assert ds.prompt_text(ds.line(0)) == (
        lead + "Hint: Aquifers\nCaption:\n Delineation of hazardous regions\nOptions:\nA. yes\nB. no\n" + closing
    )
    assert ds.prompt_text(ds.line(1)) == lead + "Caption:\n Which aquifer?\nOptions:\nA. yes\nB. no\n" + closing
    assert ds.evaluate(ds.data.assign(prediction=["A", "no"])).metrics["Overall"] == 1.0


def test_cvqa_rows_prompt(rows, lmu_root):
    closing = ("Select the best answer to the above multiple-choice question based on the image. Respond with only "
               "the letter of the correct option (A, B, C, or D).\nThe best answer is: ")
    for name in ("CVQA_EN", "CVQA_LOC"):
        ds = build(rows[name], lmu_root, [mcq_row(0, "Which dish is this?", "B", hint="not shown")])
        assert ds.prompt_text(ds.line(0)) == "Question: Which dish is this?\nOptions:\nA. yes\nB. no\n" + closing
        assert ds.evaluate(ds.data.assign(prediction=["B"])).metrics["Overall"] == 1.0
