"""Token usage of one model request (:class:`RequestUsage`) and of a whole run (:class:`RunUsage`).

Provider adapters normalize what a provider reports into a :class:`RequestUsage`;
the agent folds each of them into a :class:`RunUsage` together with the number of
model requests and tool calls.

Invariants (checked on construction, so an inconsistent value cannot exist):

* every counter is a plain ``int`` (not ``bool``) and ``>= 0``;
* cached input (``cache_read_tokens``, ``cache_write_tokens``, and their sum) and
  ``input_audio_tokens`` are *inclusive subsets* of ``input_tokens``;
* ``reasoning_tokens`` and ``output_audio_tokens`` are inclusive subsets of
  ``output_tokens``;
* therefore ``total_tokens`` is always exactly ``input_tokens + output_tokens``;
* ``details`` maps provider counter names (non-empty ``str``) to non-negative
  ints; it is an immutable, hashable, picklable :class:`UsageDetails`.

Both types are immutable values.  Aggregation never mutates: ``a + b`` and
``run.incr(request)`` return new values, and ``details`` are summed per name.
Pricing (``zigai.pricing``) reads these counters; it is not part of this module.

:class:`RunUsage` also records the run's work besides tokens: ``attempts`` (every provider
attempt, including failed and retried ones, so ``attempts >= requests`` for an agent run),
``provider_time_ns`` (time spent waiting on the provider across all attempts) and
``run_time_ns`` (wall time of the run's invocations).  The two durations are measurements,
not counts: they are summed like the counters but take no part in ``==`` or ``hash``, so
two runs that did the same work compare equal however long they took.

Calling a :class:`RunUsage` (``result.usage()``, PydanticAI 1's spelling) raises
:class:`UsageNotCallable`, which says to drop the parentheses.
"""

from __future__ import annotations

from collections.abc import ItemsView, Iterator, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, NoReturn

from zigai.errors import MessageError

__all__ = ["InvalidUsage", "RequestUsage", "RunUsage", "UsageDetails", "UsageNotCallable"]


class InvalidUsage(MessageError):
    """A usage counter was negative, not an int, or broke an inclusive-subset invariant."""


class UsageNotCallable(InvalidUsage, TypeError):
    """A :class:`RunUsage` was called, as in ``result.usage()``: ``usage`` is a property."""


class UsageDetails(Mapping[str, int]):
    """An immutable mapping of provider counter name to a non-negative integer.

    Keys are kept sorted so iteration, ``repr`` and serialization are deterministic.
    """

    __slots__ = ("_items",)

    _items: dict[str, int]

    def __init__(self, values: Mapping[str, int] | None = None) -> None:
        items: dict[str, int] = {}
        if not values:
            object.__setattr__(self, "_items", items)
            return
        for name, count in sorted((values or {}).items(), key=lambda kv: str(kv[0])):
            if not isinstance(name, str) or not name:
                raise InvalidUsage(f"usage detail names must be non-empty strings, got {name!r}")
            _check_count(f"details[{name!r}]", count)
            items[name] = count
        object.__setattr__(self, "_items", items)

    def __setattr__(self, name: str, value: object) -> None:
        raise AttributeError("UsageDetails is immutable")

    def __getitem__(self, key: str) -> int:
        return self._items[key]

    def __iter__(self) -> Iterator[str]:
        return iter(self._items)

    def __len__(self) -> int:
        return len(self._items)

    def items(self) -> ItemsView[str, int]:
        """The items as a C-level view (same set semantics, no Python generator per item)."""
        return self._items.items()

    def __hash__(self) -> int:
        return hash(tuple(self._items.items()))

    def __eq__(self, other: object) -> bool:
        if isinstance(other, Mapping):
            return dict(self._items) == dict(other.items())
        return NotImplemented

    def __repr__(self) -> str:
        return f"UsageDetails({self._items!r})"

    def __reduce__(self) -> tuple[Any, ...]:
        return (UsageDetails, (dict(self._items),))

    def __add__(self, other: Mapping[str, int]) -> UsageDetails:
        merged = dict(self._items)
        for name, count in other.items():
            merged[name] = merged.get(name, 0) + count
        return UsageDetails(merged)


def _check_count(name: str, value: object) -> None:
    if type(value) is not int:
        raise InvalidUsage(f"usage counter {name} must be an int, got {type(value).__name__}")
    if value < 0:
        raise InvalidUsage(f"usage counter {name} must be >= 0, got {value}")


