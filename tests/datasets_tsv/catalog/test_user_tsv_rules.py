"""A TSV the catalog does not know is scored by the rules asked for (kind/metric/like arguments, or its
`<name>.scoring.json`), and every build says in one line which scorer it chose and why."""

from __future__ import annotations

import json
import logging

import pytest

from datasets_tsv.kinds.caption import DEFAULT_QUESTION, ImageCaptionDataset
from datasets_tsv.kinds.mcq import ImageMCQDataset
from datasets_tsv.kinds.vqa import ImageVQADataset
from datasets_tsv.kinds.yorn import ImageYORNDataset
from datasets_tsv.catalog.registry import NotScorableError, build_dataset
from vlmkit.core.errors import ConfigError, DataError
from vlmkit.core.registry import RegistryError

from tests.support.tsvs import b64, image_bytes, write_tsv

RED, BLUE = b64(image_bytes("red")), b64(image_bytes("blue"))


def doc_rows() -> list[dict]:
    return [
        {"index": 0, "image": RED, "question": "Total?", "answer": "['$1,250.00']"},
        {"index": 1, "image": BLUE, "question": "Name?", "answer": "['Acme Corp']"},
    ]


def mcq_rows(indices: list[int]) -> list[dict]:
    return [{"index": i, "image": RED if i < 1_000_000 else str(i % 1_000_000), "question": f"Q{i}",
             "A": "x", "B": "y", "answer": "A"} for i in indices]


def mme_rows() -> list[dict]:
    """MME's shape: two questions per picture (image_path pairs them), answers Yes/No, a category."""
    rows = []
    for i, (picture, answer) in enumerate([("a.jpg", "Yes"), ("a.jpg", "No"), ("b.jpg", "Yes"), ("b.jpg", "No")]):
        rows.append({"index": i, "image": RED if picture == "a.jpg" else BLUE, "question": f"Is it red? {i}",
                     "answer": answer, "category": "color", "image_path": picture})
    return rows


def test_metric_given_as_an_argument(lmu_root, caplog):
    write_tsv(lmu_root / "MyDocs.tsv", doc_rows())
    with caplog.at_level(logging.INFO, logger="datasets_tsv.catalog.registry"):
        ds = build_dataset("MyDocs", root=lmu_root, progress=False, metric="anls")
    assert type(ds) is ImageVQADataset and ds.metric == "anls"
    assert ds.scorer_reason == "anls: given metric=anls"
    assert "MyDocs: scorer anls: given metric=anls" in caplog.text
    assert ds.info()["scorer_reason"] == ds.scorer_reason
    # ANLS: `1,250.00` vs `$1,250.00`: distance 1 over 9 characters -> 8/9; `acme corp.` vs `acme corp`: 9/10
    result = ds.evaluate(ds.data.assign(prediction=["1,250.00", "acme corp."]))
    assert result.metrics["Overall"] == pytest.approx(100 * (8 / 9 + 9 / 10) / 2)


def test_kind_alone_takes_the_kinds_default_and_says_so(lmu_root):
    write_tsv(lmu_root / "MyDocs.tsv", doc_rows())
    ds = build_dataset("MyDocs", root=lmu_root, progress=False, kind="vqa")
    assert ds.metric == "vqa_score" and ds.short_answer
    assert ds.scorer_reason == "vqa_score: given kind=vqa; vqa_score is the vqa default"


def test_ocrbench_metric_asks_the_question_alone(lmu_root):
    write_tsv(lmu_root / "MyOCR.tsv", [{**r, "category": "Doc-oriented VQA"} for r in doc_rows()])
    ds = build_dataset("MyOCR", root=lmu_root, progress=False, metric="ocrbench")
    assert ds.metric == "ocrbench" and ds.build_prompt(0)[-1]["value"] == "Total?"


def test_mcq_kind_detects_circular_groups_and_a_metric_can_overrule(lmu_root):
    write_tsv(lmu_root / "Rot.tsv", mcq_rows([0, 1, 1_000_000, 1_000_001]))
    ds = build_dataset("Rot", root=lmu_root, progress=False, kind="mcq")
    assert ds.circular and ds.scorer_reason.startswith("mcq-circular: given kind=mcq; indices form circular groups")
    plain = build_dataset("Rot", root=lmu_root, progress=False, kind="mcq", metric="acc")
    assert not plain.circular and plain.scorer_reason == "mcq: given kind=mcq, metric=acc"
    assert build_dataset("Rot", root=lmu_root, progress=False, metric="circular").circular


