"""vlmkit: a benchmark kit for vision-language models.

The public API (vlmkit.api) is imported on first use, so `import vlmkit` has no side effects and pulls in no heavy
dependency. The house, its floors and where each job lives: docs/architecture.md.
"""

from __future__ import annotations

from typing import Any

__version__ = "0.1.0"
__all__ = [
    "__version__", "evaluate", "load_results", "build_dataset", "build_custom_dataset", "build_model",
    "normalise_message", "decode_image", "bytes_to_b64", "extract_choice", "extract_yes_no", "run_perf",
    "DataError", "ConfigError", "MediaError",
]


def __getattr__(name: str) -> Any:
    if name in __all__:
        from vlmkit import api

        return getattr(api, name)
    raise AttributeError(f"module 'vlmkit' has no attribute {name!r}")
