"""A lazy registry: names users type -> "module:Class" plus default keyword arguments.

Nothing is imported until `build` (or `load_class`) is called, so `vlmkit --help` and `vlmkit list` stay fast and
need no optional dependency. Unknown names get a did-you-mean; a missing optional dependency gets a message that
names it and the extra to install.
"""

from __future__ import annotations

import difflib
import importlib
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any


class RegistryError(LookupError):
    """An unknown name, or an entry whose class cannot be imported; the text says what to do."""


# Top-level modules of optional dependencies -> the pip extra that brings them.
_EXTRA_FOR_MODULE = {
    "torch": "vlmkit[local] (after `pip install torch==2.13.0` on CPU machines)",
    "transformers": "vlmkit[local]",
    "tokenizers": "vlmkit[local]",
    "cv2": "vlmkit[media] (opencv-python-headless)",
    "soundfile": "vlmkit[media]",
}


# What a model entry's class is; the run and perf decide by it, never by the class's path.
API = "api"  # a served model: takes --api-base, --api-key and the API options, and `vlmkit perf` can load-test it
LOCAL = "local"  # the kit's local weights: takes --max-tokens as max_new_tokens, a batch size, a device, --backend vllm
PROVIDERS = (API, LOCAL)


@dataclass(frozen=True)
class Entry:
    name: str
    target: str  # "package.module:ClassName"
    kwargs: dict[str, Any] = field(default_factory=dict)
    description: str = ""
    provider: str = ""  # models: API or LOCAL; "" for a class that takes only its entry's kwargs (and datasets)


class Registry:
    """Holds entries of one kind ("model", "dataset")."""

    def __init__(self, kind: str) -> None:
        self.kind = kind
        self._entries: dict[str, Entry] = {}

    def add(self, name: str, target: str, description: str = "", *, provider: str = "", **kwargs: Any) -> None:
        """One entry; kwargs are the class's default keyword arguments (`provider` is the entry's own, see Entry)."""
        if ":" not in target:
            raise ValueError(f"registry target must be 'module:Class', got {target!r}")
        if provider and provider not in PROVIDERS:
            raise ValueError(f"{self.kind} {name!r}: provider must be one of {', '.join(PROVIDERS)}, got {provider!r}")
        if name in self._entries:
            raise ValueError(f"{self.kind} {name!r} is registered twice")
        self._entries[name] = Entry(name, target, dict(kwargs), description, provider)

    def __contains__(self, name: object) -> bool:
        return name in self._entries

    def __iter__(self) -> Iterator[Entry]:
        return iter(self._entries.values())

    def __len__(self) -> int:
        return len(self._entries)

    def names(self) -> list[str]:
        return list(self._entries)

    def get(self, name: str) -> Entry:
        try:
            return self._entries[name]
        except KeyError:
            raise RegistryError(self.unknown_message(name)) from None

    def unknown_message(self, name: str) -> str:
        close = difflib.get_close_matches(name, self._entries, n=3, cutoff=0.6)
        lowered = {n.lower(): n for n in self._entries}
        if name.lower() in lowered:
            close = [lowered[name.lower()]]
        hint = f" Did you mean: {', '.join(close)}?" if close else ""
        return f"unknown {self.kind} {name!r}.{hint} (`vlmkit list {self.kind}s` shows them all)"

    def load_class(self, name: str) -> type:
        return import_target(self.get(name).target, what=f"{self.kind} {name!r}")

    def build(self, name: str, **overrides: Any) -> Any:
        """Instantiate the entry's class with its default kwargs updated by overrides."""
        entry = self.get(name)
        cls = import_target(entry.target, what=f"{self.kind} {name!r}")
        return cls(**{**entry.kwargs, **overrides})


def import_target(target: str, what: str = "") -> type:
    """Import "module:Class"; a missing optional dependency becomes a RegistryError naming what to install."""
    module_name, _, attr = target.partition(":")
    try:
        module = importlib.import_module(module_name)
    except ModuleNotFoundError as exc:
        missing = (exc.name or "").split(".")[0]
        extra = _EXTRA_FOR_MODULE.get(missing)
        if extra is None and missing == module_name.split(".")[0]:
            raise RegistryError(f"{what}: module {module_name!r} not found") from None
        install = f"pip install '{extra}'" if extra else f"pip install {missing}"
        raise RegistryError(f"{what} needs the optional dependency {missing!r}: {install}") from None
    try:
        return getattr(module, attr)
    except AttributeError:
        raise RegistryError(f"{what}: {module_name} has no {attr!r}") from None
