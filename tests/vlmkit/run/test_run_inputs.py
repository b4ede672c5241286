"""vlmkit.run.inputs with real files: datasets built from custom files and TSVs, two datasets of one name refused,
and the frames check between a model's sampling and a dataset whose subtitles were picked at certain frames."""

from __future__ import annotations

from pathlib import Path
from types import SimpleNamespace

import pytest

from vlmkit.core.errors import ConfigError, DataError
from vlmkit.core.video import DEFAULT_NFRAME
from vlmkit.run.inputs import build_datasets, check_frames
from vlmkit.run.resolve import API, LOCAL, ModelSpec


def _csv(path: Path) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("question,answer\nWhat is 1+1?,2\nCapital of France?,Paris\n", encoding="utf-8")
    return path


def test_custom_files_become_datasets(tmp_path: Path) -> None:
    built = build_datasets([], [{"path": str(_csv(tmp_path / "a" / "qa_one.csv"))},
                                {"path": str(_csv(tmp_path / "b" / "qa_two.csv"))}], root=tmp_path, progress=False)
    assert len(built) == 2 and all(len(d) == 2 for d in built)
    assert built[0].name != built[1].name


def test_two_datasets_of_one_name_are_refused(tmp_path: Path) -> None:
    first, second = _csv(tmp_path / "a" / "same.csv"), _csv(tmp_path / "b" / "same.csv")
    with pytest.raises(DataError, match=r"^two datasets are named '.*same.*' \(their results would share a folder\); "
                                        r"rename one$"):
        build_datasets([], [{"path": str(first)}, {"path": str(second)}], root=tmp_path, progress=False)


def _spec(provider: str, **kwargs) -> ModelSpec:
    return ModelSpec("m", "vlm.api.openai_compat:OpenAICompatModel", kwargs, provider)


def _dataset(sampling: dict | None) -> SimpleNamespace:
    return SimpleNamespace(name="Video-MME-sub", subtitle_sampling=sampling, prompt_sampling=None)


def test_frames_must_match_the_subtitles_sampling() -> None:
    check_frames(_spec(API, fps=1), _dataset({"fps": 1.0}))  # same: no error
    check_frames(_spec(API), _dataset({"nframe": DEFAULT_NFRAME}))  # the default frame count
    check_frames(_spec(LOCAL, nframe=16), _dataset({"nframe": 16}))
    check_frames(_spec(API, fps=2), _dataset(None))  # no subtitles picked at frames: anything goes
    check_frames(_spec("", fps=2), _dataset({"fps": 1.0}))  # a user's own class: not checked
    with pytest.raises(ConfigError, match=r"^Video-MME-sub shows the subtitle lines at fps=1, but m would sample "
                                          r"fps=2: run it with --fps 1$"):
        check_frames(_spec(API, fps=2), _dataset({"fps": 1.0}))
    with pytest.raises(ConfigError, match=r"would sample nframe=8: run it with --nframe 16$"):
        check_frames(_spec(LOCAL, nframe=8), _dataset({"nframe": 16}))
    with pytest.raises(ConfigError, match=r"at fps=1, but m would sample nframe="):
        check_frames(_spec(API), _dataset({"fps": 1.0}))


def test_frames_must_match_what_the_prompt_names() -> None:
    """A dataset whose prompt tells the model how many frames it sees (QBench_Video_MCQ: `prompt_sampling`) refuses
    a model that would sample another count, in one line, before anything is asked."""
    named = SimpleNamespace(name="QBench_Video_MCQ", subtitle_sampling=None, prompt_sampling={"nframe": 8})
    check_frames(_spec(API, nframe=8), named)
    check_frames(_spec(LOCAL), named)  # the default frame count is the one named
    with pytest.raises(ConfigError, match=r"^QBench_Video_MCQ tells the model in its prompt it sees nframe=8, but m "
                                          r"would sample nframe=16: run it with --nframe 8$"):
        check_frames(_spec(API, nframe=16), named)
    with pytest.raises(ConfigError, match=r"would sample fps=1: run it with --nframe 8$"):
        check_frames(_spec(LOCAL, fps=1), named)
