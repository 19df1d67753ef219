"""The telemetry observer: agent lifecycle hooks in, GenAI spans and metric points out.

Job
    :class:`Telemetry` is a lifecycle hook (``Agent(hooks=[telemetry])`` or
    ``RunOptions(hooks=[...])``).  For every run it builds one trace — an ``invoke_agent``
    span, one ``chat {model}`` span per provider *attempt* and one ``execute_tool {name}``
    span per executed tool call — plus metric points, and hands each to an
    :class:`Exporter` synchronously on the run's thread.

Invariants
    * Isolated per run: state is keyed by run id, created at ``run_start`` and dropped at
      ``run_end``/``run_error``; concurrent runs through one observer never share spans.
    * Parentage: chat and tool spans are children of the agent span; the agent span is a
      child of the run's ``Correlation.trace_parent`` (or the observer's ``parent``) when
      one is given, otherwise a trace root.  Parallel tool calls are siblings that overlap.
    * Attributes use the OpenTelemetry GenAI names (``SEMCONV_VERSION``); zigai-specific
      facts use the ``zigai.`` prefix.
    * Content (prompts, instructions, tool arguments/results, outputs, error messages) is
      recorded only when ``ContentPolicy.capture`` is on, and then redacted and bounded.
      Error *types* are always recorded; request headers and credentials never reach the
      observer at all.
    * Cost is recorded only when known (a reported cost or a price-table estimate); an
      unknown rate produces no cost attribute and no cost point — never zero.
    * Exporter failures are fail-open (logged on ``zigai.telemetry``, counted in
      ``export_failures``, the run continues) unless ``fail_closed=True``, which raises
      :class:`TelemetryExportFailed` from the hook and so stops the run.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Protocol

from zigai.pricing import PriceTable, UsageCost, reported_cost
from zigai.telemetry.content import (
    input_messages,
    output_messages,
    output_value_messages,
    render_bounded,
    system_instructions,
    tool_definitions,
)
from zigai.telemetry.records import (
    AttributeValue,
    ContentPolicy,
    InvalidTelemetryConfig,
    MetricPoint,
    OpenSpan,
    Span,
    SpanEvent,
    TelemetryExportFailed,
    TraceParent,
    new_span_id,
    new_trace_id,
    semconv_provider_name,
)

__all__ = ["Exporter", "InMemoryExporter", "Telemetry"]

logger = logging.getLogger("zigai.telemetry")

TOKEN_USAGE = "gen_ai.client.token.usage"
OPERATION_DURATION = "gen_ai.client.operation.duration"
REQUESTS = "zigai.client.requests"
RETRIES = "zigai.client.retries"
TOOL_CALLS = "zigai.tool.calls"
TOKEN_DETAILS = "zigai.client.token.details"
COST = "zigai.client.cost"

_SETTINGS = (
    ("max_tokens", "gen_ai.request.max_tokens"),
    ("temperature", "gen_ai.request.temperature"),
    ("top_p", "gen_ai.request.top_p"),
    ("top_k", "gen_ai.request.top_k"),
    ("seed", "gen_ai.request.seed"),
    ("stop_sequences", "gen_ai.request.stop_sequences"),
    ("presence_penalty", "gen_ai.request.presence_penalty"),
    ("frequency_penalty", "gen_ai.request.frequency_penalty"),
)
_USAGE_ATTRIBUTES = (
    ("input_tokens", "gen_ai.usage.input_tokens"),
    ("output_tokens", "gen_ai.usage.output_tokens"),
    ("cache_read_tokens", "gen_ai.usage.cache_read.input_tokens"),
    ("cache_write_tokens", "gen_ai.usage.cache_creation.input_tokens"),
    ("reasoning_tokens", "gen_ai.usage.reasoning.output_tokens"),
    ("input_audio_tokens", "zigai.usage.input_audio_tokens"),
    ("output_audio_tokens", "zigai.usage.output_audio_tokens"),
)
_DETAIL_TOKEN_TYPES = (
    ("cache_read_tokens", "cache_read"), ("cache_write_tokens", "cache_write"),
    ("reasoning_tokens", "reasoning"), ("input_audio_tokens", "input_audio"),
    ("output_audio_tokens", "output_audio"),
)


class Exporter(Protocol):
    """Receives telemetry synchronously on the run's thread; values are immutable."""

    def on_start(self, span: Span) -> None: ...

    def on_end(self, span: Span) -> None: ...

    def on_metric(self, point: MetricPoint) -> None: ...


