"""AMBER and VSR-zeroshot by their catalog rows, each on a small TSV of its benchmark's shape: VLMEvalKit's prompt
text and a score worked out by hand (VLMEvalKit's AMBER_rating and VSR_rating, vlmeval/dataset/utils/yorn.py)."""

from __future__ import annotations

import pytest

from datasets_tsv.catalog import entries as catalog
from datasets_tsv.catalog.entries import parse_rows
from datasets_tsv.catalog.registry import build_row, scorer_id
from vlmkit.judging import FunctionJudge, JudgeRequest
from vlmkit.scoring.common.choice_judge import yorn_judge_prompt
from vlmkit.scoring.scales import FRACTION, PERCENT

from tests.support.tsvs import b64, image_bytes, write_tsv

RED, BLUE = b64(image_bytes("red")), b64(image_bytes("blue"))

# The rows proposed for datasets_tsv/catalog/catalog.tsv (12 tab-separated columns), as they are to be written there.
HEADER = "\t".join(catalog.COLUMNS)
AMBER_ROW = "\t".join([
    "AMBER", "yorn", "ok", "amber", "optional", "", "datasets_tsv.kinds.yorn:ImageYORNDataset",
    '{"metric": "amber", "suffix": "\\nPlease answer yes or no."}',
    "https://huggingface.co/datasets/yifanzhang114/AMBER_base64/resolve/main/AMBER.tsv",
    "970d94c0410916166e0a76ba75da7934",
    (
        "AMBER: hallucination, yes/no part (prompt adds 'Please answer yes or no.'); accuracy per "
        "Attribute/Existence/Relation and Avg ACC"
    ),
    "",
])  # fmt: skip
VSR_ROW = "\t".join([
    "VSR-zeroshot", "yorn", "ok", "vsr", "optional", "", "datasets_tsv.kinds.yorn:ImageYORNDataset",
    '{"metric": "vsr"}',
    "https://huggingface.co/datasets/ignoreandfly/vsr_zeroshot_tsv/resolve/main/vsr_zeroshot_dataset_yn_strict.tsv",
    "5ff5e49908ac1cfad35c60b92b001aeb",
    "VSR zero-shot: visual spatial reasoning, yes/no; precision/recall/acc and F1",
    "",
])  # fmt: skip

# VLMEvalKit's ImageYORNDataset.build_prompt appends this to AMBER's text part (and to no other benchmark's).
AMBER_SUFFIX = "\nPlease answer yes or no."


@pytest.fixture
def proposed() -> dict[str, catalog.CatalogRow]:
    """The proposed rows parsed as the catalog parses them."""
    return {row.name: row for row in parse_rows(f"{HEADER}\n{AMBER_ROW}\n{VSR_ROW}\n", "proposed_rows.tsv")}


def _build(row: catalog.CatalogRow, root, rows: list[dict]):
    write_tsv(root / f"{row.name}.tsv", rows)
    return build_row(row, root=root, progress=False, keep_local_tsv=True)


# AMBER's TSV: index, image, question, answer (lower-case yes/no), category (AMBER's task names), image_path.
AMBER_TABLE = [
    # (index, category, answer, prediction, hit)
    (1, "discriminative-attribute-state", "yes", "Yes", True),
    (2, "discriminative-attribute-state", "no", "No, it is not.", True),
    (3, "discriminative-attribute-number", "yes", "no", False),
    (4, "discriminative-attribute-action", "no", "NO.", True),
    (5, "discriminative-hallucination", "yes", "yes", True),
    (6, "discriminative-hallucination", "no", "Yes", False),
    (7, "discriminative-hallucination", "no", "It is hard to say.", False),  # Unknown: the judge's row
    (8, "discriminative-relation", "yes", "Yes", True),
    (9, "relation", "no", None, False),  # failed inference
]


def _amber_tsv() -> list[dict]:
    return [
        {"index": i, "image": RED if i % 2 else BLUE, "question": f"Is there a cat in this image? ({cat})",
         "answer": ans, "category": cat, "image_path": f"AMBER_{i}.jpg"}
        for i, cat, ans, _, _ in AMBER_TABLE
    ]  # fmt: skip


def test_amber_prompt_is_the_question_and_vlmevalkit_suffix(lmu_root, proposed) -> None:
    ds = _build(proposed["AMBER"], lmu_root, _amber_tsv())
    parts = ds.build_prompt(0)
    assert parts[0]["type"] == "image" and len(parts) == 2
    question = "Is there a cat in this image? (discriminative-attribute-state)"
    assert parts[1] == {"type": "text", "value": question + "\nPlease answer yes or no."}
    assert scorer_id(ds) == "amber" == proposed["AMBER"].scorer
    assert ds.scorer_params() == {"scorer": "yorn", "metric": "amber", "suffix": AMBER_SUFFIX}


