"""What an agent's output must look like: ``OutputSpec``, its choices, results and contexts.

``OutputSpec`` is agent behaviour, not wire format.  Six modes:

* ``text`` — the model's text is the output;
* ``json_object`` — any JSON object, using the provider's JSON-object mode;
* ``native`` — one named JSON Schema (``OutputSpec.json_schema``) or several named
  alternatives (``OutputSpec.native``) combined into one ``anyOf`` schema;
* ``prompted`` — the same alternatives, described to the model through an
  instruction rendered from a template with exactly one ``{schema}`` marker;
* ``tool`` — one synthetic output tool per choice; non-object schemas are wrapped
  as ``{"value": ...}`` for the provider and unwrapped after local validation.

Structured modes are always validated locally with :mod:`zigai.json_schema`.
An :class:`OutputChoice` may carry an output function ``(ctx, value) ->
OutputResult | value``; an explicit :meth:`OutputResult.retry` is sent to the
model, anything it raises stops the run.  Output validators have the shape
``(choice_name, ctx, value) -> OutputResult`` and run in order.

Invariants: every value here is immutable; schemas are deep-copied plain JSON
on construction; malformed specs raise :class:`InvalidOutputSpec` when built or
prepared, always before the first model request.
"""

from __future__ import annotations

import enum
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal

from zigai.control import RunControl
from zigai.errors import AgentError
from zigai.messages import Message
from zigai.model import TOOL_NAME_PATTERN
from zigai.usage import RunUsage

__all__ = [
    "OutputMode",
    "EndStrategy",
    "OutputChoice",
    "OutputSpec",
    "OutputResult",
    "OutputRunContext",
    "OutputFunction",
    "OutputValidator",
    "InvalidOutputSpec",
    "DEFAULT_PROMPT_TEMPLATE",
    "SCHEMA_MARKER",
]

SCHEMA_MARKER = "{schema}"
DEFAULT_PROMPT_TEMPLATE = (
    "Always respond with a JSON value that matches this JSON Schema:\n\n"
    "{schema}\n\nRespond with the JSON value only, without any other text."
)


class InvalidOutputSpec(AgentError):
    """An output specification is malformed or cannot be prepared for the model."""


class OutputMode(enum.Enum):
    """How the agent obtains its final output."""

    text = "text"
    json_object = "json_object"
    native = "native"
    prompted = "prompted"
    tool = "tool"


class EndStrategy(enum.Enum):
    """What happens to ordinary tool calls emitted next to an output tool call.

    ``graceful`` runs ordinary calls emitted before the first successful output
    call and skips later ones; ``early`` skips every ordinary call once an output
    call succeeds; ``exhaustive`` runs every call and keeps the first successful
    output by emission order.
    """

    graceful = "graceful"
    early = "early"
    exhaustive = "exhaustive"


def _plain_json(value: Any, what: str) -> Any:
    """A plain copy bounded by the json_schema profile, walked without recursion."""
    from zigai import json as zjson

    try:
        return zjson.bounded_copy(value, zjson.defaults.json_schema)
    except zjson.JsonLimitExceeded as exc:
        raise InvalidOutputSpec(f"{what} exceeds the json_schema JSON profile: {exc}") from None
    except (zjson.JsonError, TypeError, ValueError) as exc:
        raise InvalidOutputSpec(f"{what} is not plain JSON: {exc}") from None


@dataclass(frozen=True, slots=True)
class OutputChoice:
    """One named structured-output alternative."""

    name: str
    schema: Mapping[str, Any]
    description: str | None = None
    function: Callable[[OutputRunContext, Any], Any] | None = None
    strict: bool | None = None

    def __post_init__(self) -> None:
        if not isinstance(self.name, str) or not TOOL_NAME_PATTERN.match(self.name):
            raise InvalidOutputSpec(
                f"output name {self.name!r} must match {TOOL_NAME_PATTERN.pattern}"
            )
        if not isinstance(self.schema, Mapping):
            raise InvalidOutputSpec(f"output {self.name!r}: schema must be a JSON object")
        if self.description is not None and not isinstance(self.description, str):
            raise InvalidOutputSpec(f"output {self.name!r}: description must be a string")
        if self.function is not None and not callable(self.function):
            raise InvalidOutputSpec(f"output {self.name!r}: function must be callable")
        object.__setattr__(self, "schema", _plain_json(dict(self.schema), f"output {self.name!r} schema"))


