"""SimpleVQA as VLMEvalKit scores it (simplevqa.py get_scores, utils/simplevqa.py SimpleVQAEval at e8e78f05): the
grading prompt byte for byte, the judge's verdicts read as VLMEvalKit reads them from a real HTTP judge, and the
figures worked by hand."""

from __future__ import annotations

import hashlib
from pathlib import Path

import pytest

from datasets_tsv.catalog.registry import build_dataset
from datasets_tsv.kinds.base import DatasetError
from tests.support.tsvs import b64, image_bytes, write_tsv
from vlmkit.scoring.benchmarks.simplevqa import figures, grading_prompt, verdict

# sha256 of VLMEvalKit's COMPARE_ANSWER_PROMPT.format(question='图中是什么？', answer='猫',
# candidates='\n[预测答案0]：一只猫'), computed by running its code at e8e78f05
PROMPT_SHA256 = "42878fd868abb9803202c294e3a88ebcf97ecf7e53d787fc53ca497cf2c58809"

VERDICTS = [
    # (judge reply, class counted; None: no reply asked (a failed call), "" / parse failure: no class)
    ('```json\n{"预测答案0": "正确"}\n```', "正确"),
    ('{"预测答案0": "**错误**"}', "错误"),  # ** removed: 2 characters, a class
    ('{"预测答案0": "未尝试"', "未尝试"),  # the closing brace added
    ('{"预测答案0": {"conclusion": "正确"}}', "正确"),
    ("I think it is right", "答案解析失败"),  # no JSON: counted in no class
    ('{"预测答案0": "The answer is right"}', "未尝试"),  # longer than 3 characters
    (None, "未尝试"),  # a failed call: not asked, not attempted
    ('{"预测答案0": "对"}', "对"),  # short and unknown: in no class
]


def test_prompt_is_vlmevalkits_byte_for_byte():
    prompt = grading_prompt("图中是什么？", "猫", "一只猫")
    assert hashlib.sha256(prompt.encode()).hexdigest() == PROMPT_SHA256
    assert prompt.startswith("请根据给定问题、标准答案和模型预测的答案来评估模型的回答是否正确。")
    assert "            问题: 图中是什么？\n            正确答案: 猫\n            预测答案: \n[预测答案0]：一只猫\n" in prompt


@pytest.mark.parametrize(("reply", "expected"), [(r, v) for r, v in VERDICTS if r is not None])
def test_verdicts_read_as_vlmevalkit_reads_them(reply, expected):
    assert verdict(reply) == expected


def test_figures_by_hand():
    m = figures([v for _, v in VERDICTS])
    # 8 rows: correct 2, incorrect 1, not attempted 3, two in no class
    assert (m["is_correct"], m["is_incorrect"], m["is_not_attempted"]) == (0.25, 0.125, 0.375)
    assert m["is_given_attempted"] == 0.375
    assert m["accuracy_given_attempted"] == pytest.approx(2 / 3)
    assert m["f1"] == pytest.approx(2 * (2 / 3) * 0.25 / (2 / 3 + 0.25))  # 4/11


def rows(n: int, *, images: int = 1) -> list[dict]:
    pic = b64(image_bytes())
    cell = pic if images == 1 else f"[{', '.join(repr(pic) for _ in range(images))}]"
    return [{"index": i, "image": cell, "question": f"问题{i}？", "answer": f"答案{i}"} for i in range(n)]


def test_through_a_real_http_judge(lmu_root: Path, tmp_path: Path):
    pytest.importorskip("vlmkit.run.judge_journal")
    from tests.support.servers import FaultServer, Recorded, Reply, chat_reply
    from vlm.api.openai_compat import OpenAICompatModel
    from vlmkit.run.judge_journal import JournalledJudge

    write_tsv(lmu_root / "SimpleVQA.tsv", rows(len(VERDICTS)))
    ds = build_dataset("SimpleVQA", root=lmu_root, progress=False, keep_local_tsv=True, judge=True)
    msgs = ds.build_prompt(0)
    assert [p["type"] for p in msgs] == ["image", "text"] and msgs[1]["value"] == "问题0？"

    def serve(request: Recorded) -> Reply:
        if request.method != "POST":
            return Reply(404, {"error": {"message": "no such route"}})
        prompt = request.body["messages"][-1]["content"]
        i = next(i for i in range(len(VERDICTS)) if f"问题: 问题{i}？\n" in prompt)
        assert prompt == grading_prompt(f"问题{i}？", f"答案{i}", f"reply {i}")
        return chat_reply(VERDICTS[i][0])

    predictions = [None if reply is None else f"reply {i}" for i, (reply, _) in enumerate(VERDICTS)]
    with FaultServer(serve) as server:
        model = OpenAICompatModel("judge-m", api_base=server.base_url, retries=0, timeout=10)
        result = ds.evaluate(ds.data.assign(prediction=predictions),
                             judge=JournalledJudge(model, tmp_path / "judge.jsonl", nproc=2))
        posts = [r for r in server.requests if r.method == "POST"]
    assert len(posts) == 7 and {p.body["temperature"] for p in posts} == {1.0}
    assert result.metrics == pytest.approx(figures([v for _, v in VERDICTS]))
    assert result.primary == "f1" and result.primary_value == pytest.approx(4 / 11)
    assert (result.counts["inference_errors"], result.counts["unread"], result.counts["by_judge"]) == (1, 2, 5)


def test_a_row_of_two_images_is_refused_in_one_line(lmu_root: Path):
    write_tsv(lmu_root / "SimpleVQA.tsv", rows(1, images=2))
    ds = build_dataset("SimpleVQA", root=lmu_root, progress=False, keep_local_tsv=True, inference_only=True)
    with pytest.raises(DatasetError, match=r"row 0 \(index 0\), field image: SimpleVQA asks about one image"):
        ds.build_prompt(0)
