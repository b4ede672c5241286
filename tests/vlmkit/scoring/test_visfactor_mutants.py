"""VisFactor's scorer, rule by rule (issue 31, mutation round 4): each expectation worked by hand from VLMEvalKit's
VisFactor.evaluate (vlmeval/dataset/visfactor.py at e8e78f05), plus a property against a second reading written here."""

from __future__ import annotations

import re

import pandas as pd
import pytest

from vlmkit.scoring.benchmarks.visfactor import figures, json_answer, read, right, score_visfactor
from vlmkit.scoring.scales import FRACTION, Scale


@pytest.mark.parametrize(("reply", "value"), [
    ('{"answer": "x"}', "x"),
    ("{'answer': 1}", ""),  # the key must be double-quoted
    ('{"answer":"a"}', "a"),
    ('{  "answer"  :  b  }', "b"),
    ('{"answer": \'q\'}', "q"),
    ('{"answer": "q\'}', '"q\''),  # quotes that differ stay
    ('{"answer": "}', '"'),  # one quote alone is not a quoted value
    ('{"answer": ""}', ""),
    ('{"answer": 1} {"answer": 2} {"answer": 3}', "3"),
    ("nothing", ""),
])  # fmt: skip
def test_json_answer_takes_the_last_value_and_strips_matching_quotes(reply: str, value: str):
    assert json_answer(reply) == value


@pytest.mark.parametrize("word", ["t", "Y", "1", "TRUE", "Yes"])
def test_every_true_word_reads_t(word: str):
    assert read(f'{{"answer": "{word}"}}', "CF1", "nan") == "T"


@pytest.mark.parametrize("word", ["F", "n", "0", "False", "NO"])
def test_every_false_word_reads_f(word: str):
    assert read(f'{{"answer": "{word}"}}', "S2", "nan") == "F"


@pytest.mark.parametrize("test", ["CF1", "CF2", "MV1", "MV2", "MV3", "P3", "RL2", "S1", "S2", "SS2", "VZ1", "VZ2"])
def test_each_true_false_test_reads_true_false(test: str):
    assert read('{"answer": "yes"}', test, "nan") == "T"
    assert read('{"answer": "maybe"}', test, "nan") == ""


def test_vz3_reads_true_false_unless_additional_is_a_whole_number():
    assert read('{"answer": "yes"}', "VZ3", "x2") == "T"
    assert read('{"answer": "yEs"}', "VZ3", "12") == "E"  # the last capital letter
    assert read('{"answer": "yes"}', "VZ3", "12") == ""
    assert read('I pick B. {"answer": "c"}', "VZ3", "3") == ""  # the value has no capital: the reply is not read
    assert read("I pick B, not c", "VZ3", "3") == "B"  # no JSON: the whole reply


@pytest.mark.parametrize("test", ["CS1", "CS2", "CS3"])
def test_one_of_tests_read_the_value_as_is_and_match_any_item_in_any_case(test: str):
    assert read('{"answer": "DoG"}', test, "nan") == "DoG"
    assert right("DoG", test, "cat,dog") is True
    assert right("dog", test, "cat, dog") is False  # items are not stripped
    assert right("bird", test, "cat,dog") is False


@pytest.mark.parametrize("test", ["I3", "MA1", "SS3"])
def test_number_tests_read_the_last_number(test: str):
    assert read("1 and 22, then 333", test, "nan") == "333"
    assert read('seen 5 {"answer": "7 or 8"}', test, "nan") == "8"
    assert read("no digits", test, "nan") == ""
    assert right("8", test, "8") is True and right("8", test, "08") is False


def test_cf3_reads_the_last_two_numbers():
    assert read("at 1, 2 and 30 40", "CF3", "nan") == "(30, 40)"
    assert read("only 7", "CF3", "nan") == ""
    assert read("12 34", "CF3", "nan") == "(12, 34)"


def test_a_test_without_a_rule_reads_none_and_has_no_verdict():
    assert read('{"answer": "yes"}', "ZZ1", "nan") is None
    assert right(None, "ZZ1", "T") is None


def test_true_false_compares_with_the_answer_exactly():
    assert right("T", "CF1", "T") is True and right("T", "CF1", "F") is False and right("", "CF1", "") is True


