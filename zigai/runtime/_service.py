"""``LockedService``: the lifecycle every in-memory runtime store shares.

Invariants: one lock guards the store's state; ``close()`` clears it and every later
operation raises :class:`ServiceClosed` naming the service; closing twice is harmless; the
store is a context manager that closes on exit.
"""

from __future__ import annotations

import threading
from typing import ClassVar, Self

from zigai.runtime.errors import ServiceClosed

__all__ = ["LockedService"]


class LockedService:
    _service_name: ClassVar[str] = "service"

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._closed = False

    def _clear(self) -> None:
        """Drop the stored items (called under the lock by ``close()``)."""

    def close(self) -> None:
        with self._lock:
            self._closed = True
            self._clear()

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def _check_open(self) -> None:
        if self._closed:
            raise ServiceClosed(f"the {self._service_name} was used after close()")
