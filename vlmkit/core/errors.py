"""Which exceptions are the user's to fix: the CLI prints them as one line instead of a traceback."""

from __future__ import annotations

from vlmkit.core.files import DownloadError, UnsafePathError
from vlmkit.core.media import MediaError
from vlmkit.core.message import MessageError
from vlmkit.core.registry import RegistryError


class DataError(ValueError):
    """Bad dataset content; the text names the file, the row and the field."""


class ConfigError(ValueError):
    """A setting the user gave that cannot work (a URL without a scheme, a flag out of range); says which."""


def user_errors() -> tuple[type[BaseException], ...]:
    return (
        RegistryError, DownloadError, UnsafePathError, MediaError, MessageError, DataError, ConfigError, FileNotFoundError
    )
