"""DatasetInfo objects as the runner makes them for a catalog benchmark: name, kind, images, and VLMEvalKit's TYPE and
prompt owner from the catalog's `vlmevalkit_type` / `vlmevalkit_prompt` columns.

They are made through vlmkit.core.contracts.dataset_info from an object with a catalog dataset's attributes (what
datasets_tsv.catalog.registry.build_row sets), so the tests see what a run sees.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from datasets_tsv.catalog.entries import catalog_rows
from vlmkit.core.contracts import DatasetInfo, dataset_info


@dataclass
class StandIn:
    """What a catalog dataset object shows dataset_info (name, kind, image_paths, the two VLMEvalKit attributes)."""

    name: str
    kind: str
    image_paths: Callable[[Mapping[str, Any]], list[str]]
    vlmevalkit_type: str | None = None
    vlmevalkit_prompt: str | None = None


def typed_info(name: str, kind: str, vlmevalkit_type: str | None, vlmevalkit_prompt: str | None = "wrapper",
               images: tuple[str, ...] = ("/data/images/a.jpg",)) -> DatasetInfo:
    def paths(line: Mapping[str, Any]) -> list[str]:
        return list(images)

    return dataset_info(StandIn(name, kind, paths, vlmevalkit_type, vlmevalkit_prompt))


def catalog_info(name: str, images: tuple[str, ...] = ("/data/images/a.jpg",)) -> DatasetInfo:
    """The DatasetInfo of a catalog benchmark."""
    row = catalog_rows()[name]
    return typed_info(row.name, row.kind, row.vlmevalkit_type, row.vlmevalkit_prompt, images)
