"""Named errors of the Bedrock Converse adapter.

``BedrockDecodeError`` is a :class:`~zigai.provider.ProviderResponseDecodeError` (retry
category ``decode``) and a :class:`~zigai.errors.ProviderError`; ``path`` is the JSON path of
the offending value (``$.output.message.content[1].toolUse``).  ``BedrockEncodeError`` means
the neutral request has no Converse representation (or a ``bedrock`` extension field is
malformed); ``InvalidBedrockModelId`` means the model id cannot form a safe ``model/{id}``
path.  Both are raised before any I/O.  ``EventStreamNeedsChunks`` means the transport
cannot hand over the raw streamed body that binary EventStream framing needs.
"""

from __future__ import annotations

from typing import Any

from zigai.errors import ProviderError
from zigai.providers._native import NativeDecodeError, NativeEncodeError

__all__ = [
    "BedrockDecodeError", "BedrockEncodeError", "EventStreamNeedsChunks", "InvalidBedrockModelId",
]


class BedrockDecodeError(NativeDecodeError):
    """A successful Converse answer (or stream event) does not match the documented contract."""

    def __init__(self, message: str, *, path: str = "$", **fields: Any) -> None:
        fields.setdefault("provider_name", "bedrock")
        super().__init__(message, path=path, **fields)


class BedrockEncodeError(NativeEncodeError):
    """The request cannot be encoded for Converse; nothing was sent."""


class InvalidBedrockModelId(ProviderError):
    """The model id is not a Bedrock model, inference-profile id or ARN (never put in a path)."""


class EventStreamNeedsChunks(ProviderError):
    """ConverseStream needs a transport whose stream response offers ``chunks()``."""
