"""Structured diagnostics: the lifecycle hook stream as bounded, redacted records for a sink.

Job
    :class:`Diagnostics` is a lifecycle hook (``Agent(hooks=[Diagnostics(...)])``) that turns
    each :mod:`zigai.hooks` event into one :class:`DiagnosticRecord` — a level, the event
    kind, the run id and flat scalar attributes — and hands it to a backend-neutral
    :class:`DiagnosticSink`.  :class:`LoggingSink` (the default) writes records to the stdlib
    ``logging`` logger ``zigai.diagnostics``; any object with ``emit(record)`` is a sink.

Invariants
    * Filtered before formatting: an event below ``level`` (or a sink whose ``enabled(level)``
      says no) costs one comparison — no attribute is built.  ``Level.off`` records nothing.
    * Content is opt-in: prompts, responses, tool arguments and results, outputs and
      validator values appear only with ``include_content=True``; without it records hold
      only metadata (names, ids, counts, durations, statuses, error types and messages).
    * Redaction happens before truncation: every exact ``sensitive_values`` string — and its
      JSON-escaped spelling — is replaced by ``[REDACTED]`` in every attribute value (error
      messages and content included) before any value is cut, so no prefix of a secret can
      survive at a truncation boundary.
    * Bounded: at most ``max_attributes`` attributes per record, each value at most
      ``max_value_bytes`` UTF-8 bytes (cut on a character boundary, marked ``…``), and the
      whole record's keys plus values at most ``max_record_bytes``; a record that had to drop
      or cut anything says so in ``truncated``.
    * Delivery: ``fail_closed=False`` (default) never lets a sink failure touch the run — the
      record is dropped and counted in :attr:`Diagnostics.dropped`; ``fail_closed=True``
      raises :class:`DiagnosticsDeliveryFailed`, which stops the run like any hook error.
"""

from __future__ import annotations

import enum
import logging
import threading
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Protocol

from zigai.errors import AgentError

__all__ = [
    "Diagnostics",
    "DiagnosticRecord",
    "DiagnosticSink",
    "DiagnosticsDeliveryFailed",
    "Level",
    "LoggingSink",
    "REDACTED",
]

REDACTED = "[REDACTED]"
_ELLIPSIS = "…"

Scalar = str | int | float | bool | None


class DiagnosticsDeliveryFailed(AgentError):
    """A fail-closed diagnostics sink could not take a record; the run stops."""


class Level(enum.IntEnum):
    """Record levels (the stdlib ``logging`` numbers); ``off`` is above every record."""

    debug = logging.DEBUG
    info = logging.INFO
    warning = logging.WARNING
    error = logging.ERROR
    off = 100


@dataclass(frozen=True, slots=True)
class DiagnosticRecord:
    """One bounded, redacted record of one lifecycle event."""

    level: Level
    event: str
    run_id: str
    attributes: Mapping[str, Scalar]
    truncated: bool = False


class DiagnosticSink(Protocol):
    """Where records go.  ``enabled(level)`` is optional (checked before formatting)."""

    def emit(self, record: DiagnosticRecord) -> None: ...


class LoggingSink:
    """Records to a stdlib logger (default ``zigai.diagnostics``), formatted only when enabled.

    The message is ``"<event> key=value ..."``; the record's attributes are also attached
    to the ``LogRecord`` as ``zigai_attributes`` (and the run id as ``zigai_run_id``) for
    structured handlers.
    """

    def __init__(self, logger: logging.Logger | str = "zigai.diagnostics") -> None:
        self.logger = logging.getLogger(logger) if isinstance(logger, str) else logger

    def enabled(self, level: Level) -> bool:
        return self.logger.isEnabledFor(int(level))

    def emit(self, record: DiagnosticRecord) -> None:
        pairs = " ".join(f"{key}={value!r}" for key, value in record.attributes.items())
        self.logger.log(
            int(record.level), "%s %s", record.event, pairs,
            extra={"zigai_run_id": record.run_id, "zigai_attributes": dict(record.attributes)},
        )


def _error_level(event: Any) -> Level:
    return Level.warning if event.will_retry else Level.error


_LEVELS: dict[str, Level | Callable[[Any], Level]] = {
    "run_start": Level.info,
    "run_end": Level.info,
    "run_error": Level.error,
    "request_start": Level.debug,
    "request_end": Level.info,
    "request_error": _error_level,
    "tool_dispatch_start": Level.debug,
    "tool_dispatch_end": Level.debug,
    "tool_dispatch_error": Level.error,
    "tool_execute_start": Level.debug,
    "tool_execute_end": Level.info,
    "tool_execute_error": Level.error,
    "output_validator_start": Level.debug,
    "output_validator_end": Level.debug,
    "output_validator_error": Level.error,
    "stream_event_before": Level.debug,
    "stream_event_after": Level.debug,
}


