"""CC-OCR's text-reading score (vlmkit.scoring.benchmarks.ccocr) on random tables against a second implementation
written here from VLMEvalKit's OcrEvaluator rules (utils/ccocr_evaluator/ocr_evaluator.py at e8e78f05): tokens,
per-row F1, macro and micro F1 per sub-dataset, track means and `total`; and VLMEvalKit's figure (rows keyed by
image_name, the last of a repeated name counting)."""

from __future__ import annotations

import random
import re
import sys
from collections import Counter

import pandas as pd
import pytest

from vlmkit.scoring.benchmarks.ccocr import score_ccocr
from vlmkit.scoring.common.vlmevalkit_replies import vlmevalkit_replies

WORDS = ["Stop", "EXIT-2", "le", "chat", "noir!", "日本", "語", "a.b", "###", "***", "x1", "Ünïcode", "42", "",
         "\t", "\n", "  "]
SPLITS = [("multi_lan_ocr", "French"), ("multi_lan_ocr", "Japanese"), ("multi_lan_ocr", "zh_cn"),
          ("multi_lan_ocr", "Arabic"), ("multi_scene_ocr", "IC15"), ("multi_scene_ocr", "Korean"),
          ("multi_scene_ocr", "ArT_zh")]


def _second_tokens(text: str, split: str, category: str) -> list[str]:
    word = not (split in ("Arabic", "Japanese", "Korean") or "zh" in split)
    for old in ("\t", "\n"):
        text = text.replace(old, " ")
    text = re.sub(r"\s+", " ", text.replace("###", "").replace("***", ""))
    toks = text.split(" ") if word else list(text.replace(" ", ""))
    toks = [t.lower() for t in toks]
    if category == "multi_scene_ocr" and word:
        toks = ["".join(c for c in t if c.isascii() and c.isalnum()) for t in toks]
    return [t for t in toks if t]


def _f1(right: int, gold: int, pred: int) -> float:
    r, p = right / (gold + 1e-9), right / (pred + 1e-9)
    return 2 * r * p / (r + p + 1e-9)


def _second_score(rows: list[dict]) -> tuple[dict[str, float], list[float]]:
    """The figures and per-row F1, every row counted (vlmkit's rule)."""
    groups: dict[tuple[str, str], list[tuple[int, int, int]]] = {}
    per_row = []
    for r in rows:
        reply = "" if r["prediction"] is None else r["prediction"]
        gold = _second_tokens(r["answer"].strip(), r["split"], r["category"])
        pred = _second_tokens(reply.strip(), r["split"], r["category"])
        right = sum((Counter(gold) & Counter(pred)).values())
        groups.setdefault((r["category"], r["split"]), []).append((right, len(gold), len(pred)))
        per_row.append(_f1(right, len(gold), len(pred)))
    out, tracks = {}, {}
    for (category, split), counts in groups.items():
        macro = sum(_f1(*c) for c in counts) / (len(counts) + 1e-9)
        out[f"{split}: macro_f1_score"] = macro
        out[f"{split}: mirco_f1_score"] = _f1(*(sum(c[i] for c in counts) for i in range(3)))
        tracks.setdefault({"multi_lan_ocr": "lan_ocr", "multi_scene_ocr": "scene_ocr"}[category], []).append(macro)
    means = {t: sum(v) / len(v) for t, v in tracks.items()}
    return {**means, "total": sum(means.values()) / len(means), **out}, per_row


def _random_rows(seed: int) -> list[dict]:
    rng = random.Random(seed)
    rows = []
    for i in range(rng.randint(1, 14)):
        category, split = rng.choice(SPLITS)
        answer = " ".join(rng.choice(WORDS) for _ in range(rng.randint(1, 6)))
        reply = None if rng.random() < 0.1 else " ".join(rng.choice(WORDS) for _ in range(rng.randint(0, 6)))
        rows.append({"index": i, "category": category, "l2-category": "doc", "split": split, "answer": answer,
                     "prediction": reply, "image_name": f"img{i}"})
    return rows