def test_without_rules_the_kind_is_detected_and_the_reason_says_so(lmu_root):
    write_tsv(lmu_root / "Guess.tsv", doc_rows())
    ds = build_dataset("Guess", root=lmu_root, progress=False)
    assert type(ds) is ImageVQADataset and ds.metric == "vqa_score"
    assert ds.scorer_reason.startswith("vqa_score: detected from the file's columns (no option columns A/B")
    assert "--kind/--metric" in ds.scorer_reason and "Guess.scoring.json" in ds.scorer_reason


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"metric": "bleu"}, r"--metric: unknown metric 'bleu'; choose one of acc, circular, mme"),
        ({"kind": "quiz"}, r"--kind: unknown kind 'quiz'; choose one of mcq, yorn, vqa, caption"),
        ({"kind": "mcq", "metric": "anls"}, r"--metric: anls is not a metric of kind mcq \(its metrics: acc, circ"),
        ({"metric": "acc"}, r"--metric: acc is a metric of mcq and yorn; say which with kind"),
        ({"like": "MME", "metric": "mme"}, r"--like: like takes the whole of a catalog benchmark's rules"),
        ({"kind": "caption", "metric": "anls"}, r"--metric: anls is not a metric of kind caption \(its metrics: capt"),
        ({"kind": "vqa", "metric": "amber"}, r"--metric: amber is not a metric of kind vqa"),
    ],
)
def test_bad_rules_are_one_line_errors(lmu_root, kwargs, message):
    write_tsv(lmu_root / "MyDocs.tsv", doc_rows())
    with pytest.raises(ConfigError, match=message) as info:
        build_dataset("MyDocs", root=lmu_root, progress=False, **kwargs)
    assert "\n" not in str(info.value)


def test_rules_the_file_cannot_satisfy_name_the_file(lmu_root):
    path = write_tsv(lmu_root / "MyDocs.tsv", doc_rows())
    with pytest.raises(DataError, match=rf"{path}: kind mcq \(the arguments\) but the file has no option columns"):
        build_dataset("MyDocs", root=lmu_root, progress=False, kind="mcq")
    with pytest.raises(DataError, match=rf"{path}: metric mme \(the arguments\) needs a `category` column"):
        build_dataset("MyDocs", root=lmu_root, progress=False, metric="mme")


def test_sidecar_file_sets_the_rules(lmu_root):
    write_tsv(lmu_root / "MyDocs.tsv", doc_rows())
    sidecar = lmu_root / "MyDocs.scoring.json"
    sidecar.write_text(json.dumps({"kind": "vqa", "metric": "relaxed"}))
    ds = build_dataset("MyDocs", root=lmu_root, progress=False)
    assert ds.metric == "relaxed" and ds.scorer_reason == f"relaxed: from {sidecar} (kind=vqa, metric=relaxed)"
    override = build_dataset("MyDocs", root=lmu_root, progress=False, metric="exact")
    assert override.metric == "exact" and override.scorer_reason == f"exact: given metric=exact (replacing {sidecar})"


def test_sidecar_beside_a_tsv_given_by_path(lmu_root, tmp_path):
    path = write_tsv(tmp_path / "elsewhere" / "Docs.tsv", doc_rows())
    (path.parent / "Docs.scoring.json").write_text('{"metric": "anls"}')
    ds = build_dataset(str(path), root=lmu_root, progress=False)
    assert ds.name == "Docs" and ds.metric == "anls"


@pytest.mark.parametrize(
    ("content", "message"),
    [
        ("{not json", r"MyDocs\.scoring\.json: not a JSON file"),
        ('["anls"]', r"MyDocs\.scoring\.json: must hold a JSON object with the keys kind, metric, like"),
        ('{"metrics": "anls"}', r"MyDocs\.scoring\.json: unknown key 'metrics' \(the keys are kind, metric, like\)"),
        ('{"metric": "bleu"}', r"MyDocs\.scoring\.json: key 'metric': unknown metric 'bleu'"),
        ('{"metric": 3}', r"MyDocs\.scoring\.json: key 'metric': 3 is not a name"),
        ("{}", r"MyDocs\.scoring\.json: sets none of kind, metric, like"),
    ],
)
def test_a_bad_sidecar_is_a_one_line_error_naming_it(lmu_root, content, message):
    write_tsv(lmu_root / "MyDocs.tsv", doc_rows())
    (lmu_root / "MyDocs.scoring.json").write_text(content)
    with pytest.raises(DataError, match=message) as info:
        build_dataset("MyDocs", root=lmu_root, progress=False)
    assert "\n" not in str(info.value)


