"""SpatialMCQDataset on small TSVs of the EASI spatial benchmarks' shapes: VLMEvalKit's prompts (written out from its
source) and its spatial_bench scores worked out by hand."""

from __future__ import annotations

from pathlib import Path

import pytest

from datasets_tsv.catalog import entries as catalog
from datasets_tsv.catalog.registry import build_row, scorer_id
from datasets_tsv.benchmarks.spatial_mcq import SpatialMCQDataset
from datasets_tsv.io.tsv_read import DatasetError
from vlmkit.scoring.benchmarks.spatial_mcq import read_option_letter

from tests.support.tsvs import b64, image_bytes, write_tsv


def build(root: Path, name: str, rows: list[dict], **kwargs) -> SpatialMCQDataset:
    write_tsv(root / f"{name}.tsv", rows)
    return SpatialMCQDataset(name, root=root, progress=False, **kwargs)


@pytest.mark.parametrize(
    ("reply", "letter", "method"),
    [
        ("B", "B", "last_lines"),
        ("(c)", "C", "last_lines"),
        ("<answer>b) the red one</answer>", "B", "answer_block"),
        ("<think>A or B</think>\nD", "B", "tag_tail"),  # VLMEvalKit: the letter before </think> wins
        ("The answer is C\nbecause A and B fail", "C", "last_lines"),
        ("C. The chair is behind the table.", "C", "last_lines"),
        ("A dog sits here.", "A", "last_lines"),  # VLMEvalKit's quirk: the article reads as option A
        ("I pick a or b, hmm, answer is d; no wait answer: b", "D", "phrase"),  # the first phrase, any case
        ("A dog sits. So B.", None, "unparsed"),
        ("I cannot tell from the picture.", None, "unparsed"),
        ("", None, "unparsed"),
    ],
)
def test_letters_read_as_vlmevalkit_can_match_option(reply, letter, method):
    assert read_option_letter(reply) == (letter, method)


SITE_ROWS = [
    ("How many chairs are there?", ["1", "2", "3", "4"], "A", "counting & existence", "A"),
    ("Is there a cup?", ["yes", "no"], "B", "counting & existence", "The best answer is: A"),
    ("Which is closer?", ["cup", "pen", "box", "lamp"], "C", "spatial relationship reasoning", "<answer>C</answer>"),
    ("Where is the cat?", ["left", "right", "middle"], "A", "spatial relationship reasoning", "I cannot tell"),
]


def site_rows() -> list[dict]:
    return [
        {"index": i, "image": b64(image_bytes(c)), "question": q, "options": str(o), "answer": a, "category": cat}
        for i, ((q, o, a, cat, _), c) in enumerate(zip(SITE_ROWS, ["red", "blue", "green", "white"]))
    ]


def test_site_prompt_is_vlmevalkits(lmu_root):
    ds = build(lmu_root, "SiteBenchImage", site_rows(), prompt="site", interleave="between", caa=True)
    msgs = ds.build_prompt(0)
    assert [p["type"] for p in msgs] == ["image", "text"]
    assert msgs[1]["value"] == (
        "Question: How many chairs are there?\nOptions:\nA: 1\nB: 2\nC: 3\nD: 4\n"
        "Give me the answer letter directly. The best answer is:"
    )


def test_site_images_go_where_the_question_marks_them(lmu_root):
    row = {
        "index": 0, "image": str([b64(image_bytes("red")), b64(image_bytes("blue"))]),
        "question": "Compare <image> and <image>. Which is bigger?", "options": "['first', 'second']", "answer": "A",
        "category": "3d information understanding",
    }  # fmt: skip
    ds = build(lmu_root, "SiteBenchImage", [row], prompt="site", interleave="between")
    msgs = ds.build_prompt(0)
    assert [p["type"] for p in msgs] == ["text", "image", "text", "image", "text"]
    assert [p["value"] for p in msgs if p["type"] == "text"] == [
        "Question: Compare", "and",
        ". Which is bigger?\nOptions:\nA: first\nB: second\nGive me the answer letter directly. The best answer is:",
    ]  # fmt: skip


