"""VDC (VLMEvalKit `VDC`, vlmeval/dataset/vdc.py at e8e78f05) from a local snapshot of Enxin/VLMEval-VDC, scored with an
LLM judge.

The snapshot as VLMEvalKit leaves it: `VDC.tsv` (index, video (a file name), caption_type (short, detailed,
background, main_object, camera), question (a list of {question, answer}), ...) and the videos of its tar parts
unpacked under `videos/` (VLMEvalKit's video-model path; its frame path reads `video/<name>.mp4`, which is used when
`videos/` lacks the file). Rows: the TSV's, in its order; VLMEvalKit's `subset` and `limit` options are dataset
options here too.

Prompt (VLMEvalKit's `build_prompt_nopack`): the video (frames), then one of VLMEvalKit's caption prompts for the
row's caption type. VLMEvalKit draws it with an unseeded `random.choice`; vlmkit draws from the same list with a
choice seeded by the dataset name and the row's index, so a rerun sends the same prompt.
Frames: VLMEvalKit's rule (frame int(i * n / (N + 1)), i = 1..N; at --fps F, int(n / v * F) frames from frame 0) at
the model's --nframe/--fps. Scoring: `vlmkit.scoring.benchmarks.vdc` (needs --judge).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, ClassVar

import pandas as pd

from vlmkit.judging import Judge
from vlmkit.scoring.benchmarks.vdc import CAPTION_PROMPTS, caption_prompt, score_vdc
from vlmkit.scoring.result import EvalResult

from datasets_tsv.benchmarks.mmbench_video import JudgedSnapshotVideo
from datasets_tsv.benchmarks.moviechat import NOTE_FRAMES, check_limit, first_rows
from datasets_tsv.io.tsv_read import DatasetError
from datasets_tsv.kinds.snapshot_table import read_snapshot_tsv
from datasets_tsv.kinds.video_snapshot import text_part, video_part

SUBSETS = ("all", "breakpoint", "short", "detailed", "background", "main_object")
NOTE_PROMPT = ("prompt: one of VLMEvalKit's caption prompts for the row's caption type, chosen by a choice seeded with "
               "the row's index (VLMEvalKit draws it unseeded)")
NOTE_JUDGE = ("judge: the one given with --judge (VLMEvalKit's default llama31-8b, Llama-3.1-8B-Instruct run locally); "
              "its texts are VLMEvalKit's")


class VDC(JudgedSnapshotVideo):
    """VDC from a local snapshot (module docstring)."""

    repo_id: ClassVar[str] = "Enxin/VLMEval-VDC"
    layout: ClassVar[str] = "VDC.tsv and videos/<video> (unpacked from its tar parts)"
    judge_scorer: ClassVar[str] = "vdc"
    answer_columns: ClassVar[tuple[str, ...]] = ("question", "caption_type")
    notes: tuple[str, ...] = (NOTE_FRAMES, NOTE_PROMPT, NOTE_JUDGE)
    group_column: ClassVar[str] = "caption_type"
    read_columns: ClassVar[tuple[str, ...]] = ("video", "question")  # the TSV columns read, then group_column
    subsets: ClassVar[tuple[str, ...]] = SUBSETS
    videos: ClassVar[tuple[str, str]] = ("videos", "video")  # where the file is, then where VLMEvalKit's frames are

    def __init__(self, name: str, *, subset: str = "all", limit: float = 1.0, **options: Any) -> None:
        if subset not in self.subsets:
            raise DatasetError(f"{name}: subset must be one of {', '.join(self.subsets)}; got {subset!r}")
        check_limit(name, limit)
        self.subset, self.limit = subset, limit
        super().__init__(name, **options)

    def _read_table(self) -> pd.DataFrame:
        path = self.snapshot / f"{self.name}.tsv"
        columns = (*self.read_columns, self.group_column)
        raw = read_snapshot_tsv(path, columns, f"expected the {self.repo_id} snapshot in {self.snapshot} "
                                               f"({self.layout})")
        return first_rows(raw[["index", *columns]], self.group_column, self.subset, self.limit)

    def video_file(self, line: dict[str, Any]) -> Path:
        given = self.snapshot / self.videos[0] / str(line["video"])
        if given.is_file():
            return given
        fallback = self.snapshot / self.videos[1] / f"{Path(str(line['video'])).stem}.mp4"
        return fallback if fallback.is_file() else given

    def missing_hint(self) -> str:
        return (f"join and unpack the snapshot's video tar parts into {self.snapshot} (VLMEvalKit does this on its "
                "first run)")

    def prompt_text(self, row: dict[str, Any]) -> str:
        prompts = CAPTION_PROMPTS.get(str(row["caption_type"]), CAPTION_PROMPTS["camera"])
        return caption_prompt(prompts, f"{self.name}:{row['index']}")

    def build_prompt(self, line: dict[str, Any] | int) -> list[Any]:
        _, row = self._row(line)
        return [video_part(self.prepared_video(row)), text_part(self.prompt_text(row))]

    def score_with_judge(self, df: pd.DataFrame, judge: Judge) -> EvalResult:
        return score_vdc(df, judge, what=str(self.snapshot / f"{self.name}.tsv"))

    def scorer_params(self) -> dict[str, Any]:
        return {"scorer": self.judge_scorer, "subset": self.subset, "limit": self.limit}
