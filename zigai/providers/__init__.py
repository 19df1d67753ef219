"""Provider adapters: one submodule per wire protocol, loaded only when named.

``zigai.providers.http`` holds :class:`~zigai.providers.http.Configured`, the standard
HTTP-backed provider boundary; each adapter (``zigai.providers.openai`` ...) maps the neutral
model contract to one wire route and talks only to a :class:`~zigai.provider.Provider`.

Invariant: importing this package imports no adapter and no third-party module; attribute
access (``zigai.providers.http``) imports the submodule on demand.
"""

from __future__ import annotations

import importlib
from types import ModuleType


def __getattr__(name: str) -> ModuleType:
    if name.startswith("_"):
        raise AttributeError(name)
    try:
        return importlib.import_module(f"{__name__}.{name}")
    except ModuleNotFoundError as exc:
        if exc.name == f"{__name__}.{name}":
            raise AttributeError(f"module {__name__!r} has no attribute {name!r}") from None
        raise
