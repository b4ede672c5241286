"""VLMEvalKit's figure beside vlmkit's for the MCQ scorer (issue 23): tables of the shapes of a plain MCQ benchmark
(AI2D / MMStar: question, options A-D, answer, category) and of MMBench (circular rotations, hint, split,
l2-category), replies in the formats users meet, and both figures worked out by hand from VLMEvalKit's code at
e8e78f05 (utils/matching_util.can_infer, utils/multiple_choice.mcq_vanilla_eval / mcq_circular_eval, the xlsx round
trip of vlmeval/smp/file.py)."""

from __future__ import annotations

import pandas as pd
import pytest

from vlmkit.judging import FunctionJudge
from vlmkit.scoring.common.choice_judge import mcq_judge_prompt
from vlmkit.scoring.common.breakdown import headline_split
from vlmkit.scoring.kinds.mcq import score_mcq
from vlmkit.scoring.kinds.mcq_figure import vlmevalkit_choices

ANIMALS = {"A": "cat", "B": "dog", "C": "bird", "D": "fish"}
ARTICLES = {"A": "an", "B": "the", "C": "some", "D": "many"}
LONG_B = "B. It is a dog, since it has floppy ears and barks at the mailman"


def _row(index, prediction, answer, options=ANIMALS, category="x", **extra):
    return {"index": index, "question": "What is it?", "prediction": prediction, "answer": answer, **options,
            "category": category, **extra}


def vanilla_table() -> pd.DataFrame:
    return pd.DataFrame([
        _row(0, "B", "B"),
        _row(1, "The answer is (B).", "B"),
        # vlmkit: leading letter B. VLMEvalKit: the only letter token `B` is the first of 15 tokens, not among the
        # last 4; the reply (64 chars) is longer than twice the options (2 * 14 = 28): no text inference -> nothing
        _row(2, LONG_B, "B"),
        # an empty reply: nothing to vlmkit; `nan` to VLMEvalKit, and option A's text `an` is inside `nan` -> A
        _row(3, "", "A", ARTICLES),
        _row(4, "None", "C", category="y"),  # `nan` to VLMEvalKit too: no option text inside it; a miss for both
        _row(5, "Cannot determine the answer", "D", category="y"),  # VLMEvalKit's refusal `Z`; vlmkit: nothing
        # vlmkit: `A` is the article, `dog` option B's text -> B. VLMEvalKit: the token `A` among the last 4 -> A
        _row(6, "A dog.", "B", category="y"),
        _row(7, None, "A", category="y"),  # a failed call: a miss on both sides, never a difference
    ])  # fmt: skip


def test_vanilla_figure_by_hand():
    result = score_mcq(vanilla_table(), circular=False)
    # vlmkit hits rows 0, 1, 2, 6: 4/8; x = rows 0-3: 3/4; y = rows 4-7: 1/4
    assert result.metrics == pytest.approx({"Overall": 0.5, "x": 0.75, "y": 0.25})
    fig = result.vlmevalkit
    # VLMEvalKit hits rows 0, 1, 3: 3/8; x: 3/4; y: 0/4
    assert fig.primary == "Overall" and fig.commit == "e8e78f05"
    assert fig.metrics == pytest.approx({"Overall": 0.375, "x": 0.75, "y": 0.0})
    assert [d.to_dict() for d in fig.differing] == [
        {"index": 2, "vlmkit": "B", "vlmevalkit": None, "vlmkit_score": 1.0, "vlmevalkit_score": 0.0},
        {"index": 3, "vlmkit": None, "vlmevalkit": "A", "vlmkit_score": 0.0, "vlmevalkit_score": 1.0},
        {"index": 6, "vlmkit": "B", "vlmevalkit": "A", "vlmkit_score": 1.0, "vlmevalkit_score": 0.0},
    ]
    assert result.per_sample["vlmevalkit"].tolist() == ["B", "B", None, "A", None, "Z", "A", None]
    # the NaN quirk: rows 3 (empty) and 4 (`None`), counted and noted on both sides
    assert result.counts["vlmevalkit_nan_replies"] == 2
    assert any("as the text `nan`" in n and "index 3, 4" in n for n in result.notes)
    assert any("index 3, 4" in n for n in fig.notes)
    block = result.to_dict()["vlmevalkit"]
    assert block["primary_metric"] == {"name": "Overall", "value": 0.375} and block["differing_rows"] == 3