def test_site_scores_accuracy_and_class_adjusted_accuracy_by_hand(lmu_root):
    ds = build(lmu_root, "SiteBenchImage", site_rows(), prompt="site", interleave="between", caa=True)
    result = ds.evaluate(ds.data.assign(prediction=[r[4] for r in SITE_ROWS]))
    m = result.metrics
    assert result.scorer == "spatial_mcq" and result.primary == "Overall"
    assert result.scale_of("Overall").kind == "percent"
    assert m["Overall"] == pytest.approx(50.0)
    # n = 4, 2, 4, 3: chance = 1/4 + 1/2 + 1/4 + 1/3 = 4/3; CAA = (2 - 4/3) / (4 - 4/3) = 1/4
    assert m["overall_caa"] == pytest.approx(25.0)
    assert m["counting & existence_accuracy"] == pytest.approx(50.0)
    assert m["counting & existence_caa"] == pytest.approx(100 * (1 - 0.75) / (2 - 0.75))  # 20
    assert m["spatial relationship reasoning_caa"] == pytest.approx(100 * 5 / 17)
    assert result.per_sample["method"].tolist() == ["last_lines", "last_lines", "answer_block", "unparsed"]
    assert result.per_sample["extracted"].tolist() == ["A", "A", "C", None]
    c = result.counts
    assert (c["total"], c["hits"], c["by_rule"], c["unread"], c["invalid_target"]) == (4, 2, 3, 1, 0)


def test_mmsi_prompt_with_and_without_hint(lmu_root):
    rows = [
        {"index": 1, "image": b64(image_bytes()), "hint": "Two views", "question": "Where is the lamp?",
         "A": "left", "B": "right", "C": "behind", "D": "front", "answer": "B", "category": "Pos-Obj-Obj"},
        {"index": 2, "image": b64(image_bytes("blue")), "question": "Where is the door?", "A": "left", "B": "right",
         "answer": "A", "category": "MSR"},
    ]  # fmt: skip
    ds = build(lmu_root, "MMSIBench_wo_circular", rows, prompt="mmsi")
    post = "Answer with the option's letter from the given choices directly. Enclose the option's letter within ``."
    assert ds.build_prompt(0)[-1]["value"] == (
        f"Hint: Two views\nWhere is the lamp?\nOptions: A: left, B: right, C: behind, D: front, \n{post}"
    )
    assert ds.build_prompt(1)[-1]["value"] == f"Where is the door?\nOptions: A: left, B: right, \n{post}"
    result = ds.evaluate(ds.data.assign(prediction=["`B`", "Answer: B"]))
    assert result.metrics == {"Overall": 50.0, "Pos-Obj-Obj_accuracy": 100.0, "MSR_accuracy": 0.0}


def spatialviz_rows() -> list[dict]:
    cells = [("MentalRotation", "2DRotation", "A"), ("MentalRotation", "3DRotation", "B"),
             ("MentalFolding", "PaperFolding", "C"), ("MentalFolding", "PaperFolding", "D")]  # fmt: skip
    return [
        {"index": i, "image": b64(image_bytes()), "question": "Which view?", "A": "one", "B": "two", "C": "three",
         "D": "four", "answer": a, "category": cat, "task": task}
        for i, (cat, task, a) in enumerate(cells)
    ]  # fmt: skip


def test_spatialviz_prompts_direct_and_cot(lmu_root):
    options = "A. one\nB. two\nC. three\nD. four\n"
    ds = build(lmu_root, "SpatialVizBench", spatialviz_rows(), prompt="spatialviz")
    assert ds.build_prompt(0)[-1]["value"] == (
        "Answer with a single option letter (A, B, C, or D), enclosed within the <answer></answer> tag.For example: "
        "<answer>A</answer>. Ensure that your output contains only the final answer, without any intermediate "
        f"reasoning or additional content.\nQuestion:Which view?\n{options}"
    )
    cot = SpatialMCQDataset("SpatialVizBench", root=lmu_root, progress=False, prompt="spatialviz_cot")
    assert cot.build_prompt(0)[-1]["value"] == (
        "You should first provide a reasoning process, then provide a single option (A, B, C or D) as the final "
        "answer. The reasoning process and the answer are enclosed within <think></think> and <answer></answer> "
        f"tags, respectively, i.e., <think>reasoning process</think>, <answer>answer</answer>.\nQuestion:Which view?\n"
        f"{options}"
    )


