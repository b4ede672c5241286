"""LongVideoBench (VLMEvalKit `LongVideoBench`, vlmeval/dataset/longvideobench.py at e8e78f05) from a local snapshot
of longvideobench/LongVideoBench.

The snapshot as VLMEvalKit leaves it: `lvb_val.json` (the questions: a list of objects with `video_id`,
`video_path`, `question`, `candidates`, `correct_choice` (0-based), `duration_group` (15, 60, 600, 3600),
`question_category`, ...) and the videos under `videos/` (VLMEvalKit joins and untars the snapshot's `videos.tar.*`
parts there). Rows keep the file's order, `index` 0..n-1, as VLMEvalKit's `generate_tsv` numbers them; `answer` is
the letter of `correct_choice`.

Frames: VLMEvalKit's Video-MME rule (its `save_video_frames` is the same code), at the model's --nframe/--fps, from
the cache beside the video's frame plan (`SnapshotVideoDataset.prepared_video`).
Prompt (VLMEvalKit's `build_prompt`): the video, then "<question>\\nA. <candidate>\\nB. ...\\nAnswer with the option's
letter from the given choices directly.". VLMEvalKit's empty system text part is left out. The subtitle variants
(`LongVideoBench_8frame_subs`, ...) put each subtitle line between the frames it falls among, which one video part
cannot say: they are not offered here.
Scoring: `vlmkit.scoring.kinds.video_mcq.score_longvideobench`.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, ClassVar

import pandas as pd

from vlmkit.judging import Judge
from vlmkit.scoring.kinds.video_mcq import candidate_list, score_longvideobench
from vlmkit.scoring.result import EvalResult

from datasets_tsv.io.tsv_read import DatasetError
from datasets_tsv.kinds.snapshot_table import snapshot_item
from datasets_tsv.kinds.video_snapshot import SnapshotVideoDataset, snapshot_json, text_part, video_part

QUESTIONS = "lvb_val.json"
ANSWER_TAIL = "\nAnswer with the option's letter from the given choices directly."
FIELDS = ("video_id", "video_path", "question", "candidates", "correct_choice", "duration_group", "question_category")
NOTE_FRAMES = (
    "frames: VLMEvalKit's LongVideoBench rule (Video-MME's: frame int(i * n / (N + 1)), i = 1..N; fps F: int(n / v * "
    "F) frames from frame 0) at the model's --nframe/--fps, for every model (VLMEvalKit gives a video model the file "
    "and lets it sample); read with opencv where VLMEvalKit uses decord; VLMEvalKit's empty system text part is left "
    "out"
)


def _row(item: Any, pos: int, where: str) -> dict[str, Any]:
    snapshot_item(item, FIELDS, f"{where}: item {pos}")
    candidates = item["candidates"]
    if not isinstance(candidates, list) or not candidates or len(candidates) > 5:
        raise DatasetError(f"{where}: item {pos}, field candidates: not a list of 1 to 5 options")
    choice = item["correct_choice"]
    if isinstance(choice, bool) or not isinstance(choice, int) or not 0 <= choice < len(candidates):
        raise DatasetError(f"{where}: item {pos}, field correct_choice: {choice!r} is not a position among the "
                           f"{len(candidates)} candidates")
    return {
        "index": pos, "video": str(item["video_id"]), "video_path": str(item["video_path"]),
        "question": str(item["question"]), "candidates": json.dumps([str(c) for c in candidates], ensure_ascii=False),
        "answer": chr(ord("A") + choice), "duration_group": str(item["duration_group"]),
        "question_category": str(item["question_category"]),
    }  # fmt: skip


class LongVideoBench(SnapshotVideoDataset):
    repo_id: ClassVar[str] = "longvideobench/LongVideoBench"
    layout: ClassVar[str] = f"{QUESTIONS} and the videos untarred under videos/"
    notes: tuple[str, ...] = (NOTE_FRAMES,)

    def _read_table(self) -> pd.DataFrame:
        path = self.snapshot / QUESTIONS
        items = snapshot_json(path, questions=True, missing=f"expected the {self.repo_id} snapshot in "
                                                            f"{self.snapshot} ({self.layout})")
        return pd.DataFrame([_row(item, pos, str(path)) for pos, item in enumerate(items)])

    def video_file(self, line: dict[str, Any]) -> Path:
        return self.snapshot / "videos" / str(line["video_path"])

    def missing_hint(self) -> str:
        return (f"join and untar the snapshot's videos.tar.* parts into {self.snapshot} (VLMEvalKit does this on its "
                "first run)")

    def question_text(self, line: dict[str, Any]) -> str:
        """`<question>\\nA. <candidate>\\n...` and VLMEvalKit's closing instruction."""
        candidates = candidate_list(line["candidates"], f"{self.name}: index {line['index']}, field candidates")
        options = "\n".join(f"{chr(ord('A') + i)}. {c}" for i, c in enumerate(candidates))
        return f"{line['question']}\n{options}{ANSWER_TAIL}"

    def build_prompt(self, line: dict[str, Any] | int) -> list[Any]:
        _, row = self._row(line)
        return [video_part(self.prepared_video(row)), text_part(self.question_text(row))]

    def _score(self, df: pd.DataFrame, *, judge: Judge | None) -> EvalResult:
        return score_longvideobench(df, judge=judge)

    def scorer_params(self) -> dict[str, Any]:
        return {"scorer": "longvideobench", "letter_rule": "Video-MME regex over A-E (first A-E after answer prefixes)"}
