"""``RealtimeSession``: portable turn state, tools, usage, reconnects and canonical history.

The session sits between a :class:`~zigai.realtime.RealtimeConnection` (frames) and a codec
(frames ↔ the closed vocabulary) and owns everything that does not depend on the provider:

* **Turns.** A turn starts with the first output of a response and ends at its terminal
  (:class:`ResponseDone`); neither an audio chunk nor a tool result ends a turn.
* **Tools.** Calls the model requests are validated and run through the ordinary
  :class:`zigai.tool.Tool` contract, and their results are sent back — after the response
  terminal for the OpenAI wire, at once for Gemini Live (``codec.tools_answered_after_terminal``).
  An unknown tool, invalid arguments or ``ModelRetry`` is answered to the model as a failed
  result; any other exception from a tool propagates to the caller.
* **History.** Finalized speech and text, calls and returns become ordinary
  :mod:`zigai.messages` values (user text and final input transcripts as ``UserPromptPart``,
  model text as ``TextPart``, model speech transcripts as ``SpeechPart``, calls as
  ``ToolCallPart``, results as ``ToolReturnPart``), so a text agent can take over the
  conversation.  Audio stays in live events and in :attr:`RealtimeTurn.audio`; a response
  lost to a reconnect or cancelled before its end adds no calls.
* **Usage** is summed over responses (:attr:`usage`).
* **Reconnects** happen only when the connection classifies its end as ``reconnectable``,
  at most ``ReconnectPolicy.max_attempts`` times without a finished response in between.  The session then opens a new
  connection, sends its configuration again (with the last resumption handle when the codec
  can resume) and reports :class:`Reconnected` — whether server state survived and whether
  a response in flight was lost.  Nothing the user said is sent again by guess.
* **Sends are bounded**: every frame is sent within the deadline of the turn being run
  (:meth:`ask` and :meth:`run_turn`, including the tool results sent during the turn), or
  within ``receive_timeout_s`` outside a turn; a peer that stops reading raises
  :class:`~zigai.realtime.RealtimeSendTimedOut` instead of blocking the caller.
* **Turns are bounded in size**: :meth:`run_turn` collects at most ``max_turn_bytes`` of
  text, transcript (UTF-8) and audio for one turn; one byte more cancels and drains the
  response (as a cancelled control does) and raises :class:`RealtimeTurnTooLarge`, so a peer
  that streams without end cannot grow the caller's memory until the deadline.
* **Observer**: every command and event is described to the optional observer as metadata
  only (:mod:`zigai.realtime.observer`).
"""

from __future__ import annotations

import json
import time
import typing
from collections import deque
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field, replace
from typing import Any, Literal, Protocol

from zigai.control import RunControl
from zigai.errors import RealtimeError
from zigai.messages import (
    FinishReason,
    Message,
    RequestMessage,
    ResponseMessage,
    SpeechPart,
    TextPart,
    ToolCallPart,
    ToolOutcome,
    ToolReturnPart,
    UserPromptPart,
)
from zigai.realtime import events as ev
from zigai.realtime.connection import RealtimeConnection, RealtimeConnectionLost
from zigai.realtime.observer import RealtimeEventInfo, RealtimeObserver, describe
from zigai.tool import InvalidToolArguments, ModelRetry, Tool, ToolRunContext
from zigai.usage import RequestUsage

__all__ = ["RealtimeSession", "RealtimeCodec", "ReconnectPolicy", "Reconnected", "RealtimeTurn",
           "RealtimeSessionError", "RealtimeSessionClosed", "RealtimeTurnTooLarge"]


class RealtimeSessionError(RealtimeError):
    """A session call in the wrong state, a server error during a turn, or a turn timeout."""


class RealtimeSessionClosed(RealtimeSessionError):
    """The session was used after :meth:`RealtimeSession.close` or after its connection ended."""


class RealtimeTurnTooLarge(RealtimeSessionError):
    """One turn's text, transcript and audio passed ``max_turn_bytes``; the response was cancelled.

    Raise ``RealtimeSession(max_turn_bytes=...)``, or read events with :meth:`RealtimeSession.receive`.
    """

    def __init__(self, message: str, *, limit: int) -> None:
        super().__init__(message)
        self.limit = limit


