"""MME-RealWorld-Lite through its catalog row: the Lite TSV's options are a Python list literal, which VLMEvalKit's
MMERealWorld.load_data turns into `The choices are listed below:\\n(A) ...` text (the prompt below is written out
from its build_prompt: question + ' ' + that text + '\\n' + its SYS line); the reading is extract_characters_regex
as it is at e8e78f05 (the prefix list with its commas restored in June 2026: `Best answer: C` reads C); VLMEvalKit's
figure (its upper-cased `<answer>` text, an empty reply read as A) worked out by hand."""

from __future__ import annotations

import pytest

from datasets_tsv.catalog import entries as catalog
from datasets_tsv.catalog.registry import build_row
from datasets_tsv.io.tsv_read import DatasetError
from vlmkit.scoring.kinds.regex_mcq import read_characters, vlmevalkit_characters

from tests.support.tsvs import b64, image_bytes, write_tsv

OPTIONS = "['(A) 1', '(B) 2', '(C) 3', '(D) 4', '(E) 5']"
PROMPT = (
    "How many cars are there? The choices are listed below:\n(A) 1\n(B) 2\n(C) 3\n(D) 4\n(E) 5\n"
    "Select the best answer to the above multiple-choice question based on the image. Respond with only the letter "
    "(A, B, C, D, or E) of the correct option. \nThe best answer is:"
)
PERCEPTION = ("Perception/Monitoring", "Vehicle/Counting")
REASONING = ("Reasoning/Autonomous_Driving", "Intention/Ego")
ROWS = [  # (category, l2-category, answer, reply)
    (*PERCEPTION, "C", "Best answer: C"),  # both C (before June 2026 VLMEvalKit read the B of `Best`)
    (*PERCEPTION, "E", "Best option: (E)"),  # both E
    # vlmkit: `The answer is` removed -> B. VLMEvalKit upper-cases the tag's text first (`THE ANSWER IS B`), no
    # prefix matches, and the first capital A-E is the E of `THE`
    (*PERCEPTION, "B", "<answer>The answer is B</answer>"),
    (*REASONING, "A", ""),  # vlmkit: nothing. VLMEvalKit: NaN after its xlsx round trip (a TypeError there): a miss
    (*REASONING, "A", "The answer"),  # the prefix leaves nothing: vlmkit reads nothing; VLMEvalKit: `` is in `(a)`
    (*REASONING, "D", "C"),  # a miss on both
]


def lite_rows() -> list[dict]:
    return [
        {"index": i, "image": b64(image_bytes()), "question": "How many cars are there?",
         "multi-choice options": OPTIONS, "answer": answer, "category": cat, "l2-category": l2}
        for i, (cat, l2, answer, _) in enumerate(ROWS)
    ]  # fmt: skip


def build(root, rows):
    write_tsv(root / "MME-RealWorld-Lite.tsv", rows)
    return build_row(catalog.catalog_rows()["MME-RealWorld-Lite"], root=root, progress=False, keep_local_tsv=True)


def test_lite_prompt_is_vlmevalkits(lmu_root):
    ds = build(lmu_root, lite_rows())
    msgs = ds.build_prompt(0)
    assert [p["type"] for p in msgs] == ["image", "text"]
    assert msgs[1]["value"] == PROMPT


def test_a_broken_options_list_is_one_line(lmu_root):
    rows = lite_rows()
    rows[1]["multi-choice options"] = "['(A) 1', '(B) 2'"
    ds = build(lmu_root, rows)
    with pytest.raises(DatasetError, match="multi-choice options.*not a list of option texts"):
        ds.build_prompt(1)


@pytest.mark.parametrize(
    ("reply", "ours", "theirs"),
    [
        ("Best answer: C", "C", "C"),
        ("Best option: (E)", "E", "E"),
        ("The best option is D", "D", "D"),
        ("<answer>The answer is B</answer>", "B", "E"),
        ("<answer>b</answer>", "B", "B"),
        ("The answer", None, "A"),
        ("Based on the image, the answer is C", "B", "B"),  # the first capital is the B of `Based`, on both sides
    ],
)
def test_characters_reading(reply, ours, theirs):
    assert read_characters(reply)[0] == ours
    assert vlmevalkit_characters(reply) == theirs


def test_both_figures_by_hand(lmu_root):
    ds = build(lmu_root, lite_rows())
    result = ds.evaluate(ds.data.assign(prediction=[r[3] for r in ROWS]))
    # vlmkit hits rows 0, 1, 2: Overall 3/6; Perception 3/3; Reasoning 0/3 (fractions, get_dimension_rating)
    assert result.metrics["Overall"] == pytest.approx(0.5)
    assert result.metrics["Perception"] == pytest.approx(1.0)
    assert result.metrics["Reasoning"] == pytest.approx(0.0)
    # VLMEvalKit hits rows 0, 1, 4: Overall 3/6; Perception 2/3; Reasoning 1/3
    fig = result.vlmevalkit
    assert fig.primary == "Overall" and fig.primary_value == pytest.approx(0.5)
    assert fig.metrics["Perception"] == pytest.approx(2 / 3)
    assert fig.metrics["Reasoning"] == pytest.approx(1 / 3)
    assert [d.to_dict() for d in fig.differing] == [
        {"index": 2, "vlmkit": "B", "vlmevalkit": "E", "vlmkit_score": 1.0, "vlmevalkit_score": 0.0},
        {"index": 4, "vlmkit": None, "vlmevalkit": "A", "vlmkit_score": 0.0, "vlmevalkit_score": 1.0},
    ]
    assert result.counts["vlmevalkit_nan_replies"] == 1
    assert any("TypeError" in n for n in fig.notes)
