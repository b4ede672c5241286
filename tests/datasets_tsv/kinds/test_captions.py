"""COCO_VAL captions as VLMEvalKit asks and scores them: the default question when the TSV has none, and BLEU-1..4,
ROUGE-L and CIDEr (x100) from pycocoevalcap on raw strings, checked against figures worked out by hand.

The scores need the optional `captions` extra (pycocoevalcap); the tests of what it computes skip without it, the
rest (prompt, download, the one-line error without the library, bad references) run everywhere."""

from __future__ import annotations

import dataclasses
import hashlib
import math
import sys
from urllib.parse import urlparse

import pandas as pd
import pytest

from datasets_tsv.catalog.entries import parse_rows
from datasets_tsv.kinds.caption import DEFAULT_QUESTION, ImageCaptionDataset
from datasets_tsv.catalog.registry import build_row
from vlmkit.core.errors import ConfigError, DataError
from vlmkit.core.files import DownloadError
from vlmkit.scoring.kinds.caption import score_captions

from tests.support.tsvs import b64, image_bytes, write_tsv

HEADER = "name\tkind\tstatus\tscorer\tjudge\trows\tclass\tkwargs\turl\tmd5\tdescription\tnotes"
# The catalog row proposed for COCO_VAL (the integrator's catalog.tsv gets the same line).
COCO_ROW = (
    "COCO_VAL\tcaption\tok\tcaption\tnone\t5000\tdatasets_tsv.kinds.caption:ImageCaptionDataset\t\t"
    "https://opencompass.openxlab.space/utils/VLMEval/COCO_VAL.tsv\t72a5079dead060269ac222c5aa5128af\t"
    "COCO Caption val: BLEU, ROUGE-L, CIDEr\t"
)
# vlmevalkit-judge-facts.md section 8 (and vlmevalkit-facts.md): the question asked when the TSV has none.
FACTS_QUESTION = (
    "Please describe this image in general. Directly provide the description, do not include prefix like "
    '"This image depicts". '
)


def coco_rows(answers: list[list[str]], **extra) -> list[dict]:
    """COCO_VAL's shape: index, image, answer (a Python list literal of reference captions), no question."""
    return [{"index": i, "image": b64(image_bytes(c)), "answer": str(refs), **extra}
            for i, (c, refs) in enumerate(zip(["red", "blue", "green"], answers, strict=False))]  # fmt: skip


@pytest.fixture
def coco_row():
    (row,) = parse_rows(f"{HEADER}\n{COCO_ROW}\n", "proposed rows")
    return row


def needs_library():
    pytest.importorskip("pycocoevalcap.cider.cider", reason="the optional `captions` extra (pycocoevalcap)")


def test_a_tsv_without_question_is_asked_vlmevalkits_default_text(lmu_root):
    write_tsv(lmu_root / "Caps.tsv", coco_rows([["a red square"]]))
    ds = ImageCaptionDataset("Caps", root=lmu_root, progress=False)
    assert DEFAULT_QUESTION == FACTS_QUESTION
    parts = ds.build_prompt(0)
    assert [p["type"] for p in parts] == ["image", "text"] and parts[1]["value"] == FACTS_QUESTION
    assert ds.info()["scorer"]["default_question"] is True


def test_a_tsv_with_a_question_is_asked_it(lmu_root):
    write_tsv(lmu_root / "Caps.tsv", coco_rows([["a red square"]], question="Describe the colour."))
    ds = ImageCaptionDataset("Caps", root=lmu_root, progress=False)
    assert ds.build_prompt(0)[-1]["value"] == "Describe the colour."


def _hand_worked() -> pd.DataFrame:
    return pd.DataFrame({
        "index": [10, 11],
        "answer": ["['a b c d']", "['e f x h']"],
        "prediction": ["a b c d", "e f g h"],
    })  # fmt: skip