_TOKEN_FIELDS = (
    "input_tokens",
    "output_tokens",
    "cache_write_tokens",
    "cache_read_tokens",
    "input_audio_tokens",
    "output_audio_tokens",
    "reasoning_tokens",
)


def _validate_tokens(usage: RequestUsage | RunUsage) -> None:
    inp, out = usage.input_tokens, usage.output_tokens
    read, write = usage.cache_read_tokens, usage.cache_write_tokens
    audio_in, audio_out = usage.input_audio_tokens, usage.output_audio_tokens
    reasoning = usage.reasoning_tokens
    if (
        type(inp) is int and type(out) is int and type(read) is int and type(write) is int
        and type(audio_in) is int and type(audio_out) is int and type(reasoning) is int
        and read >= 0 and write >= 0 and read + write <= inp and 0 <= audio_in <= inp
        and 0 <= reasoning <= out and 0 <= audio_out <= out
    ):  # every invariant at once; any doubt falls through to the named checks below
        if not isinstance(usage.details, UsageDetails):
            object.__setattr__(usage, "details", UsageDetails(usage.details))
        return
    _explain_invalid_tokens(usage)


def _explain_invalid_tokens(usage: RequestUsage | RunUsage) -> None:
    """Raise the :class:`InvalidUsage` that names the first broken invariant."""
    for name in _TOKEN_FIELDS:
        _check_count(name, getattr(usage, name))
    if not isinstance(usage.details, UsageDetails):
        object.__setattr__(usage, "details", UsageDetails(usage.details))
    inp, out = usage.input_tokens, usage.output_tokens
    subsets = (
        ("cache_read_tokens", usage.cache_read_tokens, "input_tokens", inp),
        ("cache_write_tokens", usage.cache_write_tokens, "input_tokens", inp),
        (
            "cache_read_tokens + cache_write_tokens",
            usage.cache_read_tokens + usage.cache_write_tokens,
            "input_tokens",
            inp,
        ),
        ("input_audio_tokens", usage.input_audio_tokens, "input_tokens", inp),
        ("reasoning_tokens", usage.reasoning_tokens, "output_tokens", out),
        ("output_audio_tokens", usage.output_audio_tokens, "output_tokens", out),
    )
    for part_name, part, total_name, total in subsets:
        if part > total:
            raise InvalidUsage(
                f"{part_name} ({part}) must be an inclusive subset of {total_name} ({total})"
            )


@dataclass(frozen=True, slots=True)
class RequestUsage:
    """Normalized token usage of one model request (``ResponseMessage.usage``)."""

    input_tokens: int = 0
    output_tokens: int = 0
    cache_write_tokens: int = 0
    cache_read_tokens: int = 0
    input_audio_tokens: int = 0
    output_audio_tokens: int = 0
    reasoning_tokens: int = 0
    details: UsageDetails = field(default_factory=UsageDetails)

    def __post_init__(self) -> None:
        _validate_tokens(self)

    @property
    def total_tokens(self) -> int:
        """Always ``input_tokens + output_tokens`` (cached/audio/reasoning are subsets)."""
        return self.input_tokens + self.output_tokens

    def is_empty(self) -> bool:
        """True when every counter is zero and there are no details."""
        return self == RequestUsage()

    def __add__(self, other: RequestUsage) -> RequestUsage:
        if not isinstance(other, RequestUsage):
            return NotImplemented
        return RequestUsage(
            **{name: getattr(self, name) + getattr(other, name) for name in _TOKEN_FIELDS},
            details=self.details + other.details,
        )


#: RunUsage's non-token counters (each a plain int >= 0, summed by ``+``).
_RUN_FIELDS = ("requests", "tool_calls", "attempts", "provider_time_ns", "run_time_ns")


