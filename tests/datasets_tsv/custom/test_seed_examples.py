"""Every example in the seed documents (AISBench 000, EvalScope/OpenCompass 001, Ark 003), as real files, loads
and builds the expected prompts. OpenCompass's mcq/qa examples in 001 are the same text as AISBench's in 000, so
the aisbench/ fixtures stand for both."""

from __future__ import annotations

from pathlib import Path

import pytest

from datasets_tsv.custom import CustomDataError, build_custom_dataset, list_subsets

from tests.datasets_tsv.custom.conftest import FIXTURES

AIS = FIXTURES / "aisbench"
CLOSING = "Please select the correct answer from the options above. \n"
ARK_PARAMS = {"frequency_penalty": 0.0, "temperature": 1.0, "top_p": 0.7, "max_tokens": 4096}


def text(msgs) -> str:
    assert len(msgs) == 1 and msgs[0]["type"] == "text"
    return msgs[0]["value"]


@pytest.mark.parametrize("name", ["test_mcq.jsonl", "test_mcq.csv", "test_mcq_max_tokens.jsonl", "test_mcq_max_tokens.csv"])
def test_aisbench_mcq_examples(name):
    ds = build_custom_dataset(AIS / name)
    assert ds.name == name.split(".")[0] and (ds.format, ds.data_type) == ("text", "mcq")
    assert ds.option_letters == ("A", "B", "C") and len(ds) == 4
    assert ds.data["index"].tolist() == [0, 1, 2, 3]
    first = ds.line(0)
    expected = f"Question: {first['question']}\nOptions:\nA. {first['A']}\nB. {first['B']}\nC. {first['C']}\n{CLOSING}"
    assert text(ds.build_prompt(0)) == expected
    if name.endswith(".jsonl"):
        assert expected.startswith("Question: 165+833+650+615=\nOptions:\nA. 2258\nB. 2263\nC. 2281\n")
        assert ds.data["answer"].tolist() == ["B", "A", "B", "C"]
    else:
        assert expected.startswith("Question: 127+545+588+620+556+199=\nOptions:\nA. 2632\nB. 2635\nC. 2645\n")
        assert ds.data["answer"].tolist() == ["B", "B", "C", "B"]
    assert set(ds.data["answer_status"]) == {"letter"}
    if "max_tokens" in name:
        assert [ds.generation_params(i) for i in range(4)] == [{"max_tokens": v} for v in (512, 1024, 2048, 256)]
        assert ds.data["max_tokens"].tolist() == [512, 1024, 2048, 256]
    else:
        assert all(ds.generation_params(i) is None for i in range(4))


@pytest.mark.parametrize("name", ["test_qa.jsonl", "test_qa.csv", "test_qa_max_tokens.jsonl", "test_qa_max_tokens.csv"])
def test_aisbench_qa_examples(name):
    ds = build_custom_dataset(AIS / name)
    assert (ds.format, ds.data_type, len(ds)) == ("text", "qa", 4)
    assert text(ds.build_prompt(0)) == ds.line(0)["question"]
    answers = ds.data["answer"].tolist()
    expected = {
        "test_qa.jsonl": ["3448", "1811", "3323", "4519"],
        "test_qa.csv": ["3967", "3142", "4700", "4170"],
        "test_qa_max_tokens.jsonl": ["2263", "3876", "5263", "4178"],
        "test_qa_max_tokens.csv": ["2635", "2380", "4784", "2630"],
    }[name]
    assert answers == expected
    if "max_tokens" in name:
        assert ds.generation_params(2) == {"max_tokens": 2048}


@pytest.mark.parametrize("folder", ["mcq_csv", "mcq_jsonl"])
def test_evalscope_mcq_directories(folder):
    directory = FIXTURES / "evalscope" / folder
    assert list_subsets(directory) == ["example"]
    ds = build_custom_dataset(directory)
    assert ds.name == f"{folder}_example" and ds.info()["subset"] == "example"
    assert ds.data["index"].tolist() == [1, 2] and ds.info()["index_from"] == "id"
    assert ds.option_letters == ("A", "B", "C", "D") and ds.data["answer"].tolist() == ["C", "C"]
    prompt = text(ds.build_prompt(0))
    assert prompt.startswith("Question: 通常来说") and "组成动物蛋白质的氨基酸有____\nOptions:\nA. 4种\nB. 22种\nC. 20种\nD. 19种\n" in prompt
    # The few-shot pool is example_dev.*; its first row becomes the example before every question.
    shots = build_custom_dataset(directory, few_shot=1)
    second = text(shots.build_prompt(1))
    example = text(ds.build_prompt(0)) + "Answer: C\n\n"
    assert second == example + text(ds.build_prompt(1))
    assert shots.info()["few_shot"]["used"] == 1 and shots.file_md5 != ds.file_md5


def test_evalscope_csv_as_printed_in_the_seed_is_caught():
    # The seed renders the question's full-width comma as an ASCII one, which splits the CSV row: a clear error.
    with pytest.raises(CustomDataError, match=r"seed_literal_mcq\.csv: line 2: 8 field\(s\), but the header \(line 1\) has 7"):
        build_custom_dataset(FIXTURES / "evalscope" / "seed_literal_mcq.csv")


