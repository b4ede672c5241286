"""The scorer-id table (vlmkit.scoring.ids): every scorer the catalog names is in it, each spelling maps back to its
id, and the readers built on it (catalog validation, scorer_id, --metric, scales) say what they said before the
table (the expectations below are typed out from the per-module maps the table replaced)."""

from __future__ import annotations

import pandas as pd
import pytest

from datasets_tsv.catalog.entries import CatalogError, catalog_rows, parse_rows
from datasets_tsv.catalog.user_rules import metrics_by_kind
from vlmkit.scoring import ids
from vlmkit.scoring.ids import ScorerIdError, id_from_params, parse_scorer_ids
from vlmkit.scoring.kinds.mcq import score_mcq
from vlmkit.scoring.kinds.vqa import score_vqa
from vlmkit.scoring.kinds.yorn import score_yorn
from vlmkit.scoring.scales import FRACTION, PERCENT, POINTS, Scale, default_scale

SCORER_IDS = ids.scorer_ids()
BY_ID, BY_CATALOG, BY_RESULTS = ids.by_id(), ids.by_catalog(), ids.by_results()
# The catalog's scorers and kinds before the table (datasets_tsv/catalog/entries.SCORERS as it was written).
CATALOG_KINDS = {
    "mcq": "mcq", "mcq-circular": "mcq", "mmmu": "mcq",
    "yorn": "yorn", "mme": "yorn", "pope": "yorn", "hallusion": "yorn",
    "vqa_score": "vqa", "anls": "vqa", "relaxed": "vqa", "exact": "vqa", "ocrbench": "vqa",
    "vcr": "vqa", "mmmu-pro": "mcq", "mmvp": "mcq", "mmsci": "mcq", "amber": "yorn", "vsr": "yorn",
    "spatial_mcq": "mcq", "regex_mcq": "mcq", "videomme": "video", "mvbench": "video",
    "vmcbench": "mcq", "crpe": "vqa", "naturalbench": "mcq", "tablevqa": "vqa", "vlmblind": "mcq", "grounding": "vqa",
    "caption": "caption", "tallyqa": "vqa", "countbench": "vqa", "zerobench": "vqa", "mtvqa": "vqa",
    "longvideobench": "video",
}  # fmt: skip
# results.json scorer -> scale before the table (vlmkit/scoring/scales._BY_SCORER and its special cases).
F, P, PTS = Scale(FRACTION), Scale(PERCENT), Scale(POINTS)
RESULTS_SCALES = {
    "mcq": F, "mcq_circular": F, "custom_mcq": F, "qa_judge": P, "mathvista": P, "mathverse": P, "mathvision": P,
    "mmvet": P, "llavabench": P, "shortqa": F, "vcr": F, "mmvp": F, "mmsci": F, "yorn_amber": P, "yorn_vsr": P,
    "yorn_acc": P, "yorn_pope": P, "yorn_hallusion": P, "text_qa": P, "caption": P, "tallyqa": F, "countbench": P,
    "mtvqa": P, "zerobench": F, "spatial_mcq": P, "vmcbench": P, "crpe": F, "naturalbench": F, "tablevqa": P,
    "vlmblind": F, "grounding": F, "vqa_score": P, "vqa_anls": P, "vqa_relaxed": P, "vqa_exact": P,
    "vqa_someday": P, "yorn_mme": PTS, "ocrbench": PTS, "regex_mcq": None, "videomme": None, "mvbench": None,
    "nobody_knows": None,
}  # fmt: skip


def test_every_scorer_the_catalog_uses_is_in_the_table_with_its_kind() -> None:
    used = {(row.scorer, row.kind) for row in catalog_rows().values() if row.status == "ok"}
    assert used, "the catalog has ok rows"
    for scorer, kind in used:
        if scorer in BY_CATALOG:
            assert BY_CATALOG[scorer].kind == kind, scorer
        else:  # a scorer registered by its module (its kind is checked by building the row: test_catalog)
            assert ids.module_scorer(scorer), scorer
    assert ids.catalog_kinds() == CATALOG_KINDS


def test_each_spelling_maps_back_to_its_id() -> None:
    assert len(BY_ID) == len(SCORER_IDS)
    for s in SCORER_IDS:
        assert BY_ID[s.id] is s
        # the id is the catalog's spelling in snake case, else the results spelling
        assert s.id == (s.catalog.replace("-", "_") if s.catalog is not None else s.results), s
        if s.catalog is not None:
            assert BY_CATALOG[s.catalog] is s
            assert ids.catalog_name(s.id) == s.catalog
        owner = BY_RESULTS[s.results]
        # several ids may write one results spelling (MMMU writes `mcq`): they agree on its scale and kind
        assert owner.results == s.results and owner.scale == s.scale and owner.kind == s.kind, s
        if owner is not s:
            assert owner.id == s.results, s  # the spelling maps back to the scorer that owns it


def test_results_spellings_that_several_scorers_write() -> None:
    shared = {s.id for s in SCORER_IDS if BY_RESULTS[s.results] is not s}
    assert shared == {"mmmu", "mmmu_pro"} and BY_RESULTS["mcq"].id == "mcq"


