"""TempCompass_Captioning and the combined TempCompass (VLMEvalKit `TempCompass_Captioning`, `TempCompass`,
vlmeval/dataset/tempcompass.py at e8e78f05) from a local snapshot of lmms-lab/TempCompass, scored with an LLM judge.

TempCompass_Captioning: `captioning.json` (VLMEvalKit writes it from `captioning/test-00000-of-00001.parquet`, read
here when the JSON is missing; records {video_id, question, answer, dim, mc_question, mc_answer}) and
`videos/<video_id>.mp4`; rows in file order, `index` 0..n-1. Prompt (VLMEvalKit's `build_prompt`): the video, then
the question. Scoring: `vlmkit.scoring.benchmarks.tempcompass_open` (the judge answers the row's multi-choice
question from the model's description).

TempCompass: TempCompass_MCQ's rows, then TempCompass_Captioning's, then TempCompass_YorN's (VLMEvalKit's
ConcatVideoDataset order), `index` 0..n-1 over all, each asked with its part's prompt and scored by its part's
scorer (the judge reads the MCQ and Y/N replies no rule reads, as VLMEvalKit's does with a judge); the figures are
summed over all rows per `<dim>. <task_type>`, dim, task type and overall (percent; VLMEvalKit's table rounds them
to 2 decimals, its figure here too).

Frames: VLMEvalKit's TempCompass rule (Video-MME's: frame int(i * n / (N + 1)), i = 1..N; at --fps F, int(n / v * F)
frames from frame 0) at the model's --nframe/--fps, from the cache beside the video's frame plan.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, ClassVar

import pandas as pd

from vlmkit.judging import Judge
from vlmkit.scoring.benchmarks.tempcompass_open import score_tempcompass_open, tempcompass_metrics
from vlmkit.scoring.result import EvalResult
from vlmkit.scoring.scales import PERCENT, Scale
from vlmkit.scoring.vlmevalkit_figure import ReadingDifference, VlmevalkitFigure

from datasets_tsv.benchmarks.mmbench_video import CombinedSnapshotVideo, JudgedSnapshotVideo
from datasets_tsv.benchmarks.tempcompass import NOTE_FRAMES, TempCompassMCQ, TempCompassYorN, task_items
from datasets_tsv.kinds.snapshot_table import snapshot_item
from datasets_tsv.kinds.video_snapshot import SnapshotVideoDataset, text_part, video_part

FIELDS = ("video_id", "question", "answer", "dim", "mc_question", "mc_answer")
COLUMNS = ["task_type", "video", "question", "answer", "dim", "mc_question", "mc_answer"]
NOTE_JUDGE = ("judge: the one given with --judge (VLMEvalKit's default chatgpt-1106, gpt-3.5-turbo-1106, asked at "
              "temperature 1.0 with top_p 1 and presence_penalty 1; vlmkit sends the temperature and max_tokens 128 "
              "only)")


def _row(item: Any, where: str) -> dict[str, Any]:
    snapshot_item(item, FIELDS, where)
    return {"task_type": "captioning", "video": str(item["video_id"]), "question": str(item["question"]),
            "answer": str(item["answer"]), "dim": str(item["dim"]), "mc_question": str(item["mc_question"]),
            "mc_answer": str(item["mc_answer"])}


class TempCompassCaptioning(JudgedSnapshotVideo):
    """TempCompass_Captioning from a local snapshot (module docstring)."""

    repo_id: ClassVar[str] = "lmms-lab/TempCompass"
    layout: ClassVar[str] = "captioning.json (or its parquet) and videos/<video_id>.mp4"
    judge_scorer: ClassVar[str] = "tempcompass_open"
    answer_columns: ClassVar[tuple[str, ...]] = ("mc_answer", "mc_question", "dim", "task_type")
    notes: tuple[str, ...] = (NOTE_FRAMES, NOTE_JUDGE)

    def _read_table(self) -> pd.DataFrame:
        items, path = task_items(self.snapshot, "captioning", self.layout)
        table = pd.DataFrame([_row(item, f"{path}: item {i}") for i, item in enumerate(items)], columns=COLUMNS)
        return table.assign(index=range(len(table)))

    def video_file(self, line: dict[str, Any]) -> Path:
        return self.snapshot / "videos" / f"{line['video']}.mp4"

    def missing_hint(self) -> str:
        return f"unzip the snapshot's tempcompass_videos.zip in {self.snapshot} (VLMEvalKit does this on its first run)"

    def build_prompt(self, line: dict[str, Any] | int) -> list[Any]:
        _, row = self._row(line)
        return [video_part(self.prepared_video(row)), text_part(str(row["question"]))]

    def score_with_judge(self, df: pd.DataFrame, judge: Judge) -> EvalResult:
        return score_tempcompass_open(df, judge, what=f"{self.snapshot}: {self.name}")


PARTS: tuple[tuple[str, type[SnapshotVideoDataset]], ...] = (
    ("TempCompass_MCQ", TempCompassMCQ), ("TempCompass_Captioning", TempCompassCaptioning),
    ("TempCompass_YorN", TempCompassYorN),
)


class TempCompass(CombinedSnapshotVideo):
    """TempCompass (its three parts) from a local snapshot (module docstring)."""

    repo_id: ClassVar[str] = "lmms-lab/TempCompass"
    layout: ClassVar[str] = ("multi-choice.json, caption_matching.json, captioning.json, yes_no.json (or their "
                             "parquets) and videos/<video_id>.mp4")
    judge_scorer: ClassVar[str] = "tempcompass"
    notes: tuple[str, ...] = (NOTE_FRAMES, NOTE_JUDGE)

    def make_parts(self) -> dict[str, SnapshotVideoDataset]:
        return {name: cls(name, data_root=self.snapshot, root=self.root) for name, cls in PARTS}

    def score_with_judge(self, df: pd.DataFrame, judge: Judge) -> EvalResult:
        scores, theirs, dims, tasks, indices, methods = [], [], [], [], [], []
        notes: list[str] = []
        for name, result in self.part_results(df, judge).items():
            part = self.parts[name]
            rows = part.data.set_index(part.data["index"].astype(str))
            for record in result.per_sample.to_dict("records"):
                line = rows.loc[str(record["index"])]
                scores.append(float(record["score"]))
                theirs.append(float(record.get("vlmevalkit_score", record["score"])))
                dims.append(str(line["dim"]))
                tasks.append(str(line["task_type"]))
                indices.append(f"{name}:{record['index']}")
                methods.append(str(record["method"]))
            notes += [f"{name}: {note}" for note in result.notes]
        metrics = tempcompass_metrics(scores, dims, tasks, by_task=True)
        per_sample = pd.DataFrame({"index": indices, "score": scores, "vlmevalkit_score": theirs, "method": methods,
                                   "dim": dims, "task_type": tasks})
        figure = VlmevalkitFigure(
            metrics=tempcompass_metrics(theirs, dims, tasks, by_task=True, digits=2), primary="Overall",
            differing=[ReadingDifference(i, s, t, s, t) for i, s, t in zip(indices, scores, theirs) if s != t],
            notes=["VLMEvalKit's TempCompass table rounds its figures to 2 decimals; so does this figure"],
        )
        counts = {"total": len(per_sample), "scored": len(per_sample)}
        for method in dict.fromkeys(methods):
            counts[method] = methods.count(method)
        return EvalResult(scorer="tempcompass", metrics=metrics, primary="Overall", per_sample=per_sample,
                          table=pd.DataFrame([{"split": "none", **metrics}]), table_suffix="acc", counts=counts,
                          notes=notes, scale=Scale(PERCENT), vlmevalkit=figure)
