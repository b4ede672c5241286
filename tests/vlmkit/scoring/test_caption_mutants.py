"""Caption scoring's VLMEvalKit figure and CIDEr interval, the expectations computed with pycocoevalcap called
directly here and worked by hand (tools/mutation_test.py found them unguarded)."""

from __future__ import annotations

import contextlib
import io

import pandas as pd
import pytest

pytest.importorskip("pycocoevalcap.cider.cider", reason="the optional `captions` extra (pycocoevalcap)")

from vlmkit.scoring.kinds.caption import score_captions  # noqa: E402

REFS = {"0": ["a b c d"], "1": ["e f x h"], "2": ["nan q r s"]}


def library_cider(candidates: dict[str, str]) -> tuple[float, list[float]]:
    """pycocoevalcap's Cider over REFS, x100 (corpus, per image)."""
    from pycocoevalcap.cider.cider import Cider

    with contextlib.redirect_stdout(io.StringIO()):
        corpus, each = Cider().compute_score(REFS, {k: [v] for k, v in candidates.items()})
    return float(corpus) * 100, [float(v) * 100 for v in each]


def frame(predictions) -> pd.DataFrame:
    return pd.DataFrame({"index": [10, 11, 12], "answer": [str(REFS[k]) for k in "012"], "prediction": predictions})


def test_a_reply_vlmevalkit_reads_as_nan_is_scored_there_as_the_caption_nan():
    result = score_captions(frame(["a b c d", "e f g h", "None"]))
    mine, mine_each = library_cider({"0": "a b c d", "1": "e f g h", "2": "None"})
    theirs, theirs_each = library_cider({"0": "a b c d", "1": "e f g h", "2": "nan"})
    assert result.metrics["CIDEr"] == pytest.approx(mine)
    figure = result.vlmevalkit
    assert figure.primary == "CIDEr" and figure.metrics["CIDEr"] == pytest.approx(theirs)
    assert theirs > mine  # `nan` is a word of the third reference
    assert [(d.index, d.vlmkit, d.vlmevalkit) for d in figure.differing] == [(12, "None", "nan")]
    assert figure.differing[0].vlmkit_score == pytest.approx(mine_each[2])
    assert figure.differing[0].vlmevalkit_score == pytest.approx(theirs_each[2])
    assert figure.notes == [
        "1 reply/replies (empty, or a text pandas reads as NaN such as None, N/A, NA, null) are the text 'nan' to "
        "VLMEvalKit, a quirk of its xlsx round trip; vlmkit scores the reply given: index 12",
        "per-row scores listed are CIDEr x100 (CIDEr weighs n-grams by the whole set, so every row's CIDEr can move "
        "a little when one caption changes)",
    ]


def test_same_captions_on_both_sides_give_the_same_figure_and_a_failed_call_is_never_listed():
    result = score_captions(frame(["a b c d", None, "q r s"]))
    figure = result.vlmevalkit
    assert figure.metrics == result.metrics and figure.primary == "CIDEr"
    assert figure.differing == [] and figure.notes == []
    assert result.counts == {"total": 3, "scored": 3, "inference_errors": 1}


def test_a_reply_changed_without_nan_is_listed_without_the_nan_note():
    # a column whose every cell reads as a number comes back as numbers, all floats once one is ("8.0"): the
    # captions `7` and `9` become `7.0` and `9.0`
    result = score_captions(frame(["7", "8.0", "9"]))
    figure = result.vlmevalkit
    assert [(d.index, d.vlmkit, d.vlmevalkit) for d in figure.differing] == [(10, "7", "7.0"), (12, "9", "9.0")]
    assert len(figure.notes) == 1 and figure.notes[0].startswith("per-row scores listed are CIDEr x100")


