"""DUDE and SlideVQA as VLMEvalKit builds and scores them (dude.py, slidevqa.py, mmlongbenchdoc.py at e8e78f05): the
judge's extraction prompt byte for byte, the extraction read from the judge's reply, ANLS / EM / F1 worked by hand,
SlideVQA end to end through a real HTTP judge, DUDE's pages rendered from the PDF in its TSV."""

from __future__ import annotations

import base64
import hashlib
import io
from pathlib import Path

import pytest
from PIL import Image

from datasets_tsv.catalog.registry import NotScorableError, build_dataset
from datasets_tsv.kinds.base import DatasetError
from tests.support.tsvs import b64, image_bytes, write_tsv
from vlmkit.judging import FunctionJudge
from vlmkit.scoring.benchmarks.dude_slidevqa import anls, bag_f1, extracted_answer, extraction_prompt

# sha256 of VLMEvalKit's build_mmlongbench_gpt4_prompt({'question': 'What is the total?', 'prediction': 'The total
# is 42.'}), computed by running its code at e8e78f05
PROMPT_SHA256 = "2629d93ee7c81b2e2eccbe092bdb075e9b0455d9b4ec2e3e4f382bb7611f482e"


def test_the_extraction_prompt_is_vlmevalkits_byte_for_byte():
    prompt = extraction_prompt("What is the total?", "The total is 42.")
    assert hashlib.sha256(prompt.encode()).hexdigest() == PROMPT_SHA256
    assert prompt.startswith("\nGiven the question and analysis, you are tasked to extract answers")
    assert prompt.endswith("Answer format: String\n\n---\nQuestion:What is the total?\nAnalysis: The total is 42.")


def test_reading_and_rules_by_hand():
    assert extracted_answer("Extracted answer: 42\nAnswer format: Integer") == "42"
    assert extracted_answer("```\nExtracted answer: [1, 2]\n```") == "[1, 2]\n```"  # up to `Answer format:`
    assert extracted_answer("I cannot tell.") is None
    assert anls("paris", "paris") == 1.0
    assert anls("blue sky", "blue skies") == pytest.approx(0.7)  # 3 edits over 10
    assert anls("42 million", "42") == 0.0  # 1 - 8/10 = 0.2, at most 0.5
    assert anls("", "") == 1.0
    assert bag_f1("42 million", "42") == pytest.approx(2 / 3)  # recall 1/2, precision 1
    assert bag_f1("a", "") == 0.0


SLIDES = [
    # (answer, reply, what the judge extracts: None = a reply without `Extracted answer:`)
    ("Paris", "The capital is Paris.", "Paris"),  # anls 1, EM 1, F1 1
    ("42 million", "about 42", "42"),  # anls 0, EM 0, F1 2/3
    ("Blue Sky", "blue skies", "Blue skies"),  # anls 0.7, EM 0, F1 1/2
    ("", "It is not in the slides.", "Not answerable"),  # an empty answer is `Not answerable`: 1, 1, 1
    ("Rome", None, "Rome"),  # a failed call: not asked, 0
    ("Oslo", "Oslo?", None),  # nothing extracted: 0
]


def slide_rows() -> list[dict]:
    pages = f"['{b64(image_bytes('red'))}', '{b64(image_bytes('blue'))}']"
    return [{"index": i, "image": pages, "image_path": f"['s{i}_0.jpg', 's{i}_1.jpg']", "question": f"Q{i}?",
             "answer": answer} for i, (answer, _, _) in enumerate(SLIDES)]  # fmt: skip


def judge_reply(prompt: str) -> str:
    for i, (_, _, extracted) in enumerate(SLIDES):
        if f"---\nQuestion:Q{i}?\nAnalysis: " in prompt:
            return "I am not sure." if extracted is None else f"Extracted answer: {extracted}\nAnswer format: String"
    raise AssertionError(f"unexpected prompt {prompt[-80:]!r}")


