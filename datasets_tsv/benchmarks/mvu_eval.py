"""MVU-Eval (VLMEvalKit `MVUEval`, vlmeval/dataset/mvu_eval.py at e8e78f05) from a local copy of
MVU-Eval-Team/MVU-Eval-Data.

The folder as VLMEvalKit leaves it (`$LMUData/datasets/MVU-Eval`): the annotation JSON ({"0": {video_paths (a
list), question, options (a list of `A. text` lines), ground_truth (a letter), task}, ...}), the `mvu_eval.tsv`
VLMEvalKit writes from it (read when present: same rows) and the videos flat in the folder, each at
`<video path without .mp4 and video/>.mp4`. Rows are sorted by index, as VLMEvalKit sorts them. With no TSV the
folder must hold exactly one JSON (VLMEvalKit takes whichever `os.listdir` names first).

Frames: VLMEvalKit's Video-MME rule for each video (frame int(i * n / (N + 1)), i = 1..N; at --fps F,
int(n / v * F) frames from frame 0) at the model's --nframe/--fps (VLMEvalKit: 16 unless told, MVU-Eval_8frame and
_16frame). Prompt (VLMEvalKit's `build_prompt`): per video "The following is the Video k" and the video; then the
question, the option lines joined by newlines, and "Please select the correct answer from the options. Answer with
the option’s letter directly." (its curly apostrophe kept), each a text part. Scoring:
`vlmkit.scoring.benchmarks.mvu_eval`.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, ClassVar

import pandas as pd

from vlmkit.judging import Judge
from vlmkit.scoring.benchmarks.mvu_eval import score_mvu_eval
from vlmkit.scoring.result import EvalResult

from datasets_tsv.io.tsv_read import DatasetError, read_header, read_table
from datasets_tsv.kinds.video_snapshot import SnapshotVideoDataset, text_part, video_part

VLMEVALKIT_TSV = "mvu_eval.tsv"
INSTRUCTION = "Please select the correct answer from the options. Answer with the option’s letter directly."
NOTE_FRAMES = (
    "frames: VLMEvalKit's MVU-Eval rule (Video-MME's for each video: frame int(i * n / (N + 1)), i = 1..N; fps F: "
    "int(n / v * F) frames from frame 0) at the model's --nframe/--fps (VLMEvalKit runs it at 16 unless told, or 8), "
    "for every model; read with opencv where VLMEvalKit uses decord"
)


def video_ids(video_paths: str) -> list[str]:
    """VLMEvalKit's video ids of a row: the `;`-joined paths without `.mp4` and `video/`."""
    return [v.replace(".mp4", "").replace("video/", "").strip() for v in str(video_paths).split(";") if v.strip()]


class MVUEval(SnapshotVideoDataset):
    """MVU-Eval from a local copy (module docstring)."""

    repo_id: ClassVar[str] = "MVU-Eval-Team/MVU-Eval-Data"
    layout: ClassVar[str] = f"the annotation JSON (or VLMEvalKit's {VLMEVALKIT_TSV}) and the videos flat beside it"
    notes: tuple[str, ...] = (NOTE_FRAMES,)

    def _read_table(self) -> pd.DataFrame:
        tsv = self.snapshot / VLMEVALKIT_TSV
        if tsv.is_file():
            raw = read_table(tsv, skip="", text_columns=frozenset(read_header(tsv))).fillna("")
            return self._rows(raw.to_dict("records"), tsv, options_json=True)
        found = sorted(self.snapshot.glob("*.json"))
        if len(found) != 1:
            raise DatasetError(f"{self.snapshot}: expected {VLMEVALKIT_TSV} or exactly one annotation JSON, found "
                               f"{len(found)} JSON files ({self.layout})")
        try:
            annos = json.loads(found[0].read_text(encoding="utf-8"))
        except ValueError as exc:
            raise DatasetError(f"{found[0]}: not JSON ({exc})") from None
        if not isinstance(annos, dict):
            raise DatasetError(f"{found[0]}: expected an object of index -> question")
        items = []
        for key, item in annos.items():
            if not isinstance(item, dict) or not isinstance(item.get("video_paths"), list):
                raise DatasetError(f"{found[0]}: item {key}, field video_paths: not a list")
            items.append({**item, "index": key, "video_paths": ";".join(map(str, item["video_paths"]))})
        return self._rows(items, found[0], options_json=False)

    @staticmethod
    def _rows(items: list[dict[str, Any]], path: Path, *, options_json: bool) -> pd.DataFrame:
        rows = []
        for pos, item in enumerate(items):
            where = f"{path}: row {pos}"
            for field in ("index", "video_paths", "question", "options", "ground_truth"):
                if item.get(field) in (None, ""):
                    raise DatasetError(f"{where}, field {field}: missing")
            try:
                index = int(item["index"])
            except (TypeError, ValueError):
                raise DatasetError(f"{where}, field index: {item['index']!r} is not a whole number") from None
            options = item["options"]
            if options_json:
                try:
                    options = json.loads(options)
                except ValueError:
                    raise DatasetError(f"{where}, field options: not a JSON list") from None
            if not isinstance(options, list):
                raise DatasetError(f"{where}, field options: not a list")
            if not video_ids(item["video_paths"]):
                raise DatasetError(f"{where}, field video_paths: no video")
            rows.append({"index": index, "video_paths": str(item["video_paths"]), "question": str(item["question"]),
                         "options": json.dumps([str(o) for o in options], ensure_ascii=False),
                         "answer": str(item["ground_truth"]).strip(), "task": str(item.get("task", ""))})
        return pd.DataFrame(rows).sort_values("index", kind="stable").reset_index(drop=True)

    def video_file(self, line: dict[str, Any]) -> Path:
        """The video `line["video_id"]` names, else the row's first video."""
        video = line.get("video_id") or video_ids(line["video_paths"])[0]
        return self.snapshot / f"{video}.mp4"

    def _check_videos(self) -> None:
        for pos, line in enumerate(self.data.to_dict("records")):
            for video in video_ids(line["video_paths"]):
                path = self.video_file({"video_id": video})
                if not path.is_file():
                    raise DatasetError(f"{path}: missing, needed by {self.name} row {pos} (index {line['index']}); "
                                       f"{self.missing_hint()}")

    def missing_hint(self) -> str:
        return f"unpack the videos flat into {self.snapshot} (VLMEvalKit does this on its first run)"

    def build_prompt(self, line: dict[str, Any] | int) -> list[Any]:
        _, row = self._row(line)
        parts: list[Any] = []
        for k, video in enumerate(video_ids(row["video_paths"]), start=1):
            parts += [text_part(f"The following is the Video {k}"),
                      video_part(self.prepared_video({**row, "video_id": video}))]
        options = json.loads(row["options"])
        return [*parts, text_part(str(row["question"])), text_part("\n".join(options)), text_part(INSTRUCTION)]

    def _score(self, df: pd.DataFrame, *, judge: Judge | None) -> EvalResult:
        return score_mvu_eval(df)

    def scorer_params(self) -> dict[str, Any]:
        return {"scorer": "mvu_eval", "letter_rule": "MVU-Eval check_model_output (patterns, else the first character)"}
