"""MLVU_MCQ (VLMEvalKit `MLVU_MCQ`, vlmeval/dataset/mlvu.py at e8e78f05) from a local snapshot of MLVU/MVLU.

The snapshot as VLMEvalKit reads it: `MLVU/json/<n>_<task>.json` for its seven multiple-choice tasks (each a list
of {video, duration, question, candidates, answer}, `answer` the text of one candidate) and the videos at
`MLVU/video/<n>_<task>/<video>`. Rows come task by task in VLMEvalKit's order (plotQA, needle, ego, count, order,
anomaly_reco, topic_reasoning), each file's items in order, `index` 0..n-1, as its `generate_tsv` numbers them.

Frames: VLMEvalKit's `MLVU_MCQ.save_video_frames` is Video-MME's rule (frame int(i * n / (N + 1)), i = 1..N; at
--fps F, int(n / v * F) frames int(i * v / F) from frame 0), at the model's --nframe/--fps, from the cache beside the
video's frame plan (`SnapshotVideoDataset.prepared_video`).
Prompt (VLMEvalKit's `build_prompt`): a system turn with MLVU's instruction, then the user turn: the video,
"Question: <q>\\nOptions:\\n(A) ..\\n(B) .." and "\\nOnly give the best option.".
Scoring: `vlmkit.scoring.benchmarks.mlvu_mcq.score_mlvu_mcq`. The open-ended half (MLVU_OpenEnded, judged) and the
combined MLVU are not here.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any, ClassVar

import pandas as pd

from vlmkit.judging import Judge
from vlmkit.scoring.benchmarks.mlvu_mcq import score_mlvu_mcq
from vlmkit.scoring.kinds.video_mcq import candidate_list, mvbench_target
from vlmkit.scoring.result import EvalResult

from datasets_tsv.io.tsv_read import DatasetError
from datasets_tsv.kinds.snapshot_table import snapshot_item
from datasets_tsv.kinds.video_snapshot import SnapshotVideoDataset, snapshot_json, text_part, video_part

SYSTEM = ("Carefully watch this video and pay attention to every detail. "
          "Based on your observations, select the best option that accurately addresses the question.")
ONLY_BEST = "\nOnly give the best option."
# (task, json file, video folder under the snapshot): VLMEvalKit's type_data_list, in its order
TASKS: tuple[tuple[str, str, str], ...] = (
    ("plotQA", "1_plotQA.json", "MLVU/video/1_plotQA"),
    ("needle", "2_needle.json", "MLVU/video/2_needle"),
    ("ego", "3_ego.json", "MLVU/video/3_ego"),
    ("count", "4_count.json", "MLVU/video/4_count"),
    ("order", "5_order.json", "MLVU/video/5_order"),
    ("anomaly_reco", "6_anomaly_reco.json", "MLVU/video/6_anomaly_reco"),
    ("topic_reasoning", "7_topic_reasoning.json", "MLVU/video/7_topic_reasoning"),
)
FIELDS = ("video", "duration", "question", "candidates", "answer")
NOTE_FRAMES = (
    "frames: VLMEvalKit's MLVU_MCQ rule (Video-MME's: frame int(i * n / (N + 1)), i = 1..N; fps F: int(n / v * F) "
    "frames from frame 0) at the model's --nframe/--fps, for every model (VLMEvalKit gives a video model the file "
    "and lets it sample); read with opencv where VLMEvalKit uses decord"
)


def mlvu_task_table(dataset: SnapshotVideoDataset, tasks: Sequence[tuple[str, str, str]],
                    row: Callable[[str, str, Any, str], dict[str, Any]], columns: Sequence[str]) -> pd.DataFrame:
    """The questions of MLVU's task files (`MLVU/json/<file>` for each (task, file, video folder) of `tasks`), one
    `row(task, folder, item, where)` each, numbered 0..n-1 in task order."""
    rows = []
    for task, file, folder in tasks:
        path = dataset.snapshot / "MLVU" / "json" / file
        items = snapshot_json(path, questions=True, missing=f"expected the {dataset.repo_id} snapshot in "
                                                            f"{dataset.snapshot} ({dataset.layout})")
        rows += [row(task, folder, item, f"{path}: item {i}") for i, item in enumerate(items)]
    table = pd.DataFrame(rows, columns=list(columns))
    return table.assign(index=range(len(table)))


def _row(task: str, folder: str, item: Any, where: str) -> dict[str, Any]:
    snapshot_item(item, FIELDS, where)
    candidates = item["candidates"]
    if not isinstance(candidates, list) or not candidates:
        raise DatasetError(f"{where}, field candidates: not a list of options")
    answer = str(item["answer"])
    try:
        mvbench_target([str(c) for c in candidates], answer)
    except ValueError as exc:
        raise DatasetError(f"{where}, field answer: {exc}") from None
    return {
        "task_type": task, "prefix": folder, "duration": item["duration"], "video": str(item["video"]),
        "question": str(item["question"]), "candidates": json.dumps([str(c) for c in candidates], ensure_ascii=False),
        "answer": answer,
    }  # fmt: skip


class MLVUMCQ(SnapshotVideoDataset):
    """MLVU_MCQ from a local snapshot (module docstring)."""

    repo_id: ClassVar[str] = "MLVU/MVLU"
    layout: ClassVar[str] = "MLVU/json/<n>_<task>.json for its 7 multiple-choice tasks and MLVU/video/<n>_<task>/"
    notes: tuple[str, ...] = (NOTE_FRAMES,)

    def _read_table(self) -> pd.DataFrame:
        return mlvu_task_table(self, TASKS, _row, ("task_type", "prefix", "duration", "video", "question",
                                                   "candidates", "answer"))

    def video_file(self, line: dict[str, Any]) -> Path:
        return self.snapshot / str(line["prefix"]) / str(line["video"])

    def question_text(self, line: dict[str, Any]) -> str:
        """`Question: <q>\\nOptions:\\n(A) ..` (VLMEvalKit's qa_template)."""
        candidates = candidate_list(line["candidates"], f"{self.name}: index {line['index']}, field candidates")
        options = "".join(f"({chr(ord('A') + i)}) {c}\n" for i, c in enumerate(candidates))
        return f"Question: {line['question']}\nOptions:\n{options}".rstrip()

    def build_prompt(self, line: dict[str, Any] | int) -> list[Any]:
        _, row = self._row(line)
        user = [video_part(self.prepared_video(row)), text_part(self.question_text(row)), text_part(ONLY_BEST)]
        return [{"role": "system", "content": [text_part(SYSTEM)]}, {"role": "user", "content": user}]

    def _score(self, df: pd.DataFrame, *, judge: Judge | None) -> EvalResult:
        return score_mlvu_mcq(df, judge=judge)

    def scorer_params(self) -> dict[str, Any]:
        return {"scorer": "mlvu_mcq", "rule": "MLVU check_ans (the letter before ')'), then VLMEvalKit's can_infer"}
