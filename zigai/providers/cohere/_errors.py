"""Named errors of the Cohere v2 Chat adapter.

``CohereDecodeError`` is a :class:`~zigai.provider.ProviderResponseDecodeError` (retry
category ``decode``) and a :class:`~zigai.errors.ProviderError`; ``path`` is the JSON path of
the offending value (``$.message.tool_calls[0].function``).  ``CohereEncodeError`` means the
neutral request has no v2 Chat representation (or a ``cohere`` extension field is malformed);
it is raised before any I/O and never retried.
"""

from __future__ import annotations

from typing import Any

from zigai.providers._native import NativeDecodeError, NativeEncodeError

__all__ = ["CohereDecodeError", "CohereEncodeError"]


class CohereDecodeError(NativeDecodeError):
    """A successful v2 Chat answer (or stream event) does not match the documented contract."""

    def __init__(self, message: str, *, path: str = "$", **fields: Any) -> None:
        fields.setdefault("provider_name", "cohere")
        super().__init__(message, path=path, **fields)


class CohereEncodeError(NativeEncodeError):
    """The request cannot be encoded for Cohere v2 Chat; nothing was sent."""
