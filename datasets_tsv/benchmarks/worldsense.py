"""WorldSense (VLMEvalKit `WorldSense`, vlmeval/dataset/worldsense.py at e8e78f05) from a local snapshot of
honglyhly/WorldSense, frames only.

The snapshot as VLMEvalKit reads it: `worldsense_qa.json` ({video: {duration, domain, sub_category, audio_class (a
list), video_caption, task1: {question, candidates, answer, task_domain, task_type}, task2: ...}}) and the videos
unpacked under `videos/<video>.mp4`. Rows: video by video in the file's order, each video's `task*` keys in order,
`index` 0..n-1, as VLMEvalKit's `generate_tsv` numbers them.

Frames: VLMEvalKit's Video-MME rule (frame int(i * n / (N + 1)), i = 1..N; at --fps F, int(n / v * F) frames from
frame 0) at the model's --nframe/--fps (VLMEvalKit's names: WorldSense_8frame, _32frame, _1fps, _0.5fps), from the
cache beside the video's frame plan (`SnapshotVideoDataset.prepared_video`).
Prompt (VLMEvalKit's `build_prompt`): its instruction as the first text part (VLMEvalKit gives it no system role),
the video, "\\nThese are the frames of a video. ... correct option.\\n", then "Question: <question>\\n<candidates,
one a line>\\nAnswer: ". The subtitle and audio variants (`_subs`, `_audio`) are not here.
Scoring: `vlmkit.scoring.benchmarks.worldsense`.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, ClassVar

import pandas as pd

from vlmkit.judging import Judge
from vlmkit.scoring.benchmarks.worldsense import score_worldsense
from vlmkit.scoring.kinds.video_mcq import candidate_list
from vlmkit.scoring.result import EvalResult

from datasets_tsv.benchmarks.videomme import FRAMES_PROMPT
from datasets_tsv.io.tsv_read import DatasetError
from datasets_tsv.kinds.video_snapshot import SnapshotVideoDataset, snapshot_json, text_part, video_part

QUESTIONS = "worldsense_qa.json"
INSTRUCTION = ("Carefully watch this video and pay attention to every detail. "
               "Based on your observations, select the best option that accurately addresses the question.")
VIDEO_FIELDS = ("duration", "domain", "sub_category", "audio_class")
TASK_FIELDS = ("question", "candidates", "answer", "task_domain", "task_type")
NOTE_FRAMES = (
    "frames: VLMEvalKit's WorldSense rule (Video-MME's: frame int(i * n / (N + 1)), i = 1..N; fps F: int(n / v * F) "
    "frames from frame 0) at the model's --nframe/--fps, for every model; read with opencv where VLMEvalKit uses "
    "decord"
)


def _rows(data: Any, where: str) -> list[dict[str, Any]]:
    if not isinstance(data, dict):
        raise DatasetError(f"{where}: expected an object of video -> its questions")
    rows: list[dict[str, Any]] = []
    for video, entry in data.items():
        if not isinstance(entry, dict):
            raise DatasetError(f"{where}: video {video}: not an object")
        missing = [f for f in VIDEO_FIELDS if f not in entry]
        if missing:
            raise DatasetError(f"{where}: video {video}, field {missing[0]}: missing")
        for task in [k for k in entry if "task" in k]:
            item = entry[task]
            lost = [f for f in TASK_FIELDS if not isinstance(item, dict) or f not in item]
            if lost:
                raise DatasetError(f"{where}: video {video}, {task}, field {lost[0]}: missing")
            if not isinstance(item["candidates"], list):
                raise DatasetError(f"{where}: video {video}, {task}, field candidates: not a list")
            rows.append({
                "index": len(rows), "video": str(video), "duration": str(entry["duration"]),
                "domain": str(entry["domain"]), "sub_category": str(entry["sub_category"]),
                "audio_class": json.dumps([str(c) for c in entry["audio_class"]], ensure_ascii=False),
                "candidates": json.dumps([str(c) for c in item["candidates"]], ensure_ascii=False),
                "task_domain": str(item["task_domain"]), "task_type": str(item["task_type"]),
                "question": str(item["question"]), "answer": str(item["answer"]).strip(),
            })  # fmt: skip
    return rows


class WorldSense(SnapshotVideoDataset):
    """WorldSense from a local snapshot (module docstring)."""

    repo_id: ClassVar[str] = "honglyhly/WorldSense"
    layout: ClassVar[str] = f"{QUESTIONS} and the videos unpacked under videos/"
    notes: tuple[str, ...] = (NOTE_FRAMES,)

    def _read_table(self) -> pd.DataFrame:
        path = self.snapshot / QUESTIONS
        data = snapshot_json(path, missing=f"expected the {self.repo_id} snapshot in {self.snapshot} ({self.layout})")
        return pd.DataFrame(_rows(data, str(path)))

    def video_file(self, line: dict[str, Any]) -> Path:
        return self.snapshot / "videos" / f"{line['video']}.mp4"

    def question_text(self, line: dict[str, Any]) -> str:
        candidates = candidate_list(line["candidates"], f"{self.name}: index {line['index']}, field candidates")
        return "Question: {}\nAnswer: ".format(str(line["question"]) + "\n" + "\n".join(candidates))

    def build_prompt(self, line: dict[str, Any] | int) -> list[Any]:
        _, row = self._row(line)
        return [text_part(INSTRUCTION), video_part(self.prepared_video(row)), text_part(FRAMES_PROMPT),
                text_part(self.question_text(row))]

    def _score(self, df: pd.DataFrame, *, judge: Judge | None) -> EvalResult:
        return score_worldsense(df, judge=judge)

    def scorer_params(self) -> dict[str, Any]:
        return {"scorer": "worldsense", "letter_rule": "Video-MME regex (first A-D after answer prefixes)"}
