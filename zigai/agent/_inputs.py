"""Checks on rich request content before any provider I/O: URL policy and file ownership.

The agent applies its ``UrlPolicy`` to every media URL in the provider-facing view (the
same policy the provider boundary and the HTTP transport enforce independently), and refuses
uploaded-file handles that belong to another provider or are empty, so a foreign handle
never reaches a provider.  Both checks run after the request is assembled and before the
model is called.
"""

from __future__ import annotations

from collections.abc import Iterable

from zigai.agent.errors import ForeignUploadedFile
from zigai.messages import (
    Message,
    RequestMessage,
    SpeechPromptPart,
    UploadedFile,
    UploadedFileContent,
    UrlSource,
    UserPromptPart,
)
from zigai.security import UrlPolicy


def _sources(messages: Iterable[Message]) -> Iterable[object]:
    for message in messages:
        if not isinstance(message, RequestMessage):
            continue
        for part in message.parts:
            if isinstance(part, UserPromptPart) and not isinstance(part.content, str):
                for item in part.content:
                    if isinstance(item, UploadedFileContent):
                        yield item.file
                    else:
                        source = getattr(item, "source", None)
                        if source is not None:
                            yield source
            elif isinstance(part, SpeechPromptPart):
                yield part.audio.source


def check_request_inputs(
    messages: Iterable[Message], policy: UrlPolicy, provider_name: str
) -> None:
    """Raise ``UrlPolicyViolation`` or ``ForeignUploadedFile`` before any request is sent."""
    for source in _sources(messages):
        if isinstance(source, UrlSource):
            policy.check(source.url)
        elif isinstance(source, UploadedFile):
            if not source.file_id or source.provider_name != provider_name:
                raise ForeignUploadedFile(
                    f"uploaded file owned by {source.provider_name!r} cannot be sent to "
                    f"{provider_name!r}"
                )