def test_the_figure_asks_the_judge_where_vlmevalkits_rule_fails():
    """With a judge, VLMEvalKit asks it for every reply can_infer cannot read (row 2's long reply, row 4's `nan`);
    vlmkit's rules read row 2, so only VLMEvalKit's figure needs that ask, with the reply as VLMEvalKit holds it."""
    asked = []

    def judge_fn(request):
        asked.append(request.prompt)
        return "B" if "floppy ears" in request.prompt else "Z"

    result = score_mcq(vanilla_table(), circular=False, judge=FunctionJudge(judge_fn, name="key"))
    assert mcq_judge_prompt("What is it?", ANIMALS, LONG_B) in asked
    assert mcq_judge_prompt("What is it?", ANIMALS, "nan") in asked  # row 4 as VLMEvalKit reads it
    assert mcq_judge_prompt("What is it?", ANIMALS, "None") in asked  # row 4 as vlmkit shows it
    # VLMEvalKit: rows 0, 1, 2 (judge: B), 3: 4/8; row 4's judge says Z: a miss
    assert result.vlmevalkit.metrics["Overall"] == pytest.approx(0.5)
    assert result.per_sample["vlmevalkit"].tolist()[:5] == ["B", "B", "B", "A", "Z"]
    assert [d.index for d in result.vlmevalkit.differing] == [3, 6]


def mmbench_table() -> pd.DataFrame:
    """Three circular groups of two rotations (index g and g + 1e6), MMBench's columns."""

    def row(index, prediction, answer, options, category):
        return {"index": index, "question": "Which one?", "hint": "Look closely.", "prediction": prediction,
                "answer": answer, **options, "category": category, "l2-category": "coarse_perception",
                "split": "dev"}

    long_a = "A. It is a dog, with floppy ears, wagging its tail happily"
    return pd.DataFrame([
        row(1, "B", "B", {"A": "cat", "B": "dog"}, "x"),
        # vlmkit: leading A, a hit. VLMEvalKit: `A` is the first of 11 tokens, not among the last 4, and the reply is
        # longer than twice the options (12): nothing read, so the group is a miss under exact matching
        row(1_000_001, long_a, "A", {"A": "dog", "B": "cat"}, "x"),
        row(2, "", "A", {"A": "an", "B": "the"}, "y"),  # vlmkit: nothing; VLMEvalKit: `nan` holds `an` -> A
        row(1_000_002, "B", "B", {"A": "the", "B": "an"}, "y"),
        row(3, "A", "A", {"A": "cat", "B": "dog"}, "y"),
        row(1_000_003, "(B)", "B", {"A": "dog", "B": "cat"}, "y"),
    ])  # fmt: skip


def test_circular_figure_by_hand():
    result = score_mcq(mmbench_table(), circular=True)
    # groups: 1 (x), 2 (y), 3 (y). vlmkit: 1 hit, 2 miss, 3 hit -> 2/3, x 1, y 1/2; CP (all rows) 2/3
    assert result.metrics == pytest.approx({"Overall": 2 / 3, "CP": 2 / 3, "x": 1.0, "y": 0.5})
    # VLMEvalKit: 1 miss, 2 hit, 3 hit -> 2/3, x 0, y 1
    assert result.vlmevalkit.metrics == pytest.approx({"Overall": 2 / 3, "CP": 2 / 3, "x": 0.0, "y": 1.0})
    assert [(d.index, d.vlmkit, d.vlmevalkit) for d in result.vlmevalkit.differing] == [
        (1_000_001, "A", None), (2, None, "A")
    ]
    assert result.per_sample["vlmevalkit_group_hit"].tolist() == [False, False, True, True, True, True]


def test_choices_as_vlmevalkit_reads_them_back():
    """Option columns after the xlsx round trip: a NaN-looking text is no option; a column of numbers with a gap
    comes back as floats (`5` -> `5.0`; `N/A` read as NaN is a gap too: `2` -> `2.0`), one without gaps as ints."""
    got = vlmevalkit_choices({"A": ["3", "1"], "B": ["N/A", "2"], "C": ["5", None]})
    assert got == [{"A": "3", "C": "5.0"}, {"A": "1", "B": "2.0"}]


@pytest.mark.parametrize(
    ("splits", "expected"),
    [
        (["dev", "validation"], "validation"),  # MMMU_DEV_VAL: VLMEvalKit reports `split=validation|Overall`
        (["dev", "test"], "test"),
        (["dev", "val"], "val"),
        (["dev", "train"], "dev"),
        (["b", "a"], "a"),  # no known name: the first in order
        (["dev"], None),  # a single split: its Overall is the headline as it is
    ],
)
def test_headline_split_follows_vlmevalkit(splits, expected):
    assert headline_split(splits) == expected


