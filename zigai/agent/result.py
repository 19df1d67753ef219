"""Run results that own their conversation: :class:`Result` and :class:`TypedResult`.

A result holds its own immutable copy of the complete message history, the
final output, the chosen output name, cumulative :class:`~zigai.usage.RunUsage`
and the final finish reason.  It is a context manager; ``close()`` (alias
``deinit()``) releases the graph and every later access raises
:class:`~zigai.agent.errors.ResultClosed`.

Invariants: ``messages`` is a tuple of frozen messages (the input history
followed by the messages this run added); ``new_messages()`` is exactly the
suffix this run added; closing twice is harmless.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Generic, TypeVar

from zigai._owner import Owner
from zigai.agent.errors import ResultClosed
from zigai.messages import FinishReason, Message, ResponseMessage
from zigai.usage import RunUsage

if TYPE_CHECKING:
    from zigai.pricing import UsageCost

__all__ = ["Result", "TypedResult"]

T = TypeVar("T")
if TYPE_CHECKING:  # a default (PEP 696): a bare ``Result`` holds output of any type
    from typing_extensions import TypeVar as _DefaultedTypeVar

    OutputT = _DefaultedTypeVar("OutputT", default=Any)
else:
    OutputT = TypeVar("OutputT")


class Result(Owner, Generic[OutputT]):
    """The owned outcome of ``Agent.run``; ``Result[Forecast]`` when the agent has
    ``output_type=Forecast`` (then the value is a :class:`TypedResult`)."""

    __slots__ = ("_output", "_output_name", "_messages", "_new_start", "_usage", "_cost")

    _closed_error = ResultClosed

    def __init__(
        self,
        output: Any,
        messages: tuple[Message, ...],
        new_start: int,
        usage: RunUsage,
        output_name: str | None = None,
        *,
        cost: UsageCost | None = None,
    ) -> None:
        self._cost = cost
        self._output = output
        self._output_name = output_name
        self._messages = messages
        self._new_start = new_start
        self._usage = usage
        super().__init__()

    @property
    def output(self) -> OutputT:
        """The validated final output (text, JSON value, an output function's value, or the
        decoded value of a typed run)."""
        self._check()
        return self._output

    if not TYPE_CHECKING:  # so type checkers still flag `await agent.run(...)`

        def __await__(self) -> Any:
            from zigai.agent.errors import AwaitNotSupported

            raise AwaitNotSupported(
                "zigai's Agent.run is synchronous and already returned this Result: drop the "
                "`await` (from async code, use `await asyncio.to_thread(agent.run, ...)`)"
            )

    @property
    def output_name(self) -> str | None:
        """The chosen structured-output branch (None for text and JSON-object output)."""
        self._check()
        return self._output_name

    @property
    def messages(self) -> tuple[Message, ...]:
        """The complete conversation: input history, then this run's messages."""
        self._check()
        return self._messages

    def all_messages(self) -> tuple[Message, ...]:
        return self.messages

    def new_messages(self) -> tuple[Message, ...]:
        """Only the messages this run added."""
        self._check()
        return self._messages[self._new_start:]

    @property
    def usage(self) -> RunUsage:
        self._check()
        return self._usage

    @property
    def cost(self) -> UsageCost | None:
        """The run's exact cost from ``Agent.price_table`` (nano-USD), or None when no table
        is configured, the model is unknown to it, or a used token bucket has no rate."""
        self._check()
        return self._cost

    @property
    def response(self) -> ResponseMessage:
        """The last model response of the run."""
        self._check()
        for message in reversed(self._messages):
            if isinstance(message, ResponseMessage):
                return message
        raise ResultClosed("the result holds no model response")  # pragma: no cover - a run always has one

    @property
    def finish_reason(self) -> FinishReason | None:
        """The normalized finish reason of the final model response."""
        return self.response.finish_reason

    def _release(self) -> None:
        self._output = None
        self._messages = ()

    def __repr__(self) -> str:
        if self._closed:
            return f"{type(self).__name__}(closed)"
        return (
            f"{type(self).__name__}(output_name={self._output_name!r}, "
            f"messages={len(self._messages)}, requests={self._usage.requests})"
        )


class TypedResult(Result[T], Generic[T]):
    """The owned outcome of ``Agent.run_typed``: the decoded value and its original JSON."""

    __slots__ = ("_json",)

    def __init__(
        self,
        value: T,
        json_value: Any,
        messages: tuple[Message, ...],
        new_start: int,
        usage: RunUsage,
        output_name: str | None = None,
        *,
        cost: UsageCost | None = None,
    ) -> None:
        super().__init__(value, messages, new_start, usage, output_name, cost=cost)
        self._json = json_value

    @property
    def value(self) -> T:
        """The final output decoded into the requested type."""
        self._check()
        return self._output

    @property
    def json(self) -> Any:
        """The validated JSON value the typed value was decoded from."""
        self._check()
        return self._json

    def _release(self) -> None:
        super()._release()
        self._json = None
