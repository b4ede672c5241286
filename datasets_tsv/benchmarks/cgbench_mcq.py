"""CG-Bench_MCQ_Grounding and CG-Bench_MCQ_Grounding_Mini (VLMEvalKit `CGBench_MCQ_Grounding(_Mini)`,
vlmeval/dataset/cgbench.py at e8e78f05) from a local snapshot of CG-Bench/CG-Bench, without subtitles or frame times
(the bare names' settings).

The snapshot as VLMEvalKit reads it: `cgbench.json` (Mini: `cgbench_mini.json`; a list of {qid, video_uid, duration
(seconds), domain, sub_category, question, choices, right_answer, clue_intervals}), its video zips unpacked under
`cg_videos_720p/<video_uid>.mp4` and its clue-video zips under `cg_clue_videos/<qid>.mp4`. Rows as its generate_tsv
makes them: every question three times, task mode by task mode (`long_acc`, `clue_acc`, `miou`), `index` 0..3n-1; the
answer is the right letter for the MCQ modes and the clue intervals (seconds) for miou.

Prompt (VLMEvalKit's `build_prompt`): the video, then one text: the mode's instruction (long_acc and clue_acc: answer
as ```json {"result": "option"}```; miou: the clue intervals as fractions 0..1 of the video, VLMEvalKit's
`miou_wo_frame_time`), "Question: <question>\\n\\n" and the choices as "A:<choice>" lines, then "\\n\\n".
Frames: long_acc and miou rows: VLMEvalKit's rule over the whole video (frame int(i * n / (N + 1)), i = 1..N; at --fps
F, int(n / v * F) frames from frame 0), at the model's --nframe/--fps. clue_acc rows: VLMEvalKit's frames path, the
"clue_average" rule of vlmkit.core.video over the row's clue intervals of the whole video (`sample_frames_clue_average`
after `merge_intervals`: min(N, 32) frames spread over the merged intervals by their lengths; at --fps F, F frames a
second inside them, filled up to 32 by the nframe rule). The prompt's video part names the clue clip
(`cg_clue_videos/<qid>.mp4`, what VLMEvalKit gives a video model, and what `--video-mode video_url` sends); every
model that samples frames takes them from the whole video by the plan beside it.
Scoring: `vlmkit.scoring.benchmarks.cgbench_mcq`.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, ClassVar

import pandas as pd

from vlmkit.core.video import FramePlan
from vlmkit.judging import Judge
from vlmkit.scoring.benchmarks.cgbench_mcq import MODES, score_cgbench_mcq
from vlmkit.scoring.kinds.video_mcq import candidate_list
from vlmkit.scoring.result import EvalResult

from datasets_tsv.io.tsv_read import DatasetError
from datasets_tsv.kinds.video_snapshot import SnapshotVideoDataset, snapshot_json, text_part, video_part

FIELDS = ("qid", "video_uid", "duration", "domain", "sub_category", "question", "choices", "right_answer",
          "clue_intervals")
_ANSWER_FORMAT = (
    "You will be provided with sampled frames from a video, along with a multiple-choice question that includes a "
    "question and several answer options.\nYour task is to analyze the provided frames, infer the most plausible "
    "answer based on the visual information.\nIf the video does not provide enough information, infer the answer "
    "based on the options available and still provide a result. Therefore, In all cases, an answer must be given.\n"
    "Only output the answer in the following format:\n\n```json\n{\"result\": \"option\"}\n```\n\n"
)
SYSTEM = {
    "long_acc": _ANSWER_FORMAT + 'The "option" is the uppercase letter corresponding to your answer.\n\n',
    "clue_acc": _ANSWER_FORMAT + "The 'option' is the uppercase letter corresponding to your answer.\n\n",
    "miou": (
        "You will be provided with uniformly sampled frames from a video, along with a multiple-choice question that "
        "includes a question and several answer options.\nYour task is to determine in which intervals the 'clue "
        "intervals' exist that contain visual information needed to answer the question.\nOnly output the answer in "
        "the following format:\n\n```json\n{\"result\": [[start1, end1], [start2, end2], ...]}\n```\n\nIn this output "
        "format, each \"start\" and \"end\" represents the start and end of the video where the relevant clue can be "
        "found in the form of a floating point number between 0 and 1, where 0 represents the start time of the video "
        "and 1 represents the end time of the video.\nYou must provide at least one interval and at most five "
        "intervals. Intervals exceeding five will NOT be considered valid.\n"
    ),
}
NOTE_FRAMES = (
    "frames: VLMEvalKit's rule over the whole video for long_acc and miou rows, at the model's --nframe/--fps; for "
    "clue_acc rows VLMEvalKit's frames path, min(N, 32) frames spread over the merged clue intervals of the whole "
    "video (sample_frames_clue_average; at --fps, F a second inside them, at least 32); --video-mode video_url sends "
    "the clue clip cg_clue_videos/<qid>.mp4 (what VLMEvalKit gives a video model); where vlmkit departs: VLMEvalKit "
    "lowers its nframe to 32 for good at the first clue_acc row, so with --nframe above 32 its later miou rows get 32 "
    "frames too, where vlmkit caps the clue_acc rows only; no subtitles, no frame times (the bare names)"
)


def clue_pairs(value: Any) -> tuple[tuple[float, float], ...] | None:
    """A question's clue intervals as (start, end) seconds; None when they are not a non-empty list of number pairs."""
    try:
        pairs = tuple((float(start), float(end)) for start, end in value)
    except (TypeError, ValueError):
        return None
    return pairs or None