def test_videomme_figure_by_hand():
    """Video-MME (utils/videomme.extract_characters_regex at e8e78f05 still lacks two commas in its prefix list, so
    `Best answer: C` reads as the B of `Best`; a reply its rule cannot read is a miss whatever its judge says,
    since a Video-MME question holds no option lines; figures rounded to 3 decimals as it prints them)."""
    from vlmkit.scoring.kinds.video_mcq import score_videomme

    def row(index, prediction, answer, duration):
        return {"index": index, "prediction": prediction, "answer": answer, "question": "What happens first?",
                "candidates": "['A. a cat runs', 'B. a dog sits', 'C. a bird sings', 'D. a fish swims']",
                "duration": duration, "domain": "Knowledge", "sub_category": "Humanity & History",
                "task_type": "Temporal Reasoning"}

    df = pd.DataFrame([
        row(0, "Best answer: C", "C", "short"),  # vlmkit C, a hit; VLMEvalKit B, a miss
        row(1, "The answer is B", "B", "short"),  # B on both
        row(2, "", "A", "medium"),  # nothing on both (`nan` to VLMEvalKit: no A-D in it)
        row(3, "Option: D", "D", "medium"),  # `Option:` is removed on both: D
        row(4, "C", "D", "medium"),  # a miss on both
    ])  # fmt: skip
    result = score_videomme(df)
    # vlmkit: [1, 1, 0, 1, 0] -> 0.6; short 2/2; medium 1/3
    assert result.metrics["Overall"] == pytest.approx(0.6)
    assert (result.metrics["short"], result.metrics["medium"]) == pytest.approx((1.0, 1 / 3))
    # VLMEvalKit: [0, 1, 0, 1, 0] -> 0.4; short 1/2; medium 1/3 printed as 0.333
    fig = result.vlmevalkit
    assert (fig.metrics["Overall"], fig.metrics["short"], fig.metrics["medium"]) == (0.4, 0.5, 0.333)
    assert [(d.index, d.vlmkit, d.vlmevalkit) for d in fig.differing] == [(0, "C", "B")]
    assert result.counts["vlmevalkit_nan_replies"] == 1


def test_a_run_shows_both_figures(tmp_path):
    """`vlmkit run` against a local OpenAI-compatible server on an MCQ TSV whose replies VLMEvalKit reads otherwise:
    results.json carries `scoring.vlmevalkit` and the console's summary has the `vlmevalkit` column beside `value`."""
    import json
    import re

    from tests.support.run_helpers import chat_only, row_of, run_served
    from tests.support.servers import FaultServer, chat_reply
    from tests.support.tsvs import b64, image_bytes, write_tsv

    replies = {0: "B", 1: "A dog.", 2: "None", 3: "C"}
    answers = {0: "B", 1: "B", 2: "A", 3: "C"}
    lmu, work = tmp_path / "lmu", tmp_path / "work"
    write_tsv(lmu / "MyQuiz.tsv", [
        {"index": i, "image": b64(image_bytes()), "question": f"[{i}] What animal is this?", **ANIMALS,
         "answer": answers[i]}
        for i in range(4)
    ])  # fmt: skip
    with FaultServer(chat_only(lambda request: chat_reply(replies[row_of(request)]))) as server:
        result = run_served(server.base_url, work, lmu, data="MyQuiz")
    assert result.returncode == 0, result.stderr
    scoring = json.loads((work / "served" / "MyQuiz" / "results.json").read_text())["scoring"]
    # vlmkit: rows 0, 1 (`A dog.`: the article, then option B's text), 3 -> 3/4. VLMEvalKit: row 1 is the token A
    # among the last 4 -> A, a miss; row 2 `None` is `nan` to it, no option inside: 2/4
    assert scoring["primary_metric"]["value"] == pytest.approx(0.75)
    block = scoring["vlmevalkit"]
    assert block["commit"] == "e8e78f05" and block["primary_metric"] == {"name": "Overall", "value": 0.5}
    assert block["differing_rows"] == 1
    assert block["rows"] == [{"index": 1, "vlmkit": "B", "vlmevalkit": "A", "vlmkit_score": 1.0,
                              "vlmevalkit_score": 0.0}]
    assert any("as the text `nan`" in note and "index 2" in note for note in scoring["notes"])
    lines = result.stdout.splitlines()
    header = next(line for line in lines if re.search(r"\bvlmevalkit\b", line) and "value" in line)
    columns = header.split()
    row = next(line for line in lines if "MyQuiz" in line and "0.7500" in line).split()
    assert columns.index("vlmevalkit") > columns.index("value")  # beside it, after the interval
    assert row[columns.index("value")] == "0.7500" and row[columns.index("vlmevalkit")] == "0.5000"