def test_amber_scores_as_amber_rating(lmu_root, proposed) -> None:
    ds = _build(proposed["AMBER"], lmu_root, _amber_tsv())
    res = ds.evaluate(ds.data.assign(prediction=[p for _, _, _, p, _ in AMBER_TABLE]))
    # Attribute (state, number, action): rows 1, 2, 4 of 1-4 right -> 3/4 = 75
    # Existence (hallucination): row 5 of 5-7 right -> 1/3 = 33.33
    # Relation (discriminative-relation + relation): row 8 of 8-9 right -> 1/2 = 50
    # Avg ACC = mean of the three = (75 + 33.33 + 50) / 3 = 52.78 (the plain row accuracy, 5/9 = 55.56, is not it)
    assert res.scorer == "yorn_amber" and res.primary == "Avg ACC"
    assert res.metrics["Attribute"] == pytest.approx(75.0)
    assert res.metrics["Existence"] == pytest.approx(100 / 3)
    assert res.metrics["Relation"] == pytest.approx(50.0)
    assert res.metrics["Avg ACC"] == pytest.approx((75 + 100 / 3 + 50) / 3)
    assert list(res.table.columns) == ["Attribute", "Existence", "Relation", "Avg ACC"]
    assert res.per_sample["hit"].tolist() == [h for *_, h in AMBER_TABLE]
    assert res.scale_of("Avg ACC").kind == PERCENT
    # lower-case answers: VLMEvalKit compares AMBER case-insensitively too, so no note about them
    assert not any("spelled other than" in n for n in res.notes)


def test_amber_with_a_judge_reads_the_unknown_row(lmu_root, proposed) -> None:
    ds = _build(proposed["AMBER"], lmu_root, _amber_tsv())
    judge = FunctionJudge(lambda request: "No", name="always-no")
    res = ds.evaluate(ds.data.assign(prediction=[p for _, _, _, p, _ in AMBER_TABLE]), judge=judge)
    # row 7 (Unknown by rule) is judged No (its answer): Existence 2/3; failed inference (row 9) is never asked
    assert [r.row for r in judge.asked] == ["7"]
    question = "Is there a cat in this image? (discriminative-hallucination)"
    assert judge.asked[0].prompt == yorn_judge_prompt(question, "It is hard to say.")
    assert res.metrics["Existence"] == pytest.approx(200 / 3)
    assert res.metrics["Avg ACC"] == pytest.approx((75 + 200 / 3 + 50) / 3)
    assert res.counts["by_judge"] == 1


# VSR-zeroshot's TSV: index, image, question, answer (Yes/No).
VSR_TABLE = [
    # (answer, prediction): Yes is the positive class, Unknown and failed inference count as No
    ("Yes", "Yes"),  # TP
    ("Yes", "Yes, the cat is to the left of the dog."),  # TP
    ("Yes", "No"),  # FN
    ("Yes", "I cannot tell from this picture."),  # Unknown -> FN
    ("No", "No"),  # TN
    ("No", "Yes"),  # FP
    ("No", "no"),  # TN
    ("No", None),  # failed inference: TN for precision/recall, a miss for acc
    ("No", "No."),  # TN
]


def test_vsr_prompt_and_scales(lmu_root, proposed) -> None:
    rows = [{"index": i, "image": RED, "question": "The cat is left of the dog.", "answer": a}
            for i, (a, _) in enumerate(VSR_TABLE)]
    ds = _build(proposed["VSR-zeroshot"], lmu_root, rows)
    assert ds.build_prompt(0)[1] == {"type": "text", "value": "The cat is left of the dog."}  # the question alone
    assert scorer_id(ds) == "vsr" == proposed["VSR-zeroshot"].scorer
    res = ds.evaluate(ds.data.assign(prediction=[p for _, p in VSR_TABLE]))
    # TP 2, FP 1, FN 2: precision 2/3 = 66.67, recall 2/4 = 50, F1 = 2PR/(P+R) = (2/3)/(7/6) = 4/7 = 0.5714 (a
    # fraction, as VLMEvalKit reports it); acc = rows 0, 1, 4, 6, 8 right = 5/9 = 55.56
    assert res.scorer == "yorn_vsr" and res.primary == "acc"
    assert res.metrics == pytest.approx({"precision": 200 / 3, "recall": 50.0, "acc": 500 / 9, "f1_score": 4 / 7})
    assert res.scale_of("f1_score").kind == FRACTION
    assert {res.scale_of(m).kind for m in ("precision", "recall", "acc")} == {PERCENT}
    assert any("f1_score is a fraction" in n for n in res.notes)
    assert list(res.table.columns) == ["precision", "recall", "acc", "f1_score"]


def test_vsr_with_a_judge(lmu_root, proposed) -> None:
    rows = [{"index": i, "image": RED, "question": f"Q{i}", "answer": a} for i, (a, _) in enumerate(VSR_TABLE)]
    ds = _build(proposed["VSR-zeroshot"], lmu_root, rows)

    def reply(request: JudgeRequest) -> str:
        return "Yes"

    judge = FunctionJudge(reply, name="always-yes")
    res = ds.evaluate(ds.data.assign(prediction=[p for _, p in VSR_TABLE]), judge=judge)
    # row 3 judged Yes: TP 3, FP 1, FN 1 -> precision 3/4, recall 3/4, F1 0.75; acc 6/9
    assert [r.row for r in judge.asked] == ["3"]
    assert res.metrics == pytest.approx({"precision": 75.0, "recall": 75.0, "acc": 200 / 3, "f1_score": 0.75})


@pytest.mark.parametrize("name", ["AMBER", "VSR-zeroshot"])
def test_the_catalog_row_is_the_proposed_one(name, proposed) -> None:
    """Once the catalog carries the rows, they are these (until then the catalog lists them as todo)."""
    row = catalog.catalog_rows().get(name)
    if row is None or row.status != "ok":
        pytest.skip(f"datasets_tsv/catalog/catalog.tsv does not score {name} yet")
    assert row == proposed[name]