def test_figures_items_need_all_rows_and_all_is_the_mean_of_tests():
    tests = ["A", "A", "A", "B", "B", "B"]
    items = ["1", "1", "2", "1", "2", "3"]
    hits = [True, False, True, True, True, False]
    # A: item 1 wrong, item 2 right -> 1/2; B: 2 of 3 -> 2/3; ALL = (1/2 + 2/3) / 2
    out = figures(tests, items, hits)
    assert out == pytest.approx({"A": 0.5, "B": 2 / 3, "ALL": 7 / 12})
    assert list(out) == ["A", "B", "ALL"]
    with pytest.raises(ValueError):
        figures(["A"], ["1", "2"], [True])


def frame(rows: list[tuple]) -> pd.DataFrame:
    return pd.DataFrame([{"index": i, "category_id": c, "eval_index": e, "answer": a, "additional": x, "prediction": p}
                         for i, (c, e, a, x, p) in enumerate(rows)])  # fmt: skip


def test_cells_read_from_a_tsv_as_floats_become_whole_numbers():
    # answers and eval_index read as floats (3.0): compared as `3`; additional 2.0 is a whole number for VZ3
    df = frame([("I3", 1.0, 3.0, None, "it is 3"), ("VZ3", 2.0, "B", 2.0, "B"), ("I3", 3.0, 2.5, None, "2.5")])
    result = score_visfactor(df)
    assert result.per_sample["item"].tolist() == ["1", "2", "3"]
    assert result.per_sample["hit"].tolist() == [True, True, False]  # "2.5" reads "5"
    assert result.per_sample["test"].tolist() == ["I3", "VZ3", "I3"]
    assert result.metrics == pytest.approx({"I3": 0.5, "VZ3": 1.0, "ALL": 0.75})


def test_an_empty_additional_is_nan_and_vz3_reads_it_as_true_false():
    result = score_visfactor(frame([("VZ3", "e", "T", None, '{"answer": "y"}')]))
    assert result.per_sample["read"].tolist() == ["T"] and result.metrics["ALL"] == 1.0


def test_counts_notes_and_the_result_shape():
    rows = [("CF1", "a", "T", None, '{"answer": "yes"}'), ("CF1", "b", "T", None, None),
            ("QQ", "c", "x", None, "x"), ("QQ", "d", "x", None, "x"),
            ("CS1", "e", "p", None, '{"answer": "q"}')]  # fmt: skip
    result = score_visfactor(frame(rows))
    assert result.counts == {"total": 5, "scored": 5, "hits": 1, "inference_errors": 1, "no_rule": 2, "by_rule": 4,
                             "by_judge": 0, "unread": 0, "judge_errors": 0}  # fmt: skip
    assert result.notes == ["2 row(s) belong to a test VLMEvalKit has no rule for (misses here, right in VLMEvalKit): "
                            "index 2, 3"]  # fmt: skip
    assert result.scorer == "visfactor" and result.primary == "ALL" and result.table_suffix == "acc"
    assert result.scale == Scale(FRACTION)
    assert result.table.to_dict("records") == [result.metrics]
    assert [None if pd.isna(v) else v for v in result.per_sample["read"]] == ["T", None, None, None, "q"]
    assert result.per_sample["index"].tolist() == [0, 1, 2, 3, 4]
    assert result.metrics == pytest.approx({"CF1": 0.5, "CS1": 0.0, "QQ": 0.0, "ALL": 1 / 6})
    figure = result.vlmevalkit
    assert figure.primary == "ALL"
    assert figure.metrics == pytest.approx({"CF1": 0.5, "CS1": 0.0, "QQ": 1.0, "ALL": 0.5})
    assert [(d.index, d.vlmkit, d.vlmevalkit, d.vlmkit_score, d.vlmevalkit_score) for d in figure.differing] == [
        (2, None, None, 0.0, 1.0), (3, None, None, 0.0, 1.0)]


def test_no_notes_when_every_test_has_a_rule():
    assert score_visfactor(frame([("CF1", "a", "T", None, '{"answer": "yes"}')])).notes == []


