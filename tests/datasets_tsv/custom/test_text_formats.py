"""Text MCQ/QA: detection, CSV details (BOM, quoting, Chinese, line numbers), options, answers, indices,
data_type/infer_method, few-shot, and evaluation with known values."""

from __future__ import annotations

import math

import pandas as pd
import pytest

from datasets_tsv.custom import CustomDataError, build_custom_dataset, read_records

from tests.datasets_tsv.custom.conftest import FIXTURES, write

AIS = FIXTURES / "aisbench"


def test_csv_with_bom_quoted_commas_and_chinese(tmp_path):
    text = 'question,A,B,answer\n"北京，上海, 广州哪个是首都?","北京, 中国",上海,A\n"第二题\n有两行",是,否,B\n'
    path = write(tmp_path / "zh.csv", "\ufeff" + text)
    ds = build_custom_dataset(path)
    assert list(ds.data.columns[:4]) == ["index", "question", "A", "B"]  # the BOM is not part of `question`
    assert ds.line(0)["question"] == "北京，上海, 广州哪个是首都?" and ds.line(0)["A"] == "北京, 中国"
    assert ds.line(1)["question"] == "第二题\n有两行"
    assert ds.build_prompt(0)[0]["value"].startswith("Question: 北京，上海, 广州哪个是首都?\nOptions:\nA. 北京, 中国\nB. 上海\n")
    records = read_records(path)
    assert [r.line for r in records] == [2, 3]  # the quoted newline makes row 2 span lines 3-4


def test_crlf_and_blank_lines(tmp_path):
    path = write(tmp_path / "crlf.csv", "question,answer\r\n\r\nq1,a1\r\nq2,a2\r\n\r\n")
    assert [r.line for r in read_records(path)] == [3, 4]
    jsonl = write(tmp_path / "blank.jsonl", '\n{"question": "q", "answer": "a"}\n\n{"question": "r"}\n')
    assert [r.line for r in read_records(jsonl)] == [2, 4]


def test_options_are_consecutive_letters_any_number(tmp_path):
    rows = '{"question": "q", "A": "a", "B": "b", "D": "d", "answer": "B"}\n'
    with pytest.raises(CustomDataError, match=r"gap\.jsonl: found columns A, B, D, .*C is missing, so D cannot be"):
        build_custom_dataset(write(tmp_path / "gap.jsonl", rows))  # never D silently dropped from the prompt
    ds = build_custom_dataset(tmp_path / "gap.jsonl", data_type="qa")
    assert ds.option_letters == () and ds.line(0)["D"] == "d"  # asked for QA: D is kept as a plain column
    letters = "ABCDEFGHIJKL"
    header = "question," + ",".join(letters) + ",answer\n"
    body = "q," + ",".join(f"opt{c}" for c in letters) + ",L\n"
    wide = build_custom_dataset(write(tmp_path / "wide.csv", header + body))
    assert wide.option_letters == tuple(letters) and "L. optL\n" in wide.build_prompt(0)[0]["value"]


def test_options_judged_over_all_rows_and_empty_cells_ignored_per_row(tmp_path):
    rows = (
        '{"question": "q1", "A": "x", "B": "y", "answer": "A"}\n'
        '{"question": "q2", "A": "x", "B": "y", "C": "z", "answer": "C"}\n'
    )
    ds = build_custom_dataset(write(tmp_path / "mixed.jsonl", rows))
    assert ds.option_letters == ("A", "B", "C")
    assert ds.build_prompt(0)[0]["value"] == "Question: q1\nOptions:\nA. x\nB. y\nPlease select the correct answer from the options above. \n"
    csv = build_custom_dataset(write(tmp_path / "empty.csv", "question,A,B,C,D,answer\nq,1,2,,,B\nr,1,2,3,4,D\n"))
    assert "C." not in csv.build_prompt(0)[0]["value"] and "D. 4" in csv.build_prompt(1)[0]["value"]


def test_detection_and_data_type_override(tmp_path):
    mcq = AIS / "test_mcq.csv"
    assert build_custom_dataset(mcq).data_type == "mcq"
    as_qa = build_custom_dataset(mcq, data_type="qa")
    assert as_qa.data_type == "qa" and as_qa.build_prompt(0) == [{"type": "text", "value": "127+545+588+620+556+199="}]
    assert as_qa.info()["md5_parts"]["data_type"] == "qa" and as_qa.file_md5 != build_custom_dataset(mcq).file_md5
    assert build_custom_dataset(mcq, data_type="mcq").file_md5 == build_custom_dataset(mcq).file_md5
    with pytest.raises(CustomDataError, match=r"test_qa\.csv: data_type mcq, but the file has no option columns A and B"):
        build_custom_dataset(AIS / "test_qa.csv", data_type="mcq")
    only_a = write(tmp_path / "one_option.jsonl", '{"question": "q", "A": "x", "answer": "x"}\n')
    with pytest.raises(CustomDataError, match=r"one_option\.jsonl: found column A, .*at least options A and B"):
        build_custom_dataset(only_a)  # one option is not a choice, and is not silently dropped either
    assert build_custom_dataset(only_a, data_type="qa").data_type == "qa"
    with pytest.raises(CustomDataError, match="ppl is not supported"):
        build_custom_dataset(mcq, infer_method="ppl")
    with pytest.raises(CustomDataError, match="unknown data_type 'vqa'"):
        build_custom_dataset(mcq, data_type="vqa")


