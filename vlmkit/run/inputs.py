"""What a run is built from: datasets by name, path or custom-file entry, and the checks between a run's models and
datasets made before anything is asked (`vlmkit run` and `--mode perf` share them). It sits on the top floor beside
vlmkit.run.runner and reaches the dataset classes through their registry only."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from vlmkit.core.contracts import Dataset
from vlmkit.core.errors import ConfigError, DataError
from vlmkit.run.resolve import ModelSpec
from vlmkit.core.video import DEFAULT_NFRAME


def build_datasets(datasets: list[str], custom: list[dict[str, Any]], *, root: Path | None = None,
                   progress: bool = True, keep_local_tsv: bool = False, kind: str | None = None,
                   metric: str | None = None, like: str | None = None, inference_only: bool = False,
                   judge: bool = False, data_root: Path | None = None, coords: str | None = None) -> list[Dataset]:
    """Catalog/TSV names and custom-file entries (as vlmkit.run.config_file makes them) -> dataset objects; an
    EvalScope directory gives one dataset per subset. Two datasets of one name are refused (one results folder).
    keep_local_tsv: run a local TSV whose MD5 differs from the catalog's instead of refusing it.
    data_root: the local snapshot folder of benchmarks built from one (datasets_tsv.catalog.registry.build_dataset).
    coords: the click/box coordinate convention for benchmarks that read coordinates (GUI grounding): abs, norm1000,
    norm1 or auto, for every model; None leaves it to each model's family (`dataset_for_model`), else auto."""
    from datasets_tsv.catalog.registry import build_dataset

    built = [
        build_dataset(name, root=root, progress=progress, keep_local_tsv=keep_local_tsv, kind=kind, metric=metric,
                      like=like, inference_only=inference_only, judge=judge, data_root=data_root, coords=coords)
        for name in datasets
    ]
    if custom:
        from datasets_tsv.custom import build_custom_dataset, list_subsets

        for entry in custom:
            options = dict(entry)
            path = Path(options.pop("path")).expanduser()
            subsets = options.pop("subsets", None) or (list_subsets(path) if path.is_dir() else [None])
            built += [build_custom_dataset(path, subset=subset, **options) for subset in subsets]
    names = [d.name for d in built]
    twice = sorted({n for n in names if names.count(n) > 1})
    if twice:
        raise DataError(f"two datasets are named {twice[0]!r} (their results would share a folder); rename one")
    return built


def model_facts(spec: ModelSpec) -> dict[str, Any]:
    """What a dataset may learn of the model whose replies it reads (`dataset_for_model`): `model` (the name typed),
    and where its preset (vlm/presets.tsv) says them, `coords` (the family's coordinate convention) with `preset`
    (the row that says it), and `min_pixels`/`max_pixels` with `pixels_preset` (the image limits the local processor
    applies). A local entry's preset is the one it carries; a served model's is the row named by the last part of its
    served id (`Qwen/Qwen2.5-VL-7B-Instruct` -> Qwen2.5-VL-7B-Instruct), for its convention only: a server resizes
    images by its own settings, which the run does not know."""
    from vlm.presets import model_presets

    presets = model_presets()
    facts: dict[str, Any] = {"model": spec.name}
    carried = spec.kwargs.get("preset") if spec.is_local else None
    name = carried.get("name") if isinstance(carried, dict) else None
    if name is None and spec.is_api:
        served = str(spec.kwargs.get("model") or spec.name).rstrip("/").rsplit("/", 1)[-1]
        name = served if served in presets else None
    preset = presets.get(name) if name else None
    if preset is not None and preset.coords:
        facts.update(coords=preset.coords, preset=preset.name)
    values = carried.get("values") if isinstance(carried, dict) else None
    if isinstance(values, dict) and values.get("min_pixels") and values.get("max_pixels"):
        facts.update(min_pixels=int(values["min_pixels"]), max_pixels=int(values["max_pixels"]), pixels_preset=name)
    return facts


def dataset_for_model(dataset: Dataset, spec: ModelSpec) -> Dataset:
    """The dataset as it reads one model's replies: a dataset whose reading depends on the model family declares
    `for_model(facts)` (GUI grounding: the click coordinates' convention) and gets a copy told `model_facts(spec)`;
    any other dataset is returned as it is. The runner asks this once per (model, dataset) pair, so a run with several
    models reads each model's replies in that model's convention, and results.json records it per pair."""
    tell = getattr(dataset, "for_model", None)
    return tell(model_facts(spec)) if callable(tell) else dataset


def check_frames(spec: ModelSpec, dataset: Dataset) -> None:
    """ConfigError (one line, before anything is asked) when a dataset shows text picked at certain frames (Video-MME's
    subtitle variants: `subtitle_sampling`) or whose prompt names the frames the model sees (QBench_Video_MCQ:
    `prompt_sampling`), and one of the kit's models would sample other frames."""
    refusal = getattr(dataset, "refuses_fps", None)
    if refusal and spec.kwargs.get("fps") is not None and (spec.is_api or spec.is_local):
        raise ConfigError(f"{dataset.name}: {refusal}; run it with --nframe")
    if not (spec.is_api or spec.is_local):
        return
    for wanted, what in ((dataset.subtitle_sampling, "shows the subtitle lines at"),
                         (dataset.prompt_sampling, "tells the model in its prompt it sees")):
        if not wanted:
            continue
        fps, nframe = spec.kwargs.get("fps"), spec.kwargs.get("nframe")
        have = {"fps": float(fps)} if fps is not None else {"nframe": nframe if nframe is not None else DEFAULT_NFRAME}
        if have != wanted:
            [(key, value)] = wanted.items()
            [(got_key, got)] = have.items()
            raise ConfigError(f"{dataset.name} {what} {key}={value:g}, but {spec.name} would sample "
                              f"{got_key}={got:g}: run it with --{key} {value:g}")
