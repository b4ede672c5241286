"""Bad dataset input is one clear line naming the file (and what is wrong), never a "successful" empty run or a
misleading message."""

from __future__ import annotations

import pytest

from datasets_tsv.custom import CustomDataError, build_custom_dataset
from datasets_tsv.catalog.registry import build_dataset
from vlmkit.core.errors import DataError

from tests.support.tsvs import b64, image_bytes, write_tsv


def one_line_error(call, pattern: str) -> str:
    with pytest.raises(DataError, match=pattern) as info:
        call()
    message = str(info.value)
    assert "\n" not in message
    return message


@pytest.mark.parametrize("header", ["index\tquestion\tanswer\n", "index\timage\tquestion\tA\tB\tanswer\n"])
def test_tsv_with_only_a_header_is_an_error(lmu_root, header):
    (lmu_root / "Empty.tsv").write_text(header)
    one_line_error(lambda: build_dataset("Empty", root=lmu_root, progress=False),
                   r"Empty\.tsv: no rows \(only a header\)")
    one_line_error(lambda: build_dataset(str(lmu_root / "Empty.tsv"), root=lmu_root, progress=False),
                   r"Empty\.tsv: no rows \(only a header\)")


def test_empty_tsv_file_is_an_error(lmu_root):
    (lmu_root / "Nothing.tsv").write_bytes(b"")
    one_line_error(lambda: build_dataset("Nothing", root=lmu_root, progress=False), r"Nothing\.tsv: empty file")


@pytest.mark.parametrize("given", ["/missing/x.tsv", "missing/x.tsv", "x.tsv"])
def test_missing_tsv_path_says_the_file_does_not_exist(lmu_root, given, monkeypatch, tmp_path):
    monkeypatch.chdir(tmp_path)
    message = one_line_error(lambda: build_dataset(given, root=lmu_root), rf"^{given}: no such file")
    assert "unknown dataset" not in message and ".tsv.tsv" not in message


def test_catalog_name_given_with_a_suffix_is_pointed_at_the_name(lmu_root, monkeypatch, tmp_path):
    monkeypatch.chdir(tmp_path)
    one_line_error(lambda: build_dataset("MMBench_DEV_EN.tsv", root=lmu_root),
                   r"MMBench_DEV_EN\.tsv: no such file .*the catalog's dataset is named MMBench_DEV_EN")


def test_custom_file_given_as_data_points_to_the_custom_flag(lmu_root, tmp_path):
    path = tmp_path / "quiz.csv"
    path.write_text("question,answer\nq,a\n")
    one_line_error(lambda: build_dataset(str(path), root=lmu_root), r"quiz\.csv: not a \.tsv file; .*--custom-dataset")


def test_plain_unknown_name_still_suggests_catalog_names(lmu_root):
    from vlmkit.core.registry import RegistryError

    with pytest.raises(RegistryError, match="unknown dataset 'MMBench_DEV_EM'"):
        build_dataset("MMBench_DEV_EM", root=lmu_root)


def test_csv_whose_option_columns_skip_a_letter_says_which_and_why(tmp_path):
    path = tmp_path / "gap.csv"
    path.write_text("question,A,C,answer\nWhich?,x,y,A\n")
    message = one_line_error(lambda: build_custom_dataset(path), r"gap\.csv: found columns A, C, which look like")
    assert "B is missing, so C cannot be an option" in message and "data type qa" in message
    as_qa = build_custom_dataset(path, data_type="qa")  # the way out the message names
    assert as_qa.data_type == "qa" and as_qa.line(0)["C"] == "y"
    with pytest.raises(CustomDataError, match=r"gap\.csv: found columns A, C"):
        build_custom_dataset(path, data_type="mcq")


@pytest.mark.parametrize("text, found", [("question,B,C,answer\nq,x,y,B\n", "columns B, C"),
                                         ("question,A,B,D,answer\nq,x,y,z,B\n", "columns A, B, D")])
def test_other_letter_columns_that_are_not_options(tmp_path, text, found):
    path = tmp_path / "letters.csv"
    path.write_text(text)
    one_line_error(lambda: build_custom_dataset(path), rf"letters\.csv: found {found}, which look like options")


def test_custom_file_with_only_a_header_is_an_error(tmp_path):
    path = tmp_path / "header.csv"
    path.write_text("question,A,B,answer\n")
    one_line_error(lambda: build_custom_dataset(path), r"header\.csv: no data rows \(only a header\)")


def test_a_complete_tsv_still_loads(lmu_root):
    write_tsv(lmu_root / "Fine.tsv", [{"index": 0, "image": b64(image_bytes()), "question": "Q?", "answer": "yes"}])
    assert len(build_dataset("Fine", root=lmu_root, progress=False)) == 1