def event_level(event: Any) -> Level:
    """The record level of a lifecycle event (debug for kinds this release does not know)."""
    level = _LEVELS.get(event.kind, Level.debug)
    return level if isinstance(level, Level) else level(event)


def _ms(seconds: float | None) -> float | None:
    return None if seconds is None else round(seconds * 1000.0, 3)


def _error(error: BaseException) -> dict[str, Scalar]:
    return {"error.type": type(error).__name__, "error.message": str(error)}


def _text(message: Any) -> str:
    """The text a message carries (text and prompt parts), for content attributes."""
    pieces = []
    for part in getattr(message, "parts", ()):
        content = getattr(part, "content", None)
        if isinstance(content, str):
            pieces.append(content)
    return "\n".join(pieces)


def _metadata(event: Any) -> dict[str, Scalar]:
    kind = event.kind
    attrs: dict[str, Scalar] = {}
    if kind == "run_start":
        run = event.run
        attrs.update({"agent": run.agent_name, "model": run.model_name, "provider": run.provider_name,
                      "streaming": run.streaming, "resumed": run.resumed,
                      "message_count": event.message_count})
    elif kind in ("run_end", "run_error"):
        usage = event.usage
        attrs.update({"requests": usage.requests, "tool_calls": usage.tool_calls,
                      "input_tokens": usage.input_tokens, "output_tokens": usage.output_tokens,
                      "duration_ms": _ms(event.duration_s)})
        if kind == "run_end":
            attrs["outcome"] = event.outcome
        else:
            attrs["state"] = event.state
            attrs.update(_error(event.error))
    elif kind.startswith("request_"):
        attrs.update({"request_number": event.request_number, "attempt": event.attempt})
        if kind == "request_start":
            attrs.update({"stream": event.stream, "message_count": len(event.request.messages),
                          "tool_count": len(event.request.tools)})
        elif kind == "request_end":
            response = event.response
            reason = response.finish_reason
            attrs.update({"duration_ms": _ms(event.duration_s),
                          "finish_reason": None if reason is None else reason.value,
                          "input_tokens": response.usage.input_tokens,
                          "output_tokens": response.usage.output_tokens})
        else:
            attrs.update({"category": event.category, "will_retry": event.will_retry,
                          "delay_ms": _ms(event.delay_s), "duration_ms": _ms(event.duration_s)})
            attrs.update(_error(event.error))
    elif kind.startswith("tool_"):
        attrs.update({"tool": event.call.tool_name, "call_id": event.call.tool_call_id})
        if kind == "tool_dispatch_start":
            attrs["route"] = event.route
        elif kind == "tool_dispatch_end":
            attrs["outcome"] = event.outcome
        elif kind == "tool_execute_end":
            attrs.update({"status": event.status, "duration_ms": _ms(event.duration_s),
                          "retry_message": event.retry_message})
        elif kind == "tool_execute_error":
            attrs["origin"] = event.origin
            attrs.update(_error(event.error))
        elif kind == "tool_dispatch_error":
            attrs.update(_error(event.error))
    elif kind.startswith("output_validator_"):
        attrs.update({"label": event.label, "validator_index": event.validator_index})
        if kind == "output_validator_end":
            attrs["outcome"] = event.outcome
        elif kind == "output_validator_error":
            attrs.update(_error(event.error))
    elif kind.startswith("stream_event_"):
        attrs["stream_event"] = type(event.event).__name__
    return attrs


def _content(event: Any) -> dict[str, Any]:
    kind = event.kind
    if kind == "run_end":
        return {"content.output": event.output}
    if kind == "request_start":
        messages = event.request.messages
        return {"content.instructions": "\n\n".join(event.request.instructions),
                "content.last_message": _text(messages[-1]) if messages else ""}
    if kind == "request_end":
        return {"content.response": _text(event.response)}
    if kind == "tool_execute_start":
        return {"content.arguments": event.arguments}
    if kind == "tool_execute_end":
        return {"content.result": event.content}
    if kind == "tool_dispatch_end":
        return {"content.result": getattr(event.part, "content", None)}
    if kind in ("output_validator_start", "output_validator_end"):
        return {"content.value": event.value}
    return {}