def test_bleu_rouge_cider_equal_figures_worked_out_by_hand():
    """Two images, one reference each. BLEU (corpus, brevity penalty 1: 8 words against 8): n-gram matches
    1: 4+3 of 8, 2: 3+1 of 6, 3: 2+0 of 4, 4: 1+0 of 2; BLEU-n = geometric mean of the first n precisions.
    ROUGE-L: image 1 is 1; image 2: LCS `e f h` = 3 of 4 both ways -> F(beta 1.2) = 0.75; mean 0.875.
    CIDEr: every n-gram occurs in one image's references of two, so every weight is log 2 and cancels in the
    cosine: image 1 gives 1 for each n; image 2 gives 3/4 (unigrams), 1/3 (bigrams), 0, 0; equal lengths (no
    penalty); x10 -> 10 and (3/4 + 1/3) / 4 * 10; corpus = their mean. All x100, as VLMEvalKit reports them."""
    needs_library()
    result = score_captions(_hand_worked())
    p = [7 / 8, 4 / 6, 2 / 4, 1 / 2]
    for n in range(1, 5):
        expected = 100 * math.prod(p[:n]) ** (1 / n)
        assert result.metrics[f"Bleu_{n}"] == pytest.approx(expected, rel=1e-6)
    assert result.metrics["ROUGE_L"] == pytest.approx(87.5)
    image2 = (3 / 4 + 1 / 3) / 4 * 10
    assert result.metrics["CIDEr"] == pytest.approx(100 * (10 + image2) / 2)
    assert result.primary == "CIDEr" and result.scorer == "caption"
    assert result.per_sample["index"].tolist() == [10, 11]
    assert result.per_sample["CIDEr"].tolist() == pytest.approx([1000, 100 * image2])
    assert result.per_sample["ROUGE_L"].tolist() == pytest.approx([100, 75])
    assert result.scale_of("Bleu_1").kind == "percent" and result.scale_of("CIDEr").out_of == 1000
    assert result.table_suffix == "score" and list(result.table.columns) == list(result.metrics)


def test_no_tokenizer_case_and_punctuation_count():
    """Without the PTB tokenizer `d.` is not `d` and `A` is not `a`: 2 of 4 unigrams match, as raw strings."""
    needs_library()
    df = pd.DataFrame({"index": [0], "answer": ["['a b c d']"], "prediction": ["A b c d."]})
    result = score_captions(df)
    assert result.metrics["Bleu_1"] == pytest.approx(50, rel=1e-6)
    assert result.metrics["CIDEr"] == 0 and any("single image" in note for note in result.notes)


def test_a_failed_call_is_scored_as_an_empty_caption_and_counted():
    needs_library()
    df = _hand_worked().assign(prediction=["a b c d", None])
    result = score_captions(df)
    assert result.counts["inference_errors"] == 1
    assert result.per_sample["CIDEr"].tolist() == pytest.approx([1000, 0])
    assert result.metrics["ROUGE_L"] == pytest.approx(50)
    # BLEU: 4 candidate words against 8 reference words -> brevity penalty exp(1 - 8/4); every precision is 1
    assert result.metrics["Bleu_4"] == pytest.approx(100 * math.exp(-1), rel=1e-6)
    assert any("index 11" in note and "empty caption" in note for note in result.notes)


def test_without_the_library_scoring_is_one_line_naming_the_extra(monkeypatch):
    for module in ("pycocoevalcap", "pycocoevalcap.bleu.bleu", "pycocoevalcap.rouge.rouge", "pycocoevalcap.cider.cider"):
        monkeypatch.setitem(sys.modules, module, None)  # importing it fails, installed (and imported) or not
    expected = r"needs pycocoevalcap, which is not installed: pip install 'vlmkit\[captions\]'"
    with pytest.raises(ConfigError, match=expected) as info:
        score_captions(_hand_worked())
    assert "\n" not in str(info.value)


def test_a_row_without_references_names_the_file_row_and_field(lmu_root, monkeypatch):
    needs_library()
    path = write_tsv(lmu_root / "Caps.tsv", coco_rows([["a red square"], []]))
    ds = ImageCaptionDataset("Caps", root=lmu_root, progress=False)
    with pytest.raises(DataError, match=rf"{path}: row 1 \(index 1\), field answer: no reference caption"):
        ds.evaluate(ds.data.assign(prediction=["red", "blue"]))


def test_coco_val_downloads_by_its_real_file_name_with_the_md5_check(lmu_root, http_file_server, coco_row):
    path = urlparse(coco_row.url).path.lstrip("/")
    assert path.endswith("/COCO_VAL.tsv")
    served = write_tsv(http_file_server.folder / path, coco_rows([["a red square", "red"], ["a blue square"]]))
    digest = hashlib.md5(served.read_bytes()).hexdigest()
    local = dataclasses.replace(coco_row, url=http_file_server.url(path), md5=digest)
    ds = build_row(local, root=lmu_root, progress=False)
    assert type(ds) is ImageCaptionDataset and ds.kind == "caption"
    assert (lmu_root / "COCO_VAL.tsv").read_bytes() == served.read_bytes()
    assert ds.info()["md5"] == digest and http_file_server.hits[path] == 1
    assert ds.build_prompt(1)[-1]["value"] == FACTS_QUESTION
    # the catalog's own MD5 cannot match this file: fetched twice, then nothing is kept
    (lmu_root / "COCO_VAL.tsv").unlink()
    wrong = dataclasses.replace(coco_row, url=http_file_server.url(path))
    with pytest.raises(DownloadError, match=f"MD5 mismatch twice \\(expected {coco_row.md5}"):
        build_row(wrong, root=lmu_root, progress=False)
    assert http_file_server.hits[path] == 3 and not (lmu_root / "COCO_VAL.tsv").exists()
