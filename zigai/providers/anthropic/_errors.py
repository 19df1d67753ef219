"""Named errors of the Anthropic adapter.

``AnthropicDecodeError`` is a :class:`~zigai.provider.ProviderResponseDecodeError` (retry
category ``decode``) *and* a :class:`~zigai.errors.ProviderError`; ``path`` is the JSON path of
the offending value (``$.content[1].input``).  ``AnthropicEncodeError`` means neutral input has no
Messages API representation; it is never retried.
"""

from __future__ import annotations

from typing import Any

from zigai.errors import ProviderError
from zigai.provider import ProviderResponseDecodeError

__all__ = ["AnthropicDecodeError", "AnthropicEncodeError"]


class AnthropicDecodeError(ProviderResponseDecodeError, ProviderError):
    """A successful Anthropic response (or stream event) does not match the Messages API."""

    def __init__(self, message: str, *, path: str = "$", **fields: Any) -> None:
        fields.setdefault("provider_name", "anthropic")
        super().__init__(message, **fields)
        self.path = path


class AnthropicEncodeError(ProviderError):
    """Neutral request content cannot be encoded as a Messages API request."""

    def __init__(self, message: str, *, path: str = "") -> None:
        super().__init__(message)
        self.path = path
