"""MMBench-Video (VLMEvalKit `MMBenchVideo`, vlmeval/dataset/mmbench_video.py at e8e78f05) from a local snapshot of
opencompass/MMBench-Video, scored by an LLM judge; `JudgedSnapshotVideo`, the base of every judge-scored video
benchmark (MovieChat1k, MLVU, TempCompass, QBench_Video, VDC, Video-MMLU, DREAM-1K, VCR-Bench), which refuses to
score without a judge (its table is read by `datasets_tsv.kinds.snapshot_table.read_snapshot_tsv`).

The snapshot as VLMEvalKit leaves it: `MMBench-Video.tsv` (index, video, video_path, question, answer, dimensions,
...) and the videos VLMEvalKit restores from `video_pkl/*.pkl` on its first run into `video/<video>.mp4` (vlmkit
does not unpickle them: a pickle can run code). Rows: the TSV's, in its order, with its `index`.

Frames: VLMEvalKit's rule (frame int(i * n / (N + 1)), i = 1..N; at --fps F, int(n / v * F) frames from frame 0) at
the model's --nframe/--fps, from the cache beside the video's frame plan.
Prompt (VLMEvalKit's frames prompt, `build_prompt_nopack`): the text "\\nYou will be provided with <N> separate
frames uniformly sampled from a video, ...\\n", the video, then "Question: <question>\\nAnswer: ". <N> is the frame
count the sampling gives: VLMEvalKit writes the number of frames it sends; vlmkit's dataset does not see the model's
--nframe, so it takes `nframe` (default 8, vlmkit's default) or `fps` as dataset options (run the model with the
same). VLMEvalKit's pack mode (several questions a video, one JSON reply) and its video-model prompt (question, then
the video file) are not offered: every model gets the frames prompt.
Scoring: `vlmkit.scoring.benchmarks.mmbench_video` (needs --judge).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, ClassVar

import pandas as pd

from vlmkit.core.video import DEFAULT_NFRAME, VideoError, check_sampling, frame_indices, probe_video
from vlmkit.judging import Judge
from vlmkit.scoring.benchmarks.mmbench_video import score_mmbench_video
from vlmkit.scoring.result import EvalResult

from datasets_tsv.io.tsv_read import DatasetError
from datasets_tsv.kinds.judged import judge_needed
from datasets_tsv.kinds.snapshot_table import read_snapshot_tsv
from datasets_tsv.kinds.video_snapshot import SnapshotVideoDataset, text_part, video_part

FRAMES_PROMPT = (
    "\nYou will be provided with {} separate frames uniformly sampled from a video, the frames are provided in "
    "chronological order of the video.\nPlease analyze these images and provide the answer to the question about the "
    "video content.\nPlease directly reply with your response to the only question.\n"
)
NOTE_FRAMES = (
    "frames: VLMEvalKit's rule (frame int(i * n / (N + 1)), i = 1..N; fps F: int(n / v * F) frames from frame 0) at "
    "the model's --nframe/--fps, for every model, with VLMEvalKit's frames prompt (VLMEvalKit gives a video model the "
    "question then the file); read with opencv where VLMEvalKit uses decord"
)
NOTE_COUNT = ("the frame count written in the prompt is the dataset's nframe/fps option ({}); run the model with the "
              "same --nframe/--fps")
NOTE_JUDGE = ("judge: the one given with --judge (VLMEvalKit's default is gpt-4-turbo, gpt-4-1106-preview); its "
              "system and user texts are VLMEvalKit's")


class JudgedSnapshotVideo(SnapshotVideoDataset):
    """A video benchmark VLMEvalKit scores with an LLM judge: evaluating without one is refused in one line naming
    the flags (inference runs with --mode infer). Subclasses say `judge_scorer` and score in `score_with_judge`."""

    judge_scorer: ClassVar[str] = ""

    def _score(self, df: pd.DataFrame, *, judge: Judge | None) -> EvalResult:
        if judge is None:
            raise DatasetError(judge_needed(self.name, self.judge_scorer))
        return self.score_with_judge(df, judge)

    def evaluate(self, predictions: pd.DataFrame, *, fuzzy: bool = False, judge: Judge | None = None) -> EvalResult:
        if judge is None:  # said first: no column matters without a judge
            raise DatasetError(judge_needed(self.name, self.judge_scorer))
        return super().evaluate(predictions, fuzzy=fuzzy, judge=judge)

    def score_with_judge(self, df: pd.DataFrame, judge: Judge) -> EvalResult:
        raise NotImplementedError

    def scorer_params(self) -> dict[str, Any]:
        return {"scorer": self.judge_scorer}


class MMBenchVideo(JudgedSnapshotVideo):
    """MMBench-Video from a local snapshot (module docstring)."""

    repo_id: ClassVar[str] = "opencompass/MMBench-Video"
    layout: ClassVar[str] = "MMBench-Video.tsv and video/<video>.mp4 (VLMEvalKit restores them from video_pkl/)"
    judge_scorer: ClassVar[str] = "mmbench_video"
    judge_note: ClassVar[str] = NOTE_JUDGE
    answer_columns: ClassVar[tuple[str, ...]] = ("answer", "question", "dimensions")
    frames_prompt: ClassVar[str] = FRAMES_PROMPT

    def __init__(self, name: str, *, nframe: int | None = None, fps: float | None = None, **options: Any) -> None:
        try:
            self.sampling = check_sampling(DEFAULT_NFRAME if nframe is None and fps is None else nframe, fps)
        except ValueError as exc:
            raise DatasetError(f"{name}: {exc}") from None
        [(key, value)] = self.sampling.items()
        self.prompt_sampling = self.sampling  # the prompt names this count: a model sampling another is refused
        self.notes = (NOTE_FRAMES, NOTE_COUNT.format(f"{key}={value:g}"), self.judge_note)
        super().__init__(name, **options)

    def _read_table(self) -> pd.DataFrame:
        path = self.snapshot / f"{self.name}.tsv"
        raw = read_snapshot_tsv(path, ("video", "question", "answer", "dimensions"),
                                f"expected the {self.repo_id} snapshot in {self.snapshot} ({self.layout})")
        return raw[["index", "video", "question", "answer", "dimensions"]].astype({"video": str})

    def video_file(self, line: dict[str, Any]) -> Path:
        return self.snapshot / "video" / f"{line['video']}.mp4"

    def missing_hint(self) -> str:
        return (f"restore the videos of {self.snapshot / 'video_pkl'} into {self.snapshot / 'video'} as "
                "<video>.mp4 (VLMEvalKit's unwrap_hf_pkl does this on its first run)")

    def frame_count(self, video: Path) -> int:
        """How many frames the dataset's sampling gives this video (the number the prompt states)."""
        if "nframe" in self.sampling:
            return int(self.sampling["nframe"])
        try:
            facts = probe_video(video)
            return len(frame_indices(facts["total_frames"], facts["video_fps"], fps=self.sampling["fps"]))
        except (VideoError, ValueError) as exc:
            raise DatasetError(f"{video}: {exc}") from None

    def build_prompt(self, line: dict[str, Any] | int) -> list[Any]:
        _, row = self._row(line)
        video = self.video_file(row)
        return [text_part(self.frames_prompt.format(self.frame_count(video))), video_part(self.prepared_video(row)),
                text_part("Question: {}\nAnswer: ".format(row["question"]))]

    def score_with_judge(self, df: pd.DataFrame, judge: Judge) -> EvalResult:
        return score_mmbench_video(df, judge, what=str(self.snapshot / f"{self.name}.tsv"))

    def scorer_params(self) -> dict[str, Any]:
        return {"scorer": self.judge_scorer, "prompt_frames": self.sampling}


