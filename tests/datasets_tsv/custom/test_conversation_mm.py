"""Ark-style conversations (parameters per row, multi-turn shape, sessions) and mm_custom media rows."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from datasets_tsv.custom import CustomDataError, build_custom_dataset

from tests.datasets_tsv.custom.conftest import make_audio, make_image, make_video, write


def jsonl(path: Path, rows: list[dict]) -> Path:
    return write(path, "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows))


def test_parameters_precedence(tmp_path):
    rows = [
        {"prompt": "a", "parameters": {"temperature": 0.2, "max_tokens": 100, "stop": ["\n\n"]}},
        {"prompt": "b", "parameters": {"top_p": 0.5, "max_tokens": 100}, "max_tokens": 50},
        {"prompt": "c"},
    ]
    path = jsonl(tmp_path / "p.jsonl", rows)
    ds = build_custom_dataset(path)
    assert ds.generation_params(0) == {"temperature": 0.2, "max_tokens": 100, "stop": ["\n\n"]}
    assert ds.generation_params(1) == {"top_p": 0.5, "max_tokens": 50}  # the row's max_tokens wins
    assert ds.generation_params(2) is None
    write(Path(str(path) + ".meta.json"), json.dumps({"output_config": {"method": "percentage", "params": {"percentage_distribute": [[7, 1]]}}}))
    metad = build_custom_dataset(path)
    assert [metad.generation_params(i)["max_tokens"] for i in range(3)] == [7, 7, 7]  # the meta wins over both
    assert metad.generation_params(0)["temperature"] == 0.2


def test_parameters_as_json_text_in_csv(tmp_path):
    path = write(tmp_path / "c.csv", 'query,parameters\nhello,"{""temperature"": 0.0, ""seed"": 3}"\n')
    ds = build_custom_dataset(path)
    assert ds.format == "conversation" and ds.generation_params(0) == {"temperature": 0.0, "seed": 3}


def test_conversation_without_answers_is_inference_only(tmp_path):
    ds = build_custom_dataset(jsonl(tmp_path / "n.jsonl", [{"system": "s", "prompt": "p"}]))
    assert "answer" not in ds.data.columns and ds.line(0)["messages"] == [{"role": "system", "content": "s"}, {"role": "user", "content": "p"}]


def test_messages_with_parts_and_metric_options(tmp_path):
    rows = [{"messages": [{"role": "user", "content": [{"type": "text", "value": "x"}, {"type": "text", "value": "y"}]}], "answer": "z"}]
    ds = build_custom_dataset(jsonl(tmp_path / "parts.jsonl", rows), qa_metrics=("contains",))
    assert ds.build_prompt(0) == [{"role": "user", "content": [{"type": "text", "value": "x"}, {"type": "text", "value": "y"}]}]
    assert ds.line(0)["question"] == "x\ny"
    table = ds.data.copy()
    table["prediction"] = ["it is z"]
    assert ds.evaluate(table).metrics == {"contains": 100.0}


@pytest.mark.parametrize(
    ("row", "pattern"),
    [
        ({"messages": [{"role": "user", "content": "1"}, {"role": "assistant", "content": "2"}], "answer": "x"}, r"line 2, field messages: must end with a user turn \(the last turn is 'assistant'\)"),
        ({"messages": [{"role": "bot", "content": "1"}]}, r"line 2, field messages\[0\]: unknown role 'bot' \(expected one of system, user, assistant\)"),
        ({"messages": []}, r"line 2, field messages: must be a non-empty list"),
        ({"messages": [{"role": "user"}]}, r"line 2, field messages\[0\]: no `content`"),
        ({"prompt": "x", "parameters": {"temperature": 1, "max_new_tokens": 5}}, r"line 2, field parameters: unknown generation parameter\(s\) max_new_tokens"),
        ({"prompt": "x", "parameters": {"logprobs": True}}, r"line 2, field parameters\.logprobs: true is not supported"),
        ({"prompt": "x", "parameters": {"max_tokens": -3}}, r"line 2, field parameters\.max_tokens: -3 is not a positive integer"),
        ({"prompt": "x", "parameters": "temperature=1"}, r"line 2, field parameters: neither JSON nor a Python dict literal"),
        ({"prompt": "x", "parameters": [1]}, r"line 2, field parameters: must be an object"),
        ({"system": "s"}, r"line 2, field question: missing or empty"),
    ],
)
def test_bad_conversation_rows(tmp_path, row, pattern):
    path = jsonl(tmp_path / "bad.jsonl", [{"prompt": "fine"}, row])
    with pytest.raises(CustomDataError, match=pattern) as info:
        build_custom_dataset(path)
    assert str(path) in str(info.value) and "\n" not in str(info.value)


def test_bad_sessions(tmp_path):
    head = "session_id,system_prompt,query,reference_response,response\n"
    cases = {
        "0,s1,q1,,\n0,s2,q2,ref,\n": r"line 2, field system_prompt: rows of session '0' differ",
        "0,s,q1,ref,\n0,s,q2,ref,\n": r"line 2, field reference_response: only the last row of session '0'",
        "0,s,q1,,r1\n0,s,q2,ref,filled\n": r"line 3, field response: the last row of a session",
    }
    for body, pattern in cases.items():
        with pytest.raises(CustomDataError, match=pattern):
            build_custom_dataset(write(tmp_path / "s.csv", head + body))


# -- mm_custom -------------------------------------------------------------------------------------------------
def test_relative_absolute_and_nested_paths(tmp_path):
    folder = tmp_path / "data"
    make_image(folder / "img" / "a.png", "red")
    make_video(tmp_path / "clips" / "v.mp4")
    make_audio(folder / "s.flac")
    rows = [
        {"type": "image", "path": ["img/a.png"], "question": "what colour?", "answer": "red"},
        {"type": "video", "path": [str(tmp_path / "clips" / "v.mp4")], "question": "what happens?"},
        {"type": "audio", "path": "s.flac", "question": "what sound?", "answer": ["beep", "tone"]},
    ]
    ds = build_custom_dataset(jsonl(folder / "rows.jsonl", rows))
    assert ds.build_prompt(0) == [{"type": "image", "value": str(folder / "img" / "a.png")}, {"type": "text", "value": "what colour?"}]
    assert ds.build_prompt(1)[0] == {"type": "video", "value": str(tmp_path / "clips" / "v.mp4")}
    assert ds.build_prompt(2)[0] == {"type": "audio", "value": str(folder / "s.flac")}
    table = ds.data.copy()
    table["prediction"] = ["Red.", "people walk", "a tone, loud"]
    result = ds.evaluate(table)
    assert result.metrics == {"exact_match": 50.0, "contains": 100.0} and result.counts["no_target"] == 1


def test_mm_rows_with_options_are_mcq(tmp_path):
    make_image(tmp_path / "x.jpg")
    rows = [{"type": "image", "path": ["x.jpg"], "question": "colour?", "A": "red", "B": "blue", "answer": "red"}]
    ds = build_custom_dataset(jsonl(tmp_path / "m.jsonl", rows))
    assert ds.data_type == "mcq" and ds.line(0)["answer"] == "A"
    msgs = ds.build_prompt(0)
    assert msgs[0]["type"] == "image" and msgs[1]["value"].startswith("Question: colour?\nOptions:\nA. red\nB. blue\n")


def test_folder_of_images_with_an_image_jsonl(tmp_path):
    folder = tmp_path / "shots"
    make_image(folder / "1.jpg", "red")
    make_image(folder / "2.jpg", "blue")
    jsonl(folder / "questions.jsonl", [{"image": "1.jpg", "question": "colour?", "answer": "red"}, {"image": ["1.jpg", "2.jpg"], "question": "compare", "answer": "x"}])
    ds = build_custom_dataset(folder)
    assert ds.name == "shots_questions" and ds.format == "mm_custom"
    assert [p["type"] for p in ds.build_prompt(1)] == ["image", "image", "text"]
    assert "image" not in ds.data.columns and ds.line(0)["path"] == [str(folder / "1.jpg")]


@pytest.mark.parametrize(
    ("row", "pattern"),
    [
        ({"type": "image", "path": ["ok.jpg", "missing.jpg"], "question": "q"}, r"line 2, field path\[1\]: missing\.jpg does not exist"),
        ({"type": "text", "path": ["ok.jpg"], "question": "q"}, r"line 2, field type: unknown type 'text'; expected one of image, video, audio"),
        ({"path": ["ok.jpg"], "question": "q"}, r"line 2, field type: missing"),
        ({"type": "image", "path": [], "question": "q"}, r"line 2, field path: must be a non-empty list"),
        ({"type": "image", "path": ["tone.wav"], "question": "q"}, r"line 2, field path\[0\]: tone\.wav is a audio file, but the row's type is image"),
        ({"type": "image", "path": ["ok.jpg"]}, r"line 2, field question: missing or empty"),
        ({"type": "image", "path": [3], "question": "q"}, r"line 2, field path\[0\]: must be a non-empty string"),
    ],
)
def test_bad_mm_rows(tmp_path, row, pattern):
    make_image(tmp_path / "ok.jpg")
    make_audio(tmp_path / "tone.wav")
    path = jsonl(tmp_path / "mm.jsonl", [{"type": "image", "path": ["ok.jpg"], "question": "fine"}, row])
    with pytest.raises(CustomDataError, match=pattern) as info:
        build_custom_dataset(path)
    assert str(path) in str(info.value) and "\n" not in str(info.value)
