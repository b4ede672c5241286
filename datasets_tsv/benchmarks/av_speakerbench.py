"""AV-SpeakerBench (VLMEvalKit `AVSpeakerBench`, vlmeval/dataset/av_speakerbench.py at e8e78f05) from a local
snapshot of plnguyen2908/AV-SpeakerBench, branch `vlm_eval_version`, as VLMEvalKit feeds a frames-only model.

The snapshot as VLMEvalKit reads it: `test.tsv` (video, question, choices (a list literal), answer (a letter),
task_id, audio_visual_path, visual_path, audio_path; `index` when present, else 0..n-1) and its zips unpacked (each
member to `<its first folder>/<file name>`), the media at the paths the table names under the snapshot.

What VLMEvalKit sends (`build_prompt`, `AV-SpeakerBench` is use_audio=True, audio_only=False): its system text as a
first text part ("Carefully watch and listen to the clip. Based on your observations, ..."), the frames of the
row's `audio_visual_path` video (a video model gets that file, sound track and all; no audio part is sent), the
audiovisual instruction ("\\nSelect the best answer ... based on the audiovisual clip.\\nRespond with only the letter
(A, B, C, or D) of the correct option.\\n"), then "<question>\\n<choices, one a line>\\nThe best answer is:". vlmkit
sends the same parts; its models sample frames only, so the sound reaches no model (VLMEvalKit's frame path drops it
too). `use_audio=False` (VLMEvalKit's `_visual_` names) takes `visual_path` and the silent-clip instruction.
Frames: VLMEvalKit's rule (frame int(i * n / (N + 1)), i = 1..N; at --fps F, int(n / v * F) frames from frame 0), at
the model's --nframe/--fps (VLMEvalKit's names: _8frame, _16frame, _1fps).
Scoring: `vlmkit.scoring.benchmarks.av_speakerbench`.
"""

from __future__ import annotations

import ast
from pathlib import Path
from typing import Any, ClassVar

import pandas as pd

from vlmkit.judging import Judge
from vlmkit.scoring.benchmarks.av_speakerbench import score_av_speakerbench
from vlmkit.scoring.result import EvalResult

from datasets_tsv.io.tsv_read import DatasetError
from datasets_tsv.kinds.snapshot_table import indexed_rows, require_columns, snapshot_tsv
from datasets_tsv.kinds.video_snapshot import SnapshotVideoDataset, text_part, video_part

TSV = "test.tsv"
SYSTEM = ("Carefully watch and listen to the clip. "
          "Based on your observations, select the best option that accurately addresses the question.")
AUDIO_VISUAL = ("\nSelect the best answer to the following multiple-choice question based on the audiovisual clip.\n"
                "Respond with only the letter (A, B, C, or D) of the correct option.\n")
VISUAL = ("\nSelect the best answer to the following multiple-choice question based on the silent visual clip.\n"
          "Rely on the visuals only and respond with the letter (A, B, C, or D).\n")
COLUMNS = ("video", "question", "choices", "answer", "task_id")
NOTE_AUDIO = (
    "frames only: VLMEvalKit's AV-SpeakerBench (use_audio) sends the frames of the audiovisual clip and no audio part "
    "to a frames model; so does vlmkit, for every model (a video model gets the file, its sound track unread)"
)
NOTE_FRAMES = (
    "frames: VLMEvalKit's rule (frame int(i * n / (N + 1)), i = 1..N; fps F: int(n / v * F) frames from frame 0) at "
    "the model's --nframe/--fps, read with opencv where VLMEvalKit uses decord"
)


class AVSpeakerBench(SnapshotVideoDataset):
    """AV-SpeakerBench from a local snapshot (module docstring)."""

    repo_id: ClassVar[str] = "plnguyen2908/AV-SpeakerBench"
    revision: ClassVar[str] = "vlm_eval_version"
    layout: ClassVar[str] = f"{TSV} and the media of its zips unpacked at the paths it names"
    notes: tuple[str, ...] = (NOTE_AUDIO, NOTE_FRAMES)

    def __init__(self, name: str, *, use_audio: bool = True, **options: Any) -> None:
        self.use_audio = bool(use_audio)
        self.path_column = "audio_visual_path" if self.use_audio else "visual_path"
        super().__init__(name, **options)

    def _read_table(self) -> pd.DataFrame:
        path = self.snapshot / TSV
        raw = snapshot_tsv(path, f"expected the {self.repo_id} snapshot (branch {self.revision}) in {self.snapshot} "
                                 f"({self.layout})")
        require_columns(raw, (*COLUMNS, self.path_column), path,
                        f"AV-SpeakerBench has {', '.join(COLUMNS)}, audio_visual_path, visual_path")
        rows = []
        for pos, index, row in indexed_rows(raw, path):
            if not str(row[self.path_column]).strip():
                raise DatasetError(f"{path}: row {pos}, field {self.path_column}: empty")
            rows.append({"index": index, "video_path": str(row[self.path_column]),
                         "choices": "\n".join(_choices(row["choices"])),
                         **{c: str(row[c]) for c in COLUMNS if c != "choices"}})
        return pd.DataFrame(rows)

    def video_file(self, line: dict[str, Any]) -> Path:
        return self.snapshot / str(line["video_path"])

    def missing_hint(self) -> str:
        return f"unpack the snapshot's zips in {self.snapshot} (VLMEvalKit does this on its first run)"

    def build_prompt(self, line: dict[str, Any] | int) -> list[Any]:
        _, row = self._row(line)
        question = f"{row['question']}\n{row['choices']}\nThe best answer is:"
        return [text_part(SYSTEM), video_part(self.prepared_video(row)),
                text_part(AUDIO_VISUAL if self.use_audio else VISUAL), text_part(question)]

    def _score(self, df: pd.DataFrame, *, judge: Judge | None) -> EvalResult:
        return score_av_speakerbench(df)

    def scorer_params(self) -> dict[str, Any]:
        return {"scorer": "av_speakerbench", "rule": "AV-SpeakerBench letter tokens", "use_audio": self.use_audio}


def _choices(value: Any) -> list[str]:
    """A row's choices as VLMEvalKit reads them: a list literal, else the text's lines."""
    if isinstance(value, (list, tuple)):
        return [str(v) for v in value]
    try:
        parsed = ast.literal_eval(str(value))
    except (ValueError, SyntaxError):
        return str(value).split("\n")
    return [str(v) for v in parsed] if isinstance(parsed, (list, tuple)) else str(value).split("\n")
