"""zigai.diagnostics: levels, opt-in content, redaction before truncation, exact bounds."""

from __future__ import annotations

import json
import logging
from typing import Any

import pytest

from zigai.agent import Agent
from zigai.diagnostics import (
    REDACTED,
    DiagnosticRecord,
    Diagnostics,
    DiagnosticsDeliveryFailed,
    Level,
    LoggingSink,
)
from zigai.messages import ResponseMessage, TextPart, ToolCallPart
from zigai.testing import FunctionModel
from zigai.tool import Tool

CANARY = 'sk-canary-"7f3a"-SECRET'


class ListSink:
    def __init__(self) -> None:
        self.records: list[DiagnosticRecord] = []

    def emit(self, record: DiagnosticRecord) -> None:
        self.records.append(record)

    def by_event(self, event: str) -> list[DiagnosticRecord]:
        return [r for r in self.records if r.event == event]


def _agent(tool_result: Any = "result", **agent_options: Any) -> Agent:
    schema = {"type": "object", "properties": {"key": {"type": "string"}}}

    def model(messages: tuple[Any, ...], info: Any) -> ResponseMessage:
        if len(messages) == 1:
            return ResponseMessage((ToolCallPart("lookup", json.dumps({"key": CANARY}), "c1"),))
        return ResponseMessage((TextPart(f"the answer mentions {CANARY}"),))

    tool = Tool.manual("lookup", "Look up.", schema, lambda args: tool_result)
    return Agent(FunctionModel(model), tools=[tool], **agent_options)


def _run(diagnostics: Diagnostics, **options: Any) -> None:
    with _agent(**options, hooks=[diagnostics]).run(f"my key is {CANARY}"):
        pass


def test_metadata_only_by_default_with_levels_filtering_debug_events() -> None:
    sink = ListSink()
    _run(Diagnostics(sink))
    assert [r.event for r in sink.records] == [
        "run_start", "request_end", "tool_execute_end", "request_end", "run_end",
    ]
    assert all(r.level >= Level.info for r in sink.records)
    for record in sink.records:
        assert not any(key.startswith("content.") for key in record.attributes)
        assert "my key is" not in repr(record)
    end = sink.by_event("run_end")[0].attributes
    assert (end["outcome"], end["requests"], end["tool_calls"]) == ("complete", 2, 1)
    tool = sink.by_event("tool_execute_end")[0].attributes
    assert (tool["tool"], tool["call_id"], tool["status"]) == ("lookup", "c1", "success")


def test_debug_level_records_every_event_in_hook_order() -> None:
    sink = ListSink()
    _run(Diagnostics(sink, level=Level.debug))
    assert [r.event for r in sink.records] == [
        "run_start", "request_start", "request_end", "tool_dispatch_start", "tool_execute_start",
        "tool_execute_end", "tool_dispatch_end", "request_start", "request_end", "run_end",
    ]


def test_the_canary_never_reaches_the_sink_even_with_content_on() -> None:
    sink = ListSink()
    _run(Diagnostics(sink, level=Level.debug, include_content=True, sensitive_values=[CANARY]),
         tool_result={"echo": CANARY})
    text = repr(sink.records)
    assert CANARY not in text
    assert CANARY.replace('"', '\\"') not in text  # nor its JSON-escaped spelling
    assert "7f3a" not in text
    assert REDACTED in sink.by_event("request_start")[0].attributes["content.last_message"]
    assert REDACTED in sink.by_event("tool_execute_start")[0].attributes["content.arguments"]
    assert REDACTED in sink.by_event("tool_execute_end")[0].attributes["content.result"]
    assert REDACTED in sink.by_event("run_end")[0].attributes["content.output"]


@pytest.mark.parametrize("offset", range(-len(CANARY), 2))
def test_redaction_happens_before_truncation_at_every_boundary(offset: int) -> None:
    limit = 64
    # The canary starts so that the value cut runs through it (or just around it).
    text = "a" * (limit + offset) + CANARY + "b" * 16
    sink = ListSink()
    _run(Diagnostics(sink, include_content=True, sensitive_values=[CANARY], max_value_bytes=limit),
         tool_result=text)
    result = sink.by_event("tool_execute_end")[0]
    shown = result.attributes["content.result"]
    assert isinstance(shown, str) and len(shown.encode()) <= limit
    for size in range(4, len(CANARY) + 1):
        assert CANARY[:size] not in shown
    assert result.truncated