@pytest.mark.parametrize("seed", range(40))
def test_random_tables_score_as_the_second_implementation(seed: int):
    rows = _random_rows(seed)
    expected, per_row = _second_score(rows)
    result = score_ccocr(pd.DataFrame(rows))
    assert result.metrics.keys() == expected.keys()
    for name, value in expected.items():
        assert result.metrics[name] == pytest.approx(value, abs=1e-12), name
    assert result.per_sample["f1"].tolist() == pytest.approx(per_row, abs=1e-12)
    assert result.per_sample["index"].tolist() == [r["index"] for r in rows]
    failed = [r["index"] for r in rows if r["prediction"] is None]
    assert result.counts["inference_errors"] == len(failed) and result.counts["by_rule"] == len(rows) - len(failed)
    assert result.counts["total"] == result.counts["scored"] == len(rows)
    assert bool(result.notes) == bool(failed)
    # VLMEvalKit's figure: the same rules on the replies its xlsx round trip leaves (an empty reply is the text
    # `nan`, one token); every name is distinct, so every row counts
    replies = vlmevalkit_replies([r["prediction"] for r in rows])
    theirs, their_rows = _second_score([{**r, "prediction": reply} for r, reply in zip(rows, replies)])
    assert result.vlmevalkit.metrics == pytest.approx(theirs, abs=1e-12)
    assert [d.index for d in result.vlmevalkit.differing] == [
        r["index"] for r, reply, a, b in zip(rows, replies, per_row, their_rows) if reply is not None and a != b
    ]
    assert result.vlmevalkit.notes == [] and result.vlmevalkit.primary == "total"


def test_vlmevalkit_keeps_the_last_row_of_each_repeated_name_per_sub_dataset():
    rows = [
        {"index": 1, "category": "multi_lan_ocr", "l2-category": "doc", "split": "French", "answer": "a b c",
         "prediction": "a b c", "image_name": "p"},
        {"index": 2, "category": "multi_lan_ocr", "l2-category": "doc", "split": "French", "answer": "a b",
         "prediction": "a", "image_name": "p"},
        # the same name in another sub-dataset is another row
        {"index": 3, "category": "multi_lan_ocr", "l2-category": "doc", "split": "German", "answer": "x",
         "prediction": "x", "image_name": "p"},
    ]
    result = score_ccocr(pd.DataFrame(rows))
    # vlmkit: French (1 + F1(1, 2, 1)) / 2, F1(1, 2, 1) = 2 * 0.5 * 1 / 1.5 = 2/3
    assert result.metrics["French: macro_f1_score"] == pytest.approx((1 + 2 / 3) / 2, abs=1e-6)
    assert result.vlmevalkit.metrics["French: macro_f1_score"] == pytest.approx(2 / 3, abs=1e-6)
    assert result.vlmevalkit.metrics["German: macro_f1_score"] == pytest.approx(1.0, abs=1e-6)
    assert result.vlmevalkit.notes == [
        "1 row(s) repeat an image_name of their sub-dataset: VLMEvalKit counts only the last"
    ]


def test_a_reply_the_round_trip_changes_is_listed_with_both_scores():
    # `N/A` is NaN to VLMEvalKit's round trip: the text `nan`, no shared token with the answer
    rows = [{"index": 7, "category": "multi_lan_ocr", "l2-category": "doc", "split": "French", "answer": "N/A",
             "prediction": "N/A", "image_name": "q"}]
    result = score_ccocr(pd.DataFrame(rows))
    assert result.metrics["total"] == pytest.approx(1.0, abs=1e-6)
    (diff,) = result.vlmevalkit.differing
    assert (diff.index, diff.vlmkit, diff.vlmevalkit, diff.vlmkit_score, diff.vlmevalkit_score) == (
        7, "N/A", "nan", pytest.approx(1.0, abs=1e-6), pytest.approx(0.0))


def test_missing_columns_and_an_empty_table_are_one_line():
    with pytest.raises(ValueError, match="CC-OCR scoring.*split"):
        score_ccocr(pd.DataFrame([{"index": 1, "prediction": "a", "answer": "a", "category": "multi_lan_ocr",
                                   "l2-category": "doc", "image_name": "x"}]))
    empty = pd.DataFrame(columns=["index", "prediction", "answer", "category", "l2-category", "split", "image_name"])
    with pytest.raises(ValueError, match="CC-OCR scoring: the predictions table has no rows"):
        score_ccocr(empty)