def _as_text(value: Any) -> Scalar:
    if value is None or isinstance(value, (str, int, float, bool)):
        return value
    from zigai import json as zjson

    try:
        return zjson.dumps(value)
    except Exception:  # noqa: BLE001 - a value JSON cannot spell is shown by its type only
        return f"<{type(value).__name__}>"


def _cut(text: str, limit: int) -> str:
    """``text`` within ``limit`` UTF-8 bytes, cut on a character boundary and marked."""
    data = text.encode("utf-8")
    if len(data) <= limit:
        return text
    room = max(0, limit - len(_ELLIPSIS.encode("utf-8")))
    return data[:room].decode("utf-8", "ignore") + _ELLIPSIS


class Diagnostics:
    """A lifecycle hook that records the run's events to a sink (see the module docs)."""

    def __init__(
        self,
        sink: DiagnosticSink | None = None,
        *,
        level: Level | int = Level.info,
        include_content: bool = False,
        sensitive_values: Sequence[str] = (),
        max_attributes: int = 32,
        max_value_bytes: int = 2048,
        max_record_bytes: int = 16_384,
        fail_closed: bool = False,
    ) -> None:
        for name, value in (("max_attributes", max_attributes), ("max_value_bytes", max_value_bytes),
                            ("max_record_bytes", max_record_bytes)):
            if isinstance(value, bool) or not isinstance(value, int) or value < 1:
                raise ValueError(f"Diagnostics.{name} must be an int >= 1")
        secrets = tuple(sensitive_values)
        if any(not isinstance(s, str) or not s for s in secrets):
            raise ValueError("Diagnostics.sensitive_values must be non-empty strings")
        self.sink: DiagnosticSink = sink if sink is not None else LoggingSink()
        self.level = Level(level)
        self.include_content = bool(include_content)
        self.max_attributes = max_attributes
        self.max_value_bytes = max_value_bytes
        self.max_record_bytes = max_record_bytes
        self.fail_closed = bool(fail_closed)
        self._spellings = _spellings(secrets)
        self._enabled = getattr(self.sink, "enabled", None)
        self._lock = threading.Lock()
        self.dropped = 0

    def __call__(self, event: Any) -> None:
        threshold = self.level
        if threshold is Level.off:
            return
        level = event_level(event)
        if level < threshold or (self._enabled is not None and not self._enabled(level)):
            return
        record = self.record(event, level)
        try:
            self.sink.emit(record)
        except Exception as exc:
            if self.fail_closed:
                raise DiagnosticsDeliveryFailed(
                    f"the diagnostics sink failed on {event.kind} ({type(exc).__name__}: {exc}); "
                    "the sink is fail-closed, so the run stops"
                ) from exc
            with self._lock:
                self.dropped += 1

    def record(self, event: Any, level: Level | None = None) -> DiagnosticRecord:
        """The bounded, redacted record of ``event`` (what :meth:`__call__` emits)."""
        raw: dict[str, Any] = _metadata(event)
        if self.include_content:
            raw.update(_content(event))
        attributes: dict[str, Scalar] = {}
        truncated = False
        budget = self.max_record_bytes
        for key, value in raw.items():
            if len(attributes) >= self.max_attributes:
                truncated = True
                break
            shown = _as_text(value)
            if isinstance(shown, str):
                shown = self._redact(shown)
                cut = _cut(shown, self.max_value_bytes)
                truncated = truncated or cut is not shown
                shown = cut
            size = len(key.encode("utf-8")) + _size(shown)
            if size > budget:
                truncated = True
                break
            budget -= size
            attributes[key] = shown
        return DiagnosticRecord(
            level if level is not None else event_level(event), event.kind,
            self._redact(event.run.run_id), attributes, truncated,
        )

    def _redact(self, text: str) -> str:
        for spelling in self._spellings:
            if spelling in text:
                text = text.replace(spelling, REDACTED)
        return text


def _spellings(secrets: tuple[str, ...]) -> tuple[str, ...]:
    """Each secret as written and as JSON escapes it (longest first, so none hides another)."""
    import json

    found: set[str] = set()
    for secret in secrets:
        found.add(secret)
        found.add(json.dumps(secret)[1:-1])
        found.add(json.dumps(secret, ensure_ascii=False)[1:-1])
    return tuple(sorted(found, key=len, reverse=True))


def _size(value: Scalar) -> int:
    if isinstance(value, str):
        return len(value.encode("utf-8"))
    return len(repr(value))