def test_cider_interval_over_two_images_spans_their_two_scores():
    """A bootstrap of the mean over two images draws (v1, v1), (v1, v2), (v2, v1), (v2, v2): the resampled means
    are v1 (1/4), the mean (1/2), v2 (1/4), so the 2.5% and 97.5% points are the two images' own CIDEr."""
    df = pd.DataFrame({"index": [10, 11], "answer": ["['a b c d']", "['e f x h']"], "prediction": ["a b c d",
                                                                                              "e f g h"]})
    result = score_captions(df)
    each = sorted(result.per_sample["CIDEr"].tolist())
    interval = result.interval
    assert interval.metric == "CIDEr" and interval.n == 2
    assert interval.estimate == pytest.approx(result.metrics["CIDEr"])
    assert (interval.low, interval.high) == (pytest.approx(each[0]), pytest.approx(each[1]))


def test_whole_result_of_a_perfect_and_a_failed_caption():
    df = pd.DataFrame({"index": [10, 11, 12], "answer": ["['a b c d']", "['e f x h']", "['q r s t']"],
                       "prediction": ["a b c d", "Failed to obtain answer via API", "q r s t"]})
    result = score_captions(df)
    assert list(result.per_sample.columns) == ["index", "Bleu_1", "Bleu_2", "Bleu_3", "Bleu_4", "ROUGE_L", "CIDEr"]
    # sentence figures of a caption equal to its one reference: BLEU-n 1 and ROUGE-L 1, x100; the failed call
    # is the empty caption: 0 everywhere
    first = result.per_sample.iloc[0]
    assert [first[f"Bleu_{n}"] for n in range(1, 5)] == pytest.approx([100.0] * 4, rel=1e-6)
    assert first["ROUGE_L"] == pytest.approx(100.0)
    assert result.per_sample.iloc[1][["Bleu_1", "ROUGE_L", "CIDEr"]].tolist() == pytest.approx([0.0, 0.0, 0.0], abs=1e-6)
    assert result.counts["inference_errors"] == 1
    assert result.notes == [
        "1 row(s) whose call failed were scored as an empty caption (VLMEvalKit scores the text 'nan'): index 11"
    ]
    assert result.scale.kind == "percent" and result.table_suffix == "score"


def test_no_failed_call_no_note():
    result = score_captions(frame(["a b c d", "e f g h", "q r s"]))
    assert result.notes == []


def test_bad_tables_are_one_line_naming_the_scorer():
    with pytest.raises(ValueError) as err:
        score_captions(pd.DataFrame({"index": [1], "prediction": ["x"]}))
    assert str(err.value) == "caption scoring: the predictions table has no `answer` column (columns: index, prediction)"
    with pytest.raises(ValueError) as err:
        score_captions(pd.DataFrame({"index": [], "prediction": [], "answer": []}))
    assert str(err.value) == "caption scoring: the predictions table has no rows"
    from vlmkit.core.errors import DataError

    with pytest.raises(DataError) as err:
        score_captions(pd.DataFrame({"index": [4, 5], "prediction": ["x", "y"], "answer": ["['a']", "[]"]}))
    assert str(err.value) == "caption scoring: row 1 (index 5), field answer: no reference caption (expected a list " \
                             "of captions, got '[]')"


def test_without_the_library_both_entry_points_say_how_to_install_it(monkeypatch):
    import sys

    from vlmkit.core.errors import ConfigError
    from vlmkit.scoring.kinds.caption import coco_scores

    for module in ("pycocoevalcap.bleu.bleu", "pycocoevalcap.rouge.rouge", "pycocoevalcap.cider.cider"):
        monkeypatch.setitem(sys.modules, module, None)
    hint = "caption scoring (BLEU, ROUGE-L, CIDEr) needs pycocoevalcap, which is not installed: " \
           "pip install 'vlmkit[captions]'"
    with pytest.raises(ConfigError) as err:
        coco_scores({"0": ["a"]}, {"0": "a"})
    assert str(err.value) == hint
    with pytest.raises(ConfigError) as err:  # before any row is read: the bad row is never reached
        score_captions(pd.DataFrame({"index": [5], "prediction": ["y"], "answer": ["[]"]}))
    assert str(err.value) == hint