def _ocr_row(index: int, prediction: str | None, answer: str = "a b") -> dict:
    return {"index": index, "category": "multi_lan_ocr", "l2-category": "doc", "split": "French", "answer": answer,
            "prediction": prediction, "image_name": f"i{index}"}


def test_the_result_says_what_it_is_and_names_the_failed_calls():
    result = score_ccocr(pd.DataFrame([_ocr_row(1, "a b"), _ocr_row(3, None), _ocr_row(5, None)]))
    assert (result.scorer, result.primary, result.table_suffix) == ("ccocr", "total", "acc")
    assert result.scale is not None and result.scale.to_dict()["scale"] == "fraction"
    assert result.counts == {"total": 3, "scored": 3, "inference_errors": 2, "by_rule": 1, "by_judge": 0,
                             "unread": 0, "judge_errors": 0}
    assert result.notes == ["2 failed call(s) score 0, as in VLMEvalKit: index 3, 5"]
    assert result.table.to_dict("records") == [result.metrics]


def test_other_categories_and_parsing_ops_are_named_in_full():
    rows = [_ocr_row(1, "x"), {**_ocr_row(2, "x"), "category": "vqa"}, {**_ocr_row(3, "x"), "category": "cls"}]
    with pytest.raises(ValueError) as info:
        score_ccocr(pd.DataFrame(rows))
    assert str(info.value) == ("CC-OCR scoring: categories cls, vqa are not CC-OCR's; it scores multi_lan_ocr, "
                               "multi_scene_ocr, kie, doc_parsing")
    rows = [{**_ocr_row(i, "x"), "category": "doc_parsing", "l2-category": op} for i, op in enumerate(["chart", "map"])]
    with pytest.raises(ValueError) as info:
        score_ccocr(pd.DataFrame(rows))
    assert str(info.value) == ("CC-OCR scoring: document parsing of chart, map is not CC-OCR's; it scores doc, "
                               "formula, molecular, table")


TABLE = "<table><tr><td>a</td><td>b</td></tr><tr><td>c</td><td>d</td></tr></table>"


def _table_row(index: int, prediction: str | None, split: str = "TableEng") -> dict:
    return {"index": index, "category": "doc_parsing", "l2-category": "table", "split": split, "answer": TABLE,
            "prediction": prediction, "image_name": f"t{index}"}


def test_table_rows_are_scored_by_teds_on_the_html_after_the_fence():
    pytest.importorskip("lxml")
    pytest.importorskip("apted")
    # the same table after a ```html fence, spread over lines: TEDS 1; no table in the reply: 0; a failed call: 0
    reply = ("Here it is:\n```html\n<table>\n <tr><td>a</td><td>b</td></tr>\n <tr><td>c</td><td>d</td></tr>\n"
             "</table>\n```")
    result = score_ccocr(pd.DataFrame([_table_row(1, reply), _table_row(2, "no table here"), _table_row(3, None)]))
    assert result.per_sample["f1"].tolist() == pytest.approx([1.0, 0.0, 0.0])
    assert result.metrics["TableEng: score"] == pytest.approx(1 / 3)
    assert result.metrics["doc_parsing"] == pytest.approx(1 / 3) == result.metrics["total"]


def test_table_rows_without_lxml_or_apted_are_refused_in_one_line(monkeypatch: pytest.MonkeyPatch):
    monkeypatch.setitem(sys.modules, "apted", None)  # as if apted were not installed
    with pytest.raises(ValueError, match=r"^CC-OCR scoring: CC-OCR table parsing \(TEDS\) needs lxml and apted, and "
                                         r"apted is not installed"):
        score_ccocr(pd.DataFrame([_ocr_row(1, "a b"), _table_row(2, TABLE)]))
    # tables only need them: the other tracks score as ever
    assert score_ccocr(pd.DataFrame([_ocr_row(1, "a b")])).metrics["total"] == pytest.approx(1.0, abs=1e-6)