def test_answer_given_as_option_text_is_mapped_and_counted(tmp_path):
    path = write(tmp_path / "text_answers.csv", "question,A,B,C,answer\nq1,cat,dog,bird,Dog\nq2,1,2,3,(c)\nq3,x,y,z,E\nq4,x,y,z,\n")
    ds = build_custom_dataset(path)
    assert ds.data["answer"].tolist() == ["B", "C", "E", None]
    assert ds.data["answer_status"].tolist() == ["option_text", "letter", "invalid", "missing"]
    info = ds.info()
    assert info["counts"] == {"no_target": 1, "answer_as_text": 1, "invalid_target": 1}
    assert any("mapped to its letter: line 2" in n for n in info["notes"])
    assert any("fits none of their options (not scored): line 4" in n for n in info["notes"])


def evaluate(ds, preds, fuzzy=False):
    table = ds.data.copy()
    table["prediction"] = preds
    return ds.evaluate(table, fuzzy=fuzzy)


def test_mcq_evaluation_known_values():
    ds = build_custom_dataset(AIS / "test_mcq.jsonl")  # answers B, A, B, C
    result = evaluate(ds, ["B", "The answer is A", "C", None])
    assert result.primary == "Overall" and result.primary_value == 0.5
    assert result.per_sample["hit"].tolist() == [True, True, False, False]
    assert result.counts["inference_errors"] == 1 and result.counts["scored"] == 4 and result.counts["total"] == 4


def test_mcq_evaluation_leaves_out_invalid_and_missing_answers(tmp_path):
    path = write(tmp_path / "t.csv", "question,A,B,C,answer\nq1,cat,dog,bird,dog\nq2,1,2,3,A\nq3,x,y,z,E\nq4,x,y,z,\n")
    ds = build_custom_dataset(path)
    result = evaluate(ds, ["B", "B", "z", "A"])
    assert result.primary_value == 0.5  # q1 right (dog = B), q2 wrong; q3 and q4 not scored
    assert result.counts["scored"] == 2 and result.counts["total"] == 4
    assert (result.counts["invalid_target"], result.counts["no_target"], result.counts["answer_as_text"]) == (1, 1, 1)
    extra = result.per_sample.set_index("index")
    assert extra.loc[2, "method"] == "invalid_target" and extra.loc[2, "extracted"] == "C"  # the model's choice is kept
    assert extra.loc[3, "method"] == "no_target" and extra.loc[3, "hit"] is None
    assert any("fits none of their options" in n and "index 2" in n for n in result.notes)


def test_mcq_levenshtein_only_under_fuzzy():
    ds = build_custom_dataset(AIS / "test_mcq.jsonl")
    preds = ["2259", "3876", "5263", "4178"]  # row 0 is only near option A (2258)
    plain, fuzzy = evaluate(ds, preds), evaluate(ds, preds, fuzzy=True)
    assert plain.counts["unparsed"] == 1 and plain.counts["fuzzy"] == 0 and plain.primary_value == 0.75
    assert fuzzy.counts["fuzzy"] == 1 and fuzzy.per_sample.loc[0, "extracted"] == "A"
    assert any("Levenshtein" in n for n in fuzzy.notes)


def test_no_valid_answer_at_all(tmp_path):
    ds = build_custom_dataset(write(tmp_path / "bad.jsonl", '{"question": "q", "A": "x", "B": "y", "answer": "Z"}\n'))
    result = evaluate(ds, ["A"])
    assert math.isnan(result.primary_value) and result.counts["scored"] == 0
    assert any("nothing scored" in n for n in result.notes)


def test_qa_evaluation_known_values():
    ds = build_custom_dataset(AIS / "test_qa.jsonl")
    result = evaluate(ds, ["3448", "The answer is 1811.", "3323.", None])
    assert result.metrics == {"exact_match": 50.0, "contains": 75.0}
    assert ds.info()["scorer"] == {"scorer": "text_qa", "metrics": ["em", "contains"], "segmenter": "auto", "scale": 100}
    rich = build_custom_dataset(AIS / "test_qa.jsonl", qa_metrics=("em", "bleu", "rouge"), segmenter="char")
    assert {"bleu-1", "rouge-l-r"} <= set(evaluate(rich, ["3448"] * 4).metrics)


def test_qa_without_answers_is_inference_only(tmp_path):
    path = write(tmp_path / "noanswer.csv", "question\nq1\nq2\n")
    ds = build_custom_dataset(path)
    assert "answer" not in ds.data.columns and ds.info()["has_answers"] is False
    assert any("inference only" in n for n in ds.info()["notes"])
    table = ds.data.copy()
    table["prediction"] = ["a", "b"]
    with pytest.raises(CustomDataError, match="no `answer` column, nothing to score"):
        ds.evaluate(table)


