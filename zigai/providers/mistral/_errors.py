"""Named errors of the Mistral Conversations adapter.

``MistralDecodeError`` is a :class:`~zigai.provider.ProviderResponseDecodeError` (retry
category ``decode``) and a :class:`~zigai.errors.ProviderError`; ``path`` is the JSON path of
the offending value (``$.outputs[0].arguments``).  ``MistralEncodeError`` means the neutral
request has no Conversations representation, a managed tool is misconfigured, or a stored
session was asked to change what belongs to its initial request; it is raised before any I/O.
``InvalidConversationId`` is raised before a conversation id is placed in a URL path.
"""

from __future__ import annotations

from typing import Any

from zigai.errors import ProviderError
from zigai.providers._native import NativeDecodeError, NativeEncodeError

__all__ = ["InvalidConversationId", "MistralDecodeError", "MistralEncodeError"]


class MistralDecodeError(NativeDecodeError):
    """A successful Conversations answer (or stream event) does not match the contract."""

    def __init__(self, message: str, *, path: str = "$", **fields: Any) -> None:
        fields.setdefault("provider_name", "mistral")
        super().__init__(message, path=path, **fields)


class MistralEncodeError(NativeEncodeError):
    """The request cannot be encoded for the Conversations API; nothing was sent."""


class InvalidConversationId(ProviderError):
    """A conversation id is not 1-128 letters, digits, ``_`` or ``-`` (never put in a path)."""