def test_evalscope_qa_with_system_query_response():
    ds = build_custom_dataset(FIXTURES / "evalscope" / "qa")
    assert (ds.name, ds.format, ds.data_type, len(ds)) == ("qa_example", "conversation", "qa", 3)
    assert ds.build_prompt(0) == [
        {"role": "system", "content": [{"type": "text", "value": "你是一位地理学家"}]},
        {"role": "user", "content": [{"type": "text", "value": "中国的首都是哪里?"}]},
    ]
    assert ds.build_prompt(1) == [{"role": "user", "content": [{"type": "text", "value": "世界上最高的山是哪座山?"}]}]
    assert ds.data["answer"].tolist() == ["中国的首都是北京", "是珠穆朗玛峰", "因为企鹅大多生活在南极"]


def test_ark_single_turn_jsonl():
    ds = build_custom_dataset(FIXTURES / "ark" / "single_turn.jsonl")
    assert (ds.format, len(ds)) == ("conversation", 2)
    assert ds.build_prompt(1) == [
        {"role": "system", "content": [{"type": "text", "value": "请完成下面的计算题"}]},
        {"role": "user", "content": [{"type": "text", "value": "0+2"}]},
    ]
    assert ds.data["answer"].tolist() == ["1", "2"]
    assert ds.generation_params(0) == ARK_PARAMS
    assert ds.line(0)["parameters"]["logprobs"] is False  # the row's own parameters stay in the record
    assert any("top_logprobs in 2 row(s)" in note for note in ds.info()["notes"])


def test_ark_multi_turn_jsonl():
    ds = build_custom_dataset(FIXTURES / "ark" / "multi_turn.jsonl")
    roles = [[t["role"] for t in ds.build_prompt(i)] for i in range(3)]
    assert roles == [["user"], ["system", "user"], ["system", "user", "assistant", "user"]]
    last = ds.build_prompt(2)
    assert [t["content"][0]["value"] for t in last] == ["请完成下面的计算题", "3+1", "999", "3+2"]
    assert ds.line(2)["question"] == "3+2" and ds.data["answer"].tolist() == ["2", "3", "5"]
    assert ds.line(2)["messages"][-1] == {"role": "user", "content": "3+2"}
    assert all(ds.generation_params(i) == ARK_PARAMS for i in range(3))


def test_ark_excel_single_turn_as_csv():
    ds = build_custom_dataset(FIXTURES / "ark" / "excel_single_turn.csv")
    assert ds.data["index"].tolist() == [0, 1] and ds.info()["index_from"] == "session_id"
    turns = ds.build_prompt(0)
    assert [t["role"] for t in turns] == ["system", "user"] and turns[1]["content"][0]["value"] == "家里有鸡蛋、西红柿"
    assert ds.line(0)["answer"].startswith("那可以做一道经典的西红柿炒鸡蛋呀。以下是做法：\n所需材料")
    assert ds.generation_params(1) == ARK_PARAMS  # a Python-dict string in the cell, as Excel shows it


def test_ark_excel_multi_turn_sessions_as_csv():
    ds = build_custom_dataset(FIXTURES / "ark" / "excel_multi_turn.csv")
    assert len(ds) == 2 and ds.data["index"].tolist() == [0, 1] and ds.info()["sessions_merged"] == 3
    turns = ds.build_prompt(0)
    assert [t["role"] for t in turns] == ["system", "user", "assistant", "user", "assistant", "user"]
    assert [t["content"][0]["value"][:6] for t in turns[1::2]] == ["家里有鸡蛋、", "家里还有排骨", "还有一条鱼"]
    assert ds.line(0)["answer"].startswith("那还可以做一到红烧鱼。")
    assert [t["role"] for t in ds.build_prompt(1)] == ["system", "user", "assistant", "user"]
    assert ds.line(1)["question"] == "996福报" and ds.generation_params(1) == ARK_PARAMS


@pytest.mark.parametrize("name", ["format_sample.jsonl", "scene1_image.jsonl"])
def test_mm_custom_image_scene(seed_mm: Path, name):
    ds = build_custom_dataset(seed_mm / name)
    assert (ds.format, ds.data_type, len(ds)) == ("mm_custom", "qa", 2)
    assert ds.build_prompt(0) == [
        {"type": "image", "value": str((seed_mm / "59027d7563eba210.jpg").resolve())},
        {"type": "text", "value": "what is the brand of this camera?"},
    ]
    assert ds.data["answer"].tolist() == ["dakota", "copenhagen"]


def test_mm_custom_mixed_scene(seed_mm: Path):
    ds = build_custom_dataset(seed_mm / "scene2_mixed.jsonl")
    kinds = [[p["type"] for p in ds.build_prompt(i)] for i in range(len(ds))]
    assert kinds == [["image", "text"], ["video", "text"], ["image", "text"], ["video", "text"], ["audio", "text"], ["audio", "text"]]
    assert ds.build_prompt(4)[0]["value"] == str((seed_mm / "f1874_0_cough.wav").resolve())
    assert ds.info()["media_types"] == {"audio": 2, "image": 2, "video": 2}


def test_mm_custom_multi_image_scene(seed_mm: Path):
    ds = build_custom_dataset(seed_mm / "scene3_multi_image.jsonl")
    first, second = ds.build_prompt(0), ds.build_prompt(1)
    assert [p["type"] for p in first] == ["image", "image", "text"] and first[-1]["value"] == "compare these images"
    assert [Path(p["value"]).name for p in second[:-1]] == ["8abf34fc9c4016a6.jpg", "59027d7563eba210.jpg", "cd34jojof2334jo34.jpg"]
