"""The closed realtime codec vocabulary: what a session sends and what it can receive.

Codecs translate between these values and one provider's frames; the session only ever
sees these.  Every value is a frozen dataclass owning its data (``bytes`` for audio, ``str``
for text), so nothing refers back into a provider frame once decoded.

Commands (client → provider): :class:`ConfigureSession`, :class:`AppendAudio`,
:class:`CommitAudio`, :class:`ClearAudio`, :class:`SendText`, :class:`SendToolResults`,
:class:`RequestResponse`, :class:`CancelResponse`.

Events (provider → client): session (:class:`SessionStarted`, :class:`SessionConfigured`),
input (:class:`SpeechStarted`, :class:`SpeechStopped`, :class:`InputCommitted`,
:class:`InputTranscript`), output (:class:`ResponseStarted`, :class:`TextDelta`,
:class:`TextDone`, :class:`AudioDelta`, :class:`AudioDone`, :class:`TranscriptDelta`,
:class:`TranscriptDone`, :class:`ToolCallRequested`, :class:`ToolCallsCancelled`,
:class:`Interrupted`, :class:`ResponseDone` — the turn boundary), accounting
(:class:`UsageReported`), connection (:class:`GoAway`, :class:`ResumptionUpdate`),
:class:`ServerError`, and :class:`ProviderNotice` for documented frames that carry nothing
a session needs (their ``kind`` is the provider's frame name, from the codec's closed list).
A frame outside the codec's documented set never becomes a notice: it fails.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal

from zigai.errors import RealtimeError
from zigai.usage import RequestUsage

__all__ = [
    "RealtimeCodecError", "RealtimeFrameTooLarge", "UnknownRealtimeFrame",
    "RealtimeTool", "ConfigureSession", "AppendAudio", "CommitAudio", "ClearAudio", "SendText",
    "ToolResult", "SendToolResults", "RequestResponse", "CancelResponse", "Command",
    "SessionStarted", "SessionConfigured", "SpeechStarted", "SpeechStopped", "InputCommitted",
    "InputTranscript", "ResponseStarted", "TextDelta", "TextDone", "AudioDelta", "AudioDone",
    "TranscriptDelta", "TranscriptDone", "ToolCallRequested", "ToolCallsCancelled", "Interrupted",
    "ResponseDone", "UsageReported", "GoAway", "ResumptionUpdate", "ServerError", "ProviderNotice",
    "ServerEvent", "ResponseStatus",
]


class RealtimeCodecError(RealtimeError):
    """A frame or command does not fit the codec's documented contract."""


class RealtimeFrameTooLarge(RealtimeCodecError):
    """A frame, one of its strings or its decoded audio exceeds the codec's bounds."""


class UnknownRealtimeFrame(RealtimeCodecError):
    """A frame of a type or shape the codec's dialect does not document."""


# -- commands ----------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class RealtimeTool:
    name: str
    description: str
    parameters: dict[str, Any]


@dataclass(frozen=True, slots=True)
class ConfigureSession:
    """The whole session configuration (sent on start and again after a reconnect).

    ``resume_handle`` asks the provider to continue an earlier server-side session (only
    codecs with ``can_resume`` use it)."""

    instructions: str | None = None
    tools: tuple[RealtimeTool, ...] = ()
    output_modalities: tuple[Literal["text", "audio"], ...] = ("text",)
    voice: str | None = None
    transcribe_input: bool = False
    resume_handle: str | None = None


@dataclass(frozen=True, slots=True)
class AppendAudio:
    audio: bytes


@dataclass(frozen=True, slots=True)
class CommitAudio:
    """The end of the user's spoken input (manual turn detection)."""


@dataclass(frozen=True, slots=True)
class ClearAudio:
    """Discard audio appended since the last commit."""


@dataclass(frozen=True, slots=True)
class SendText:
    """A user text message; ``respond`` also asks for a response to it."""

    text: str
    respond: bool = True