def test_spatialviz_scores_per_category_and_task_by_hand(lmu_root):
    ds = build(lmu_root, "SpatialVizBench", spatialviz_rows(), prompt="spatialviz", groups=["category", "task"],
               group_prefix=False)
    result = ds.evaluate(ds.data.assign(prediction=["<answer>A</answer>", "A", "c", None]))
    assert result.metrics == {
        "Overall": 50.0, "MentalRotation_accuracy": 50.0, "MentalFolding_accuracy": 50.0,
        "2DRotation_accuracy": 100.0, "3DRotation_accuracy": 0.0, "PaperFolding_accuracy": 50.0,
    }  # fmt: skip
    assert result.counts["inference_errors"] == 1
    prefixed = build(lmu_root, "SpatialVizBench2", spatialviz_rows(), prompt="spatialviz", groups=["category", "task"])
    got = prefixed.evaluate(prefixed.data.assign(prediction=["A", "B", "C", "D"])).metrics
    assert got["category.MentalRotation_accuracy"] == 100.0 and got["task.PaperFolding_accuracy"] == 100.0


OMNI_MANUAL_COT = (
    "\nYou are a spatial-reasoning assistant.\n\nTask\n-----\nYou will receive\n"
    "1. **Image** - a single RGB frame depicting a scene.\n"
    "2. **Question** - a natural-language query about spatial relationships between objects in the image.\n"
    "3. **Options** - ≥2 answer candidates, each tagged by a capital letter (A, B, C, D…).\n\n"
    "Guidelines\n----------\nPlease follow these steps to analyze the image and answer the question:\n"
    "1. First, carefully observe the image and identify all relevant objects and their spatial relationships.\n"
    "2. Next, break down the question into key components that need to be addressed.\n"
    "3. Think through the spatial reasoning step-by-step to arrive at your answer. It may be necessary to transfer "
    "perspective to better understand the scene.\n"
    "4. Finally, select the most appropriate option (A, B, C, or D) based on your analysis.\n\n"
    "Always ground your answer in the visual evidence; do not hallucinate unseen objects.\n"
    "If uncertain, pick the most plausible option—never refuse or reply “insufficient information.”\n"
)
OMNI_FORMAT = "\nEnd your answer with a separate line formatted exactly as:\n\nAnswer: X\nwhere X ∈ {A, B, C, D}.\n"


def test_omnispatial_prompts(lmu_root):
    rows = [{"index": 0, "image": b64(image_bytes()), "question": "Which way should the car turn?", "A": "left",
             "B": "right", "answer": "B", "task_type": "Spatial_Interaction", "sub_task_type": "Traffic_Analysis"}]
    write_tsv(lmu_root / "OmniSpatialBench.tsv", rows)
    direct = SpatialMCQDataset("OmniSpatialBench", root=lmu_root, progress=False, prompt="omnispatial")
    assert direct.build_prompt(0)[-1]["value"] == (
        "Which way should the car turn?\nA. left\nB. right\nAnswer directly with the option letter from the given "
        "choices. "
    )
    manual = SpatialMCQDataset("OmniSpatialBench", root=lmu_root, progress=False, prompt="omnispatial_manual_cot",
                               groups=["task_type", "sub_task_type"], group_prefix=False)
    assert manual.build_prompt(0)[-1]["value"] == (
        OMNI_MANUAL_COT + "\n" + OMNI_FORMAT + "\n\nWhich way should the car turn?\nA. left\nB. right"
    )
    result = manual.evaluate(manual.data.assign(prediction=["Reasoning...\n\nAnswer: B"]))
    assert result.metrics == {"Overall": 100.0, "Spatial_Interaction_accuracy": 100.0,
                              "Traffic_Analysis_accuracy": 100.0}


