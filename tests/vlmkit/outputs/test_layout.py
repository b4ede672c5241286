"""The names of a work dir (vlmkit.outputs.layout), checked against names written out by hand and against the
function that really sets files aside (vlmkit.core.files.move_aside)."""

from __future__ import annotations

from pathlib import Path

import pytest

from vlmkit.core.files import move_aside
from vlmkit.outputs import layout


def test_the_files_of_one_pair() -> None:
    work = Path("outputs")
    assert layout.run_dir(work, "Qwen/Qwen2.5-VL-7B-Instruct", "MMBench_DEV_EN") == \
        Path("outputs/Qwen2.5-VL-7B-Instruct/MMBench_DEV_EN")
    assert layout.model_dir(work, "Qwen/Qwen2.5-VL-7B-Instruct") == Path("outputs/Qwen2.5-VL-7B-Instruct")
    assert layout.xlsx_name("Qwen/Qwen2.5-VL-7B-Instruct", "MME") == "Qwen2.5-VL-7B-Instruct_MME.xlsx"
    assert layout.summary_name("org/m", "MME", "score") == "m_MME_score.csv"
    assert layout.summary_name("m", "MMBench", "acc") == "m_MMBench_acc.csv"
    assert layout.SUMMARY_SUFFIXES == ("acc", "score")
    assert (layout.RESULTS, layout.PREDICTIONS, layout.JUDGE_JOURNAL, layout.ARK_OUTPUT) == \
        ("results.json", "predictions.jsonl", "judge.jsonl", "ark_output.jsonl")


@pytest.mark.parametrize(("rank", "world", "name"), [(0, 1, "journal.jsonl"), (0, 4, "journal.rank0.jsonl"),
                                                     (3, 4, "journal.rank3.jsonl")])
def test_journal_names(rank: int, world: int, name: str, tmp_path: Path) -> None:
    assert layout.journal_name(rank, world) == name
    (tmp_path / name).write_text("")
    assert [p.name for p in tmp_path.glob(layout.JOURNALS)] == [name]  # every journal of a pair is found


@pytest.mark.parametrize(("name", "folder"), [
    ("Qwen/Qwen2.5-VL-7B-Instruct", "Qwen2.5-VL-7B-Instruct"),
    ("../../etc/x y", "x_y"),
    ("/models/llava/", "llava"),
    ("C:\\weights\\tiny", "tiny"),
    ("/", "model"),
])
def test_model_folder_name_is_one_safe_path_part(name: str, folder: str) -> None:
    assert layout.model_folder_name(name) == folder


def test_set_aside_names_agree_with_move_aside(tmp_path: Path) -> None:
    """What move_aside writes is what layout reads: results.staleN.json beside predictions.staleN.jsonl."""
    run = tmp_path / "m" / "d"
    run.mkdir(parents=True)
    for round_ in (1, 2):
        for name in (layout.RESULTS, layout.PREDICTIONS, layout.JOURNAL):
            (run / name).write_text("{}")
        results = move_aside(run / layout.RESULTS)
        predictions = move_aside(run / layout.PREDICTIONS)
        journal = move_aside(run / layout.JOURNAL)
        assert results.name == layout.stale_name(layout.RESULTS, round_) == f"results.stale{round_}.json"
        assert layout.stale_number(results.name) == round_
        assert layout.predictions_beside(results) == predictions
        assert layout.is_stale(journal.name) and layout.is_stale(predictions.name)
    assert layout.stale_number(layout.RESULTS) is None and not layout.is_stale(layout.RESULTS)
    assert layout.predictions_beside(run / layout.RESULTS) == run / "predictions.jsonl"


def test_find_results_finds_results_and_set_aside_ones_only(tmp_path: Path) -> None:
    wanted = [tmp_path / "a" / "m" / "d" / "results.json", tmp_path / "a" / "m" / "d" / "results.stale2.json",
              tmp_path / "b" / "results.json"]
    others = [tmp_path / "a" / "m" / "d" / "results.json.bak", tmp_path / "a" / "results.stale.json",
              tmp_path / "a" / "my_results.json", tmp_path / "a" / "results.stale1.jsonl"]
    for path in wanted + others:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text("{}")
    (tmp_path / "c" / "results.json").mkdir(parents=True)  # a folder of that name is no results file
    assert layout.find_results([tmp_path]) == sorted(wanted)
    assert layout.find_results([tmp_path / "a", wanted[2]]) == sorted(wanted)  # a file is taken as it is
    with pytest.raises(FileNotFoundError, match="nowhere: no such folder"):
        layout.find_results([tmp_path / "nowhere"])
    assert all(layout.is_results_name(p.name) for p in wanted)
    assert not any(layout.is_results_name(p.name) for p in others)