def test_a_copy_of_mme_under_another_name_is_scored_as_mme(lmu_root):
    write_tsv(lmu_root / "MyMME.tsv", mme_rows())
    guessed = build_dataset("MyMME", root=lmu_root, progress=False)
    assert type(guessed) is ImageYORNDataset and guessed.metric == "acc"  # columns alone say yes/no, not MME
    ds = build_dataset("MyMME", root=lmu_root, progress=False, like="MME")
    assert type(ds) is ImageYORNDataset and ds.metric == "mme"
    assert ds.scorer_reason == "mme: given like=MME: the catalog's rules for MME (not its URL, MD5 or image folder)"
    info = ds.info()
    assert info["source"] == str(lmu_root / "MyMME.tsv") and info["image_folder"] == "MyMME"
    # picture a: both right; picture b: the No question wrong -> acc 3/4 = 75, acc+ 1/2 = 50, color = 125
    result = ds.evaluate(ds.data.assign(prediction=["Yes", "No", "Yes", "Yes"]))
    assert result.metrics["color/acc"] == 75 and result.metrics["color/acc+"] == 50
    assert result.metrics["color"] == 125 and result.metrics["perception"] == 125
    (lmu_root / "MyMME.scoring.json").write_text('{"like": "MME"}')
    assert build_dataset("MyMME", root=lmu_root, progress=False).metric == "mme"


def test_like_names_must_be_catalog_benchmarks_vlmkit_can_build(lmu_root):
    write_tsv(lmu_root / "Mine.tsv", mcq_rows([0, 1]))
    with pytest.raises(RegistryError, match=r"like: unknown dataset 'MMStr'\. Did you mean: MMStar"):
        build_dataset("Mine", root=lmu_root, progress=False, like="MMStr")
    with pytest.raises(NotScorableError, match=r"like=OCRBench_v2: OCRBench_v2 is not scorable by vlmkit yet"):
        build_dataset("Mine", root=lmu_root, progress=False, like="OCRBench_v2")
    with pytest.raises(NotScorableError, match=r"like=MathVista_MINI: MathVista_MINI is scored by an LLM judge"):
        build_dataset("Mine", root=lmu_root, progress=False, like="MathVista_MINI")
    circular = build_dataset("Mine", root=lmu_root, progress=False, like="MMBench_DEV_EN")
    assert type(circular) is ImageMCQDataset and circular.circular and circular.image_folder == "Mine"


def test_rules_given_with_a_catalog_name_must_agree_with_it(lmu_root):
    write_tsv(lmu_root / "MME.tsv", mme_rows())
    clash = r"MME is a catalog benchmark scored by its own rules \(mme\); kind=yorn, metric=acc"
    with pytest.raises(ConfigError, match=clash):
        build_dataset("MME", root=lmu_root, progress=False, kind="yorn", metric="acc", keep_local_tsv=True)
    ds = build_dataset("MME", root=lmu_root, progress=False, metric="mme", keep_local_tsv=True)
    assert ds.metric == "mme" and ds.scorer_reason == "mme: catalog entry MME (VLMEvalKit's rules for it)"
    (lmu_root / "MME.scoring.json").write_text('{"like": "POPE"}')
    with pytest.raises(ConfigError, match=r"like=POPE \(.*MME\.scoring\.json\) applies to TSVs the catalog"):
        build_dataset("MME", root=lmu_root, progress=False, keep_local_tsv=True)


def test_a_users_copy_at_a_path_named_like_a_catalog_benchmark_needs_rules(lmu_root, tmp_path):
    path = write_tsv(tmp_path / "copies" / "MME.tsv", mme_rows())
    with pytest.raises(ConfigError, match=r"MME is a catalog benchmark and this file is your copy; .*--like MME"):
        build_dataset(str(path), root=lmu_root, progress=False)
    ds = build_dataset(str(path), root=lmu_root, progress=False, like="MME")
    assert ds.metric == "mme" and ds.tsv_path == path and ds.md5 is None


def caption_rows() -> list[dict]:
    """A user's caption TSV in COCO_VAL's shape: no question, the references as a list literal."""
    return [{"index": 0, "image": RED, "answer": "['a red square', 'red']"},
            {"index": 1, "image": BLUE, "answer": "['a blue square']"}]  # fmt: skip