def test_viewspatial_prompt_and_answers_with_option_text(lmu_root):
    rows = [{"index": 0, "image": b64(image_bytes()), "question": "Where is the sofa from the camera?",
             "candidates": "['A. left', 'B. right']", "answer": "A. left",
             "question_type": "Camera perspective - Relative Direction"}]
    ds = build(lmu_root, "ViewSpatialBench", rows, prompt="viewspatial", groups=["question_type"])
    assert ds.build_prompt(0)[-1]["value"] == (
        "Question: Where is the sofa from the camera?\nChoices: ['A. left', 'B. right']\n"
        "Reply only to the corresponding option.\nAnswer:"
    )
    result = ds.evaluate(ds.data.assign(prediction=["A. left"]))
    assert result.metrics["Camera perspective - Relative Direction_accuracy"] == 100.0
    assert result.per_sample["target"].tolist() == ["A"]


STARE_FORMAT = (
    "Answer with the option's letter from the given choices and put the letter in one <answer> answer </answer>"
)


def test_stare_prompt_interleaves_after_each_piece(lmu_root):
    rows = [{"index": 0, "image": b64(image_bytes()), "question": "Which shape follows?\\nA. x\\nB. y", "answer": "A",
             "category": "2d_trans"}]
    ds = build(lmu_root, "StareBench", rows, prompt="stare", interleave="after", groups=[], report="stare")
    msgs = ds.build_prompt(0)
    assert [p["type"] for p in msgs] == ["text", "image", "text"]
    assert msgs[0]["value"] == "Which shape follows?\nA. x\nB. y"
    assert msgs[2]["value"] == (
        f"{STARE_FORMAT}\nPlease ensure that your output only contains the final answer (a single option letter) "
        "without any additional content (such as intermediate reasoning steps)."
    )
    cot = SpatialMCQDataset("StareBench", root=lmu_root, progress=False, prompt="stare_cot", interleave="after")
    assert cot.build_prompt(0)[2]["value"] == f"{STARE_FORMAT}\nPlease solve the problem step by step."


def test_stare_accuracy_f1_and_macro_by_hand(lmu_root):
    net = "Can the net fold into a cube? A. yes B. no"
    cells = [("2D_trans ", "Which?", "A", "A"), ("folding_nets", net, "A", "<answer>A</answer>"),
             ("folding_nets", net, "B", "A"), ("folding_nets", net, "A", "B"), ("temporal", "When?", "C", "no idea")]
    rows = [{"index": i, "image": b64(image_bytes()), "question": q, "answer": a, "category": cat}
            for i, (cat, q, a, _) in enumerate(cells)]
    ds = build(lmu_root, "StareBench", rows, prompt="stare", interleave="after", groups=[], report="stare")
    m = ds.evaluate(ds.data.assign(prediction=[c[3] for c in cells])).metrics
    assert m["Overall"] == pytest.approx(40.0)
    assert m["2d_trans_accuracy"] == 100.0 and m["temporal_accuracy"] == 0.0
    assert m["folding_nets_accuracy"] == pytest.approx(100 / 3)
    assert m["folding_nets_f1"] == pytest.approx(50.0)  # tp 1, fp 1, fn 1
    assert m["macro"] == pytest.approx(50.0)  # (2d 1.0 + folding F1 0.5 + temporal 0) / 3
    assert "3d_trans_accuracy" not in m


