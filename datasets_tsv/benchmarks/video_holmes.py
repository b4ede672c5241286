"""Video_Holmes (VLMEvalKit `Video_Holmes`, vlmeval/dataset/video_holmes.py at e8e78f05) from a local snapshot of
TencentARC/Video-Holmes.

The snapshot as VLMEvalKit leaves it: `test_Video-Holmes.json` (a list of {"video ID", "Question", "Options" (letter
-> text), "Answer" (a letter), "Question ID", "Question Type", ...}) and the videos of `videos.zip` unpacked flat
under `video/<video ID>.mp4`. Rows keep the file's order, `index` 0..n-1; `candidates` are VLMEvalKit's
`L. text` strings (options A-F present, apostrophes removed).

Frames: VLMEvalKit's Video-MME rule (frame int(i * n / (N + 1)), i = 1..N; at --fps F, int(n / v * F) frames from
frame 0), at the model's --nframe/--fps (VLMEvalKit's names: Video_Holmes_32frame, _64frame), from the cache beside
the video's frame plan (`SnapshotVideoDataset.prepared_video`).
Prompt (VLMEvalKit's `build_prompt`): the video, then its QUESTION_TMPL with the question and the candidates as the
Python list VLMEvalKit's TSV holds (`['A. ...', 'B. ...']`), its indentation and spaces kept. VLMEvalKit's empty
system text part is left out. Scoring: `vlmkit.scoring.benchmarks.video_holmes`.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, ClassVar

import pandas as pd

from vlmkit.judging import Judge
from vlmkit.scoring.benchmarks.video_holmes import score_video_holmes
from vlmkit.scoring.kinds.video_mcq import candidate_list
from vlmkit.scoring.result import EvalResult

from datasets_tsv.io.tsv_read import DatasetError
from datasets_tsv.kinds.video_snapshot import SnapshotVideoDataset, snapshot_json, text_part, video_part

QUESTIONS = "test_Video-Holmes.json"
QUESTION_TMPL = (
    "\n    Based on the given video, reason and answer the single-choice question. Provide your reasoning between the "
    "<think> and </think> tags, and then give your final answer between the <answer> and </answer> tags.     "
    "The question is: {}. The options are: {}.     Your answer:\n    "
)
NOTE_FRAMES = (
    "frames: VLMEvalKit's Video_Holmes rule (Video-MME's: frame int(i * n / (N + 1)), i = 1..N; fps F: int(n / v * F) "
    "frames from frame 0) at the model's --nframe/--fps (VLMEvalKit runs it at 32 or 64 frames), for every model; "
    "read with opencv where VLMEvalKit uses decord; VLMEvalKit's empty system text part is left out"
)


def _row(item: Any, pos: int, where: str) -> dict[str, Any]:
    if not isinstance(item, dict):
        raise DatasetError(f"{where}: item {pos}: not an object")
    for field in ("video ID", "Question", "Options", "Answer"):
        if item.get(field) in (None, ""):
            raise DatasetError(f"{where}: item {pos}, field {field}: missing")
    options = item["Options"]
    if not isinstance(options, dict):
        raise DatasetError(f"{where}: item {pos}, field Options: not an object of letter -> text")
    candidates = [f"{k}. {options.get(k, '')}".replace("'", "") for k in "ABCDEF" if k in options]
    return {
        "index": pos, "video": str(item["video ID"]), "candidates": json.dumps(candidates, ensure_ascii=False),
        "question": str(item["Question"]), "answer": str(item["Answer"]),
        "question_id": str(item.get("Question ID", "")), "question_type": str(item.get("Question Type", "")),
    }  # fmt: skip


class VideoHolmes(SnapshotVideoDataset):
    """Video_Holmes from a local snapshot (module docstring)."""

    repo_id: ClassVar[str] = "TencentARC/Video-Holmes"
    layout: ClassVar[str] = f"{QUESTIONS} and videos.zip unpacked under video/"
    notes: tuple[str, ...] = (NOTE_FRAMES,)

    def _read_table(self) -> pd.DataFrame:
        path = self.snapshot / QUESTIONS
        items = snapshot_json(path, questions=True, missing=f"expected the {self.repo_id} snapshot in "
                                                            f"{self.snapshot} ({self.layout})")
        return pd.DataFrame([_row(item, pos, str(path)) for pos, item in enumerate(items)])

    def video_file(self, line: dict[str, Any]) -> Path:
        return self.snapshot / "video" / f"{line['video']}.mp4"

    def missing_hint(self) -> str:
        return (f"unpack the snapshot's videos.zip into {self.snapshot / 'video'} (VLMEvalKit does this on its first "
                "run)")

    def question_text(self, line: dict[str, Any]) -> str:
        candidates = candidate_list(line["candidates"], f"{self.name}: index {line['index']}, field candidates")
        return QUESTION_TMPL.format(line["question"], repr(candidates))

    def build_prompt(self, line: dict[str, Any] | int) -> list[Any]:
        _, row = self._row(line)
        return [video_part(self.prepared_video(row)), text_part(self.question_text(row))]

    def _score(self, df: pd.DataFrame, *, judge: Judge | None) -> EvalResult:
        return score_video_holmes(df)

    def scorer_params(self) -> dict[str, Any]:
        return {"scorer": "video_holmes", "letter_rule": "Video-Holmes extract_option (the last <answer> block)"}