def _choices(choices: Sequence[OutputChoice], mode: str) -> tuple[OutputChoice, ...]:
    if isinstance(choices, OutputChoice):
        choices = (choices,)
    items = tuple(choices)
    if not items:
        raise InvalidOutputSpec(f"{mode} output needs at least one choice")
    for item in items:
        if not isinstance(item, OutputChoice):
            raise InvalidOutputSpec(f"{mode} output choices must be OutputChoice values")
    names = [c.name for c in items]
    duplicates = sorted({n for n in names if names.count(n) > 1})
    if duplicates:
        raise InvalidOutputSpec(f"duplicate output names: {', '.join(duplicates)}")
    return items


@dataclass(frozen=True, slots=True)
class OutputSpec:
    """Agent output behaviour; build it with the class-method constructors."""

    mode: OutputMode = OutputMode.text
    choices: tuple[OutputChoice, ...] = ()
    template: str | None = None
    union_name: str = "final_result"

    def __post_init__(self) -> None:
        object.__setattr__(self, "mode", OutputMode(self.mode))
        if self.mode in (OutputMode.text, OutputMode.json_object):
            if self.choices:
                raise InvalidOutputSpec(f"{self.mode.value} output takes no choices")
        else:
            object.__setattr__(self, "choices", _choices(self.choices, self.mode.value))
        if self.template is not None:
            if self.mode is not OutputMode.prompted:
                raise InvalidOutputSpec("only prompted output takes a template")
            if not isinstance(self.template, str) or self.template.count(SCHEMA_MARKER) != 1:
                raise InvalidOutputSpec(
                    f"a prompted-output template must contain exactly one {SCHEMA_MARKER} marker"
                )
        if not TOOL_NAME_PATTERN.match(self.union_name):
            raise InvalidOutputSpec(f"union name {self.union_name!r} is not provider-safe")

    @classmethod
    def text(cls) -> OutputSpec:
        return cls(OutputMode.text)

    @classmethod
    def json_object(cls) -> OutputSpec:
        return cls(OutputMode.json_object)

    @classmethod
    def json_schema(
        cls,
        name: str,
        schema: Mapping[str, Any],
        *,
        description: str | None = None,
        strict: bool | None = None,
        function: Callable[[OutputRunContext, Any], Any] | None = None,
    ) -> OutputSpec:
        """Native output with one named schema."""
        return cls(OutputMode.native, (OutputChoice(name, schema, description, function, strict),))

    @classmethod
    def native(cls, choices: Sequence[OutputChoice], *, union_name: str = "final_result") -> OutputSpec:
        return cls(OutputMode.native, tuple(choices), union_name=union_name)

    @classmethod
    def prompted(
        cls,
        choices: Sequence[OutputChoice],
        template: str | None = None,
        *,
        union_name: str = "final_result",
    ) -> OutputSpec:
        return cls(OutputMode.prompted, tuple(choices), template, union_name=union_name)

    @classmethod
    def tool(cls, choices: Sequence[OutputChoice]) -> OutputSpec:
        return cls(OutputMode.tool, tuple(choices))

    @property
    def structured(self) -> bool:
        return self.mode is not OutputMode.text


@dataclass(frozen=True, slots=True)
class OutputResult:
    """An output function's or validator's verdict: accept ``value`` or ask for a retry."""

    kind: Literal["output", "retry"]
    value: Any = None
    message: str | None = None

    def __post_init__(self) -> None:
        if self.kind not in ("output", "retry"):
            raise InvalidOutputSpec(
                f"OutputResult kind must be 'output' or 'retry', got {self.kind!r}; "
                "use OutputResult.output(value) or OutputResult.retry(message)"
            )
        if self.message is not None and not isinstance(self.message, str):
            raise InvalidOutputSpec(f"OutputResult message must be a str, got {type(self.message).__name__}")

    @classmethod
    def output(cls, value: Any) -> OutputResult:
        return cls("output", value)

    @classmethod
    def retry(cls, message: str) -> OutputResult:
        if not isinstance(message, str) or not message:
            raise InvalidOutputSpec("OutputResult.retry needs a non-empty model-safe message")
        return cls("retry", None, message)


@dataclass(frozen=True, slots=True)
class OutputRunContext:
    """Borrowed run state for output functions and validators.

    ``retry`` is the number of output retries used so far; ``partial_output`` is
    False for buffered runs (streaming passes provisional snapshots later).
    """

    deps: Any
    usage: RunUsage
    request_count: int
    messages: tuple[Message, ...]
    control: RunControl
    retry: int = 0
    choice_name: str | None = None
    tool_call_id: str | None = None
    partial_output: bool = False
    capabilities: Any = None  # the run's CapabilitySnapshot when capabilities are configured


OutputFunction = Callable[[OutputRunContext, Any], Any]
OutputValidator = Callable[[str, OutputRunContext, Any], OutputResult]
