"""The ownership rule, implemented once: :class:`Owner`, the base of every owner object.

DESIGN.md ("Ownership"): a returned type with a deinit method owns its complete
result graph.  An owner is a context manager; ``close()`` (alias ``deinit()``)
releases the graph and every later use raises the owner's named "closed" error.

A subclass supplies two things:

* ``_release()`` — drop its references to the owned graph (called by the first
  ``close()`` only; ``_closed`` is already ``True`` when it runs);
* ``_closed_error`` — the exception class raised on use after close, or, when the
  message must differ from ``"<ClassName> was used after close()"``, an override
  of ``_use_after_close()`` returning the exception instance.

Accessors call ``self._check()`` first.  Invariants: ``closed`` is ``False`` until
the first ``close()`` and ``True`` forever after; closing twice is harmless;
entering (``with``) a closed owner raises like any other use; leaving the
``with`` block closes the owner, whether or not the block raised.
"""

from __future__ import annotations

from types import TracebackType
from typing import ClassVar, Self

__all__ = ["Owner"]


class Owner:
    """Base for objects that own a result graph until :meth:`close` (alias :meth:`deinit`)."""

    __slots__ = ("_closed",)

    _closed_error: ClassVar[type[Exception]] = ValueError

    def __init__(self) -> None:
        self._closed = False

    def _release(self) -> None:
        """Drop the references to the owned graph (subclasses extend this)."""

    def _use_after_close(self) -> Exception:
        """The error raised when a closed owner is used."""
        return self._closed_error(f"{type(self).__name__} was used after close()")

    def _check(self) -> None:
        if self._closed:
            raise self._use_after_close()

    @property
    def closed(self) -> bool:
        return self._closed

    def close(self) -> None:
        """Release the owned graph; later use raises. Idempotent."""
        if self._closed:
            return
        self._closed = True
        self._release()

    deinit = close

    def __enter__(self) -> Self:
        self._check()
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()
