"""VCR-Bench (VLMEvalKit `VCRBench`, vlmeval/dataset/vcrbench.py at e8e78f05) from a local snapshot of
VLM-Reasoning/VCR-Bench, scored with an LLM judge.

The snapshot as VLMEvalKit leaves it: `VCR-Bench.tsv` (index, video, video_path, question, answer, reasoning,
dimension, duration) and `v1/videos/video.zip` unzipped in place; a row's video is `<snapshot>/<video_path>` (or
`<snapshot>/<video>.mp4`, where VLMEvalKit's frame path looks). Rows: the TSV's, in its order.

Prompt (VLMEvalKit's frames prompt, `build_prompt_nopack`): "\\nYou will be provided with <N> separate frames
uniformly sampled from a video, ...\\n", the video, then "Question: <question>\\nAnswer: ". <N> is the dataset's
`nframe` (default 8) or the frame count its `fps` gives (run the model with the same), as for MMBench-Video.
Frames: VLMEvalKit's rule (frame int(i * n / (N + 1)), i = 1..N; at --fps F, int(n / v * F) frames from frame 0)
at the model's --nframe/--fps (VLMEvalKit's names: VCRBench_8frame_nopack ... _64frame_nopack, _1fps_nopack).
Scoring: `vlmkit.scoring.benchmarks.vcrbench` (needs --judge).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, ClassVar

import pandas as pd

from vlmkit.judging import Judge
from vlmkit.scoring.benchmarks.vcrbench import score_vcrbench
from vlmkit.scoring.result import EvalResult

from datasets_tsv.benchmarks.mmbench_video import MMBenchVideo
from datasets_tsv.kinds.snapshot_table import read_snapshot_tsv

FRAMES_PROMPT = (
    "\nYou will be provided with {} separate frames uniformly sampled from a video, the frames are provided in "
    "chronological order of the video.\nPlease analyze these images and provide the answer to the question about the "
    "video content.\n"
)
COLUMNS = ("video", "video_path", "question", "answer", "reasoning", "dimension", "duration")
NOTE_JUDGE = ("judge: the one given with --judge (VLMEvalKit's default gpt-4o-0806); its system and user texts are "
              "VLMEvalKit's")


class VCRBench(MMBenchVideo):
    """VCR-Bench from a local snapshot (module docstring)."""

    repo_id: ClassVar[str] = "VLM-Reasoning/VCR-Bench"
    layout: ClassVar[str] = "VCR-Bench.tsv and v1/videos/video.zip unzipped in place"
    judge_scorer: ClassVar[str] = "vcrbench"
    judge_note: ClassVar[str] = NOTE_JUDGE
    answer_columns: ClassVar[tuple[str, ...]] = ("answer", "question", "reasoning", "dimension", "duration")
    frames_prompt: ClassVar[str] = FRAMES_PROMPT

    def _read_table(self) -> pd.DataFrame:
        raw = read_snapshot_tsv(self.snapshot / f"{self.name}.tsv", COLUMNS,
                                f"expected the {self.repo_id} snapshot in {self.snapshot} ({self.layout})")
        return raw[["index", *COLUMNS]]

    def video_file(self, line: dict[str, Any]) -> Path:
        given = self.snapshot / str(line["video_path"])
        fallback = self.snapshot / f"{line['video']}.mp4"
        return fallback if not given.is_file() and fallback.is_file() else given

    def missing_hint(self) -> str:
        return f"unzip {self.snapshot / 'v1/videos/video.zip'} in place (VLMEvalKit does this on its first run)"

    def score_with_judge(self, df: pd.DataFrame, judge: Judge) -> EvalResult:
        return score_vcrbench(df, judge, what=str(self.snapshot / f"{self.name}.tsv"))