@dataclass(frozen=True, slots=True)
class ToolResult:
    call_id: str
    name: str
    output: str


@dataclass(frozen=True, slots=True)
class SendToolResults:
    results: tuple[ToolResult, ...]
    respond: bool = True


@dataclass(frozen=True, slots=True)
class RequestResponse:
    pass


@dataclass(frozen=True, slots=True)
class CancelResponse:
    pass


Command = (ConfigureSession | AppendAudio | CommitAudio | ClearAudio | SendText | SendToolResults
           | RequestResponse | CancelResponse)


# -- events ------------------------------------------------------------------------------------

ResponseStatus = Literal["completed", "cancelled", "failed", "incomplete"]


@dataclass(frozen=True, slots=True)
class SessionStarted:
    session_id: str | None = None


@dataclass(frozen=True, slots=True)
class SessionConfigured:
    pass


@dataclass(frozen=True, slots=True)
class SpeechStarted:
    item_id: str | None = None


@dataclass(frozen=True, slots=True)
class SpeechStopped:
    item_id: str | None = None


@dataclass(frozen=True, slots=True)
class InputCommitted:
    item_id: str | None = None


@dataclass(frozen=True, slots=True)
class InputTranscript:
    """Transcript of the user's speech; ``final`` marks the complete transcript of an item."""

    text: str
    item_id: str | None = None
    final: bool = False


@dataclass(frozen=True, slots=True)
class ResponseStarted:
    response_id: str | None = None


@dataclass(frozen=True, slots=True)
class TextDelta:
    text: str
    response_id: str | None = None
    item_id: str | None = None


@dataclass(frozen=True, slots=True)
class TextDone:
    text: str
    response_id: str | None = None
    item_id: str | None = None


@dataclass(frozen=True, slots=True)
class AudioDelta:
    audio: bytes
    response_id: str | None = None
    item_id: str | None = None


@dataclass(frozen=True, slots=True)
class AudioDone:
    response_id: str | None = None
    item_id: str | None = None


@dataclass(frozen=True, slots=True)
class TranscriptDelta:
    """Transcript of the model's own speech (kept apart from the audio)."""

    text: str
    response_id: str | None = None
    item_id: str | None = None


@dataclass(frozen=True, slots=True)
class TranscriptDone:
    text: str
    response_id: str | None = None
    item_id: str | None = None


@dataclass(frozen=True, slots=True)
class ToolCallRequested:
    call_id: str
    name: str
    arguments: str
    response_id: str | None = None
    item_id: str | None = None


@dataclass(frozen=True, slots=True)
class ToolCallsCancelled:
    call_ids: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class Interrupted:
    """The user spoke over the model; the response in flight stops."""


@dataclass(frozen=True, slots=True)
class ResponseDone:
    """The response terminal — the turn boundary."""

    status: ResponseStatus = "completed"
    response_id: str | None = None
    usage: RequestUsage | None = None


@dataclass(frozen=True, slots=True)
class UsageReported:
    usage: RequestUsage


@dataclass(frozen=True, slots=True)
class GoAway:
    """The provider will close the connection in ``time_left_s`` seconds."""

    time_left_s: float | None = None


@dataclass(frozen=True, slots=True)
class ResumptionUpdate:
    handle: str | None
    resumable: bool


@dataclass(frozen=True, slots=True)
class ServerError:
    message: str
    code: str | None = None
    event_id: str | None = None


@dataclass(frozen=True, slots=True)
class ProviderNotice:
    kind: str
    item_id: str | None = None
    response_id: str | None = None


ServerEvent = (SessionStarted | SessionConfigured | SpeechStarted | SpeechStopped | InputCommitted
               | InputTranscript | ResponseStarted | TextDelta | TextDone | AudioDelta | AudioDone
               | TranscriptDelta | TranscriptDone | ToolCallRequested | ToolCallsCancelled
               | Interrupted | ResponseDone | UsageReported | GoAway | ResumptionUpdate | ServerError
               | ProviderNotice)
