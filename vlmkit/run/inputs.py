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
    norm1 or auto; None leaves each its default."""
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