def test_spatial_figure_reads_na_as_nan():
    """spatial_bench (cal_scores: `str(x)` of each prediction read back from the xlsx): `N/A` is NaN there, so the
    lone `A` vlmkit's copy of its rule finds in `N/A` is never seen by VLMEvalKit."""
    from vlmkit.scoring.benchmarks.spatial_mcq import score_spatial_mcq

    df = pd.DataFrame([
        {"index": 0, "prediction": "B", "answer": "B", "category": "x"},
        {"index": 1, "prediction": "N/A", "answer": "A", "category": "x"},
    ])  # fmt: skip
    result = score_spatial_mcq(df)
    # vlmkit: 2/2 -> 100; VLMEvalKit: row 1 reads `nan`, no letter: 1/2 -> 50
    assert result.metrics["Overall"] == pytest.approx(100.0)
    assert result.vlmevalkit.metrics == pytest.approx({"Overall": 50.0, "x_accuracy": 50.0})
    assert [(d.index, d.vlmkit, d.vlmevalkit) for d in result.vlmevalkit.differing] == [(1, "A", None)]


def test_naturalbench_and_vmcbench_figures():
    """NaturalBench's and VMCBench's rules are VLMEvalKit's; `nan` reads as nothing on both sides, so the figures
    agree but for VMCBench's rounding to 2 decimals (1/3 -> 33.33)."""
    from vlmkit.scoring.benchmarks.naturalbench import score_naturalbench
    from vlmkit.scoring.benchmarks.vmcbench import score_vmcbench

    nb = pd.DataFrame([
        {"index": i, "prediction": p, "type": "yes_no", "answer": a}
        for i, (p, a) in enumerate([("Yes", "Yes"), ("", "No"), ("No", "No"), ("yes", "Yes")])
    ])  # fmt: skip
    result = score_naturalbench(nb)
    # readings 1, -1, 0, 1: binary 3/4, question: q0 (1, -1) no, q1 (0, 1) yes -> 1/2; group 0
    assert result.vlmevalkit.metrics == result.metrics == pytest.approx(
        {"question_score": 0.5, "image_score": 0.5, "binary_score": 0.75, "group_score": 0.0})
    assert result.vlmevalkit.differing == [] and any("index 1" in n for n in result.vlmevalkit.notes)

    vmc = pd.DataFrame([
        {"index": i, "prediction": p, "answer": a, "category": "MMStar", "A": "cat", "B": "dog"}
        for i, (p, a) in enumerate([("(A)", "A"), ("None", "B"), ("B", "A")])
    ])  # fmt: skip
    result = score_vmcbench(vmc)
    assert result.metrics["Overall"] == pytest.approx(100 / 3)
    assert result.vlmevalkit.metrics == {"Overall": 33.33, "MMStar": 33.33}


def test_mvbench_figure_by_hand():
    """MVBench (MVBench.evaluate at e8e78f05): a reply read back as NaN is skipped and its NaN score counts as right
    in get_dimension_rating; a blank first word (after its strip) is part of `(b)`: right."""
    from vlmkit.scoring.kinds.video_mcq import score_mvbench

    def row(index, prediction):
        return {"index": index, "prediction": prediction, "answer": "stand", "question": "What does the man do?",
                "candidates": "['sit', 'stand', 'run']", "task_type": "Action Sequence"}

    df = pd.DataFrame([row(0, "(B) stand"), row(1, ""), row(2, "C"), row(3, "  ")])
    result = score_mvbench(df)
    # vlmkit: only row 0 -> 25.0. VLMEvalKit: rows 0, 1 (NaN: right), 3 (blank first word: right) -> 75.0
    assert result.metrics["Overall"] == pytest.approx(25.0)
    assert result.vlmevalkit.metrics == {"Overall": 75.0, "Action Sequence": 75.0}
    assert [(d.index, d.vlmkit, d.vlmevalkit, d.vlmevalkit_score) for d in result.vlmevalkit.differing] == [
        (1, None, None, 1.0), (3, None, "B", 1.0)
    ]


def test_medq_figure_reads_the_first_letter():
    """MedQ-DEG-Bench's _extract_option_letter at e8e78f05: its `answer is X` step never matches (a lower-case
    pattern in the upper-cased reply), so the first lone letter decides there."""
    from vlmkit.scoring.kinds.regex_mcq import score_regex_mcq

    df = pd.DataFrame([
        {"index": 0, "prediction": "I doubt A; the answer is C", "answer": "C"},  # vlmkit C; VLMEvalKit A
        {"index": 1, "prediction": "b", "answer": "B"},  # B on both
    ])  # fmt: skip
    result = score_regex_mcq(df, rule="first_letter", answer_match="upper", letters="ABCDE")
    assert result.metrics["Overall"] == pytest.approx(100.0)
    assert result.vlmevalkit.metrics["Overall"] == pytest.approx(50.0)
    assert [(d.index, d.vlmkit, d.vlmevalkit) for d in result.vlmevalkit.differing] == [(0, "C", "A")]
