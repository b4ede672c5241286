"""A lazy registry: names users type -> "module:Class" plus default keyword arguments.

Nothing is imported until `build` (or `load_class`) is called, so `vlmkit --help` and `vlmkit list` stay fast and
need no optional dependency. Unknown names get a did-you-mean; a missing optional dependency gets a message that
names it and the extra to install.
"""

from __future__ import annotations

import difflib
import importlib
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from typing import Any


class RegistryError(LookupError):
    """An unknown name, or an entry whose class cannot be imported; the text says what to do."""


# Top-level modules of optional dependencies -> how to install them (the extra that brings them). torch comes first,
# pinned: an unpinned torch (what the extra's range alone would fetch) pulls the CUDA build.
_INSTALL_FOR_MODULE = {
    "torch": 'pip install torch==2.13.0, then pip install -e ".[local]"',
    "transformers": 'pip install -e ".[local]"',
    "tokenizers": 'pip install -e ".[local]"',
    "cv2": 'pip install -e ".[media]" (opencv-python-headless)',
    "soundfile": 'pip install -e ".[media]"',
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
        """`unknown KIND 'X'.` and what was probably meant: the names equal to X but for case first (saying that
        names are case-sensitive), then the close ones (compared case-insensitively)."""
        same, close = suggestions(name, self._entries)
        if len(same) > 1:  # several names differ only by case: say which is which
            same = [f"{n} ({self._entries[n].description})" if self._entries[n].description else n for n in same]
        if same:
            hint = f" Did you mean {_one_of(same)} (names are case-sensitive)?"
            hint += f" Also close: {', '.join(close)}." if close else ""
        else:
            hint = f" Did you mean: {', '.join(close)}?" if close else ""
        return f"unknown {self.kind} {name!r}.{hint} (`vlmkit list {self.kind}s` shows them all)"

    def load_class(self, name: str) -> type:
        return import_target(self.get(name).target, what=f"{self.kind} {name!r}")

    def build(self, name: str, **overrides: Any) -> Any:
        """Instantiate the entry's class with its default kwargs updated by overrides."""
        entry = self.get(name)
        cls = import_target(entry.target, what=f"{self.kind} {name!r}")
        return cls(**{**entry.kwargs, **overrides})


def suggestions(name: str, names: Iterable[str], n: int = 3, cutoff: float = 0.6) -> tuple[list[str], list[str]]:
    """(the names equal to name but for case, in the order given; up to n other names close to it). Closeness is
    difflib's ratio of the case-folded names; a tie goes to the name closer as typed, then to the earlier one."""
    folded = name.casefold()
    same: list[str] = []
    scored: list[tuple[float, float, int, str]] = []
    for order, candidate in enumerate(names):
        if candidate == name:
            continue
        if candidate.casefold() == folded:
            same.append(candidate)
            continue
        ratio = difflib.SequenceMatcher(None, folded, candidate.casefold()).ratio()
        if ratio >= cutoff:
            as_typed = difflib.SequenceMatcher(None, name, candidate).ratio()
            scored.append((-ratio, -as_typed, order, candidate))
    return same, [candidate for *_, candidate in sorted(scored)[:n]]


def _one_of(names: list[str]) -> str:
    """`a`, `a or b`, `a, b or c`."""
    return names[0] if len(names) == 1 else f"{', '.join(names[:-1])} or {names[-1]}"


def missing_dependency_message(what: str, module: str) -> str:
    """One line: what needs the optional module, and the command that installs it."""
    install = _INSTALL_FOR_MODULE.get(module, f"pip install {module}")
    return f"{what} needs the optional dependency {module!r}, which is not installed: {install}"


def require_modules(modules: Iterable[str], what: str) -> None:
    """Import each optional module now, so that a missing one is a RegistryError naming the extra to install before
    anything runs (not a ModuleNotFoundError from deep inside a model's constructor)."""
    for module in modules:
        try:
            importlib.import_module(module)
        except ModuleNotFoundError as exc:
            missing = (exc.name or module).split(".")[0]
            raise RegistryError(missing_dependency_message(what, missing)) from None


def import_target(target: str, what: str = "") -> type:
    """Import "module:Class"; a missing optional dependency becomes a RegistryError naming what to install."""
    module_name, _, attr = target.partition(":")
    try:
        module = importlib.import_module(module_name)
    except ModuleNotFoundError as exc:
        missing = (exc.name or "").split(".")[0]
        if missing not in _INSTALL_FOR_MODULE and missing == module_name.split(".")[0]:
            raise RegistryError(f"{what}: module {module_name!r} not found") from None
        raise RegistryError(missing_dependency_message(what, missing)) from None
    try:
        return getattr(module, attr)
    except AttributeError:
        raise RegistryError(f"{what}: {module_name} has no {attr!r}") from None