def test_slidevqa_through_a_real_http_judge(lmu_root: Path, tmp_path: Path):
    pytest.importorskip("vlmkit.run.judge_journal")
    from tests.support.servers import FaultServer, Recorded, Reply, chat_reply
    from vlm.api.openai_compat import OpenAICompatModel
    from vlmkit.run.judge_journal import JournalledJudge

    write_tsv(lmu_root / "SLIDEVQA_MINI.tsv", slide_rows())
    ds = build_dataset("SLIDEVQA_MINI", root=lmu_root, progress=False, keep_local_tsv=True, judge=True)
    msgs = ds.build_prompt(0)
    assert [p["type"] for p in msgs] == ["image", "image", "text"] and msgs[-1]["value"] == "Q0?"

    def serve(request: Recorded) -> Reply:
        if request.method != "POST":
            return Reply(404, {"error": {"message": "no such route"}})
        return chat_reply(judge_reply(request.body["messages"][-1]["content"]))

    with FaultServer(serve) as server:
        model = OpenAICompatModel("judge-m", api_base=server.base_url, retries=0, timeout=10)
        result = ds.evaluate(ds.data.assign(prediction=[s[1] for s in SLIDES]),
                             judge=JournalledJudge(model, tmp_path / "judge.jsonl", nproc=2))
        posts = [r for r in server.requests if r.method == "POST"]
    assert len(posts) == 5  # the failed call is not sent
    assert {p.body["temperature"] for p in posts} == {0.0} and {p.body["max_tokens"] for p in posts} == {128}
    assert posts[0].body["messages"][-1]["content"] in {extraction_prompt(f"Q{i}?", str(s[1]))
                                                        for i, s in enumerate(SLIDES)}  # fmt: skip
    m = result.metrics
    assert m["anls"] == pytest.approx((1 + 0 + 0.7 + 1 + 0 + 0) / 6)
    assert m["EM"] == pytest.approx(2 / 6)
    assert m["F1"] == pytest.approx((1 + 2 / 3 + 0.5 + 1 + 0 + 0) / 6)
    assert result.primary == "anls"
    assert (result.counts["inference_errors"], result.counts["unread"], result.counts["by_judge"]) == (1, 1, 4)
    assert result.vlmevalkit.metrics == pytest.approx(m)


def test_without_a_judge_it_is_refused_in_one_line(lmu_root: Path):
    write_tsv(lmu_root / "SLIDEVQA.tsv", slide_rows())
    with pytest.raises(NotScorableError, match="SLIDEVQA is scored by an LLM judge .*--judge"):
        build_dataset("SLIDEVQA", root=lmu_root, progress=False, keep_local_tsv=True)
    ds = build_dataset("SLIDEVQA", root=lmu_root, progress=False, keep_local_tsv=True, inference_only=True)
    with pytest.raises(DatasetError, match="SLIDEVQA is scored by an LLM judge .*--judge"):
        ds.evaluate(ds.data.assign(prediction=[s[1] for s in SLIDES]))


def pdf_b64(colours: list[str], size: tuple[int, int] = (40, 30)) -> str:
    """A PDF of one page per colour, each `size` points (pillow writes the image's pixels at 72 dpi)."""
    pages = [Image.new("RGB", size, c) for c in colours]
    buf = io.BytesIO()
    pages[0].save(buf, format="PDF", save_all=True, append_images=pages[1:], resolution=72.0)
    return base64.b64encode(buf.getvalue()).decode()


def test_dude_renders_its_pdf_pages_and_scores_the_extraction(lmu_root: Path):
    pytest.importorskip("pypdfium2", reason="the optional `pdf` extra (pypdfium2)")
    rows = [{"index": 0, "image": pdf_b64(["red", "blue"]), "image_path": "['d0_1.jpg', 'd0_2.jpg']",
             "question": "What colour is page 2?", "answer": "Blue"},
            {"index": 1, "image": pdf_b64(["green"]), "image_path": "['d1_1.jpg']", "question": "How many pages?",
             "answer": ""}]  # fmt: skip
    write_tsv(lmu_root / "DUDE_MINI.tsv", rows)
    ds = build_dataset("DUDE_MINI", root=lmu_root, progress=False, keep_local_tsv=True, judge=True)
    msgs = ds.build_prompt(0)
    assert [p["type"] for p in msgs] == ["image", "image", "text"] and msgs[-1]["value"] == "What colour is page 2?"
    assert [Path(p["value"]).name for p in msgs[:2]] == ["d0_1.jpg", "d0_2.jpg"]
    with Image.open(msgs[1]["value"]) as page:
        assert page.format == "JPEG" and page.size == (80, 60)  # 40 x 30 points at 144 dpi
        r, g, b = page.convert("RGB").getpixel((40, 30))
        assert b > 200 and r < 60 and g < 60

    extracted = {"What colour is page 2?": "blue.", "How many pages?": "Not answerable"}
    judge = FunctionJudge(lambda req: "Extracted answer: " + next(v for k, v in extracted.items()
                                                                  if f"Question:{k}\n" in req.prompt))  # fmt: skip
    result = ds.evaluate(ds.data.assign(prediction=["It is blue.", "I cannot tell."]), judge=judge)
    # "blue" vs "blue.": 1 edit over 5 -> 0.8; an empty answer is `not answerable`: 1
    assert result.metrics == pytest.approx({"anls": (0.8 + 1.0) / 2})
    assert result.scorer == "dude" and result.vlmevalkit is None


def test_dude_names_a_bad_pdf_in_one_line(lmu_root: Path):
    pytest.importorskip("pypdfium2", reason="the optional `pdf` extra (pypdfium2)")
    write_tsv(lmu_root / "DUDE.tsv", [{"index": 7, "image": b64(b"not a pdf"), "image_path": "['x_1.jpg']",
                                       "question": "Q?", "answer": "A"}])  # fmt: skip
    ds = build_dataset("DUDE", root=lmu_root, progress=False, keep_local_tsv=True, judge=True)
    with pytest.raises(DatasetError, match=r"DUDE.tsv: row 0 \(index 7\), field image: not a PDF"):
        ds.build_prompt(0)
