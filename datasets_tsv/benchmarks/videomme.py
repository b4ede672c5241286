"""Video-MME (VLMEvalKit `VideoMME`, vlmeval/dataset/videomme.py) from a local snapshot of lmms-lab/Video-MME.

The snapshot as VLMEvalKit leaves it: `videomme/test-00000-of-00001.parquet` (the questions), `video/<videoID>.mp4`
(VLMEvalKit unpacks `videos_chunked_*.zip` there) and `subtitle/<videoID>.srt` (from `subtitle.zip`). The table is
read from the parquet when pandas has a parquet engine (pyarrow or fastparquet), else from the `Video-MME.tsv` that
VLMEvalKit writes into the snapshot on its first run (same rows, same order); `info()["table_source"]` says which.
Rows: `index` (0..n-1 in parquet order), `video`, `duration` (short/medium/long), `domain`, `sub_category`,
`task_type`, `question`, `candidates` (a JSON list of `A. text` strings), `answer` (a letter), `question_id`.

The prompt is VLMEvalKit's frames prompt: the video (the model samples its frames at its --nframe/--fps by
VLMEvalKit's Video-MME rule, from the cache beside the video's frame plan: `SnapshotVideoDataset.prepared_video`), then
"\\nThese are the frames of a video. Select the best answer ... Respond with only the letter (A, B, C, or D) of the
correct option.\\n", then "Question: <question>\\n<candidates, one a line>\\nAnswer: ". VLMEvalKit's first part, the
empty system text `SYS = ''`, is left out (it adds nothing, and some servers refuse an empty text part).
Scoring: `vlmkit.scoring.kinds.video_mcq.score_videomme`.

The subtitle variants (`use_subtitle=True`, VLMEvalKit's `Video-MME_8frame_subs` and `Video-MME_0.5fps_subs`)
list the subtitle lines shown at the frames VLMEvalKit samples for `nframe` (frame int(i * n / (N + 1)), i = 1..N)
or `fps` (frame int(i * video_fps / F), i < int(duration * F)): for each such frame the first line of
`subtitle/<videoID>.srt` on screen at that moment (start < t < end, t = round(frame * 1000 / video_fps) ms), line
breaks as spaces, blank ones skipped, joined by newlines, into VLMEvalKit's subtitle prompt. A video without a
subtitle file gets the subtitle prompt with no lines, as in VLMEvalKit. The frames the model sees follow the
model's own --nframe/--fps: give the model the same value.
"""

from __future__ import annotations

import json
import re
from functools import lru_cache
from pathlib import Path
from typing import Any, ClassVar

import pandas as pd

from vlmkit.judging import Judge
from vlmkit.scoring.result import EvalResult
from vlmkit.scoring.kinds.video_mcq import candidate_list, score_videomme
from vlmkit.core.video import check_sampling, frame_indices, probe_video

from datasets_tsv.io.tsv_read import DatasetError
from datasets_tsv.kinds.parquet_snapshot_video import ParquetSnapshotVideo
from datasets_tsv.kinds.snapshot_table import require_columns
from datasets_tsv.kinds.video_snapshot import text_part, video_part

PARQUET = "videomme/test-00000-of-00001.parquet"
VLMEVALKIT_TSV = "Video-MME.tsv"
FRAMES_PROMPT = (
    "\nThese are the frames of a video. "
    "Select the best answer to the following multiple-choice question based on the video. "
    "Respond with only the letter (A, B, C, or D) of the correct option.\n"
)
SUBTITLES_PROMPT = (
    "\nThese are the frames of a video. "
    "This video's subtitles are listed below:\n{}\n"
    "Select the best answer to the following multiple-choice question based on the video. "
    "Respond with only the letter (A, B, C, or D) of the correct option.\n"
)
_SRT_TIMES = re.compile(r"(\d+):(\d{1,2}):(\d{1,2})[,.](\d{1,3})\s*-->\s*(\d+):(\d{1,2}):(\d{1,2})[,.](\d{1,3})")
COLUMNS = ("videoID", "duration", "domain", "sub_category", "task_type", "question", "options", "answer")
NOTE_FRAMES = (
    "frames: VLMEvalKit's Video-MME rule (frame int(i * n / (N + 1)) for i = 1..N; at --fps F, int(n / v * F) "
    "frames int(i * v / F) from frame 0), at the model's --nframe/--fps, for every model (VLMEvalKit gives a video "
    "model the file and lets it sample); frames are read with opencv where VLMEvalKit uses decord (the same "
    "indices; a container whose frame count the two read differently gives other indices) and saved as JPEG at "
    "PIL's default quality, as VLMEvalKit saves them; VLMEvalKit's empty system text part is left out"
)