@dataclass(frozen=True, slots=True)
class RunUsage:
    """Aggregate usage of a run: token counters summed over requests, plus call counts.

    Immutable: use ``run.incr(request_usage)`` (one more model request),
    ``run.with_tool_calls(n)``, ``run.with_timing(...)`` or ``run + other`` to obtain a new
    value.  ``provider_time_ns`` and ``run_time_ns`` are excluded from equality and hashing.
    """

    requests: int = 0
    tool_calls: int = 0
    input_tokens: int = 0
    output_tokens: int = 0
    cache_write_tokens: int = 0
    cache_read_tokens: int = 0
    input_audio_tokens: int = 0
    output_audio_tokens: int = 0
    reasoning_tokens: int = 0
    details: UsageDetails = field(default_factory=UsageDetails)
    attempts: int = 0
    provider_time_ns: int = field(default=0, compare=False)
    run_time_ns: int = field(default=0, compare=False)

    def __post_init__(self) -> None:
        for name in _RUN_FIELDS:
            _check_count(name, getattr(self, name))
        _validate_tokens(self)

    if not TYPE_CHECKING:  # type checkers keep reporting the call as an error

        def __call__(self, *args: object, **kwargs: object) -> NoReturn:
            raise UsageNotCallable(
                "usage is a property, not a method: write result.usage (no parentheses), as "
                "PydanticAI 2 does; result.usage() was the PydanticAI 1 spelling"
            )

    @property
    def total_tokens(self) -> int:
        """Always ``input_tokens + output_tokens``."""
        return self.input_tokens + self.output_tokens

    @property
    def provider_time_s(self) -> float:
        """``provider_time_ns`` in seconds."""
        return self.provider_time_ns / 1e9

    @property
    def run_time_s(self) -> float:
        """``run_time_ns`` in seconds."""
        return self.run_time_ns / 1e9

    def incr(
        self, usage: RequestUsage, *, requests: int = 1, attempts: int = 0, provider_time_ns: int = 0,
    ) -> RunUsage:
        """Return a new RunUsage with ``usage`` added and ``requests`` more model requests.

        ``attempts`` and ``provider_time_ns`` are the provider attempts (and their time) that
        produced those requests; the agent passes them, so one value is built per response.
        """
        if not isinstance(usage, RequestUsage):
            raise InvalidUsage(f"incr expects a RequestUsage, got {type(usage).__name__}")
        return RunUsage(
            self.requests + requests,
            self.tool_calls,
            self.input_tokens + usage.input_tokens,
            self.output_tokens + usage.output_tokens,
            self.cache_write_tokens + usage.cache_write_tokens,
            self.cache_read_tokens + usage.cache_read_tokens,
            self.input_audio_tokens + usage.input_audio_tokens,
            self.output_audio_tokens + usage.output_audio_tokens,
            self.reasoning_tokens + usage.reasoning_tokens,
            self.details + usage.details if usage.details else self.details,
            self.attempts + attempts,
            self.provider_time_ns + provider_time_ns,
            self.run_time_ns,
        )

    def with_tool_calls(self, count: int = 1) -> RunUsage:
        """Return a new RunUsage with ``count`` more tool calls."""
        _check_count("tool_calls", count)
        return RunUsage(
            self.requests, self.tool_calls + count, self.input_tokens, self.output_tokens,
            self.cache_write_tokens, self.cache_read_tokens, self.input_audio_tokens,
            self.output_audio_tokens, self.reasoning_tokens, self.details, self.attempts,
            self.provider_time_ns, self.run_time_ns,
        )

    def with_timing(self, *, attempts: int = 0, provider_time_ns: int = 0, run_time_ns: int = 0) -> RunUsage:
        """Return a new RunUsage with more provider attempts, provider time and run time."""
        for name, value in (
            ("attempts", attempts), ("provider_time_ns", provider_time_ns), ("run_time_ns", run_time_ns)
        ):
            _check_count(name, value)
        return RunUsage(
            self.requests, self.tool_calls, self.input_tokens, self.output_tokens,
            self.cache_write_tokens, self.cache_read_tokens, self.input_audio_tokens,
            self.output_audio_tokens, self.reasoning_tokens, self.details,
            self.attempts + attempts, self.provider_time_ns + provider_time_ns,
            self.run_time_ns + run_time_ns,
        )

    def __add__(self, other: RunUsage) -> RunUsage:
        if not isinstance(other, RunUsage):
            return NotImplemented
        return RunUsage(**{
            **{name: getattr(self, name) + getattr(other, name) for name in _RUN_FIELDS},
            **{name: getattr(self, name) + getattr(other, name) for name in _TOKEN_FIELDS},
            "details": self.details + other.details,
        })

    def as_request_usage(self) -> RequestUsage:
        """The token counters alone, as one RequestUsage (useful for pricing a whole run)."""
        return RequestUsage(
            **{name: getattr(self, name) for name in _TOKEN_FIELDS}, details=self.details
        )
