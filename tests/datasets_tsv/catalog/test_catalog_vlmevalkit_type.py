"""The catalog's `vlmevalkit_type` and `vlmevalkit_prompt` columns: filled for every row, well-formed, equal to what
VLMEvalKit's code says (the TYPE its reference notes name, the TYPE of the base classes its rows are served by), and
carried by a built dataset; a malformed value names its line and field."""

from __future__ import annotations

import csv
import re
from pathlib import Path

import pytest

from datasets_tsv.catalog.entries import CatalogError, catalog_rows, parse_rows
from datasets_tsv.catalog.registry import build_dataset
from tests.support.tsvs import b64, image_bytes, write_tsv

REFERENCE = Path(__file__).resolve().parents[4] / "shared" / "reference" / "vlmevalkit_catalog.tsv"
HEADER = ("name\tkind\tstatus\tscorer\tjudge\trows\tclass\tkwargs\turl\tmd5\tdescription\tnotes\tvlmevalkit_type\t"
          "vlmevalkit_prompt\n")
MCQ = "datasets_tsv.kinds.mcq:ImageMCQDataset"

# TYPE attributes of VLMEvalKit's base classes (vlmeval/dataset/image_*.py at e8e78f05, read by hand)
BASE_CLASS_TYPES = {"ImageMCQDataset": "MCQ", "ImageYORNDataset": "Y/N", "ImageVQADataset": "VQA",
                    "ImageCaptionDataset": "Caption", "ImageShortQADataset": "Short", "MMMUProDataset": "MCQ_MMMU_Pro",
                    "MMERealWorld": "MMERealWorld", "OlympiadBench": "VQA_ex_prompt"}  # fmt: skip
# names whose rows VLMEvalKit serves under another name, or never: the TYPE given is that of the class serving them
NOT_VLMEVALKIT_NAMES = {
    **{f"GMAI_mm_bench_TEST_part_{k}": "MCQ" for k in range(1, 12)},  # run only as GMAI-MMBench_TEST (MCQ)
    "vlmkit_demo_mcq": "MCQ", "vlmkit_demo_yorn": "Y/N", "vlmkit_demo_vqa": "VQA",  # vlmkit's own: their kind's
}  # fmt: skip


def test_every_row_has_a_type_and_a_prompt_owner() -> None:
    for row in catalog_rows().values():
        assert row.vlmevalkit_type and re.fullmatch(r"[A-Za-z][\w/-]*(\+[A-Za-z][\w/-]*)*", row.vlmevalkit_type), row
        assert row.vlmevalkit_prompt in ("wrapper", "dataset"), row.name
    forced = {row.name for row in catalog_rows().values() if row.vlmevalkit_prompt == "dataset"}
    # force_use_dataset_prompt = True: MMESCIDataset (mmesci.py), BabyVision, PerceptionBench, SUPERChemDataset,
    # WildprobeDataset (babyvision.py, perceptionbench.py, superchem.py, wildprobe.py; listed, not yet scorable)
    assert forced == {"MMESCI_VisionOnly", "MMESCI_ZH", "MMESCI_EN", "MMESCI_FR", "MMESCI_ES", "MMESCI_JA",
                      "BabyVision", "PerceptionBench", "SUPERChem", "SUPERChem_text", "wildprobe_multiimg_reasoning"}
    for name, vtype in NOT_VLMEVALKIT_NAMES.items():
        assert catalog_rows()[name].vlmevalkit_type == vtype


def test_types_agree_with_vlmevalkits_code_where_the_reference_says() -> None:
    if not REFERENCE.is_file():
        pytest.skip("shared/reference/vlmevalkit_catalog.tsv is not beside this checkout")
    rows = catalog_rows()
    named = by_class = 0
    with REFERENCE.open(encoding="utf-8") as f:
        for ref in csv.DictReader(f, delimiter="\t"):
            row = rows[ref["name"]]
            for stated in re.findall(r"TYPE ([A-Za-z_/-]+)", ref["notes"]):  # "TYPE MCQ_MMMU_Pro", ...
                assert row.vlmevalkit_type == stated, ref["name"]
                named += 1
            base = ref["class"].split(" ")[0]
            if base in BASE_CLASS_TYPES and ref["name"] not in NOT_VLMEVALKIT_NAMES:
                assert row.vlmevalkit_type == BASE_CLASS_TYPES[base], ref["name"]
                by_class += 1
    assert named >= 40 and by_class >= 100


def test_video_benchmarks_are_typed_as_vlmevalkit_types_them() -> None:
    rows = catalog_rows()
    assert rows["Video-MME_8frame_subs"].vlmevalkit_type == "Video-MCQ"  # VideoMME, asked as 'Video-MME'
    assert rows["TempCompass"].vlmevalkit_type == "Video-MCQ+Video-VQA+Video-Y/N"  # asked per sub-benchmark
    assert rows["VSI-Bench"].vlmevalkit_type == "MCQ"  # the EASI video classes say MCQ
    assert all(row.vlmevalkit_type.startswith("Video") or row.vlmevalkit_type in ("MCQ", "VQA", "DREAM-1K",
                                                                                    "MVU-Eval", "VideoMMMU")
               for row in rows.values() if row.kind == "video")


def test_a_built_dataset_carries_the_rows_type(lmu_root: Path) -> None:
    write_tsv(lmu_root / "MMMU_Pro_10c.tsv", [{"index": 1, "image": b64(image_bytes()), "question": "Q?", "A": "x",
                                               "B": "y", "answer": "A"}])
    ds = build_dataset("MMMU_Pro_10c", root=lmu_root, progress=False, keep_local_tsv=True)
    assert (ds.vlmevalkit_type, ds.vlmevalkit_prompt) == ("MCQ_MMMU_Pro", "wrapper")


def test_columns_are_optional_and_checked() -> None:
    old = "name\tkind\tstatus\tscorer\tjudge\trows\tclass\tkwargs\turl\tmd5\tdescription\tnotes\n"
    (row,) = parse_rows(f"{old}X\tmcq\tok\tmcq\tnone\t\t{MCQ}\t\t\t\td\t\n", "cat.tsv")
    assert (row.vlmevalkit_type, row.vlmevalkit_prompt) == (None, "wrapper")  # the kind then stands for it
    (row,) = parse_rows(f"{HEADER}X\tmcq\tok\tmcq\tnone\t\t{MCQ}\t\t\t\td\t\tVideo-MCQ+Video-Y/N\tdataset\n")
    assert (row.vlmevalkit_type, row.vlmevalkit_prompt) == ("Video-MCQ+Video-Y/N", "dataset")
    with pytest.raises(CatalogError, match=r"cat.tsv: line 2, field vlmevalkit_type: 'M C Q' is not a VLMEvalKit"):
        parse_rows(f"{HEADER}X\tmcq\tok\tmcq\tnone\t\t{MCQ}\t\t\t\td\t\tM C Q\twrapper\n", "cat.tsv")
    with pytest.raises(CatalogError, match=r"line 2, field vlmevalkit_prompt: 'model'; choose one of wrapper, data"):
        parse_rows(f"{HEADER}X\tmcq\tok\tmcq\tnone\t\t{MCQ}\t\t\t\td\t\tMCQ\tmodel\n", "cat.tsv")
