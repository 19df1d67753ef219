"""Lifecycle hooks: one synchronous, ordered event stream per agent run.

Job
    Name every point where an application (and, through the same door, capabilities,
    telemetry, evals and multi-agent sessions) observes a run, and deliver those events in
    one deterministic order.  A hook is a callable ``hook(event) -> None``; ``Agent.hooks``
    run first, in registration order, then ``RunOptions.hooks`` (per-run observers such as
    a telemetry span builder or a session's usage tap).

Invariants
    * Synchronous and ordered: every event is delivered on the thread that drives the run,
      to every hook, before the run continues.  Per-call tool events are delivered in the
      model's call order even when the calls ran in parallel (durations are measured by
      the worker and carried in the payload).
    * Read-only: every event is a frozen value; messages, requests and responses are the
      run's own immutable values; tool arguments are frozen JSON (``FrozenDict``/tuples).
      Copy nothing unless you keep it — the values stay valid after the run.
    * A hook that raises stops the run: the exception propagates unchanged to the caller,
      after ``run_error`` has been delivered.  Every terminal failure of a started run —
      a model or tool error, a limit, a deadline, cancellation, an abandoned stream, a hook
      failure — delivers ``run_error`` exactly once; ``run_end`` and ``run_error`` are
      mutually exclusive.  A hook that raises while handling ``run_error`` does not replace
      the original error (its exception is attached to the original as a note).
    * Under run control: the run's deadline and cancellation token are checked before each
      hook call, so a stopped run delivers no further events except ``run_error``.  Hooks
      are not raced on another thread (they must see events in order on the driving
      thread); a hook that blocks delays the run by its own duration.  ``event.run.control``
      is the run's control for hooks that wait.
    * Nothing is built for nobody: with no hooks registered the loop constructs no event.

Events (``event.kind``), in the order a run produces them — see ``docs/hooks.md`` for the
full table with payload fields:

    run_start                         the first step of an invocation (fresh or resumed)
    request_start / request_end       one provider attempt (``attempt`` 1, 2, …) of the
    request_error                     logical request ``request_number``; errors carry the
                                      retry category, whether a retry follows and its delay
    tool_dispatch_start / _end        every tool call of a response, in call order: the
    tool_dispatch_error               agent's handling (route, result part)
    tool_execute_start / _end         calls handed to the scheduler, in call order; end has
    tool_execute_error                the status and the call's own duration
    output_validator_start / _end     each output validator on a final candidate
    output_validator_error
    stream_event_before / _after      every ``AgentStreamEvent`` delivered to the application
    run_end | run_error               exactly one of them, last
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Literal, NamedTuple, Protocol, runtime_checkable

if TYPE_CHECKING:
    from zigai.control import RunControl
    from zigai.messages import Message, ResponseMessage, ToolCallPart
    from zigai.model import ModelRequest
    from zigai.pricing import PriceTable
    from zigai.usage import RunUsage

__all__ = [
    "Hook",
    "HookEvent",
    "HOOK_EVENT_KINDS",
    "Correlation",
    "RunInfo",
    "RunStart",
    "RunEnd",
    "RunError",
    "RequestStart",
    "RequestEnd",
    "RequestError",
    "ToolRoute",
    "ToolDispatchStart",
    "ToolDispatchEnd",
    "ToolDispatchError",
    "ToolExecuteStart",
    "ToolExecuteEnd",
    "ToolExecuteError",
    "OutputValidatorStart",
    "OutputValidatorEnd",
    "OutputValidatorError",
    "StreamEventBefore",
    "StreamEventAfter",
    "check_hooks",
]


@dataclass(frozen=True, slots=True)
class Correlation:
    """Application-supplied identity that joins a run to an outer trace (``RunOptions.correlation``).

    ``run_id`` replaces the generated run id; ``trace_parent`` is a W3C ``traceparent``
    string (telemetry nests the agent span under it); ``node_index``/``node_name`` name the
    graph node or session step that started the run; ``conversation_id`` names the
    conversation (chat thread) the run belongs to (telemetry's ``gen_ai.conversation.id``).
    All optional; none reach a provider.
    """

    run_id: str | None = None
    trace_parent: str | None = None
    node_index: int | None = None
    node_name: str | None = None
    conversation_id: str | None = None

    def __post_init__(self) -> None:
        for name in ("run_id", "trace_parent", "node_name", "conversation_id"):
            value = getattr(self, name)
            if value is not None and (not isinstance(value, str) or not value or len(value) > 256):
                raise ValueError(f"Correlation.{name} must be None or a non-empty string of <= 256 chars")
        index = self.node_index
        if index is not None and (isinstance(index, bool) or not isinstance(index, int) or index < 0):
            raise ValueError("Correlation.node_index must be None or an int >= 0")


class RunInfo(NamedTuple):
    """The identity every event of one run shares (one immutable object per run)."""

    run_id: str
    agent_name: str | None
    model_name: str
    provider_name: str
    streaming: bool
    resumed: bool
    correlation: Correlation | None
    control: RunControl
    price_table: PriceTable | None = None  # the agent's table (a type-only import: no runtime cost)


@runtime_checkable
class HookEvent(Protocol):
    """What every lifecycle event has: ``kind`` names it, ``run`` identifies the run.

    Events are immutable named tuples (cheap to build, safe to keep); match on ``kind`` or
    on the event class.
    """

    @property
    def kind(self) -> str: ...

    @property
    def run(self) -> RunInfo: ...


class RunStart(NamedTuple):
    """An invocation starts: ``message_count`` messages of history were given (or restored)."""

    run: RunInfo
    message_count: int

    @property
    def kind(self) -> str:
        return "run_start"


class RunEnd(NamedTuple):
    """The run ended without error: ``outcome`` is ``"complete"`` or ``"paused"``.

    ``output`` is the accepted output (None when paused); ``new_messages`` the messages this
    invocation added.  ``duration_s`` is the invocation's wall time.
    """

    run: RunInfo
    outcome: Literal["complete", "paused"]
    usage: RunUsage
    output: Any
    new_messages: tuple[Message, ...]
    duration_s: float

    @property
    def kind(self) -> str:
        return "run_end"


class RunError(NamedTuple):
    """The run failed: ``error`` is what the caller receives; ``state`` where it happened."""

    run: RunInfo
    error: BaseException
    state: str
    usage: RunUsage
    duration_s: float

    @property
    def kind(self) -> str:
        return "run_error"


class RequestStart(NamedTuple):
    """Attempt ``attempt`` of logical model request ``request_number`` is about to be sent.

    ``request`` is the provider-facing request (after history processors, toolsets and the
    context budget).  ``stream`` says whether it is a streamed request.
    """

    run: RunInfo
    request_number: int
    attempt: int
    request: ModelRequest
    stream: bool

    @property
    def kind(self) -> str:
        return "request_start"


class RequestEnd(NamedTuple):
    """Attempt ``attempt`` returned ``response`` (for streams: the stream was exhausted)."""

    run: RunInfo
    request_number: int
    attempt: int
    response: ResponseMessage
    duration_s: float

    @property
    def kind(self) -> str:
        return "request_end"


class RequestError(NamedTuple):
    """Attempt ``attempt`` failed with ``error``.

    ``category`` is the retry category (``rate_limit``, ``server_error``, ``timeout``,
    ``connection``, ``decode``) or None for a failure that is never retried.  When
    ``will_retry`` is true the next attempt starts after ``delay_s`` seconds
    (``cumulative_delay_s`` is the run's total planned waiting including it).
    """

    run: RunInfo
    request_number: int
    attempt: int
    error: BaseException
    category: str | None
    will_retry: bool
    delay_s: float | None
    cumulative_delay_s: float
    duration_s: float

    @property
    def kind(self) -> str:
        return "request_error"


ToolRoute = Literal["function", "output", "decision", "unknown", "capability"]


class ToolDispatchStart(NamedTuple):
    """The agent starts handling one tool call of the response.

    ``route``: ``function`` (an application tool), ``output`` (an output tool),
    ``decision`` (a resumed call settled by a deny/result decision), ``capability`` (the
    framework's ``load_capability``) or ``unknown``.
    """

    run: RunInfo
    call: ToolCallPart
    route: ToolRoute

    @property
    def kind(self) -> str:
        return "tool_dispatch_start"


class ToolDispatchEnd(NamedTuple):
    """The call's result part is final: ``outcome`` is ``return``, ``retry``, ``skipped``,
    ``denied`` or ``final`` (the accepted output call); ``part`` enters history."""

    run: RunInfo
    call: ToolCallPart
    outcome: str
    part: Any

    @property
    def kind(self) -> str:
        return "tool_dispatch_end"


class ToolDispatchError(NamedTuple):
    """The tool step failed before this call's result part was final."""

    run: RunInfo
    call: ToolCallPart
    error: BaseException

    @property
    def kind(self) -> str:
        return "tool_dispatch_error"


class ToolExecuteStart(NamedTuple):
    """The call is handed to the scheduler with these (validated, policy-resolved) arguments."""

    run: RunInfo
    call: ToolCallPart
    arguments: Any

    @property
    def kind(self) -> str:
        return "tool_execute_start"


class ToolExecuteEnd(NamedTuple):
    """The scheduler finished the call: ``status`` is ``success``, ``retry``, ``timed_out``
    or ``rejected`` (never started).  ``duration_s`` is the call's own run time and
    ``started_ns`` the wall-clock time (``time.time_ns()``) its thread started it — later than
    the ``tool_execute_start`` hand-off when calls wait for a slot or run one after another;
    both are None for a call that never started or whose thread lost its race."""

    run: RunInfo
    call: ToolCallPart
    status: str
    content: Any
    retry_message: str | None
    duration_s: float | None
    started_ns: int | None = None

    @property
    def kind(self) -> str:
        return "tool_execute_end"


class ToolExecuteError(NamedTuple):
    """The batch holding this call ended with ``error`` (fatal tool exception, deadline,
    cancellation); ``origin`` is true for the call whose own function raised it."""

    run: RunInfo
    call: ToolCallPart
    error: BaseException
    origin: bool

    @property
    def kind(self) -> str:
        return "tool_execute_error"


class OutputValidatorStart(NamedTuple):
    """Output validator ``index`` (in ``Agent.output_validators`` order) gets a final candidate."""

    run: RunInfo
    label: str
    validator_index: int
    value: Any

    @property
    def kind(self) -> str:
        return "output_validator_start"


class OutputValidatorEnd(NamedTuple):
    """The validator returned: ``outcome`` is ``accepted`` (``value`` is its output) or ``retry``."""

    run: RunInfo
    label: str
    validator_index: int
    outcome: Literal["accepted", "retry"]
    value: Any

    @property
    def kind(self) -> str:
        return "output_validator_end"


class OutputValidatorError(NamedTuple):
    """The validator raised (or returned something that is not an ``OutputResult``)."""

    run: RunInfo
    label: str
    validator_index: int
    error: BaseException

    @property
    def kind(self) -> str:
        return "output_validator_error"


class StreamEventBefore(NamedTuple):
    """``event`` is about to reach the application (sink call or iterator yield)."""

    run: RunInfo
    event: Any

    @property
    def kind(self) -> str:
        return "stream_event_before"


class StreamEventAfter(NamedTuple):
    """The application took ``event`` (the sink returned / the iterator was resumed)."""

    run: RunInfo
    event: Any

    @property
    def kind(self) -> str:
        return "stream_event_after"


Hook = Callable[[HookEvent], None]

HOOK_EVENT_KINDS: tuple[str, ...] = (
    "run_start",
    "run_end",
    "run_error",
    "request_start",
    "request_end",
    "request_error",
    "tool_dispatch_start",
    "tool_dispatch_end",
    "tool_dispatch_error",
    "tool_execute_start",
    "tool_execute_end",
    "tool_execute_error",
    "output_validator_start",
    "output_validator_end",
    "output_validator_error",
    "stream_event_before",
    "stream_event_after",
)


def check_hooks(hooks: Sequence[Any] | None, what: str) -> tuple[Hook, ...]:
    """``hooks`` as a tuple of callables, or ``TypeError`` naming ``what``."""
    if hooks is None:
        return ()
    if callable(hooks):
        hooks = (hooks,)
    items = tuple(hooks)
    for hook in items:
        if not callable(hook):
            raise TypeError(f"{what} must contain callables taking one HookEvent, got {hook!r}")
    return items
