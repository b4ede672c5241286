"""EgoExoBench_MCQ (VLMEvalKit `EgoExoBench_MCQ`, vlmeval/dataset/EgoExoBench/egoexobench.py at e8e78f05): questions
from a local snapshot of Heleun/EgoExoBench_MCQ, media from the folder VLMEvalKit unpacks them into.

Where things are, as VLMEvalKit reads them: `EgoExoBench_MCQ.tsv` in the snapshot (index, question, options,
response_format, medias (a list literal of media), answer (a letter), subtask_type), and the media under
`$LMUData/videos/EgoExoBench/` (onlyfaces/EgoExoBench's parts unpacked there, Ego-Exo4D added by hand; `media_root=`
names another folder). A medium is `video` (video_path, optional video_start/video_end seconds, nframes), `frames`
or `image` (image_paths).

Prompt (VLMEvalKit's frames path, `process_text_and_media`): "<question>\\nOptions:\\n<options>\\n<response_format>"
split at its `<video>`/`<image>` marks, one mark a medium in order; each non-blank piece of text stripped and sent as a
text part, each medium in its place: a video as `nframes` frames, MVBench's segment rule over [video_start,
video_end] (frame int(lo + seg / 2 + round(seg * k)), seg = (hi - lo) / nframes, lo = max(0, round(start * fps)),
hi = min(round(end * fps), last); the whole video without a bound), a frame list or an image as its image files.
The frame count is the medium's, fixed by the benchmark: the model's --nframe/--fps do not change it (VLMEvalKit's
frames path ignores its own nframe too). vlmkit sends these frames as images to every model (VLMEvalKit gives a video
model the cut clip instead); they are decoded once into the dataset's folder (PNG, holding the pixels of the JPEG
frames VLMEvalKit saves). Scoring: `vlmkit.scoring.benchmarks.egoexobench`.
"""

from __future__ import annotations

import ast
import io
import json
import re
from pathlib import Path
from typing import Any, ClassVar

import pandas as pd

from vlmkit.core.files import write_bytes_atomic
from vlmkit.core.video import FramePlan, VideoError, sample_frames
from vlmkit.judging import Judge
from vlmkit.scoring.benchmarks.egoexobench import score_egoexobench
from vlmkit.scoring.result import EvalResult

from datasets_tsv.io.tsv_read import DatasetError
from datasets_tsv.kinds.snapshot_table import indexed_rows, require_columns, snapshot_tsv
from datasets_tsv.kinds.video_snapshot import SnapshotVideoDataset, text_part

TSV = "EgoExoBench_MCQ.tsv"
COLUMNS = ("question", "options", "response_format", "medias", "answer", "subtask_type")
MEDIA_TYPES = ("video", "frames", "image")
_MARK = re.compile(r"(<image>|<video>)")
NOTE_FRAMES = (
    "frames: each video medium as VLMEvalKit's frames path takes it (its own nframes, MVBench's segment rule over "
    "[video_start, video_end]), the same for every model whatever its --nframe/--fps; sent as images (VLMEvalKit "
    "gives a video model the cut clip); read with opencv where VLMEvalKit uses decord"
)


def question_text(row: dict[str, Any]) -> str:
    """VLMEvalKit's prompt text before it is split at the media marks."""
    return f"{row['question']}\nOptions:\n{row['options']}\n{row['response_format']}"