def test_partial_answers_score_only_answered_rows(tmp_path):
    ds = build_custom_dataset(write(tmp_path / "part.jsonl", '{"question": "q1", "answer": "a"}\n{"question": "q2"}\n'))
    result = evaluate(ds, ["a", "b"])
    assert result.metrics["exact_match"] == 100.0 and result.counts["no_target"] == 1
    assert any("line 2" in n for n in ds.info()["notes"])


def test_indices_from_id_or_positions(tmp_path):
    ids = build_custom_dataset(write(tmp_path / "ids.csv", "id,question,answer\n10,a,x\n11,b,y\n"))
    assert ids.data["index"].tolist() == [10, 11] and ids.info()["index_from"] == "id"
    repeated = build_custom_dataset(write(tmp_path / "rep.csv", "id,question,answer\n1,a,x\n1,b,y\n"))
    assert repeated.data["index"].tolist() == [0, 1]
    assert any("`id` is missing in some rows or repeats" in n for n in repeated.info()["notes"])
    text_ids = build_custom_dataset(write(tmp_path / "t.jsonl", '{"id": "q-1", "question": "a"}\n{"id": "007", "question": "b"}\n'))
    assert text_ids.data["index"].tolist() == ["q-1", "007"]
    line = text_ids.line(1)
    assert text_ids.generation_params(line) is None and text_ids.build_prompt(line) == [{"type": "text", "value": "b"}]


def test_name_is_a_safe_path_component(tmp_path):
    ds = build_custom_dataset(write(tmp_path / "my data (v2).jsonl", '{"question": "q"}\n'))
    assert ds.name == "my_data_v2"
    assert build_custom_dataset(write(tmp_path / "数据.jsonl", '{"question": "q"}\n')).name == "数据"


def test_few_shot_layout_for_qa_and_fewer_examples_than_asked(tmp_path):
    folder = tmp_path / "qa"
    write(folder / "math_val.jsonl", '{"question": "1+1", "answer": "2"}\n')
    write(folder / "math_dev.jsonl", '{"question": "2+2", "answer": "4"}\n{"question": "3+3", "answer": ["6", "six"]}\n')
    ds = build_custom_dataset(folder, few_shot=5)
    assert ds.build_prompt(0) == [{"type": "text", "value": "Question: 2+2\nAnswer: 4\n\nQuestion: 3+3\nAnswer: 6\n\nQuestion: 1+1\nAnswer:"}]
    assert ds.info()["few_shot"]["requested"] == 5 and ds.info()["few_shot"]["used"] == 2
    # a val file given directly finds its pool beside it
    direct = build_custom_dataset(folder / "math_val.jsonl", few_shot=1)
    assert direct.build_prompt(0)[0]["value"].startswith("Question: 2+2\nAnswer: 4\n\nQuestion: 1+1")


def test_evalscope_directory_subsets(tmp_path):
    folder = tmp_path / "bench"
    write(folder / "alpha_val.csv", "question,A,B,answer\nq,x,y,A\n")
    write(folder / "alpha_dev.csv", "question,A,B,answer\nd,x,y,B\n")
    write(folder / "beta.jsonl", '{"question": "q", "answer": "a"}\n')
    write(folder / "beta.jsonl.meta.json", '{"request_count": 3}')
    from datasets_tsv.custom import list_subsets

    assert list_subsets(folder) == ["alpha", "beta"]
    with pytest.raises(CustomDataError, match=r"several subsets \(alpha, beta\); name one with subset"):
        build_custom_dataset(folder)
    with pytest.raises(CustomDataError, match=r"no subset 'gamma' \(available: alpha, beta\)"):
        build_custom_dataset(folder, subset="gamma")
    assert build_custom_dataset(folder, subset="alpha").name == "bench_alpha"
    assert len(build_custom_dataset(folder, subset="beta")) == 3  # the meta beside the subset's file applies


def test_system_column_in_mcq_becomes_a_system_turn(tmp_path):
    ds = build_custom_dataset(write(tmp_path / "s.csv", "question,A,B,answer,system\nq,x,y,A,Be brief.\n"))
    turns = ds.build_prompt(0)
    assert [t["role"] for t in turns] == ["system", "user"] and turns[0]["content"][0]["value"] == "Be brief."
    assert ds.data_type == "mcq" and turns[1]["content"][0]["value"].startswith("Question: q\nOptions:")


def test_line_dict_from_the_runner_shape():
    # the runner passes rows.iloc[pos].to_dict(): prompts and params must work from such a dict
    ds = build_custom_dataset(AIS / "test_mcq_max_tokens.csv")
    line = ds.data.iloc[2].to_dict()
    assert ds.build_prompt(line) == ds.build_prompt(2) and ds.generation_params(line) == {"max_tokens": 2048}
    assert isinstance(ds.data, pd.DataFrame) and ds.data["index"].is_unique
