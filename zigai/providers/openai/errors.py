"""Named errors of the OpenAI Responses adapter.

``OpenAIDecodeError`` is a provider *response* decoding failure: it derives from
:class:`~zigai.provider.ProviderResponseDecodeError` (so the retry policy classifies it as
``decode``) and from :class:`~zigai.errors.ProviderError` (a failure of one wire protocol).
``path`` names the JSON location that broke the contract (``$.output[1].call_id``).

``OpenAIEncodeError`` means the provider-neutral request cannot be expressed on the
Responses wire (content OpenAI cannot accept, a file owned by another provider, an
allowed-tools name that is not a declared tool ...).  It is raised before any I/O.

Both keep only the message positionally, so they pickle with their attributes.
"""

from __future__ import annotations

from zigai.errors import ProviderError
from zigai.provider import ProviderResponseDecodeError

__all__ = ["OpenAIDecodeError", "OpenAIEncodeError"]


class OpenAIDecodeError(ProviderResponseDecodeError, ProviderError):
    """A 2xx Responses API payload (buffered body or one stream event) broke the contract."""

    path: str

    def __init__(
        self,
        message: str,
        *,
        path: str = "$",
        status: int | None = None,
        request_id: str | None = None,
        provider_name: str = "openai",
    ) -> None:
        super().__init__(
            f"{message} (at {path})" if path != "$" else message,
            status=status,
            request_id=request_id,
            provider_name=provider_name,
        )
        self.path = path


class OpenAIEncodeError(ProviderError):
    """The request cannot be encoded for the Responses API; nothing was sent."""