class InMemoryExporter:
    """Keeps every finished span and metric point (for tests, notebooks and docs)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self.spans: list[Span] = []
        self.metrics: list[MetricPoint] = []

    def on_start(self, span: Span) -> None:
        pass

    def on_end(self, span: Span) -> None:
        with self._lock:
            self.spans.append(span)

    def on_metric(self, point: MetricPoint) -> None:
        with self._lock:
            self.metrics.append(point)

    def span(self, name: str) -> Span:
        """The only finished span called ``name`` (``LookupError`` if none or several)."""
        found = [s for s in self.spans if s.name == name]
        if len(found) != 1:
            raise LookupError(f"expected one span named {name!r}, found {len(found)}")
        return found[0]

    def metric_total(self, name: str, **attributes: AttributeValue) -> int | float:
        """The sum of every point of ``name`` whose attributes include ``attributes``."""
        return sum(p.value for p in self.metrics if p.name == name
                   and all(p.attributes.get(k) == v for k, v in attributes.items()))


@dataclass
class _Run:
    agent: OpenSpan
    base: dict[str, AttributeValue]
    span_base: dict[str, AttributeValue]  # what every child span repeats (agent, conversation)
    provider_name: str  # zigai's own name (price tables are keyed by it)
    chats: dict[tuple[int, int], OpenSpan] = field(default_factory=dict)
    tools: dict[str, OpenSpan] = field(default_factory=dict)
    cost_nano: int | None = None  # None: nothing priced yet
    cost_unknown: bool = False  # some response had no known cost
    price_table: PriceTable | None = None  # the agent's, used when the observer has none


def _error_type(error: BaseException) -> str:
    return type(error).__qualname__


class Telemetry:
    """A lifecycle hook that turns agent runs into GenAI spans and metrics.

    ``exporter`` receives spans and points (default: a fresh :class:`InMemoryExporter`,
    kept as ``self.exporter``).  ``content`` is the :class:`ContentPolicy` (off by default).
    ``price_table`` estimates cost per response (default: the agent's ``price_table``);
    ``reported_cost`` — given the response — returns a provider-reported
    :class:`~zigai.pricing.UsageCost` or None and wins over the table (default:
    :func:`zigai.pricing.reported_cost`, the cost the adapter decoded from the provider).  ``parent`` nests every run under a trace parent when the run's
    ``Correlation.trace_parent`` does not name one.  ``fail_closed`` turns exporter
    failures into :class:`TelemetryExportFailed`.
    """

    def __init__(
        self,
        exporter: Exporter | None = None,
        *,
        content: ContentPolicy | None = None,
        price_table: PriceTable | None = None,
        reported_cost: Callable[[Any], UsageCost | None] | None = None,
        parent: TraceParent | str | None = None,
        fail_closed: bool = False,
        tool_definitions: bool = False,
    ) -> None:
        if exporter is not None and not all(
                callable(getattr(exporter, name, None)) for name in ("on_start", "on_end", "on_metric")):
            raise InvalidTelemetryConfig("exporter must have on_start, on_end and on_metric methods")
        if content is not None and not isinstance(content, ContentPolicy):
            raise InvalidTelemetryConfig("content must be a ContentPolicy")
        if price_table is not None and not isinstance(price_table, PriceTable):
            raise InvalidTelemetryConfig("price_table must be a zigai.pricing.PriceTable")
        if reported_cost is not None and not callable(reported_cost):
            raise InvalidTelemetryConfig("reported_cost must be a callable taking the response")
        if not isinstance(fail_closed, bool):
            raise InvalidTelemetryConfig(f"fail_closed must be a bool, got {fail_closed!r}")
        if not isinstance(tool_definitions, bool):
            raise InvalidTelemetryConfig(f"tool_definitions must be a bool, got {tool_definitions!r}")
        self.tool_definitions = tool_definitions
        self.exporter: Exporter = exporter if exporter is not None else InMemoryExporter()
        self.content = content if content is not None else ContentPolicy()
        self.price_table = price_table
        self.reported_cost = reported_cost
        self.parent = TraceParent.parse(parent) if isinstance(parent, str) else parent
        if self.parent is not None and not isinstance(self.parent, TraceParent):
            raise InvalidTelemetryConfig("parent must be a TraceParent, a traceparent string or None")
        self.fail_closed = fail_closed
        self.export_failures = 0
        self._lock = threading.Lock()
        self._runs: dict[str, _Run] = {}

    def realtime(self, *, model: str | None = None, conversation_id: str | None = None,
                 parent: TraceParent | str | None = None) -> Any:
        """An observer for one ``RealtimeSession``: its span and points go through this Telemetry."""
        from zigai.telemetry.realtime import RealtimeTelemetry

        return RealtimeTelemetry(self, model=model, conversation_id=conversation_id, parent=parent)

    # ------------------------------------------------------------------ hook entry point

    def __call__(self, event: Any) -> None:
        handler = _HANDLERS.get(event.kind)
        if handler is not None:
            handler(self, event)

    # ------------------------------------------------------------------ export plumbing

    def _export(self, method: str, value: Span | MetricPoint) -> None:
        try:
            getattr(self.exporter, method)(value)
        except Exception as exc:
            self.export_failures += 1
            if self.fail_closed:
                raise TelemetryExportFailed(
                    f"telemetry exporter {method} raised {type(exc).__name__}; the run stops because "
                    "fail_closed=True (pass fail_closed=False to log and continue)") from exc
            logger.warning("telemetry exporter %s raised %s; continuing (fail-open)",
                           method, type(exc).__name__, exc_info=True)

    def _start(self, span: OpenSpan) -> None:
        self._export("on_start", span.freeze(None))

    def _end(self, span: OpenSpan, end_ns: int | None = None) -> None:
        self._export("on_end", span.freeze(time.time_ns() if end_ns is None else end_ns))

    def _metric(self, name: str, kind: str, unit: str, value: int | float,
                attributes: dict[str, AttributeValue], description: str) -> None:
        self._export("on_metric", MetricPoint(name, kind, unit, value, attributes, description))  # type: ignore[arg-type]

    def _child(self, run: _Run, name: str, kind: str, attributes: dict[str, AttributeValue]) -> OpenSpan:
        agent = run.agent
        return OpenSpan(name, kind, agent.trace_id, new_span_id(), agent.span_id, False,
                     agent.trace_flags, time.time_ns(), attributes)

    def _state(self, event: Any) -> _Run | None:
        with self._lock:
            return self._runs.get(event.run.run_id)

    # ------------------------------------------------------------------ run

    def _run_start(self, event: Any) -> None:
        info = event.run
        parent = self.parent
        correlation = info.correlation
        if correlation is not None and correlation.trace_parent is not None:
            parent = TraceParent.parse(correlation.trace_parent)
        base: dict[str, AttributeValue] = {
            "gen_ai.provider.name": semconv_provider_name(info.provider_name),
            "gen_ai.request.model": info.model_name}
        if base["gen_ai.provider.name"] != info.provider_name:
            base["zigai.provider.name"] = info.provider_name  # the name price tables know
        attributes: dict[str, AttributeValue] = {
            "gen_ai.operation.name": "invoke_agent", **base,
            "zigai.run.id": info.run_id, "zigai.run.streaming": info.streaming,
            "zigai.run.resumed": info.resumed}
        span_base: dict[str, AttributeValue] = {}
        if info.agent_name:
            span_base["gen_ai.agent.name"] = info.agent_name
        if correlation is not None and correlation.conversation_id is not None:
            span_base["gen_ai.conversation.id"] = correlation.conversation_id
        attributes.update(span_base)
        if correlation is not None and correlation.node_name is not None:
            attributes["zigai.node.name"] = correlation.node_name
        if correlation is not None and correlation.node_index is not None:
            attributes["zigai.node.index"] = correlation.node_index
        name = f"invoke_agent {info.agent_name}" if info.agent_name else "invoke_agent"
        agent = OpenSpan(name, "internal",
                      parent.trace_id if parent else new_trace_id(), new_span_id(),
                      parent.span_id if parent else None, parent is not None,
                      parent.trace_flags if parent else 1, time.time_ns(), attributes)
        run = _Run(agent, base, span_base, info.provider_name, price_table=info.price_table)
        with self._lock:
            self._runs[info.run_id] = run
        self._start(agent)

    def _finish_run(self, event: Any, error: BaseException | None) -> None:
        with self._lock:
            run = self._runs.pop(event.run.run_id, None)
        if run is None:
            return
        # spans a failure left open (e.g. a cancelled stream) end with the run's error; a tool
        # span is exported only when it ends, so an open one has not been started yet either
        for span in run.chats.values():
            self._end_failed(span, error)
        for span in run.tools.values():
            self._start(span)
            self._end_failed(span, error)
        agent = run.agent
        usage = event.usage
        for source, name in _USAGE_ATTRIBUTES:
            if getattr(usage, source):
                agent.attributes[name] = getattr(usage, source)
        agent.attributes["zigai.usage.requests"] = usage.requests
        agent.attributes["zigai.usage.tool_calls"] = usage.tool_calls
        if run.cost_nano is not None and not run.cost_unknown:
            agent.attributes["zigai.cost.usd"] = run.cost_nano / 1e9
        metric_attributes = {"gen_ai.operation.name": "invoke_agent", **run.base}
        if error is None:
            agent.attributes["zigai.run.outcome"] = event.outcome
            if self.content.capture and event.output is not None:
                agent.attributes["gen_ai.output.messages"] = render_bounded(
                    output_value_messages(event.output), self.content)
        else:
            agent.status = "error"
            agent.attributes["error.type"] = metric_attributes["error.type"] = _error_type(error)
            agent.attributes["zigai.run.error_state"] = event.state
            agent.status_description = (self.content.render(str(error)) if self.content.capture
                                        else _error_type(error))
        self._metric(OPERATION_DURATION, "histogram", "s", event.duration_s, metric_attributes,
                     "GenAI operation duration")
        self._end(agent)

    def _end_failed(self, span: OpenSpan, error: BaseException | None) -> None:
        span.status = "error"
        span.attributes["error.type"] = _error_type(error) if error is not None else "_OTHER"
        self._end(span)

    def _run_end(self, event: Any) -> None:
        self._finish_run(event, None)

    def _run_error(self, event: Any) -> None:
        self._finish_run(event, event.error)

    # ------------------------------------------------------------------ model requests

    def _request_start(self, event: Any) -> None:
        run = self._state(event)
        if run is None:
            return
        request = event.request
        attributes: dict[str, AttributeValue] = {
            "gen_ai.operation.name": "chat", **run.base, **run.span_base,
            "zigai.request.number": event.request_number, "zigai.request.attempt": event.attempt,
            "gen_ai.request.stream": event.stream}
        for source, name in _SETTINGS:
            value = getattr(request.settings, source)
            if value is not None:
                attributes[name] = tuple(value) if isinstance(value, tuple) else value
        if request.tools:
            attributes["zigai.request.tools"] = tuple(t.name for t in request.tools)
            if self.tool_definitions:
                attributes["gen_ai.tool.definitions"] = render_bounded(tool_definitions(request.tools), self.content)
        if self.content.capture:
            if request.instructions:
                attributes["gen_ai.system_instructions"] = render_bounded(
                    system_instructions(request.instructions), self.content)
            attributes["gen_ai.input.messages"] = render_bounded(input_messages(request.messages), self.content)
        span = self._child(run, f"chat {run.base['gen_ai.request.model']}", "client", attributes)
        run.chats[(event.request_number, event.attempt)] = span
        self._start(span)

    def _request_end(self, event: Any) -> None:
        run = self._state(event)
        span = run.chats.pop((event.request_number, event.attempt), None) if run else None
        if run is None or span is None:
            return
        response = event.response
        attributes = span.attributes
        response_model = response.model_name or run.base["gen_ai.request.model"]
        attributes["gen_ai.response.model"] = response_model
        if response.provider_response_id:
            attributes["gen_ai.response.id"] = response.provider_response_id
        reason = response.raw_finish_reason or response.finish_reason
        if reason:
            attributes["gen_ai.response.finish_reasons"] = (str(reason),)
        usage = response.usage
        for source, name in _USAGE_ATTRIBUTES:
            if getattr(usage, source) or source in ("input_tokens", "output_tokens"):
                attributes[name] = getattr(usage, source)
        if self.content.capture:
            attributes["gen_ai.output.messages"] = render_bounded(output_messages(response), self.content)
        cost = self._cost(run, response, str(response_model))
        if cost is not None:
            attributes["zigai.cost.usd"] = cost.nano_usd / 1e9
        metric = {"gen_ai.operation.name": "chat", **run.base, "gen_ai.response.model": response_model}
        self._metric(OPERATION_DURATION, "histogram", "s", event.duration_s, metric,
                     "GenAI operation duration")
        for token_type, count in (("input", usage.input_tokens), ("output", usage.output_tokens)):
            self._metric(TOKEN_USAGE, "histogram", "{token}", count,
                         {**metric, "gen_ai.token.type": token_type}, "Number of input and output tokens used")
        for source, token_type in _DETAIL_TOKEN_TYPES:
            if getattr(usage, source):
                self._metric(TOKEN_DETAILS, "counter", "{token}", getattr(usage, source),
                             {**metric, "zigai.token.type": token_type},
                             "Cached, reasoning and audio tokens (included in input/output)")
        self._metric(REQUESTS, "counter", "{request}", 1, {**metric, "zigai.outcome": "success"},
                     "Model request attempts")
        if cost is not None:
            self._metric(COST, "counter", "USD", cost.nano_usd / 1e9, metric,
                         "Provider-reported or price-table cost")
        self._end(span)

    def _cost(self, run: _Run, response: Any, model: str) -> UsageCost | None:
        report = self.reported_cost if self.reported_cost is not None else reported_cost
        cost = report(response)
        table = self.price_table if self.price_table is not None else run.price_table
        if cost is None and table is not None:
            cost = table.estimate(run.provider_name, model, response.usage)
        if cost is None:
            run.cost_unknown = True
        else:
            run.cost_nano = (run.cost_nano or 0) + cost.nano_usd
        return cost

    def _request_error(self, event: Any) -> None:
        run = self._state(event)
        span = run.chats.pop((event.request_number, event.attempt), None) if run else None
        if run is None or span is None:
            return
        error_type = _error_type(event.error)
        span.status = "error"
        span.attributes["error.type"] = error_type
        span.status_description = (self.content.render(str(event.error)) if self.content.capture
                                   else error_type)
        if event.category is not None:
            span.attributes["zigai.retry.category"] = event.category
        span.attributes["zigai.retry.will_retry"] = event.will_retry
        metric = {"gen_ai.operation.name": "chat", **run.base, "error.type": error_type}
        if event.will_retry:
            retry: dict[str, AttributeValue] = {"zigai.retry.category": event.category or "unknown",
                                                "zigai.retry.delay_s": event.delay_s or 0.0}
            span.events.append(SpanEvent("zigai.retry", time.time_ns(), retry))
            self._metric(RETRIES, "counter", "{retry}", 1,
                         {"gen_ai.operation.name": "chat", **run.base,
                          "zigai.retry.category": event.category or "unknown"},
                         "Model request retries")
        self._metric(OPERATION_DURATION, "histogram", "s", event.duration_s, metric, "GenAI operation duration")
        self._metric(REQUESTS, "counter", "{request}", 1, {**metric, "zigai.outcome": "error"},
                     "Model request attempts")
        self._end(span)

    # ------------------------------------------------------------------ tools

    def _tool_start(self, event: Any) -> None:
        run = self._state(event)
        if run is None:
            return
        call = event.call
        attributes: dict[str, AttributeValue] = {
            "gen_ai.operation.name": "execute_tool", "gen_ai.tool.name": call.tool_name,
            "gen_ai.tool.call.id": call.tool_call_id, "gen_ai.tool.type": "function", **run.span_base}
        if self.content.capture:
            attributes["gen_ai.tool.call.arguments"] = self.content.render(event.arguments)
        # exported when the call ends: only then is the time its thread really started known
        run.tools[call.tool_call_id] = self._child(
            run, f"execute_tool {call.tool_name}", "internal", attributes)

    def _tool_end(self, event: Any) -> None:
        run = self._state(event)
        span = run.tools.pop(event.call.tool_call_id, None) if run else None
        if run is None or span is None:
            return
        span.attributes["zigai.tool.status"] = event.status
        if event.status == "timed_out":
            span.status, span.attributes["error.type"] = "error", "ToolTimedOut"
        if self.content.capture:
            result = event.content if event.retry_message is None else event.retry_message
            span.attributes["gen_ai.tool.call.result"] = self.content.render(result)
        self._tool_metric(span, event.status)
        # the call's own start and measured duration, not the (ordered) delivery time of the
        # events: sequential or queued calls start after the hand-off
        end_ns = None
        if event.started_ns is not None and event.duration_s is not None:
            span.start_ns = max(span.start_ns, event.started_ns)
            end_ns = span.start_ns + int(event.duration_s * 1e9)
        self._start(span)
        self._end(span, end_ns)

    def _tool_error(self, event: Any) -> None:
        run = self._state(event)
        span = run.tools.pop(event.call.tool_call_id, None) if run else None
        if run is None or span is None:
            return
        span.status, span.attributes["error.type"] = "error", _error_type(event.error)
        span.attributes["zigai.tool.status"] = "error"
        span.attributes["zigai.tool.origin"] = event.origin
        span.status_description = (self.content.render(str(event.error)) if self.content.capture
                                   else _error_type(event.error))
        self._tool_metric(span, "error")
        self._start(span)
        self._end(span)

    def _tool_metric(self, span: OpenSpan, status: str) -> None:
        self._metric(TOOL_CALLS, "counter", "{call}", 1,
                     {"gen_ai.tool.name": span.attributes["gen_ai.tool.name"], "zigai.tool.status": status},
                     "Executed tool calls")


_HANDLERS: dict[str, Callable[[Telemetry, Any], None]] = {
    "run_start": Telemetry._run_start,
    "run_end": Telemetry._run_end,
    "run_error": Telemetry._run_error,
    "request_start": Telemetry._request_start,
    "request_end": Telemetry._request_end,
    "request_error": Telemetry._request_error,
    "tool_execute_start": Telemetry._tool_start,
    "tool_execute_end": Telemetry._tool_end,
    "tool_execute_error": Telemetry._tool_error,
}