def test_mindcube_prompt_column_with_images_from_the_data_root(lmu_root, tmp_path):
    snapshot = tmp_path / "MindCube"
    (snapshot / "data" / "views").mkdir(parents=True)
    for k, colour in enumerate(["red", "blue"]):
        (snapshot / "data" / "views" / f"{k}.png").write_bytes(image_bytes(colour, "PNG"))
    rows = [
        {"index": 0, "image_path": "['views/0.png', 'views/1.png']", "answer": "B", "category": "rotation",
         "input_prompt": "<image><image>Based on these two views, which is true?\nA. x\nB. y\nAnswer:"},
        {"index": 1, "image_path": "['views/0.png', '../../secret.png']", "answer": "A", "category": "among",
         "input_prompt": "<image>Which?"},
    ]
    write_tsv(lmu_root / "MindCubeBench_tiny_raw_qa.tsv", rows)
    ds = SpatialMCQDataset("MindCubeBench_tiny_raw_qa", root=lmu_root, progress=False, prompt="column",
                           question_column="input_prompt", interleave="between", image_subdir="data",
                           data_root=snapshot)
    msgs = ds.build_prompt(0)
    assert [p["type"] for p in msgs] == ["image", "image", "text"]
    assert msgs[0]["value"] == str((snapshot / "data" / "views" / "0.png").resolve())
    assert msgs[2]["value"] == "Based on these two views, which is true?\nA. x\nB. y\nAnswer:"
    with pytest.raises(DatasetError, match=r"row 1 \(index 1\), field image_path: .*would leave"):
        ds.build_prompt(1)


def test_a_missing_snapshot_file_is_one_clear_error(lmu_root, tmp_path):
    rows = [{"index": 7, "image_path": "gone.png", "question_raw": "<image>Is the task done?", "answer": "A",
             "task_type": "QA_SUCCESS_DETECTION"}]
    write_tsv(lmu_root / "ERIQ.tsv", rows)
    ds = SpatialMCQDataset("ERIQ", root=lmu_root, progress=False, prompt="column", question_column="question_raw",
                           interleave="between", image_subdir="images", data_root=tmp_path)
    with pytest.raises(DatasetError, match=r"ERIQ.tsv: row 0 \(index 7\), field image_path: .*gone.png not found"):
        ds.build_prompt(0)


def test_bad_options_are_refused_in_one_line(lmu_root):
    with pytest.raises(ValueError, match="prompt 'sitebench'; choose one of"):
        build(lmu_root, "X", site_rows(), prompt="sitebench")
    with pytest.raises(ValueError, match="interleave 'inline'"):
        build(lmu_root, "X", site_rows(), interleave="inline")
    with pytest.raises(DatasetError, match="missing column `candidates`"):
        build(lmu_root, "X", site_rows(), prompt="viewspatial")


def test_an_answer_without_a_letter_is_a_miss_and_said(lmu_root):
    rows = site_rows()[:2]
    rows[1]["answer"] = "yes"
    ds = build(lmu_root, "EmbSpatialBench", rows, prompt="site", groups=["data_source"])
    result = ds.evaluate(ds.data.assign(prediction=["A", "yes"]))
    assert result.metrics == {"Overall": 50.0}  # no data_source column: no breakdown, as VLMEvalKit
    assert result.counts["invalid_target"] == 1
    assert any("no option letter can be read" in n for n in result.notes)


def test_catalog_rows_parse_and_build(lmu_root):
    rows = [r for r in catalog.catalog_rows().values() if r.cls and r.cls.startswith("datasets_tsv.benchmarks.spatial_")]
    assert len(rows) == 20
    generic = [{"index": 0, "image": b64(image_bytes()), "question": "Q?", "options": "['x', 'y']",
                "candidates": "['A. x', 'B. y']", "input_prompt": "<image>Q?", "question_raw": "<image>Q?",
                "A": "x", "B": "y", "answer": "A", "category": "c"}]  # fmt: skip
    for row in rows:
        write_tsv(lmu_root / f"{row.name}.tsv", generic)
        ds = build_row(row, root=lmu_root, progress=False, keep_local_tsv=True)
        assert isinstance(ds, SpatialMCQDataset) and scorer_id(ds) == row.scorer == "spatial_mcq"
        assert ds.build_prompt(0)[-1]["type"] == "text"
        assert ds.evaluate(ds.data.assign(prediction=["A"])).metrics["Overall"] == 100.0


