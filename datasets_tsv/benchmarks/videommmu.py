"""VideoMMMU (VLMEvalKit `VideoMMMU`, vlmeval/dataset/videommmu.py at e8e78f05) from a local snapshot of
lmms-lab/VideoMMMU, as VLMEvalKit leaves it after its first run.

VLMEvalKit builds its table from the snapshot's parquets (one folder a category: Perception, Comprehension,
Adaptation), writing `VideoMMMU.tsv` (index, id, category, question, options (a JSON list), answer, question_type,
video (the path under the snapshot), image) and each Adaptation question's image under `images/`; the videos of
its zips unpacked under `videos/`. vlmkit reads that TSV and those files (building them from the parquets needs
pyarrow and is VLMEvalKit's step: without the TSV the error says so).

Frames: VLMEvalKit's rule (frame int(i * n / (N + 1)), i = 1..N; at --fps F, int(n / v * F) frames from frame 0) at
the model's --nframe/--fps (VLMEvalKit's names: VideoMMMU_8frame, _64frame, _1fps, _0.5fps).
Prompt (VLMEvalKit's `build_prompt`, not interleaved): the video; for Adaptation the question's image, then "You
should watch and learn the video content. Then apply what you learned to answer the following multi-choice question.
The image for this question is at the end of the video.\\n<question>\\n<options>" (open questions: "... answer the
following open-ended question. ...\\n<question>"); for the others "<question>\\n<options>\\nPlease ignore the Quiz
question in last frame of the video."; every text ends "\\nAdd `Answer: {Your final answer}` at the end of your
reply." Options are lettered `A. ...` unless every one already is.
Scoring: `vlmkit.scoring.benchmarks.videommmu`.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, ClassVar

import pandas as pd

from vlmkit.judging import Judge
from vlmkit.scoring.benchmarks.videommmu import MULTIPLE_CHOICE, options_of, score_videommmu
from vlmkit.scoring.result import EvalResult

from datasets_tsv.io.tsv_read import DatasetError
from datasets_tsv.kinds.snapshot_table import require_columns, snapshot_tsv
from datasets_tsv.kinds.video_snapshot import SnapshotVideoDataset, text_part, video_part

TSV = "VideoMMMU.tsv"
COLUMNS = ("id", "category", "question", "options", "answer", "question_type", "video")
ADAPTATION = "Adaptation"
PRE_PROMPT = "You should watch and learn the video content. Then apply what you learned to "
MCQ_PROMPT = ("answer the following multi-choice question. The image for this question is at the end of the "
              "video.\n")
OPEN_PROMPT = ("answer the following open-ended question. The image for this question is at the end of the "
               "video.\n")
IGNORE_QUIZ = "\nPlease ignore the Quiz question in last frame of the video."
ANSWER_LINE = "\nAdd `Answer: {Your final answer}` at the end of your reply."
NOTE_FRAMES = (
    "frames: VLMEvalKit's VideoMMMU rule (Video-MME's: frame int(i * n / (N + 1)), i = 1..N; fps F: int(n / v * F) "
    "frames from frame 0) at the model's --nframe/--fps, read with opencv where VLMEvalKit uses decord"
)


def lettered(options: list[str]) -> str:
    """VLMEvalKit's `parse_options`: the options one a line, lettered `A. ...` unless each already is."""
    letters = [chr(ord("A") + i) for i in range(len(options))]
    if all(option.startswith(f"{letter}.") for option, letter in zip(options, letters)):
        return "\n".join(options)
    return "\n".join(f"{letter}. {option}" for letter, option in zip(letters, options))


class VideoMMMU(SnapshotVideoDataset):
    """VideoMMMU from a local snapshot (module docstring)."""

    repo_id: ClassVar[str] = "lmms-lab/VideoMMMU"
    layout: ClassVar[str] = f"VLMEvalKit's {TSV}, its images/ and the videos unpacked under videos/"
    notes: tuple[str, ...] = (NOTE_FRAMES,)

    def _read_table(self) -> pd.DataFrame:
        path = self.snapshot / TSV
        raw = snapshot_tsv(path, f"vlmkit reads the {TSV} VLMEvalKit writes into the {self.repo_id} snapshot on its "
                                 "first run (it builds it from the parquets and writes images/)")
        require_columns(raw, ("index", *COLUMNS), path, f"VideoMMMU has {', '.join(COLUMNS)}, image")
        rows = []
        for pos, row in enumerate(raw.to_dict("records")):
            try:
                index = int(row["index"])
                options_of(row["options"], "")
            except (TypeError, ValueError):
                field = "options" if str(row["index"]).strip().isdigit() else "index"
                raise DatasetError(f"{path}: row {pos}, field {field}: {str(row[field])[:80]!r} is not "
                                   f"{'a JSON list' if field == 'options' else 'a whole number'}") from None
            image = str(row.get("image", "")).strip()
            if row["category"] == ADAPTATION:
                if not image:
                    raise DatasetError(f"{path}: row {pos}, field image: empty (an Adaptation question has one)")
                if not (self.snapshot / image).is_file():
                    raise DatasetError(f"{self.snapshot / image}: missing, needed by {self.name} row {pos} (index "
                                       f"{index}); VLMEvalKit writes it from the parquet on its first run")
            rows.append({"index": index, **{c: str(row[c]) for c in COLUMNS}, "image": image})
        return pd.DataFrame(rows)

    def video_file(self, line: dict[str, Any]) -> Path:
        return self.snapshot / str(line["video"])

    def missing_hint(self) -> str:
        return f"unpack the snapshot's zips into {self.snapshot / 'videos'} (VLMEvalKit does this on its first run)"

    def question_text(self, line: dict[str, Any]) -> str:
        options = lettered(options_of(line["options"], f"{self.name}: index {line['index']}"))
        if line["category"] != ADAPTATION:
            return f"{line['question']}\n{options}{IGNORE_QUIZ}{ANSWER_LINE}"
        if line["question_type"] == MULTIPLE_CHOICE:
            return f"{PRE_PROMPT}{MCQ_PROMPT}{line['question']}\n{options}{ANSWER_LINE}"
        return f"{PRE_PROMPT}{OPEN_PROMPT}{line['question']}{ANSWER_LINE}"

    def build_prompt(self, line: dict[str, Any] | int) -> list[Any]:
        _, row = self._row(line)
        parts = [video_part(self.prepared_video(row))]
        if row["category"] == ADAPTATION:
            parts.append({"type": "image", "value": str(self.snapshot / row["image"])})
        return [*parts, text_part(self.question_text(row))]

    def _score(self, df: pd.DataFrame, *, judge: Judge | None) -> EvalResult:
        return score_videommmu(df)

    def scorer_params(self) -> dict[str, Any]:
        return {"scorer": "videommmu", "rule": "MMMU parse_multi_choice_response / parse_open_response"}