def test_kind_caption_builds_the_caption_dataset_and_says_why(lmu_root, caplog):
    write_tsv(lmu_root / "MyCaps.tsv", caption_rows())
    guessed = build_dataset("MyCaps", root=lmu_root, progress=False)
    assert type(guessed) is ImageCaptionDataset  # answers without a question column: COCO_VAL's shape
    assert guessed.scorer_reason.startswith("caption: detected from the file's columns (answers but no question")
    with caplog.at_level(logging.INFO, logger="datasets_tsv.catalog.registry"):
        ds = build_dataset("MyCaps", root=lmu_root, progress=False, kind="caption")
    assert type(ds) is ImageCaptionDataset and ds.kind == "caption"
    assert ds.scorer_reason == "caption: given kind=caption; caption is the caption default"
    assert "MyCaps: scorer caption: given kind=caption" in caplog.text
    assert ds.build_prompt(0)[-1]["value"] == DEFAULT_QUESTION
    by_metric = build_dataset("MyCaps", root=lmu_root, progress=False, metric="caption")
    assert type(by_metric) is ImageCaptionDataset and by_metric.scorer_reason == "caption: given metric=caption"
    (lmu_root / "MyCaps.scoring.json").write_text('{"kind": "caption"}')
    from_sidecar = build_dataset("MyCaps", root=lmu_root, progress=False)
    assert type(from_sidecar) is ImageCaptionDataset
    assert "MyCaps.scoring.json (kind=caption)" in from_sidecar.scorer_reason


def test_kind_caption_scores_bleu_rouge_cider(lmu_root):
    pytest.importorskip("pycocoevalcap.cider.cider", reason="the optional `captions` extra (pycocoevalcap)")
    write_tsv(lmu_root / "MyCaps.tsv", caption_rows())
    ds = build_dataset("MyCaps", root=lmu_root, progress=False, kind="caption")
    # both replies equal a reference: every BLEU precision is 1 and ROUGE-L is 1 per image (x100)
    result = ds.evaluate(ds.data.assign(prediction=["a red square", "a blue square"]))
    assert result.scorer == "caption" and result.metrics["Bleu_1"] == pytest.approx(100, rel=1e-6)
    assert result.metrics["ROUGE_L"] == pytest.approx(100)


def test_kind_caption_needs_the_references(lmu_root):
    path = write_tsv(lmu_root / "MyCaps.tsv", [{"index": 0, "image": RED, "question": "Describe it."}])
    with pytest.raises(DataError, match=rf"{path}: kind caption \(the arguments\) needs an `answer` column"):
        build_dataset("MyCaps", root=lmu_root, progress=False, kind="caption")


def amber_rows() -> list[dict]:
    """AMBER's shape: lower-case yes/no answers and AMBER's discriminative task names as categories."""
    cats = ["discriminative-attribute-state", "discriminative-attribute-number", "discriminative-hallucination",
            "discriminative-hallucination"]  # fmt: skip
    return [{"index": i, "image": RED, "question": f"Is there a dog {i}?", "answer": a, "category": c}
            for i, (a, c) in enumerate(zip(["yes", "no", "yes", "no"], cats, strict=True))]  # fmt: skip


def test_metric_amber_and_vsr_for_a_users_tsv(lmu_root):
    write_tsv(lmu_root / "MyAmber.tsv", amber_rows())
    ds = build_dataset("MyAmber", root=lmu_root, progress=False, metric="amber")
    assert type(ds) is ImageYORNDataset and ds.metric == "amber" and ds.scorer_reason == "amber: given metric=amber"
    assert ds.build_prompt(0)[-1]["value"] == "Is there a dog 0?"  # the scorer only: AMBER's suffix comes with like
    # Attribute: rows 0, 1 -> 1 of 2 = 50; Existence: rows 2, 3 -> 2 of 2 = 100; Avg ACC = mean of the two = 75
    result = ds.evaluate(ds.data.assign(prediction=["Yes", "Yes", "Yes", "No"]))
    assert result.metrics["Attribute"] == 50 and result.metrics["Existence"] == 100
    assert result.metrics["Avg ACC"] == 75 and result.primary == "Avg ACC"
    liked = build_dataset("MyAmber", root=lmu_root, progress=False, like="AMBER")
    assert liked.metric == "amber" and liked.build_prompt(0)[-1]["value"].endswith("\nPlease answer yes or no.")
    vsr = build_dataset("MyAmber", root=lmu_root, progress=False, kind="yorn", metric="vsr")
    assert vsr.metric == "vsr" and vsr.scorer_reason == "vsr: given kind=yorn, metric=vsr"
    # VSR: 3 of 4 right; Yes positive: predicted Yes rows 0, 1, 2, of which 0 and 2 are yes -> precision 2/3
    figures = vsr.evaluate(vsr.data.assign(prediction=["Yes", "Yes", "Yes", "No"])).metrics
    assert figures["acc"] == 75 and figures["precision"] == pytest.approx(200 / 3) and figures["recall"] == 100


def test_metric_amber_needs_the_category_column(lmu_root):
    path = write_tsv(lmu_root / "MyDocs.tsv", doc_rows())
    with pytest.raises(DataError, match=rf"{path}: metric amber \(the arguments\) needs a `category` column"):
        build_dataset("MyDocs", root=lmu_root, progress=False, metric="amber")
