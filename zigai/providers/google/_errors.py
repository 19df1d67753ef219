"""Named errors of the Gemini adapter (shared by Google AI Studio and Vertex AI).

``GoogleDecodeError`` is a :class:`~zigai.provider.ProviderResponseDecodeError` (retry category
``decode``) *and* a :class:`~zigai.errors.ProviderError`; ``path`` is the JSON path of the
offending value.  ``GoogleEncodeError`` means neutral input has no GenerateContent form.
"""

from __future__ import annotations

from typing import Any

from zigai.errors import ProviderError
from zigai.provider import ProviderResponseDecodeError

__all__ = ["GoogleDecodeError", "GoogleEncodeError"]


class GoogleDecodeError(ProviderResponseDecodeError, ProviderError):
    """A successful GenerateContent response (or stream chunk) does not match the API."""

    def __init__(self, message: str, *, path: str = "$", **fields: Any) -> None:
        fields.setdefault("provider_name", "gcp.gen_ai")
        super().__init__(message, **fields)
        self.path = path


class GoogleEncodeError(ProviderError):
    """Neutral request content or a tool schema cannot be encoded for GenerateContent."""

    def __init__(self, message: str, *, path: str = "") -> None:
        super().__init__(message)
        self.path = path