class RealtimeCodec(Protocol):
    provider: str
    can_resume: bool
    tools_answered_after_terminal: bool

    def encode(self, command: ev.Command) -> tuple[str, ...]: ...

    def decode(self, frame: str | bytes) -> tuple[ev.ServerEvent, ...]: ...


@dataclass(frozen=True, slots=True)
class ReconnectPolicy:
    max_attempts: int = 2
    delay_s: float = 0.5

    def __post_init__(self) -> None:
        if self.max_attempts < 0 or self.delay_s < 0:
            raise ValueError("max_attempts and delay_s must not be negative")


@dataclass(frozen=True, slots=True)
class Reconnected:
    """A session event: a new connection replaced a lost one."""

    attempt: int
    server_state_survived: bool
    response_lost: bool
    code: int | None = None


@dataclass(frozen=True, slots=True)
class RealtimeTurn:
    """What one :meth:`RealtimeSession.run_turn` saw, across tool rounds, until the terminal."""

    status: Literal["completed", "cancelled", "failed", "incomplete", "lost"]
    text: str = ""
    transcript: str = ""
    audio: bytes = b""
    tool_calls: tuple[ToolCallPart, ...] = ()
    usage: RequestUsage = field(default_factory=RequestUsage)
    messages: tuple[Message, ...] = ()
    reconnects: tuple[Reconnected, ...] = ()


_FINISH = {"completed": FinishReason.stop, "cancelled": FinishReason.other,
           "failed": FinishReason.error, "incomplete": FinishReason.length}


class _Response:
    """Parts of the response in flight."""

    def __init__(self, response_id: str | None) -> None:
        self.response_id = response_id
        self.text: list[str] = []
        self.text_done: str | None = None
        self.transcript: list[str] = []
        self.transcript_done: str | None = None
        self.calls: list[ToolCallPart] = []
        self.usage = RequestUsage()

    def parts(self) -> tuple[Any, ...]:
        parts: list[Any] = []
        text = self.text_done if self.text_done is not None else "".join(self.text)
        if text:
            parts.append(TextPart(text))
        transcript = self.transcript_done if self.transcript_done is not None else "".join(self.transcript)
        if transcript:
            parts.append(SpeechPart(transcript=transcript))
        return (*parts, *self.calls)


