"""What a model that writes its own prompts may know of the benchmark it serves: `DatasetInfo`.

VLMEvalKit's wrappers decide on their own prompts from the dataset's *type* (MCQ, Y/N, VQA) and name, and they reach
the row's decoded images through a function the runner hands them (`dump_image`). vlmkit passes the same three
things as one small object instead of the dataset itself, so that `vlm/` still never imports `datasets_tsv/`:

    model.use_custom_prompt(info) -> bool
    model.build_prompt(line, info) -> list of parts

`info.name` is the dataset's name (what `generate(msgs, dataset=...)` gets), `info.kind` its kind (`mcq`, `yorn`,
`vqa`, `caption`, `mmmu`, ... as the dataset class says), `info.images(line)` the row's images as local files, in
order, decoded once by the dataset. `str(info)` is the name, so code written for VLMEvalKit's string argument reads
the same.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any


@dataclass(frozen=True)
class DatasetInfo:
    name: str
    kind: str
    images: Callable[[Mapping[str, Any]], list[str]] = field(repr=False, compare=False)

    def __str__(self) -> str:
        return self.name


def dataset_info(dataset: Any) -> DatasetInfo:
    """The DatasetInfo of a dataset object (anything with `name`, `kind` and `image_paths(line)`); a DatasetInfo is
    returned as it is. A bare name is a TypeError: a model's own prompts depend on the kind, which a name lacks."""
    if isinstance(dataset, DatasetInfo):
        return dataset
    if not (hasattr(dataset, "name") and hasattr(dataset, "kind")):
        raise TypeError(
            f"expected a vlmkit.core.contracts.DatasetInfo or a dataset object (name, kind, image_paths); got {dataset!r}: "
            "a model's own prompts depend on the dataset's kind, which a name alone does not give"
        )
    paths = getattr(dataset, "image_paths", None)
    images = paths if callable(paths) else (lambda line: [])
    return DatasetInfo(name=str(dataset.name), kind=str(getattr(dataset, "kind", "")), images=images)
