"""MMSI-Video-Bench (VLMEvalKit `MMSIVideoBench`, vlmeval/dataset/mmsibench.py at e8e78f05).

Rows: the EASI TSV (`datasets_tsv.benchmarks.spatial_video`: index, system_prompt, task_prompt, user_prompt,
format_prompt, image_path (a list of frame lists, one per video segment, paths relative to the snapshot), video_fps,
ref_images (a list), answer (a letter), task_type, sub_task_type and the sub-bench tags Easy2hard, Grounding,
Indoor_Scene_Perception, Robot); frames and reference images: `<snapshot>/<path>` of rbler/MMSI-Video-Bench with
frames.zip and ref_images.zip unpacked in place (VLMEvalKit leaves videos.zip out; so does vlmkit).

Frames: the benchmark gives each segment's frames as image files, and VLMEvalKit samples them itself, the same for
every model: over all segments' frames (T of them) in one index space, `nframe` N takes all T when N >= T, else
np.linspace(0, T - 1, N, dtype=int); `fps` F takes max(int(T / video_fps * F), 1) frames min(int(i * video_fps / F),
T - 1); repeats dropped; each taken frame goes back to its segment. The setting is a dataset option (`nframe`, default
50; `fps`), as VLMEvalKit's presets MMSIVideoBench_{300,64,50,32}frame and _1fps fix it: the model's --nframe has no
effect here (the frames are images).
Prompt (VLMEvalKit's `build_prompt`): system_prompt + "\\n" + task_prompt + user_prompt + format_prompt, split at
`<video>` (the k-th segment's frames, as images) and `<image>` (the k-th reference image); text pieces kept as they
are. Scoring: pooled accuracy by task_type and sub_task_type (`task_type.<value>_accuracy`, ...), VLMEvalKit's order,
and its sub-bench figures (`(Easy2hard)Avg`, `(Easy2hard)level_1`, ...: VLMEvalKit writes them to a separate
_subset_acc file; vlmkit adds them to the metrics).
"""

from __future__ import annotations

import ast
import math
import re
from pathlib import Path
from typing import Any, ClassVar

import numpy as np
import pandas as pd

from vlmkit.core.message import Part
from vlmkit.core.video import check_sampling
from vlmkit.judging import Judge
from vlmkit.scoring.benchmarks.spatial_mcq import parse_option_list
from vlmkit.scoring.benchmarks.spatial_video import score_spatial_video
from vlmkit.scoring.result import EvalResult

from datasets_tsv.benchmarks.spatial_video import SpatialVideoDataset, inside, judge_not_asked
from datasets_tsv.benchmarks.vsi_bench import NO_JUDGE_NOTE
from datasets_tsv.io.tsv_read import DatasetError

TASKS = {
    "Spatial Construction": ("Instance/Scene Attribute", "Instance-Instance Spatial Relationship",
                             "Instance-Scene Spatial Relationship", "Scene-Scene Spatial Relationship",
                             "Camera-Instance Spatial Relationship", "Camera-Scene Spatial Relationship"),
    "Motion Understanding": ("Camera Motion", "Instance Motion", "Interactive Motion"),
    "Cross-Video": ("Memoery Update", "Multi-View Integration"),
    "Planning": ("Planning",),
    "Prediction": ("Prediction",),
}
ORDER = tuple(f"task_type.{t}" for t in TASKS) + tuple(f"sub_task_type.{s}" for subs in TASKS.values() for s in subs)
SUB_BENCHES = ("Easy2hard", "Grounding", "Indoor_Scene_Perception", "Robot")
NOTE_FRAMES = ("frames: the benchmark's frame files, sampled as VLMEvalKit samples them (over all segments: all when "
               "nframe >= their number, else np.linspace(0, T - 1, N, dtype=int)) at the dataset's nframe/fps option "
               "(default 50 frames), the same for every model; the model's --nframe/--fps does not apply")