def test_value_bytes_are_exact_at_the_limit_and_cut_one_past_on_a_character_boundary() -> None:
    limit = 40
    sink = ListSink()
    exact = "é" * (limit // 2)  # 2 bytes each: exactly the limit
    _run(Diagnostics(sink, include_content=True, max_value_bytes=limit), tool_result=exact)
    record = sink.by_event("tool_execute_end")[0]
    assert record.attributes["content.result"] == exact and not record.truncated
    sink = ListSink()
    _run(Diagnostics(sink, include_content=True, max_value_bytes=limit), tool_result=exact + "x")
    record = sink.by_event("tool_execute_end")[0]
    shown = record.attributes["content.result"]
    assert isinstance(shown, str) and record.truncated
    assert shown.endswith("…") and len(shown.encode()) <= limit
    assert shown[:-1] == "é" * len(shown[:-1])  # never half a character


def _run_start() -> Any:
    from zigai.control import RunControl
    from zigai.hooks import RunInfo, RunStart

    info = RunInfo("r1", "agent", "model-x", "prov", False, False, None, RunControl())
    return RunStart(info, 3)


def _used(record: DiagnosticRecord) -> int:
    return sum(len(k.encode()) + (len(v.encode()) if isinstance(v, str) else len(repr(v)))
               for k, v in record.attributes.items())


def test_attribute_count_and_record_bytes_are_exact_bounds() -> None:
    event = _run_start()
    full = Diagnostics(ListSink()).record(event)
    count, size = len(full.attributes), _used(full)
    assert count == 6 and not full.truncated
    exact = Diagnostics(ListSink(), max_attributes=count).record(event)
    assert exact.attributes == full.attributes and not exact.truncated
    fewer = Diagnostics(ListSink(), max_attributes=count - 1).record(event)
    assert len(fewer.attributes) == count - 1 and fewer.truncated
    fits = Diagnostics(ListSink(), max_record_bytes=size).record(event)
    assert fits.attributes == full.attributes and not fits.truncated
    over = Diagnostics(ListSink(), max_record_bytes=size - 1).record(event)
    assert len(over.attributes) == count - 1 and over.truncated and _used(over) <= size - 1


def test_record_bytes_bound_holds_for_every_record_of_a_run() -> None:
    sink = ListSink()
    _run(Diagnostics(sink, max_record_bytes=20))
    for record in sink.records:
        assert _used(record) <= 20 and record.truncated


def test_off_and_disabled_sinks_build_nothing(monkeypatch: pytest.MonkeyPatch) -> None:
    def explode(*args: Any) -> Any:
        raise AssertionError("a filtered event must not be formatted")

    monkeypatch.setattr(Diagnostics, "record", explode)
    sink = ListSink()
    _run(Diagnostics(sink, level=Level.off))

    class Disabled(ListSink):
        def enabled(self, level: Level) -> bool:
            return False

    _run(Diagnostics(Disabled(), level=Level.debug))
    assert sink.records == []


def test_fail_open_drops_and_counts_fail_closed_stops_the_run() -> None:
    class Broken:
        def emit(self, record: DiagnosticRecord) -> None:
            raise OSError("disk full")

    diagnostics = Diagnostics(Broken())
    _run(diagnostics)
    assert diagnostics.dropped == 5
    with pytest.raises(DiagnosticsDeliveryFailed, match="disk full"):
        _run(Diagnostics(Broken(), fail_closed=True))


def test_logging_sink_formats_only_enabled_records(caplog: pytest.LogCaptureFixture) -> None:
    with caplog.at_level(logging.INFO, logger="zigai.diagnostics"):
        _run(Diagnostics(level=Level.debug))
    events = [r.getMessage().split(" ", 1)[0] for r in caplog.records]
    assert events == ["run_start", "request_end", "tool_execute_end", "request_end", "run_end"]
    last = caplog.records[-1]
    assert last.levelno == logging.INFO and "outcome='complete'" in last.getMessage()
    assert last.zigai_attributes["outcome"] == "complete"  # type: ignore[attr-defined]
    assert LoggingSink("zigai.diagnostics.quiet").enabled(Level.debug) is False


def test_errors_are_recorded_with_their_type_and_a_redacted_message() -> None:
    def model(messages: tuple[Any, ...], info: Any) -> ResponseMessage:
        raise RuntimeError(f"provider echoed {CANARY}")

    sink = ListSink()
    agent = Agent(FunctionModel(model), hooks=[Diagnostics(sink, sensitive_values=[CANARY])])
    with pytest.raises(RuntimeError):
        agent.run("hi")
    error = sink.by_event("run_error")[0]
    assert error.level is Level.error
    assert error.attributes["error.type"] == "RuntimeError"
    assert error.attributes["error.message"] == f"provider echoed {REDACTED}"


@pytest.mark.parametrize("bad", [{"max_attributes": 0}, {"max_value_bytes": True},
                                 {"sensitive_values": [""]}, {"level": 7}])
def test_bad_options_are_refused(bad: dict[str, Any]) -> None:
    with pytest.raises(ValueError):
        Diagnostics(ListSink(), **bad)


def test_error_validator_and_stream_events_carry_their_metadata() -> None:
    from zigai.output import OutputResult
    from zigai.testing import TestModel

    def validator(name: str, ctx: Any, value: Any) -> OutputResult:
        return OutputResult.output(value)

    sink = ListSink()
    agent = Agent(TestModel(), output_validators=[validator],
                  hooks=[Diagnostics(sink, level=Level.debug, include_content=True)])
    with agent.run_stream("hi") as stream:
        for _ in stream:
            pass
        stream.result().close()
    kinds = {r.event for r in sink.records}
    assert {"output_validator_start", "output_validator_end", "stream_event_before"} <= kinds
    end = sink.by_event("output_validator_end")[0].attributes
    assert end["outcome"] == "accepted" and "content.value" in end
    assert sink.by_event("stream_event_before")[0].attributes["stream_event"]

    def failing(messages: tuple[Any, ...], info: Any) -> ResponseMessage:
        return ResponseMessage((ToolCallPart("lookup", "{}", "c1"),))

    def broken(args: Any) -> Any:
        raise ValueError("tool broke")

    sink = ListSink()
    tool = Tool.manual("lookup", "L", {"type": "object"}, broken)
    agent = Agent(FunctionModel(failing), tools=[tool], hooks=[Diagnostics(sink, level=Level.debug)])
    with pytest.raises(ValueError):
        agent.run("go")
    errors = {r.event: r.attributes for r in sink.records if r.level is Level.error}
    assert errors["tool_execute_error"]["error.type"] == "ValueError"
    assert errors["tool_execute_error"]["origin"] is True
    assert errors["tool_dispatch_error"]["error.message"] == "tool broke"


def test_values_json_cannot_spell_are_shown_by_type() -> None:
    from zigai.diagnostics import _as_text

    assert _as_text(object()) == "<object>"
    assert _as_text({"a": [1, 2]}) == '{"a":[1,2]}'