class CGBenchMCQGrounding(SnapshotVideoDataset):
    """CG-Bench_MCQ_Grounding from a local snapshot (module docstring)."""

    repo_id: ClassVar[str] = "CG-Bench/CG-Bench"
    questions: ClassVar[str] = "cgbench.json"
    layout: ClassVar[str] = ("cgbench.json (Mini: cgbench_mini.json), the videos under cg_videos_720p/ and the clue "
                             "videos under cg_clue_videos/")
    notes: tuple[str, ...] = (NOTE_FRAMES,)
    vlmevalkit_rule: ClassVar[str] = (
        "vlmevalkit: frame int(i * n / (N + 1)), i = 1..N; fps: int(i * v / F) (long_acc, miou); clue_acc: "
        "clue_average over the merged clue intervals (sample_frames_clue_average, N capped at 32)")

    def _read_table(self) -> pd.DataFrame:
        path = self.snapshot / self.questions
        items = snapshot_json(path, questions=True, missing=f"expected the {self.repo_id} snapshot ({self.layout})")
        for pos, item in enumerate(items):
            lost = [f for f in FIELDS if not isinstance(item, dict) or f not in item]
            if lost:
                raise DatasetError(f"{path}: item {pos}, field {lost[0]}: missing")
            try:
                float(item["duration"])
                candidate_list(item["choices"], "")
            except ValueError:
                field = "choices" if isinstance(item["duration"], (int, float)) else "duration"
                raise DatasetError(f"{path}: item {pos}, field {field}: {str(item[field])[:60]!r} is not "
                                   f"{'a list' if field == 'choices' else 'a number'}") from None
            if clue_pairs(item["clue_intervals"]) is None:
                raise DatasetError(f"{path}: item {pos}, field clue_intervals: {str(item['clue_intervals'])[:60]!r} "
                                   "is not a list of [start, end] seconds")
        rows = []
        for mode in MODES:
            for item in items:
                clues = json.dumps(item["clue_intervals"])
                rows.append({
                    "index": len(rows), "qid": str(item["qid"]), "video_uid": str(item["video_uid"]),
                    "video": f"cg_videos_720p/{item['video_uid']}.mp4", "duration": float(item["duration"]),
                    "domain": str(item["domain"]), "sub_category": str(item["sub_category"]),
                    "choices": json.dumps([str(c) for c in item["choices"]], ensure_ascii=False),
                    "question": str(item["question"]), "task_mode": mode,
                    "answer": clues if mode == "miou" else str(item["right_answer"]),
                    "clue_intervals": clues if mode == "clue_acc" else "",
                    "clue_video_path": f"cg_clue_videos/{item['qid']}.mp4" if mode == "clue_acc" else "",
                })  # fmt: skip
        return pd.DataFrame(rows)

    def video_file(self, line: dict[str, Any]) -> Path:
        return self.snapshot / (line["clue_video_path"] or line["video"])

    def frame_plan(self, line: dict[str, Any]) -> FramePlan:
        """clue_acc rows: the clue intervals of the whole video (module docstring); the others: the usual rule."""
        if line["task_mode"] != "clue_acc":
            return super().frame_plan(line)
        whole = (self.snapshot / line["video"]).resolve()
        return FramePlan(rule="clue_average", fps_rule="clue_average", source=str(whole),
                         intervals=clue_pairs(json.loads(line["clue_intervals"])))

    def missing_hint(self) -> str:
        return (f"unzip the snapshot's video_chunk_*.zip into {self.snapshot / 'cg_videos_720p'} and "
                f"clue_video_chunk_*.zip into {self.snapshot / 'cg_clue_videos'} (VLMEvalKit does this on its first "
                "run)")

    def question_text(self, line: dict[str, Any]) -> str:
        choices = candidate_list(line["choices"], f"{self.name}: index {line['index']}, field choices")
        lines = "\n".join(f"{chr(ord('A') + i)}:{c}" for i, c in enumerate(choices))
        return f"{SYSTEM[line['task_mode']]}Question: {line['question']}\n\n{lines}\n\n"

    def build_prompt(self, line: dict[str, Any] | int) -> list[Any]:
        _, row = self._row(line)
        return [video_part(self.prepared_video(row, shown=self.video_file(row))), text_part(self.question_text(row))]

    def _score(self, df: pd.DataFrame, *, judge: Judge | None) -> EvalResult:
        return score_cgbench_mcq(df, name=self.name)

    def scorer_params(self) -> dict[str, Any]:
        return {"scorer": "cgbench_mcq", "rule": "CG-Bench post_process (json result, letter / interval fallback)"}


class CGBenchMCQGroundingMini(CGBenchMCQGrounding):
    """CG-Bench_MCQ_Grounding_Mini: the same, from cgbench_mini.json."""

    questions: ClassVar[str] = "cgbench_mini.json"