def frame_lists(value: Any, where: str) -> list[list[str]]:
    """VLMEvalKit's parse_image_path: a list (or its literal) of frame lists; a flat list is one segment."""
    got = value
    if isinstance(value, str):
        try:
            got = ast.literal_eval(value.strip())
        except (ValueError, SyntaxError, MemoryError, RecursionError):
            got = None
    if not isinstance(got, list):
        raise DatasetError(f"{where}, field image_path: not a list of frame lists")
    if got and not isinstance(got[0], list):
        got = [got]
    return [[str(x) for x in segment] for segment in got]


def sampled_frames(segments: list[list[str]], sampling: dict[str, Any], video_fps: float) -> list[list[str]]:
    """VLMEvalKit's MMSIVideoBench.save_video_frames (module docstring): each segment's taken frames."""
    lengths = [len(s) for s in segments]
    total = sum(lengths)
    if total == 0:
        return [[] for _ in segments]
    if "nframe" in sampling:
        n = min(sampling["nframe"], total)
        picks = list(range(total)) if n == total else np.linspace(0, total - 1, n, dtype=int).tolist()
    else:
        if not (video_fps > 0):
            raise ValueError("sampling by fps needs the row's video_fps")
        required = max(int(total / video_fps * sampling["fps"]), 1)
        step = video_fps / sampling["fps"]
        picks = [min(int(i * step), total - 1) for i in range(required)]
    out: list[list[str]] = [[] for _ in segments]
    starts = np.cumsum([0] + lengths[:-1]).tolist()
    for pick in dict.fromkeys(picks):
        for seg, (start, length) in enumerate(zip(starts, lengths)):
            if pick < start + length:
                out[seg].append(segments[seg][pick - start])
                break
    return out


def _blank(value: Any) -> bool:
    """VLMEvalKit's is_nan_or_none for a sub-bench tag."""
    if value is None:
        return True
    if isinstance(value, float):
        return math.isnan(value)
    return str(value).strip().lower() in {"nan", "null", "none", ""}


def sub_bench_figures(rows: list[dict[str, Any]], hits: list[bool]) -> dict[str, float]:
    """VLMEvalKit's _aggregate_subsets: `(<bench>)Avg` and `(<bench>)<tag>` for each sub-bench tag a row has."""
    scores: dict[str, list[float]] = {}
    for row, hit in zip(rows, hits):
        for bench in SUB_BENCHES:
            if bench not in row or _blank(row[bench]):
                continue
            scores.setdefault(f"({bench})Avg", []).append(float(hit))
            scores.setdefault(f"({bench}){row[bench]}", []).append(float(hit))
    return {key: 100.0 * sum(values) / len(values) for key, values in scores.items()}


