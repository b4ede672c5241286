"""Video_MMLU_CAP and Video_MMLU_QA (VLMEvalKit `Video_MMLU_CAP`, `Video_MMLU_QA`, vlmeval/dataset/video_mmlu.py at
e8e78f05) from a local snapshot of Enxin/Video-MMLU, scored with an LLM judge.

The snapshot as VLMEvalKit leaves it: `Video_MMLU_CAP.tsv` (index, video (a file name), discipline, question (a list
of {question, answer})) or `Video_MMLU_QA.tsv` (index, video, discipline, question, answer), and the videos of its
archives unpacked under `youtube_videos/` (VLMEvalKit's frame path reads `youtube_videos/<name>.mp4`, used when the
file itself is not there). VLMEvalKit's `subset` (all, Math, physics, chemistry) and `limit` options are dataset
options here too.

Prompt: the video (frames), then for CAP one of VLMEvalKit's detailed-caption prompts (VLMEvalKit draws it with an
unseeded `random.choice`; vlmkit with a choice seeded by the dataset name and row index), for QA the question and
"\\nAnswer briefly and directly in one sentence.". Frames: VLMEvalKit's rule (frame int(i * n / (N + 1)), i = 1..N;
at --fps F, int(n / v * F) frames from frame 0) at the model's --nframe/--fps (VLMEvalKit runs 16 or 64).
Scoring: `vlmkit.scoring.benchmarks.video_mmlu` (needs --judge).
"""

from __future__ import annotations

from typing import Any, ClassVar

import pandas as pd

from vlmkit.judging import Judge
from vlmkit.scoring.benchmarks.vdc import CAPTION_PROMPTS, caption_prompt
from vlmkit.scoring.benchmarks.video_mmlu import score_video_mmlu_cap, score_video_mmlu_qa
from vlmkit.scoring.result import EvalResult

from datasets_tsv.benchmarks.vdc import NOTE_FRAMES, VDC

SUBSETS = ("all", "Math", "physics", "chemistry")
QA_SUFFIX = "\nAnswer briefly and directly in one sentence."
NOTE_JUDGE = ("judge: the one given with --judge (VLMEvalKit's default qwen-72b, Qwen2.5-72B-Instruct); its texts are "
              "VLMEvalKit's")


class VideoMMLUCap(VDC):
    """Video_MMLU_CAP from a local snapshot (module docstring)."""

    repo_id: ClassVar[str] = "Enxin/Video-MMLU"
    layout: ClassVar[str] = "Video_MMLU_CAP.tsv and youtube_videos/<video> (unpacked from its archives)"
    judge_scorer: ClassVar[str] = "video_mmlu_cap"
    answer_columns: ClassVar[tuple[str, ...]] = ("question", "discipline")
    notes: tuple[str, ...] = (NOTE_FRAMES, NOTE_JUDGE)
    group_column: ClassVar[str] = "discipline"
    subsets: ClassVar[tuple[str, ...]] = SUBSETS
    videos: ClassVar[tuple[str, str]] = ("youtube_videos", "youtube_videos")

    def prompt_text(self, row: dict[str, Any]) -> str:
        return caption_prompt(CAPTION_PROMPTS["detailed"], f"{self.name}:{row['index']}")

    def score_with_judge(self, df: pd.DataFrame, judge: Judge) -> EvalResult:
        return score_video_mmlu_cap(df, judge, what=str(self.snapshot / f"{self.name}.tsv"))


class VideoMMLUQA(VideoMMLUCap):
    """Video_MMLU_QA from a local snapshot (module docstring)."""

    layout: ClassVar[str] = "Video_MMLU_QA.tsv and youtube_videos/<video> (unpacked from its archives)"
    judge_scorer: ClassVar[str] = "video_mmlu_qa"
    answer_columns: ClassVar[tuple[str, ...]] = ("question", "answer", "discipline")
    read_columns: ClassVar[tuple[str, ...]] = ("video", "question", "answer")

    def prompt_text(self, row: dict[str, Any]) -> str:
        return str(row["question"]) + QA_SUFFIX

    def score_with_judge(self, df: pd.DataFrame, judge: Judge) -> EvalResult:
        return score_video_mmlu_qa(df, judge, what=str(self.snapshot / f"{self.name}.tsv"))