def _ms(hours: str, minutes: str, seconds: str, millis: str) -> int:
    return ((int(hours) * 60 + int(minutes)) * 60 + int(seconds)) * 1000 + int(millis.ljust(3, "0"))


def read_srt(path: Path) -> list[tuple[int, int, str]]:
    """(start ms, end ms, text with its lines joined by spaces) of each cue of an .srt file, in file order."""
    text = path.read_text(encoding="utf-8-sig", errors="replace").replace("\r\n", "\n").replace("\r", "\n")
    cues = []
    for block in re.split(r"\n[ \t]*\n", text.strip()):
        lines = block.split("\n")
        for pos, line in enumerate(lines):
            match = _SRT_TIMES.search(line)
            if match:
                start, end = _ms(*match.groups()[:4]), _ms(*match.groups()[4:])
                cues.append((start, end, " ".join(lines[pos + 1:])))
                break
    return cues


def subtitle_frames(total: int, video_fps: float, nframe: int | None, fps: float | None,
                    rule: str = "vlmevalkit") -> list[int]:
    """The frames VLMEvalKit's Video-MME samples (its `save_video_frames`), whose subtitle lines the prompt lists."""
    if fps is not None and video_fps <= 0:
        return []
    return frame_indices(total, video_fps, nframe=nframe, fps=fps, rule=rule,
                         fps_rule="centre" if rule == "centre" else "vlmevalkit")