class RealtimeSession:
    """See module docs.  ``connect`` is a factory of fresh connections (used again on reconnect)."""

    def __init__(self, connect: Callable[[], RealtimeConnection], codec: RealtimeCodec, *,
                 config: ev.ConfigureSession | None = None, tools: Sequence[Tool] = (),
                 deps: Any = None, observer: RealtimeObserver | None = None,
                 reconnect: ReconnectPolicy | None = None, receive_timeout_s: float = 30.0,
                 max_turn_bytes: int = 64 * 1024 * 1024) -> None:
        if isinstance(max_turn_bytes, bool) or not isinstance(max_turn_bytes, int) or max_turn_bytes < 1:
            raise ValueError("max_turn_bytes must be an int >= 1")
        self.max_turn_bytes = max_turn_bytes
        self._connect = connect
        self.codec = codec
        self.tools = {tool.name: tool for tool in tools}
        if len(self.tools) != len(tools):
            raise ValueError("tool names must be unique within a realtime session")
        declared = tuple(ev.RealtimeTool(t.name, t.description, t.parameters_json_schema) for t in tools)
        self.config = replace(config or ev.ConfigureSession(), tools=declared)
        self.deps = deps
        self.observer = observer
        self.reconnect_policy = reconnect or ReconnectPolicy()
        self.receive_timeout_s = receive_timeout_s
        self.state: Literal["new", "open", "closed"] = "new"
        self.session_id: str | None = None
        self.usage = RequestUsage()
        self._history: list[Message] = []
        self._connection: RealtimeConnection | None = None
        self._response: _Response | None = None
        self._partial_input: list[str] = []
        self._item_input: dict[str, str] = {}
        self._resume: str | None = None
        self._losses = 0
        self._queue: deque[ev.ServerEvent] = deque()
        self._late_usage = RequestUsage()   # usage reported between responses
        self._absorb_terminal = False       # an interruption already ended the response
        self._turn_ended = False            # the last terminal owed no tool results
        self._turn_start = 0                # history index where the next run_turn begins
        self._control = RunControl()        # the control of the turn being run
        self._send_deadline: float | None = None  # the deadline every send must meet, when set

    @property
    def history(self) -> tuple[Message, ...]:
        return tuple(self._history)

    @property
    def responding(self) -> bool:
        return self._response is not None

    # -- lifecycle ---------------------------------------------------------------------------

    def start(self, timeout: float | None = None) -> None:
        """Open the connection, send the configuration and wait until the provider applied it."""
        if self.state == "closed":
            raise RealtimeSessionClosed("the realtime session is closed")
        if self.state == "open":
            raise RealtimeSessionError("the realtime session is already started")
        self._open(resume_handle=None)
        self.state = "open"
        self._note("connected")
        self._await_configured(timeout)

    def _open(self, resume_handle: str | None) -> None:
        self._connection = self._connect()
        self._command(replace(self.config, resume_handle=resume_handle))

    def _await_configured(self, timeout: float | None) -> None:
        deadline = time.monotonic() + (self.receive_timeout_s if timeout is None else timeout)
        while True:
            event = self._next(deadline)
            if isinstance(event, ev.SessionConfigured):
                return
            if isinstance(event, ev.ServerError):
                raise RealtimeSessionError(f"the provider refused the session configuration: {event.message}")

    def close(self) -> None:
        if self.state == "closed":
            return
        self.state = "closed"
        connection, self._connection = self._connection, None
        if connection is not None:
            connection.close()
        self._note("closed")

    def __enter__(self) -> RealtimeSession:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # -- input -------------------------------------------------------------------------------

    def send_text(self, text: str, *, respond: bool = True) -> None:
        """A user text message (recorded in history), by default asking for a response."""
        self._command(ev.SendText(text, respond))
        self._history.append(RequestMessage((UserPromptPart(text),)))

    def append_audio(self, audio: bytes) -> None:
        self._command(ev.AppendAudio(bytes(audio)))

    def commit_audio(self) -> None:
        self._command(ev.CommitAudio())

    def clear_audio(self) -> None:
        self._command(ev.ClearAudio())

    def request_response(self) -> None:
        self._command(ev.RequestResponse())

    def cancel_response(self) -> None:
        self._command(ev.CancelResponse())

    def _command(self, command: ev.Command) -> None:
        if self.state == "closed":
            raise RealtimeSessionClosed("the realtime session is closed")
        if self._connection is None:
            raise RealtimeSessionError("start the realtime session first")
        deadline = self._send_deadline
        if deadline is None:
            deadline = time.monotonic() + self.receive_timeout_s
        for frame in self.codec.encode(command):
            self._connection.send(frame, max(0.0, deadline - time.monotonic()))
        self._observe(describe(command, "sent", self.codec.provider))

    # -- output ------------------------------------------------------------------------------

    def receive(self, timeout: float | None = None) -> ev.ServerEvent | Reconnected:
        """The next event, after the session has applied it (history, tools, usage, turn state)."""
        if self.state != "open":
            raise RealtimeSessionClosed(f"the realtime session is {self.state}, not open")
        return self._next(time.monotonic() + (self.receive_timeout_s if timeout is None else timeout))

    def events(self, timeout: float | None = None) -> Iterator[ev.ServerEvent | Reconnected]:
        """:meth:`receive` repeatedly (each wait bounded by ``timeout``) while the session is open."""
        while self.state == "open":
            yield self.receive(timeout)

    def run_turn(self, timeout: float | None = None, *, control: RunControl | None = None) -> RealtimeTurn:
        """Receive until the current turn ends: a terminal after which no tool results are owed,
        an interruption, or a reconnect that lost the response (``status="lost"``; nothing is
        sent again).  A server error during the turn raises :class:`RealtimeSessionError`.
        ``RealtimeTurn.messages`` holds the history added since the last turn ended.

        ``control`` bounds the turn by its deadline as well and is handed to the tools it runs.
        When its token is cancelled the session asks the provider to cancel the response in
        flight, drains the late events of that response (at most ``drain_timeout_s``), so the
        next turn starts clean, and raises :class:`zigai.control.Cancelled`."""
        if self.state != "open":
            raise RealtimeSessionClosed(f"the realtime session is {self.state}, not open")
        self._control = control or RunControl()
        deadline = self._turn_deadline(timeout, self._control)
        self._send_deadline = deadline
        try:
            return self._run_turn(deadline)
        finally:
            self._send_deadline = None

    def _turn_deadline(self, timeout: float | None, control: RunControl | None) -> float:
        deadline = time.monotonic() + (self.receive_timeout_s if timeout is None else timeout)
        if control is not None and control.deadline is not None:
            deadline = min(deadline, control.deadline)
        return deadline

    def _run_turn(self, deadline: float) -> RealtimeTurn:
        start = self._turn_start
        text: list[str] = []
        transcript: list[str] = []
        audio = bytearray()
        calls: list[ToolCallPart] = []
        usage = RequestUsage()
        reconnects: list[Reconnected] = []
        status: str | None = None
        collected = 0
        while status is None:
            if collected > self.max_turn_bytes:
                self._drain_cancelled()
                raise RealtimeTurnTooLarge(
                    f"the turn's text, transcript and audio exceed {self.max_turn_bytes} bytes; the response was "
                    "cancelled (raise max_turn_bytes, or read events with receive())", limit=self.max_turn_bytes)
            event = self._next(deadline, self._control)
            if event is None:
                self._drain_cancelled()
                self._control.check()
                continue  # pragma: no cover - check() raised: the token is set
            match event:
                case ev.TextDelta(text=delta):
                    text.append(delta)
                    collected += len(delta.encode("utf-8"))
                case ev.TranscriptDelta(text=delta):
                    transcript.append(delta)
                    collected += len(delta.encode("utf-8"))
                case ev.AudioDelta(audio=chunk):
                    audio += chunk
                    collected += len(chunk)
                case ev.ToolCallRequested(call_id=call_id, name=name, arguments=arguments):
                    calls.append(ToolCallPart(name, arguments, call_id))
                case ev.UsageReported(usage=reported):
                    usage = usage + reported
                case ev.ServerError(message=message, code=code):
                    raise RealtimeSessionError(f"the provider reported an error during the turn "
                                               f"({code}): {message}")
                case ev.Interrupted():
                    status = "cancelled"
                case ev.ResponseDone(usage=done_usage) if self._turn_ended:
                    usage = usage + (done_usage or RequestUsage())
                    status = event.status
                case ev.ResponseDone(usage=done_usage):
                    usage = usage + (done_usage or RequestUsage())
                case Reconnected(response_lost=lost):
                    reconnects.append(event)
                    status = "lost" if lost else None
        self._turn_start = len(self._history)
        return RealtimeTurn(status, "".join(text), "".join(transcript), bytes(audio),  # type: ignore[arg-type]
                            tuple(calls), usage, tuple(self._history[start:]), tuple(reconnects))

    def ask(self, text: str, timeout: float | None = None, *, control: RunControl | None = None) -> RealtimeTurn:
        """:meth:`send_text` then :meth:`run_turn`, both within one deadline."""
        deadline = self._turn_deadline(timeout, control)
        self._send_deadline = deadline
        try:
            self.send_text(text)
        finally:
            self._send_deadline = None
        return self.run_turn(max(0.0, deadline - time.monotonic()), control=control)

    drain_timeout_s = 2.0
    _POLL_S = 0.05  # how often a waiting turn looks at its cancellation token

    def _drain_cancelled(self) -> None:
        if self._response is None:
            return
        deadline = time.monotonic() + self.drain_timeout_s
        self._send_deadline = deadline
        try:
            self._command(ev.CancelResponse())
        except ev.RealtimeCodecError:  # Gemini has no cancel frame: just drain what arrives
            pass
        while self._response is not None and time.monotonic() < deadline:
            try:
                self._next(deadline)
            except RealtimeSessionError:
                break
        if self._response is not None:  # the provider never ended it: it is discarded
            self._response = None
            self._absorb_terminal = True

    @typing.overload
    def _next(self, deadline: float) -> ev.ServerEvent | Reconnected: ...

    @typing.overload
    def _next(self, deadline: float, control: RunControl) -> ev.ServerEvent | Reconnected | None: ...

    def _next(self, deadline: float, control: RunControl | None = None) -> ev.ServerEvent | Reconnected | None:
        """The next event; None only when ``control`` was cancelled while waiting."""
        while not self._queue:
            connection = self._connection
            if connection is None:
                raise RealtimeSessionClosed("the realtime session has no connection")
            wait = max(0.0, deadline - time.monotonic())
            if control is not None:
                if control.cancelled:
                    return None
                wait = min(wait, self._POLL_S)
            try:
                frame = connection.receive(wait)
            except TimeoutError:
                if control is not None and time.monotonic() < deadline:
                    continue
                if control is not None:
                    control.check()  # the turn's own deadline: RunTimedOut
                raise RealtimeSessionError("no realtime event arrived in time") from None
            except RealtimeConnectionLost as lost:
                return self._recover(lost, deadline)
            self._queue.extend(self.codec.decode(frame))  # one frame may hold several events
        event = self._queue.popleft()
        self._observe(describe(event, "received", self.codec.provider))
        self._apply(event)
        return event

    # -- applying events ------------------------------------------------------------------------

    def _apply(self, event: ev.ServerEvent) -> None:
        match event:
            case ev.SessionStarted(session_id=session_id):
                self.session_id = session_id
            case ev.ResponseStarted(response_id=response_id):
                self._begin(response_id)
            case ev.TextDelta() | ev.TextDone() | ev.AudioDelta() | ev.TranscriptDelta() \
                    | ev.TranscriptDone() | ev.ToolCallRequested():
                response = self._begin(getattr(event, "response_id", None))
                if isinstance(event, ev.TextDelta):
                    response.text.append(event.text)
                elif isinstance(event, ev.TextDone):
                    response.text_done = event.text
                elif isinstance(event, ev.TranscriptDelta):
                    response.transcript.append(event.text)
                elif isinstance(event, ev.TranscriptDone):
                    response.transcript_done = event.text
                elif isinstance(event, ev.ToolCallRequested):
                    response.calls.append(ToolCallPart(event.name, event.arguments, event.call_id))
                    batch_continues = bool(self._queue) and isinstance(self._queue[0], ev.ToolCallRequested)
                    if not self.codec.tools_answered_after_terminal and not batch_continues:
                        self._finish(response, "completed", FinishReason.tool_call)
                        self._answer(response.calls)
            case ev.InputTranscript(text=text, item_id=item_id, final=final):
                self._user_speech(text, item_id, final)
            case ev.UsageReported(usage=usage):
                self.usage = self.usage + usage
                if self._response is not None:
                    self._response.usage = self._response.usage + usage
                else:
                    self._late_usage = self._late_usage + usage
            case ev.ResumptionUpdate(handle=handle, resumable=resumable):
                self._resume = handle if resumable else None
            case ev.Interrupted():
                if self._response is not None:
                    self._finish(self._response, "cancelled", FinishReason.other)
                self._absorb_terminal = True
            case ev.ResponseDone():
                self._terminal(event)

    def _begin(self, response_id: str | None) -> _Response:
        self._absorb_terminal = False
        self._turn_ended = False
        if self._response is None:
            self._flush_partial_input()
            self._response = _Response(response_id)
            self._response.usage, self._late_usage = self._late_usage, RequestUsage()
        elif response_id is not None and self._response.response_id is None:
            self._response.response_id = response_id
        return self._response

    def _terminal(self, done: ev.ResponseDone) -> None:
        self._losses = 0  # a finished response: the connection works again
        usage = done.usage or RequestUsage()
        if done.usage is not None:
            self.usage = self.usage + usage
        response = self._response
        if response is None:  # Gemini: a terminal after an interruption or after a tool round
            self._turn_ended = not self._absorb_terminal
            self._absorb_terminal = False
            return
        response.usage = response.usage + usage
        answer = (self.codec.tools_answered_after_terminal and done.status == "completed"
                  and bool(response.calls))
        if done.status != "completed":
            response.calls.clear()  # calls of an unfinished response are never run
        self._finish(response, done.status, FinishReason.tool_call if answer else _FINISH[done.status],
                     response_id=done.response_id)
        self._turn_ended = not answer
        if answer:
            self._answer(response.calls)

    def _finish(self, response: _Response, status: str, finish: FinishReason, *,
                response_id: str | None = None) -> None:
        self._response = None
        parts = response.parts()
        if parts:
            self._history.append(ResponseMessage(
                parts, usage=response.usage, provider_name=self.codec.provider,
                provider_response_id=response_id or response.response_id, finish_reason=finish,
                raw_finish_reason=status))

    def _answer(self, calls: Sequence[ToolCallPart]) -> None:
        results: list[ev.ToolResult] = []
        returns: list[ToolReturnPart] = []
        for call in calls:
            output, outcome = self._run_tool(call)
            results.append(ev.ToolResult(call.tool_call_id, call.tool_name, output))
            returns.append(ToolReturnPart(call.tool_name, call.tool_call_id, output, outcome))
        self._history.append(RequestMessage(tuple(returns)))
        self._command(ev.SendToolResults(tuple(results), respond=True))

    def _run_tool(self, call: ToolCallPart) -> tuple[str, ToolOutcome]:
        tool = self.tools.get(call.tool_name)
        if tool is None:
            return (f"unknown tool {call.tool_name!r}; available: {sorted(self.tools)}", ToolOutcome.error)
        context = ToolRunContext(deps=self.deps, messages=tuple(self._history), control=self._control,
                                 tool_name=call.tool_name, tool_call_id=call.tool_call_id)
        try:
            output = tool.call(call.args, context)
        except (InvalidToolArguments, ModelRetry) as exc:
            return (str(exc), ToolOutcome.error)
        content = output.content
        return (content if isinstance(content, str) else _json(content), ToolOutcome.success)

    def _user_speech(self, text: str, item_id: str | None, final: bool) -> None:
        if final:
            self._item_input.pop(item_id or "", None)
            self._history.append(RequestMessage((UserPromptPart(text),)))
        elif item_id is not None:
            self._item_input[item_id] = self._item_input.get(item_id, "") + text
        else:
            self._partial_input.append(text)

    def _flush_partial_input(self) -> None:
        # transcripts without an item id have no final event (Gemini): they end with the turn
        if self._partial_input:
            text, self._partial_input = "".join(self._partial_input), []
            self._history.append(RequestMessage((UserPromptPart(text),)))

    # -- reconnects and observers -------------------------------------------------------------

    def _recover(self, lost: RealtimeConnectionLost, deadline: float) -> Reconnected:
        if self.state != "open" or not lost.reconnectable \
                or self._losses >= self.reconnect_policy.max_attempts:
            self.close()
            raise RealtimeSessionClosed(f"the realtime connection ended: {lost}") from lost
        self._losses += 1
        attempt = self._losses
        old, self._connection = self._connection, None
        if old is not None:
            old.close()
        self._queue.clear()
        response_lost = self._response is not None
        self._response = None
        handle = self._resume if self.codec.can_resume else None
        if self.reconnect_policy.delay_s:
            time.sleep(self.reconnect_policy.delay_s)
        try:
            self._open(resume_handle=handle)
            self._await_configured(max(0.0, deadline - time.monotonic()))
        except RealtimeConnectionLost as again:
            return self._recover(again, deadline)
        reconnected = Reconnected(attempt, handle is not None, response_lost, lost.code)
        self._observe(RealtimeEventInfo("session", "reconnected", self.codec.provider,
                                        server_state_survived=reconnected.server_state_survived))
        return reconnected

    def _note(self, kind: str) -> None:
        self._observe(RealtimeEventInfo("session", kind, self.codec.provider))

    def _observe(self, info: RealtimeEventInfo) -> None:
        if self.observer is None:
            return
        try:
            self.observer.on_realtime_event(info)
        except Exception:  # fail open: telemetry never breaks a session
            pass


def _json(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"))