class EgoExoBenchMCQ(SnapshotVideoDataset):
    """EgoExoBench_MCQ from local copies (module docstring)."""

    repo_id: ClassVar[str] = "Heleun/EgoExoBench_MCQ"
    layout: ClassVar[str] = f"{TSV} (the media under $LMUData/videos/EgoExoBench, or media_root)"
    notes: tuple[str, ...] = (NOTE_FRAMES,)
    vlmevalkit_rule: ClassVar[str] = ("vlmevalkit EgoExoBench: each video medium at its own nframes, MVBench "
                                      "get_index over [video_start, video_end]")

    def __init__(self, name: str, *, media_root: Path | str | None = None, **options: Any) -> None:
        self._media_root = Path(media_root).expanduser() if media_root is not None else None
        super().__init__(name, **options)

    @property
    def media_root(self) -> Path:
        return self._media_root if self._media_root is not None else self.root / "videos" / "EgoExoBench"

    def _read_table(self) -> pd.DataFrame:
        path = self.snapshot / TSV
        raw = snapshot_tsv(path, f"expected the {self.repo_id} snapshot in {self.snapshot}")
        require_columns(raw, ("index", *COLUMNS), path, f"EgoExoBench_MCQ has {', '.join(COLUMNS)}")
        rows = []
        for pos, index, row in indexed_rows(raw, path):
            where = f"{path}: row {pos}"
            medias = _medias(row["medias"], where)
            marks = len(_MARK.findall(question_text(row)))
            if marks != len(medias):
                raise DatasetError(f"{where}, field medias: {len(medias)} media for {marks} <video>/<image> marks")
            rows.append({"index": index, **{c: str(row[c]) for c in COLUMNS if c != "medias"},
                         "medias": json.dumps(medias, ensure_ascii=False)})
        return pd.DataFrame(rows)

    def _media_files(self, medium: dict[str, Any]) -> list[Path]:
        if medium["type"] == "video":
            return [self.media_root / str(medium["video_path"])]
        return [self.media_root / str(p) for p in medium["image_paths"]]

    def _check_videos(self) -> None:
        for pos, line in enumerate(self.data.to_dict("records")):
            for medium in json.loads(line["medias"]):
                for file in self._media_files(medium):
                    if not file.exists():
                        raise DatasetError(f"{file}: missing, needed by {self.name} row {pos} (index "
                                           f"{line['index']}); {self.missing_hint()}")

    def missing_hint(self) -> str:
        return (f"expected onlyfaces/EgoExoBench's media unpacked under {self.media_root} (VLMEvalKit does this on its "
                "first run; Ego-Exo4D is added by hand), or pass media_root")

    def video_file(self, line: dict[str, Any]) -> Path:
        return Path(line["source"])

    def frame_plan(self, line: dict[str, Any]) -> FramePlan:
        """A video medium's plan: MVBench's segments over its bound (`line`: source, bound)."""
        return FramePlan(rule="segments", source=str(Path(line["source"]).resolve()), bound=line["bound"],
                         fps_rule=None, refuse_fps="EgoExoBench fixes each video's frame count")

    def _video_frames(self, index: Any, position: int, medium: dict[str, Any]) -> list[Path]:
        """The medium's frames as PNG files in the dataset's folder (decoded once)."""
        start, end = medium.get("video_start"), medium.get("video_end")
        bound = (float(start), float(end)) if start is not None and end is not None else None
        source = self.media_root / str(medium["video_path"])
        link = self.prepared_video({"source": str(source), "bound": bound})
        nframes = int(medium["nframes"])
        folder = self.cache_dir / "frames" / f"{link.stem}-n{nframes}"
        done = folder / "frames.json"
        if done.is_file():
            return [folder / name for name in json.loads(done.read_text())]
        try:
            video = sample_frames(link, nframe=nframes)
        except VideoError as exc:
            raise DatasetError(f"{self.name} index {index}, medium {position}: {exc}") from None
        names = []
        for k, (frame, frame_index) in enumerate(zip(video.frames, video.indices)):
            name = f"{k:03d}_{frame_index:07d}.png"
            buffer = io.BytesIO()
            frame.save(buffer, format="PNG")
            write_bytes_atomic(folder / name, buffer.getvalue())
            names.append(name)
        write_bytes_atomic(done, json.dumps(names).encode())
        return [folder / name for name in names]

    def build_prompt(self, line: dict[str, Any] | int) -> list[Any]:
        _, row = self._row(line)
        medias = json.loads(row["medias"])
        parts: list[Any] = []
        position = 0
        for chunk in _MARK.split(question_text(row)):
            if chunk in ("<image>", "<video>"):
                medium = medias[position]
                files = (self._video_frames(row["index"], position, medium) if medium["type"] == "video"
                         else self._media_files(medium))
                parts += [{"type": "image", "value": str(f)} for f in files]
                position += 1
            elif chunk.strip():
                parts.append(text_part(chunk.strip()))
        return parts

    def _score(self, df: pd.DataFrame, *, judge: Judge | None) -> EvalResult:
        return score_egoexobench(df, judge=judge)

    def scorer_params(self) -> dict[str, Any]:
        return {"scorer": "egoexobench", "letter_rule": "Video-MME regex (first A-D after answer prefixes)"}

    def frames_info(self) -> dict[str, Any]:
        return {**super().frames_info(), "sampler": self.vlmevalkit_rule, "media_root": str(self.media_root)}


def _medias(value: Any, where: str) -> list[dict[str, Any]]:
    try:
        medias = ast.literal_eval(str(value)) if not isinstance(value, list) else value
    except (ValueError, SyntaxError):
        raise DatasetError(f"{where}, field medias: not a list literal") from None
    if not isinstance(medias, list) or not all(isinstance(m, dict) for m in medias):
        raise DatasetError(f"{where}, field medias: not a list of media")
    for k, medium in enumerate(medias):
        if medium.get("type") not in MEDIA_TYPES:
            raise DatasetError(f"{where}, field medias: medium {k} has type {medium.get('type')!r} (expected "
                               f"{', '.join(MEDIA_TYPES)})")
        if medium["type"] == "video":
            if not medium.get("video_path"):
                raise DatasetError(f"{where}, field medias: medium {k} (video) has no video_path")
            nframes = medium.get("nframes")
            if not isinstance(nframes, int) or isinstance(nframes, bool) or nframes < 1:
                raise DatasetError(f"{where}, field medias: medium {k} (video) has no frame count (nframes)")
        elif not isinstance(medium.get("image_paths"), list) or not medium["image_paths"]:
            raise DatasetError(f"{where}, field medias: medium {k} ({medium['type']}) has no image_paths")
    return medias