class CombinedSnapshotVideo(JudgedSnapshotVideo):
    """VLMEvalKit's ConcatVideoDataset (MLVU, TempCompass, QBench_Video): its parts' rows one after another, `index`
    0..n-1 over all, each row asked with its part's prompt; `sub_dataset` and `original_index` say where a row came
    from. Subclasses build the parts (`make_parts`) and combine the parts' results (`part_results`)."""

    answer_columns: ClassVar[tuple[str, ...]] = ("sub_dataset", "original_index")

    def make_parts(self) -> dict[str, SnapshotVideoDataset]:
        """The parts, by VLMEvalKit's name, in its order, read from this snapshot."""
        raise NotImplementedError

    def _read_table(self) -> pd.DataFrame:
        self.parts = self.make_parts()
        frames = [part.data.assign(sub_dataset=name, original_index=part.data["index"]).drop(columns="index")
                  for name, part in self.parts.items()]
        table = pd.concat(frames, ignore_index=True)
        return table.assign(index=range(len(table)))

    def _part(self, row: dict[str, Any]) -> tuple[SnapshotVideoDataset, dict[str, Any]]:
        part = self.parts[str(row["sub_dataset"])]
        return part, part._row({"index": row["original_index"]})[1]

    def video_file(self, line: dict[str, Any]) -> Path:
        part, row = self._part(line)
        return part.video_file(row)

    def build_prompt(self, line: dict[str, Any] | int) -> list[Any]:
        _, row = self._row(line)
        part, original = self._part(row)
        return part.build_prompt(original)

    def part_results(self, df: pd.DataFrame, judge: Judge) -> dict[str, EvalResult]:
        """Each part's result on its rows (with their own indices), the judge passed on."""
        results = {}
        for name, part in self.parts.items():
            sub = df[df["sub_dataset"] == name].drop(columns="index").rename(columns={"original_index": "index"})
            if len(sub) == 0:
                raise DatasetError(f"the predictions hold no row of {name}, needed to evaluate {self.name}")
            results[name] = part.evaluate(sub.reset_index(drop=True), judge=judge)
        return results
