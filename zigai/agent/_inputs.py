"""Checks on rich request content before any provider I/O: URL policy and file ownership.

The agent applies its ``UrlPolicy`` to every media URL in the provider-facing view, request
and response parts alike (found by :mod:`zigai.messages.media`, the same walk the provider
boundary uses; that boundary and the HTTP transport enforce the policy independently), and refuses
uploaded-file handles that belong to another provider or are empty, so a foreign handle
never reaches a provider.  Both checks run after the request is assembled and before the
model is called.
"""

from __future__ import annotations

from collections.abc import Iterable

from zigai.agent.errors import ForeignUploadedFile
from zigai.messages import Message, UploadedFile, UrlSource
from zigai.messages.media import iter_media_sources
from zigai.security import UrlPolicy


def check_request_inputs(
    messages: Iterable[Message], policy: UrlPolicy, provider_name: str
) -> None:
    """Raise ``UrlPolicyViolation`` or ``ForeignUploadedFile`` before any request is sent."""
    for source in iter_media_sources(messages):
        if isinstance(source, UrlSource):
            policy.check(source.url)
        elif isinstance(source, UploadedFile):
            if not source.file_id or source.provider_name != provider_name:
                raise ForeignUploadedFile(
                    f"uploaded file owned by {source.provider_name!r} cannot be sent to "
                    f"{provider_name!r}"
                )
