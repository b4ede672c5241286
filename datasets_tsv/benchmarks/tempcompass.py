"""TempCompass_MCQ and TempCompass_YorN (VLMEvalKit `TempCompass_MCQ`, `TempCompass_YorN`,
vlmeval/dataset/tempcompass.py at e8e78f05) from a local snapshot of lmms-lab/TempCompass.

The snapshot as VLMEvalKit leaves it: `multi-choice.json` and `caption_matching.json` (VLMEvalKit writes them from
`<task>/test-00000-of-00001.parquet`; records {video_id, question, answer, dim}, the question's first line the
question and the other lines its options) and the videos unzipped under `videos/<video_id>.mp4`. Where a task's
JSON is missing its parquet is read (needs pyarrow). Rows: multi-choice, then caption_matching, each in file
order, `index` 0..n-1, as VLMEvalKit's `generate_tsv` numbers them.

Frames: VLMEvalKit's `TempCompass_MCQ.save_video_frames` is Video-MME's rule (frame int(i * n / (N + 1)), i = 1..N;
at --fps F, int(n / v * F) frames from frame 0), at the model's --nframe/--fps, from the cache beside the video's
frame plan (`SnapshotVideoDataset.prepared_video`).
Prompt (VLMEvalKit's `build_prompt`, no system text): the video, "<question>\\n<option lines>" and
"\\nPlease directly give the best option:". Scoring: `vlmkit.scoring.benchmarks.tempcompass_mcq`. The captioning
and Y/N halves and the combined TempCompass are not here.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, ClassVar

import pandas as pd

from vlmkit.judging import Judge
from vlmkit.scoring.benchmarks.tempcompass_mcq import score_tempcompass_mcq
from vlmkit.scoring.benchmarks.tempcompass_yorn import score_tempcompass_yorn
from vlmkit.scoring.kinds.video_mcq import candidate_list
from vlmkit.scoring.result import EvalResult

from datasets_tsv.io.tsv_read import DatasetError
from datasets_tsv.kinds.snapshot_table import snapshot_item
from datasets_tsv.kinds.video_snapshot import SnapshotVideoDataset, snapshot_json, text_part, video_part

TASKS = ("multi-choice", "caption_matching")  # VLMEvalKit's type_data_list order
CLOSING = "\nPlease directly give the best option:"
YES_NO_CLOSING = "\nPlease answer yes or no:"
FIELDS = ("video_id", "question", "answer", "dim")
NOTE_FRAMES = (
    "frames: VLMEvalKit's TempCompass rule (Video-MME's: frame int(i * n / (N + 1)), i = 1..N; fps F: int(n / v * F) "
    "frames from frame 0) at the model's --nframe/--fps, for every model (VLMEvalKit gives a video model the file "
    "and lets it sample); read with opencv where VLMEvalKit uses decord"
)


def task_items(snapshot: Path, task: str, layout: str) -> tuple[list[Any], Path]:
    """A TempCompass task's questions and the file they came from: `<task>.json`, else the task's parquet."""
    path = snapshot / f"{task}.json"
    if path.is_file():
        return snapshot_json(path, questions=True), path
    parquet = snapshot / task / "test-00000-of-00001.parquet"
    if not parquet.is_file():
        raise DatasetError(f"{path}: not found (nor {parquet}); expected the lmms-lab/TempCompass snapshot in "
                           f"{snapshot} ({layout})")
    try:
        return pd.read_parquet(parquet).to_dict("records"), parquet
    except ImportError as exc:
        raise DatasetError(f"{parquet}: pandas cannot read parquet here ({str(exc).splitlines()[0]}); install "
                           f"pyarrow, or place VLMEvalKit's {task}.json in {snapshot}") from None


def _yes_no_row(task: str, item: Any, where: str) -> dict[str, Any]:
    snapshot_item(item, FIELDS, where)
    return {"task_type": task, "video": str(item["video_id"]), "question": str(item["question"]).split("\n")[0],
            "answer": str(item["answer"]), "dim": str(item["dim"])}


def _row(task: str, item: Any, where: str) -> dict[str, Any]:
    snapshot_item(item, FIELDS, where)
    lines = str(item["question"]).split("\n")
    if len(lines) < 2:
        raise DatasetError(f"{where}, field question: no option lines after the question")
    if task == "caption_matching" and any(": " not in line for line in lines[1:]):
        raise DatasetError(f"{where}, field question: a caption-matching option is not `<tag>: <sentence>`")
    return {"task_type": task, "video": str(item["video_id"]), "question": lines[0],
            "candidates": json.dumps(lines[1:], ensure_ascii=False), "answer": str(item["answer"]),
            "dim": str(item["dim"])}


class TempCompassMCQ(SnapshotVideoDataset):
    """TempCompass_MCQ from a local snapshot (module docstring)."""

    repo_id: ClassVar[str] = "lmms-lab/TempCompass"
    layout: ClassVar[str] = "multi-choice.json and caption_matching.json (or their parquets) and videos/<video_id>.mp4"
    notes: tuple[str, ...] = (NOTE_FRAMES,)

    def _read_table(self) -> pd.DataFrame:
        rows = []
        for task in TASKS:
            items, path = task_items(self.snapshot, task, self.layout)
            rows += [_row(task, item, f"{path}: item {i}") for i, item in enumerate(items)]
        table = pd.DataFrame(rows, columns=["task_type", "video", "question", "candidates", "answer", "dim"])
        return table.assign(index=range(len(table)))

    def video_file(self, line: dict[str, Any]) -> Path:
        return self.snapshot / "videos" / f"{line['video']}.mp4"

    def missing_hint(self) -> str:
        return f"unzip the snapshot's tempcompass_videos.zip in {self.snapshot} (VLMEvalKit does this on its first run)"

    def question_text(self, line: dict[str, Any]) -> str:
        """`<question>\\n<option lines>` (VLMEvalKit's qa_template)."""
        candidates = candidate_list(line["candidates"], f"{self.name}: index {line['index']}, field candidates")
        return str(line["question"]) + "\n" + "\n".join(candidates)

    def build_prompt(self, line: dict[str, Any] | int) -> list[Any]:
        _, row = self._row(line)
        return [video_part(self.prepared_video(row)), text_part(self.question_text(row)), text_part(CLOSING)]

    def _score(self, df: pd.DataFrame, *, judge: Judge | None) -> EvalResult:
        return score_tempcompass_mcq(df, judge=judge)

    def scorer_params(self) -> dict[str, Any]:
        return {"scorer": "tempcompass_mcq", "rule": "TempCompass multi-choice / caption-matching word rules"}


class TempCompassYorN(TempCompassMCQ):
    """TempCompass_YorN from a local snapshot (module docstring)."""

    layout: ClassVar[str] = "yes_no.json (or its parquet) and videos/<video_id>.mp4"

    def _read_table(self) -> pd.DataFrame:
        items, path = task_items(self.snapshot, "yes_no", self.layout)
        rows = [_yes_no_row("yes_no", item, f"{path}: item {i}") for i, item in enumerate(items)]
        table = pd.DataFrame(rows, columns=["task_type", "video", "question", "answer", "dim"])
        return table.assign(index=range(len(table)))

    def build_prompt(self, line: dict[str, Any] | int) -> list[Any]:
        _, row = self._row(line)
        return [video_part(self.prepared_video(row)), text_part(str(row["question"])), text_part(YES_NO_CLOSING)]

    def _score(self, df: pd.DataFrame, *, judge: Judge | None) -> EvalResult:
        return score_tempcompass_yorn(df, judge=judge)

    def scorer_params(self) -> dict[str, Any]:
        return {"scorer": "tempcompass_yorn", "rule": "TempCompass yes/no: the reply starting yes or no"}