class VideoMME(ParquetSnapshotVideo):
    repo_id: ClassVar[str] = "lmms-lab/Video-MME"
    layout: ClassVar[str] = f"{PARQUET} (or VLMEvalKit's {VLMEVALKIT_TSV}) and video/<videoID>.mp4"
    parquet: ClassVar[str] = PARQUET
    vlmevalkit_tsv: ClassVar[str] = VLMEVALKIT_TSV
    notes: tuple[str, ...] = (NOTE_FRAMES,)

    def __init__(self, name: str, *, use_subtitle: bool = False, nframe: int | None = None, fps: float | None = None,
                 **options: Any) -> None:
        self.use_subtitle = bool(use_subtitle)
        self.subtitle_sampling: dict[str, Any] | None = None
        if self.use_subtitle:
            try:
                self.subtitle_sampling = check_sampling(nframe, fps)
            except ValueError as exc:
                raise DatasetError(f"{name}: subtitles are picked at the frames of nframe or fps: {exc}") from None
            [(key, value)] = self.subtitle_sampling.items()
            note = (f"subtitle lines are those at VLMEvalKit's frames for {key}={value:g}; the frames the model sees "
                    f"follow its own --nframe/--fps (run it with --{key} {value:g})")
            self.notes = (*self.notes, note)
        elif nframe is not None or fps is not None:
            raise DatasetError(f"{name}: nframe/fps choose subtitle lines and need use_subtitle; the model's frames "
                               "are set with --nframe/--fps")
        super().__init__(name, **options)
        self._subtitles = lru_cache(maxsize=256)(self._subtitles_of)

    def _parquet_rows(self, raw: pd.DataFrame, path: Path) -> pd.DataFrame:
        require_columns(raw, COLUMNS, path, f"a Video-MME parquet has {', '.join(COLUMNS)}")
        return pd.DataFrame({
            "index": range(len(raw)),
            "video": raw["videoID"].astype(str).tolist(),
            "duration": raw["duration"].astype(str).tolist(),
            "domain": raw["domain"].astype(str).tolist(),
            "sub_category": raw["sub_category"].astype(str).tolist(),
            "task_type": raw["task_type"].astype(str).tolist(),
            "question": raw["question"].astype(str).tolist(),
            "candidates": [json.dumps([str(o) for o in opts], ensure_ascii=False) for opts in raw["options"]],
            "answer": raw["answer"].astype(str).str.strip().tolist(),
            "question_id": raw["question_id"].astype(str).tolist() if "question_id" in raw else [None] * len(raw),
        })  # fmt: skip

    def _rows(self, raw: pd.DataFrame, path: Path) -> pd.DataFrame:
        need = ("index", "video", "duration", "domain", "candidates", "sub_category", "task_type", "question",
                "answer")
        require_columns(raw, need, path, f"VLMEvalKit's Video-MME TSV has {', '.join(need)}")
        rows = []
        for pos, row in enumerate(raw.to_dict("records")):
            try:
                candidates = candidate_list(row["candidates"], f"{path}: row {pos}, field candidates")
                index = int(row["index"])
            except ValueError as exc:
                raise DatasetError(str(exc) if "candidates" in str(exc) else
                                   f"{path}: row {pos}, field index: {row['index']!r} is not a whole number") from None
            rows.append({
                "index": index, "video": row["video"], "duration": row["duration"], "domain": row["domain"],
                "sub_category": row["sub_category"], "task_type": row["task_type"], "question": row["question"],
                "candidates": json.dumps(candidates, ensure_ascii=False), "answer": row["answer"].strip(),
                "question_id": row.get("question_id"),
            })  # fmt: skip
        return pd.DataFrame(rows)

    def missing_hint(self) -> str:
        return (f"unpack the snapshot's videos_chunked_*.zip into {self.snapshot / 'video'} (VLMEvalKit does this on "
                "its first run)")

    def question_text(self, line: dict[str, Any]) -> str:
        """`Question: <question>\\n<candidates, one a line>\\nAnswer: ` (VLMEvalKit's text)."""
        candidates = candidate_list(line["candidates"], f"{self.name}: index {line['index']}, field candidates")
        return "Question: {}\nAnswer: ".format(line["question"] + "\n" + "\n".join(candidates))

    def subtitle_file(self, line: dict[str, Any]) -> Path:
        return self.snapshot / "subtitle" / f"{line['video']}.srt"

    def _subtitles_of(self, video: str) -> str:
        path = self.subtitle_file({"video": video})
        if not path.is_file():
            return ""
        facts = probe_video(self.video_file({"video": video}))
        settings = self.subtitle_sampling or {}
        frames = subtitle_frames(facts["total_frames"], facts["video_fps"], settings.get("nframe"), settings.get("fps"),
                                 self.sampler)
        cues = read_srt(path)
        lines = []
        for frame in frames:
            now = round(frame * (1000 / facts["video_fps"])) if facts["video_fps"] > 0 else 0  # pysubs2.make_time
            text = next((cue for start, end, cue in cues if start < now < end), "")
            if text.strip():
                lines.append(text)
        return "\n".join(lines)

    def build_prompt(self, line: dict[str, Any] | int) -> list[Any]:
        _, row = self._row(line)
        if self.use_subtitle:
            instruction = SUBTITLES_PROMPT.format(self._subtitles(str(row["video"])))
        else:
            instruction = FRAMES_PROMPT
        return [video_part(self.prepared_video(row)), text_part(instruction), text_part(self.question_text(row))]

    def _score(self, df: pd.DataFrame, *, judge: Judge | None) -> EvalResult:
        return score_videomme(df, judge=judge)

    def scorer_params(self) -> dict[str, Any]:
        return {"scorer": "videomme", "letter_rule": "Video-MME regex (first A-D after answer prefixes)"}

    def info(self) -> dict[str, Any]:
        extra = {"subtitles": self.subtitle_sampling} if self.use_subtitle else {}
        return {**super().info(), **extra}