def dise_snapshot(folder: Path, csv_rows: list[str]) -> Path:
    import io
    import tarfile

    (folder / "DISE-bench").mkdir(parents=True)
    (folder / "image").mkdir()
    header = "question, answer, image, option_a_image_path, category, difficulty, source, dise_category\n"
    (folder / "DISE-bench" / "DISE-benchmark.csv").write_text(header + "".join(csv_rows), encoding="utf-8")
    with tarfile.open(folder / "image" / "part-0.tar", "w") as tf:
        for k, colour in enumerate(["red", "blue", "green"]):
            data = image_bytes(colour, "PNG")
            info = tarfile.TarInfo(f"merged/{k}.png")
            info.size = len(data)
            tf.addfile(info, io.BytesIO(data))
    return folder


DISE_POST = (
    "Images are provided in order: first the merged full image, followed by the available separate "
    "question/view/option images from the original sample. Use all images together. The answer choices are labeled "
    "A, B, C, and D. Please select the correct answer and respond with only one letter: A, B, C, or D."
)


def test_spatial_dise_is_built_from_its_snapshot_and_scored_by_hand(lmu_root, tmp_path):
    from datasets_tsv.benchmarks.spatial_dise import SpatialDISEDataset

    snapshot = dise_snapshot(tmp_path / "snap", [
        " Which cube matches?, b, images/merged/0.png, merged/1.png, 3D Rotation, easy, s, Intrinsic-Dynamic\n",
        "Which net folds?, C, merged/2.png, , 2D Folding, hard, s, Intrinsic-Static\n",
        "Which view?, a, merged/2.png, merged/2.png, 2D Folding, easy, s, Extrinsic-Static\n",
    ])  # fmt: skip
    with pytest.raises(DatasetError, match=r"Spatial-DISE.tsv: not found; .*pass --data-root"):
        SpatialDISEDataset("Spatial-DISE", root=lmu_root, progress=False)
    ds = SpatialDISEDataset("Spatial-DISE", root=lmu_root, progress=False, data_root=snapshot)
    assert (lmu_root / "Spatial-DISE.tsv").is_file()
    assert ds.data["index"].tolist() == ["benchmark_0", "benchmark_1", "benchmark_2"]
    msgs = ds.build_prompt(0)
    assert [p["type"] for p in msgs] == ["image", "image", "text"]
    assert msgs[0]["value"] == str(lmu_root / "images" / "Spatial-DISE" / "merged" / "0.png")
    assert msgs[2]["value"] == f"Which cube matches?\n{DISE_POST}"
    assert len(ds.build_prompt(2)) == 2  # the same image named twice is sent once
    result = ds.evaluate(ds.data.assign(prediction=["B", "A", "The answer is A."]))
    assert result.metrics == pytest.approx({
        "Overall": 200 / 3, "3D Rotation_accuracy": 100.0, "2D Folding_accuracy": 50.0, "easy_accuracy": 100.0,
        "hard_accuracy": 0.0, "Intrinsic-Dynamic_accuracy": 100.0, "Intrinsic-Static_accuracy": 0.0,
        "Extrinsic-Static_accuracy": 100.0,
    })  # fmt: skip
    again = SpatialDISEDataset("Spatial-DISE", root=lmu_root, progress=False)  # the built TSV is used as it is
    assert len(again) == 3


def test_spatial_dise_names_an_image_no_shard_holds(lmu_root, tmp_path):
    from datasets_tsv.benchmarks.spatial_dise import SpatialDISEDataset

    snapshot = dise_snapshot(tmp_path / "snap", ["Q?, A, merged/9.png, , 2D Folding, easy, s, Intrinsic-Static\n"])
    with pytest.raises(DatasetError, match=r"DISE-benchmark.csv: row 0, field image: 'merged/9.png' is in no tar"):
        SpatialDISEDataset("Spatial-DISE_TEST", root=lmu_root, progress=False, data_root=snapshot)