@pytest.mark.parametrize(("params", "expected"), [
    ({"scorer": "mcq", "circular": True}, "mcq_circular"),
    ({"scorer": "mcq", "circular": False}, "mcq"),
    ({"scorer": "mcq", "circular": False, "open_questions": "as A=answer / B=Other Answers"}, "mmmu"),
    ({"scorer": "mmmu-pro", "circular": False}, "mmmu_pro"),
    ({"scorer": "mmvp", "circular": False}, "mmvp"),
    ({"scorer": "yorn", "metric": "acc"}, "yorn"),
    ({"scorer": "yorn", "metric": "mme"}, "mme"),
    ({"scorer": "vqa", "metric": "anls", "short_answer_prompt": True}, "anls"),
    ({"scorer": "vqa", "metric": "tallyqa", "suffix": "", "answer_column": "answer"}, "tallyqa"),
    ({"scorer": "custom_mcq", "circular": False}, "custom_mcq"),
    ({"scorer": "MMVet grading (LLM judge, 0-1 per answer)"}, "MMVet grading (LLM judge, 0-1 per answer)"),
    ({}, None),
])  # fmt: skip
def test_id_from_params(params: dict, expected: str | None) -> None:
    assert id_from_params(params) == expected


@pytest.mark.parametrize(("scorer", "expected"), sorted(RESULTS_SCALES.items()))
def test_default_scale_says_what_it_said_before_the_table(scorer: str, expected: Scale | None) -> None:
    assert default_scale(scorer) == expected


def test_metric_names_are_those_user_rules_took() -> None:
    assert metrics_by_kind() == {
        "mcq": ("acc", "circular"),
        "yorn": ("acc", "mme", "pope", "hallusion", "amber", "vsr"),
        "vqa": ("vqa_score", "anls", "relaxed", "exact", "ocrbench"),
        "caption": ("caption",),
    }


def _rows(answers: list[str], predictions: list[str]) -> pd.DataFrame:
    n = len(answers)
    return pd.DataFrame({"index": range(n), "question": ["q?"] * n, "answer": answers, "prediction": predictions})


@pytest.mark.parametrize("scorer_id", ["mcq", "mcq_circular"])
def test_the_mcq_scorer_writes_the_tables_results_spelling(scorer_id: str) -> None:
    df = _rows(["A", "B"], ["A", "A"]).assign(A=["x", "y"], B=["y", "x"])
    result = score_mcq(df, circular=scorer_id == "mcq_circular")
    assert result.scorer == BY_ID[scorer_id].results


@pytest.mark.parametrize("metric", ["vqa_score", "anls", "relaxed", "exact"])
def test_the_vqa_scorer_writes_the_tables_results_spelling(metric: str) -> None:
    result = score_vqa(_rows(["cat", "dog"], ["cat", "bird"]), metric)
    [row] = [s for s in SCORER_IDS if s.kind == "vqa" and s.metric == metric]
    assert result.scorer == row.results


def test_the_yorn_scorer_writes_the_tables_results_spelling() -> None:
    result = score_yorn(_rows(["Yes", "No"], ["yes", "yes"]), "acc")
    assert result.scorer == BY_ID["yorn"].results == "yorn_acc"
    assert result.primary_value == pytest.approx(50.0) and default_scale(result.scorer) == P


CATALOG_HEAD = "name\tkind\tstatus\tscorer\tjudge\trows\tclass\tkwargs\turl\tmd5\tdescription\tnotes\n"


def _row(scorer: str, kind: str = "vqa") -> str:
    return f"X\t{kind}\tok\t{scorer}\tnone\t\tdatasets_tsv.benchmarks.crpe:CRPEDataset\t{{}}\t\t\td\t\n"


def test_a_scorer_is_registered_by_its_module(monkeypatch: pytest.MonkeyPatch) -> None:
    # crpe's module defines score_crpe: without its table row it is still a scorer, registered by that module
    monkeypatch.delitem(ids.catalog_kinds(), "crpe")
    monkeypatch.delitem(ids.by_id(), "crpe")
    assert ids.module_scorer("crpe")
    assert parse_rows(CATALOG_HEAD + _row("crpe"))[0].scorer == "crpe"
    assert parse_rows(CATALOG_HEAD + _row("crpe", kind="mcq"))[0].kind == "mcq"  # its kind is checked by building
    # a helper module that defines no score_<name>, a name with no module, a table id: not module scorers
    assert not ids.module_scorer("vcr_tokens") and not ids.module_scorer("nobody") and not ids.module_scorer("mcq")
    assert not ids.module_scorer("../kinds/mcq")
    with pytest.raises(CatalogError, match="line 2, field scorer: 'vcr_tokens' is not a vlmkit scorer"):
        parse_rows(CATALOG_HEAD + _row("vcr_tokens"))


def test_a_table_scorer_of_another_kind_is_refused() -> None:
    with pytest.raises(CatalogError, match="field scorer: crpe scores vqa benchmarks, not mcq"):
        parse_rows(CATALOG_HEAD + _row("crpe", kind="mcq"))


@pytest.mark.parametrize(("text", "message"), [
    ("id\tcatalog\n", "the header must be id, catalog, results, kind, scale, metric"),
    ("id\tcatalog\tresults\tkind\tscale\tmetric\nx\t-\tx\tvqa\tpercent\n", "line 2: 5 fields"),
    ("id\tcatalog\tresults\tkind\tscale\tmetric\nx\t-\tx\tvqa\tpercents\t-\n", "line 2, field scale: 'percents'"),
    ("id\tcatalog\tresults\tkind\tscale\tmetric\nx\tx\tx\tvqa\t-\t-\ny\tx\ty\tvqa\t-\t-\n",
     "line 3, field catalog: x repeats"),
    ("# a note\nid\tcatalog\tresults\tkind\tscale\tmetric\n\nx\t-\t-\tvqa\t-\t-\n", "line 4, field results: empty"),
])  # fmt: skip
def test_a_malformed_table_row_is_named_by_line_and_field(text: str, message: str) -> None:
    with pytest.raises(ScorerIdError, match=message):
        parse_scorer_ids(text, "t.tsv")