def test_a_failed_call_marker_is_a_failed_call_not_a_reply():
    result = score_visfactor(frame([("I3", "a", "3", None, "Failed to obtain answer via API. 3")]))
    assert result.counts["inference_errors"] == 1 and result.per_sample["read"].tolist() == [None]


def test_bad_tables_are_refused():
    with pytest.raises(ValueError, match="no rows"):
        score_visfactor(frame([]).reindex(columns=["index", "category_id", "eval_index", "answer", "additional",
                                                   "prediction"]))  # fmt: skip
    with pytest.raises(ValueError, match="additional"):
        score_visfactor(frame([("CF1", "a", "T", None, "x")]).drop(columns=["additional"]))


def test_vlmevalkit_reads_the_round_tripped_reply():
    # all replies numbers, one a float: VLMEvalKit reads 3 back as 3.0, whose last number is 0; vlmkit reads "3"
    df = frame([("I3", "a", "3", None, "3"), ("I3", "b", "45", None, "4.5")])
    result = score_visfactor(df)
    assert result.per_sample["hit"].tolist() == [True, False]
    assert result.vlmevalkit.metrics == {"I3": 0.0, "ALL": 0.0}
    assert [(d.index, d.vlmkit, d.vlmevalkit, d.vlmkit_score, d.vlmevalkit_score)
            for d in result.vlmevalkit.differing] == [(0, "3", "0", 1.0, 0.0)]


def _second_reading(reply: str, test: str, additional: str, answer: str) -> bool:
    """VLMEvalKit's rules written again for the property below."""
    found = re.findall(r'\{\s*"answer"\s*:\s*(.+?)\s*\}', reply)
    value = found[-1].strip() if found else ""
    if len(value) > 1 and value[0] in "\"'" and value[-1] == value[0]:
        value = value[1:-1]
    tf = {"t": "T", "y": "T", "1": "T", "true": "T", "yes": "T", "f": "F", "n": "F", "0": "F", "false": "F", "no": "F"}
    if test == "CF1" or (test == "VZ3" and not additional.isdigit()):
        return tf.get(value.lower(), "") == answer
    if test == "CS2":
        return value.lower() in answer.lower().split(",")
    text = value if value else reply
    if test == "VZ3":
        caps = [c for c in text if "A" <= c <= "Z"]
        return (caps[-1] if caps else "") == answer
    nums = re.findall(r"\d+", text)
    if test == "CF3":
        return (f"({nums[-2]}, {nums[-1]})" if len(nums) > 1 else "") == answer
    return (nums[-1] if nums else "") == answer


def test_readings_agree_with_a_second_implementation():
    replies = ['{"answer": "yes"}', '{"answer": 0}', "x 1 2 C", '{"answer": "B 4 5"}', "none", '{"answer": "Dog"}',
               "3, 4", '{"answer": ""} 9 8 Z']  # fmt: skip
    cases = [(r, t, x, a) for r in replies for t in ("CF1", "CS2", "VZ3", "CF3", "MA1")
             for x in ("4", "nan")
             for a in ("T", "F", "C", "Z", "dog,cat", "(4, 5)", "(1, 2)", "5", "8", "")]  # fmt: skip
    for reply, test, additional, answer in cases:
        assert right(read(reply, test, additional), test, answer) == _second_reading(reply, test, additional, answer), (
            reply, test, additional, answer)


def test_only_quotes_are_stripped_from_a_value():
    assert json_answer('{"answer": XabX}') == "XabX"


def test_a_row_without_a_test_is_the_test_nan():
    result = score_visfactor(frame([("CF1", "a", "T", None, '{"answer": "yes"}'), (None, "b", "T", None, "x")]))
    assert result.metrics == pytest.approx({"CF1": 1.0, "nan": 0.0, "ALL": 0.5})


def test_the_messages_name_visfactor_scoring():
    with pytest.raises(ValueError, match=r"^VisFactor scoring: the predictions table has no rows$"):
        score_visfactor(frame([]).reindex(columns=["index", "category_id", "eval_index", "answer", "additional",
                                                   "prediction"]))  # fmt: skip
    with pytest.raises(ValueError, match=r"^VisFactor scoring: the predictions table has no `additional` column"):
        score_visfactor(frame([("CF1", "a", "T", None, "x")]).drop(columns=["additional"]))