class MMSIVideoBench(SpatialVideoDataset):
    """MMSI-Video-Bench from its EASI TSV and a local snapshot's frame files (module docstring)."""

    repo_id: ClassVar[str] = "rbler/MMSI-Video-Bench"
    layout: ClassVar[str] = "frames.zip and ref_images.zip unpacked in place"
    columns: ClassVar[tuple[str, ...]] = ("index", "system_prompt", "task_prompt", "user_prompt", "format_prompt",
                                          "image_path", "video_fps", "ref_images", "answer", "task_type",
                                          "sub_task_type")
    video_column: ClassVar[str | None] = None
    answer_columns: tuple[str, ...] = ("answer", "task_type", "sub_task_type")
    notes: tuple[str, ...] = (NOTE_FRAMES, NO_JUDGE_NOTE)

    def __init__(self, name: str, *, nframe: int | None = None, fps: float | None = None, **kwargs: Any) -> None:
        try:
            self.sampling = check_sampling(50 if nframe is None and fps is None else nframe, fps)
        except ValueError as exc:
            raise DatasetError(f"{name}: {exc}") from None
        super().__init__(name, **kwargs)

    def check_row(self, row: dict[str, Any], where: str) -> None:
        segments = frame_lists(row["image_path"], where)
        for segment in segments:
            for frame in segment:
                inside(self.snapshot, frame.strip().lstrip("/\\"), f"{where}, field image_path")
        refs = self.ref_images(row, where)
        text = self.prompt_text(row)
        if text.count("<video>") != len(segments) or text.count("<image>") != len(refs):
            raise DatasetError(f"{where}: the prompt has {text.count('<video>')} <video> and {text.count('<image>')} "
                               f"<image> marks for {len(segments)} segments and {len(refs)} reference images")

    def ref_images(self, row: dict[str, Any], where: str) -> list[str]:
        value = str(row.get("ref_images", "")).strip()
        refs = parse_option_list(value) if value.startswith("[") else ([value] if value else [])
        if refs is None:
            raise DatasetError(f"{where}, field ref_images: not a list of paths")
        return [inside(self.snapshot, r.strip().lstrip("/\\"), f"{where}, field ref_images") for r in refs]

    def prompt_text(self, line: dict[str, Any]) -> str:
        return (str(line["system_prompt"]) + "\n" + str(line["task_prompt"]) + str(line["user_prompt"])
                + str(line["format_prompt"]))

    def _check_videos(self) -> None:
        for pos, line in enumerate(self.data.to_dict("records")):
            where = f"{self.name} row {pos} (index {line['index']})"
            files = [f for seg in frame_lists(line["image_path"], where) for f in seg[:1]]
            files += self.ref_images(line, where)
            for file in files:
                path = self.snapshot / file.strip().lstrip("/\\")
                if not path.is_file():
                    raise DatasetError(f"{path}: missing, needed by {where}; {self.missing_hint()}")

    def video_file(self, line: dict[str, Any]) -> Path:
        return self.snapshot

    def build_prompt(self, line: dict[str, Any] | int) -> list[Part]:
        _, row = self._row(line)
        where = f"{self.name} index {row['index']}"
        try:
            fps = float(row["video_fps"])
        except ValueError:
            fps = 0.0
        try:
            taken = sampled_frames(frame_lists(row["image_path"], where), self.sampling, fps)
        except ValueError as exc:
            raise DatasetError(f"{where}, field video_fps: {exc}") from None
        refs = self.ref_images(row, where)
        parts: list[Part] = []
        segment = image = 0
        for piece in re.split(r"(<video>|<image>)", self.prompt_text(row)):
            if piece == "<video>":
                parts += [{"type": "image", "value": str(self._file(f, where))} for f in taken[segment]]
                segment += 1
            elif piece == "<image>":
                parts.append({"type": "image", "value": str(self._file(refs[image], where))})
                image += 1
            elif piece:
                parts.append({"type": "text", "value": piece})
        return parts

    def _file(self, relative: str, where: str) -> Path:
        path = self.snapshot / relative.strip().lstrip("/\\")
        if not path.is_file():
            raise DatasetError(f"{path}: missing, needed by {where}; {self.missing_hint()}")
        return path

    def image_paths(self, line: dict[str, Any] | int) -> list[str]:
        return [p["value"] for p in self.build_prompt(line) if p["type"] == "image"]

    def frames_info(self) -> dict[str, Any]:
        return {"sampler": "MMSI-Video-Bench's frame files, linspace over all segments", **self.sampling}

    def _score(self, df: pd.DataFrame, *, judge: Judge | None) -> EvalResult:
        result = score_spatial_video(df, aggregate="pooled", group=("task_type", "sub_task_type"), order=ORDER)
        ordered = df.sort_values("index", kind="stable").to_dict("records")
        by_index = {r["index"]: r for r in ordered}
        rows = [by_index[i] for i in result.per_sample["index"]]
        result.metrics.update(sub_bench_figures(rows, result.per_sample["hit"].tolist()))
        if result.vlmevalkit is not None:
            theirs = [t is not None and t == target for t, target in zip(result.per_sample["vlmevalkit"],
                                                                          result.per_sample["target"])]
            result.vlmevalkit.metrics.update(sub_bench_figures(rows, theirs))
        result.table = pd.DataFrame([result.metrics])
        return judge_not_asked(result, judge, NO_JUDGE_NOTE)

    def scorer_params(self) -> dict[str, Any]:
        return {"scorer": "spatial_video", "aggregate": "pooled", "groups": ["task_type", "sub_task_type"],
                **self.sampling}
