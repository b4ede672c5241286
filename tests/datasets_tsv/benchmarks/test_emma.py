"""EMMA's dataset: VLMEvalKit's EMMA prompt (direct and CoT), images placed where the text names them."""

from __future__ import annotations

from datasets_tsv.benchmarks.emma import EMMADataset

from tests.support.tsvs import b64, image_bytes, write_tsv

JPEG = b64(image_bytes())


def test_emma_prompts(lmu_root):
    rows = [
        {"index": 0, "image": f"['{JPEG}', '{JPEG}']", "context": "Two shapes.", "question": "Which <image 2> is red?",
         "type": "MCQ", "A": "left", "B": "right", "answer": "A"},
        {"index": 1, "image": JPEG, "question": "How many sides?", "type": "Open", "answer": "4"},
    ]
    write_tsv(lmu_root / "EMMA.tsv", rows)
    direct = EMMADataset("EMMA", root=lmu_root, progress=False)
    assert direct.prompt_text(direct.line(0)) == (
        "Two shapes.\n\nWhich <image 2> is red?\n\nA: left\nB: right\n\n\n"
        "Answer with the option's letter from the given choices. Please ensure that your output only contains the "
        "final answer without any additional content (such as intermediate reasoning steps).")
    parts = direct.build_prompt(0)
    assert [p["type"] for p in parts] == ["text", "image", "text"]  # image 2 where the text names it
    assert parts[0]["value"] == "Two shapes.\n\nWhich "
    cot = EMMADataset("EMMA", root=lmu_root, progress=False, cot=True)
    assert cot.prompt_text(cot.line(1)) == (
        "How many sides?\n\nAnswer the question using a single word or phrase. Please solve the problem step by step. ")
    assert [p["type"] for p in cot.build_prompt(1)] == ["image", "text"]
