"""``Tool``: one function the model may call, with its schema, policy and codec.

A tool knows how to (1) describe itself to a provider (:meth:`Tool.definition`),
(2) turn the model's raw argument text into validated arguments
(:meth:`Tool.validate_arguments`) and (3) call the application function and
encode its result (:meth:`Tool.execute`).  Build one with :meth:`Tool.manual`
(a JSON Schema and a function taking the argument dict) or with
:func:`zigai.reflect.tool` (schema and decoding derived from annotations).

Invariants:

* immutable after construction and safe to share between threads: schemas
  are private deep copies and their accessors return fresh copies, metadata
  is a read-only view, attributes cannot be set; :meth:`Tool.replace`
  derives a changed copy;
* the name matches ``TOOL_NAME_PATTERN`` and the parameter schema is a JSON
  object schema the local dialect accepts (checked at construction, so a
  broken tool fails before any model request);
* argument text is bounded by ``zigai.json.defaults.tool_payload`` and checked
  against the schema before any typed decoding; the application function is
  never called with arguments that failed either check.
"""

from __future__ import annotations

import copy
import inspect
import json
import threading
import typing
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from types import MappingProxyType
from typing import Any

from zigai.control import Cancelled, RunTimedOut
from zigai.errors import JsonError
from zigai.model import TOOL_NAME_PATTERN, ToolDefinition
from zigai.reflect.codec import DecodeError, EncodeError, encode
from zigai.tool.context import ToolOutput, ToolReturn, ToolRunContext
from zigai.tool.errors import InvalidToolArguments, ToolDefinitionError
from zigai.tool.limits import ReturnSchemaVisibility, ToolExecution, ToolLimits

__all__ = ["Tool", "ValidatedArgs"]

_ALWAYS_FATAL = (Cancelled, RunTimedOut, MemoryError)

_MAX_REPORTED = 8
_NO_ARGS = "{}"


@dataclass(frozen=True, slots=True)
class ValidatedArgs:
    """Arguments that passed the payload bounds and the schema.

    ``arguments`` is the decoded JSON object; ``value`` is what the function
    receives (the dict itself for manual tools, typed values for reflected ones).
    """

    arguments: Mapping[str, Any]
    value: Any


def _json_copy(value: Any, what: str) -> Any:
    """A plain copy of a schema, bounded by the JSON Schema profile (no recursion on input)."""
    from zigai import json as zjson
    from zigai.json import JsonLimitExceeded

    try:
        return zjson.bounded_copy(value, zjson.defaults.json_schema)
    except JsonLimitExceeded as exc:
        raise ToolDefinitionError(f"{what} exceeds the json_schema JSON profile: {exc}") from None
    except JsonError as exc:
        raise ToolDefinitionError(f"{what} is not JSON: {exc}") from None


def _compact(value: Any) -> str:
    return json.dumps(value, separators=(",", ":"), ensure_ascii=False, sort_keys=True)


def _recoverable(value: Any, name: str) -> Any:
    if value is None or callable(value) and not isinstance(value, type):
        return value
    if isinstance(value, type):
        value = (value,)
    if isinstance(value, tuple) and all(
        isinstance(item, type) and issubclass(item, BaseException) for item in value
    ):
        return value
    raise ToolDefinitionError(
        f"tool {name!r}: recoverable_errors must be exception types or a predicate "
        "(exception -> bool)"
    )


def _check_schema(schema: Any, what: str) -> None:
    from zigai.json_schema import InvalidJsonSchema, UnsupportedJsonSchema, validate_schema

    try:
        validate_schema(schema)
    except (InvalidJsonSchema, UnsupportedJsonSchema) as exc:
        raise ToolDefinitionError(f"{what}: {exc}") from None


class Tool:
    """A callable tool: definition, argument validation and execution (see module docstring)."""

    __slots__ = (
        "_name", "_description", "_parameters", "_invoke", "_decode", "_function",
        "_takes_context", "_execution", "_max_retries", "_sequential", "_limits", "_strict",
        "_return_schema", "_visibility", "_metadata", "_check_arguments", "_validator",
        "_validator_lock", "_frozen", "_recoverable",
    )

    _name: str
    _description: str
    _parameters: dict[str, Any]
    _invoke: Callable[[Any, ToolRunContext], Any]
    _decode: Callable[[dict[str, Any]], Any] | None
    _function: Callable[..., Any] | None
    _takes_context: bool
    _execution: ToolExecution
    _max_retries: int | None
    _sequential: bool
    _limits: ToolLimits | None
    _strict: bool | None
    _return_schema: dict[str, Any] | None
    _visibility: ReturnSchemaVisibility
    _metadata: Mapping[str, Any] | None
    _check_arguments: bool
    _validator: Any
    _validator_lock: threading.Lock
    _frozen: bool
    _recoverable: tuple[type[BaseException], ...] | Callable[[BaseException], bool] | None

    def __init__(
        self,
        *,
        name: str,
        description: str,
        parameters_json_schema: Mapping[str, Any],
        invoke: Callable[[Any, ToolRunContext], Any],
        takes_context: bool,
        decode_arguments: Callable[[dict[str, Any]], Any] | None = None,
        function: Callable[..., Any] | None = None,
        execution: ToolExecution = ToolExecution.immediate,
        max_retries: int | None = None,
        sequential: bool = False,
        limits: ToolLimits | None = None,
        strict: bool | None = None,
        return_json_schema: Mapping[str, Any] | None = None,
        return_schema_visibility: ReturnSchemaVisibility = ReturnSchemaVisibility.local,
        metadata: Mapping[str, Any] | None = None,
        check_arguments: bool = True,
        recoverable_errors: tuple[type[BaseException], ...] | Callable[[BaseException], bool] | None = None,
    ) -> None:
        if not isinstance(name, str) or not TOOL_NAME_PATTERN.match(name):
            raise ToolDefinitionError(f"tool name {name!r} must match {TOOL_NAME_PATTERN.pattern}")
        if not isinstance(description, str):
            raise ToolDefinitionError(f"tool {name!r}: description must be a string")
        if not isinstance(parameters_json_schema, Mapping):
            raise ToolDefinitionError(f"tool {name!r}: parameters schema must be a JSON object")
        parameters = _json_copy(dict(parameters_json_schema), f"tool {name!r} parameters schema")
        if parameters.get("type", "object") != "object":
            raise ToolDefinitionError(f"tool {name!r}: parameters schema must describe an object")
        if check_arguments:
            _check_schema(parameters, f"tool {name!r} parameters schema")
        returns = None
        if return_json_schema is not None:
            returns = _json_copy(dict(return_json_schema), f"tool {name!r} return schema")
            _check_schema(returns, f"tool {name!r} return schema")
        if not callable(invoke):
            raise ToolDefinitionError(f"tool {name!r}: function must be callable")
        if max_retries is not None and (
            isinstance(max_retries, bool) or not isinstance(max_retries, int) or max_retries < 0
        ):
            raise ToolDefinitionError(f"tool {name!r}: max_retries must be None or an int >= 0")
        if limits is not None and not isinstance(limits, ToolLimits):
            raise ToolDefinitionError(f"tool {name!r}: limits must be a ToolLimits")
        try:
            execution = ToolExecution(execution)
            return_schema_visibility = ReturnSchemaVisibility(return_schema_visibility)
        except ValueError as exc:
            raise ToolDefinitionError(f"tool {name!r}: {exc}") from None
        set_ = object.__setattr__
        set_(self, "_name", name)
        set_(self, "_description", description)
        set_(self, "_parameters", parameters)
        set_(self, "_invoke", invoke)
        set_(self, "_decode", decode_arguments)
        set_(self, "_function", function)
        set_(self, "_takes_context", bool(takes_context))
        set_(self, "_execution", execution)
        set_(self, "_max_retries", max_retries)
        set_(self, "_sequential", bool(sequential))
        set_(self, "_limits", limits)
        set_(self, "_strict", strict)
        set_(self, "_return_schema", returns)
        set_(self, "_visibility", return_schema_visibility)
        if metadata is not None and not isinstance(metadata, Mapping):
            raise ToolDefinitionError(f"tool {name!r}: metadata must be a mapping")
        set_(self, "_metadata", MappingProxyType(dict(metadata)) if metadata else None)
        set_(self, "_check_arguments", bool(check_arguments))
        set_(self, "_recoverable", _recoverable(recoverable_errors, name))
        set_(self, "_validator", None)
        set_(self, "_validator_lock", threading.Lock())
        set_(self, "_frozen", True)

    def __setattr__(self, name: str, value: object) -> None:
        raise AttributeError("Tool is immutable; use Tool.replace(...)")

    def __delattr__(self, name: str) -> None:
        raise AttributeError("Tool is immutable")

    def __repr__(self) -> str:
        return f"Tool(name={self._name!r}, execution={self._execution.value}, sequential={self._sequential})"

    # -- construction -------------------------------------------------------------------

    @classmethod
    def manual(
        cls,
        name: str,
        description: str,
        parameters_json_schema: Mapping[str, Any],
        function: Callable[..., Any],
        *,
        takes_context: bool | None = None,
        **options: Any,
    ) -> Tool:
        """A tool calling ``function(args_dict)`` or ``function(args_dict, ctx)``.

        ``takes_context=None`` detects a second positional parameter annotated
        ``ToolRunContext`` (or any second required positional parameter).  The
        function returns a JSON-encodable value, a :class:`ToolReturn` or a
        :class:`ToolOutput`.  ``options`` are the keyword options of ``Tool``.
        """
        if not callable(function):
            raise ToolDefinitionError(f"tool {name!r}: function must be callable")
        if takes_context is None:
            takes_context = _second_param_is_context(function)
        if takes_context:
            def invoke(value: Any, ctx: ToolRunContext) -> Any:
                return function(value, ctx)
        else:
            def invoke(value: Any, ctx: ToolRunContext) -> Any:
                return function(value)
        return cls(
            name=name,
            description=description,
            parameters_json_schema=parameters_json_schema,
            invoke=invoke,
            takes_context=takes_context,
            function=function,
            **options,
        )

    def replace(self, **changes: Any) -> Tool:
        """A copy with some constructor arguments changed (name, metadata, limits ...)."""
        current: dict[str, Any] = {
            "name": self._name,
            "description": self._description,
            "parameters_json_schema": self._parameters,
            "invoke": self._invoke,
            "takes_context": self._takes_context,
            "decode_arguments": self._decode,
            "function": self._function,
            "execution": self._execution,
            "max_retries": self._max_retries,
            "sequential": self._sequential,
            "limits": self._limits,
            "strict": self._strict,
            "return_json_schema": self._return_schema,
            "return_schema_visibility": self._visibility,
            "metadata": self._metadata,
            "check_arguments": self._check_arguments,
            "recoverable_errors": self._recoverable,
        }
        unknown = set(changes) - set(current)
        if unknown:
            raise ToolDefinitionError(f"Tool.replace got unknown fields {sorted(unknown)}")
        current.update(changes)
        return Tool(**current)

    # -- read-only attributes --------------------------------------------------------------

    @property
    def name(self) -> str:
        return self._name

    @property
    def description(self) -> str:
        return self._description

    @property
    def parameters_json_schema(self) -> dict[str, Any]:
        """A fresh copy of the argument schema."""
        return copy.deepcopy(self._parameters)

    @property
    def return_json_schema(self) -> dict[str, Any] | None:
        """A fresh copy of the return schema (None when unknown)."""
        return copy.deepcopy(self._return_schema)

    @property
    def takes_context(self) -> bool:
        return self._takes_context

    @property
    def execution(self) -> ToolExecution:
        return self._execution

    @property
    def max_retries(self) -> int | None:
        return self._max_retries

    @property
    def sequential(self) -> bool:
        return self._sequential

    @property
    def limits(self) -> ToolLimits | None:
        return self._limits

    @property
    def strict(self) -> bool | None:
        return self._strict

    @property
    def return_schema_visibility(self) -> ReturnSchemaVisibility:
        return self._visibility

    @property
    def metadata(self) -> Mapping[str, Any] | None:
        """Read-only application metadata (never sent to a provider; values are shared)."""
        return self._metadata

    def is_recoverable(self, error: BaseException) -> bool:
        """Whether ``error`` raised by the function becomes a retry prompt for the model.

        ``recoverable_errors`` (exception types, or a predicate) overrides the default that
        application exceptions are fatal.  Cancellation, run timeouts, memory errors and
        anything that is not an ``Exception`` stay fatal whatever the override says.
        """
        recoverable = self._recoverable
        if recoverable is None or not isinstance(error, Exception) or isinstance(error, _ALWAYS_FATAL):
            return False
        if isinstance(recoverable, tuple):
            return isinstance(error, recoverable)
        return bool(recoverable(error))

    @property
    def function(self) -> Callable[..., Any] | None:
        """The application function, for introspection."""
        return self._function

    # -- behaviour ----------------------------------------------------------------------------

    def definition(self) -> ToolDefinition:
        """The provider-facing definition; the return schema joins the description only
        when ``return_schema_visibility`` is ``model_description``."""
        description = self._description
        if self._return_schema is not None and self._visibility is ReturnSchemaVisibility.model_description:
            text = f"Return value JSON Schema: {_compact(self._return_schema)}"
            description = f"{description}\n\n{text}" if description else text
        return ToolDefinition(
            name=self._name,
            description=description,
            parameters_json_schema=self._parameters,
            kind="function",
            strict=self._strict,
            sequential=self._sequential,
            return_json_schema=copy.deepcopy(self._return_schema),
            metadata=dict(self._metadata) if self._metadata is not None else None,
        )

    def _compiled_validator(self) -> Any:
        validator = self._validator
        if validator is None:
            from zigai.json_schema import Validator

            with self._validator_lock:
                validator = self._validator
                if validator is None:
                    validator = Validator(self._parameters)
                    object.__setattr__(self, "_validator", validator)
        return validator

    def validate_arguments(self, arguments_json: str) -> ValidatedArgs:
        """Bounded parse, schema check and typed decode of the model's argument text.

        Empty or whitespace-only text means ``{}`` (providers send it for
        parameterless calls).  Every failure raises :class:`InvalidToolArguments`
        with a message safe to return to the model.
        """
        from zigai import json as zjson

        text: str | bytes
        if isinstance(arguments_json, (bytes, bytearray, memoryview)):
            text = bytes(arguments_json)  # the bounded parser checks UTF-8
        elif isinstance(arguments_json, str):
            text = arguments_json
        else:
            raise InvalidToolArguments(
                f"tool {self._name!r}: arguments must be JSON text", tool_name=self._name
            )
        if not text.strip():
            text = _NO_ARGS
        try:
            value = zjson.parse(text, zjson.defaults.tool_payload)
        except JsonError as exc:
            raise InvalidToolArguments(
                f"tool {self._name!r}: arguments are not valid JSON within the tool payload "
                f"limits: {exc}",
                tool_name=self._name,
                errors=(("$", str(exc)),),
            ) from exc
        if not isinstance(value, dict):
            raise InvalidToolArguments(
                f"tool {self._name!r}: arguments must be a JSON object",
                tool_name=self._name,
                errors=(("$", "expected a JSON object"),),
            )
        if self._check_arguments:
            failures = self._compiled_validator().errors(value)
            if failures:
                shown = "; ".join(f"{path}: {reason}" for path, reason in failures[:_MAX_REPORTED])
                raise InvalidToolArguments(
                    f"tool {self._name!r}: invalid arguments: {shown}",
                    tool_name=self._name,
                    errors=tuple(failures),
                )
        decoded: Any = value
        if self._decode is not None:
            try:
                decoded = self._decode(value)
            except DecodeError as exc:
                raise InvalidToolArguments(
                    f"tool {self._name!r}: invalid arguments: {exc}",
                    tool_name=self._name,
                    errors=((exc.path, exc.reason),),
                ) from None
        return ValidatedArgs(arguments=value, value=decoded)

    def call(self, arguments_json: str, ctx: ToolRunContext) -> ToolOutput:
        """:meth:`validate_arguments` then :meth:`execute` (for direct use outside an agent)."""
        return self.execute(self.validate_arguments(arguments_json), ctx)

    def execute(self, args: ValidatedArgs, ctx: ToolRunContext) -> ToolOutput:
        """Call the function and encode its result as a :class:`ToolOutput`.

        ``ModelRetry``, ``InvalidToolArguments`` and application exceptions
        propagate unchanged; an unencodable result raises ``EncodeError``.
        """
        if not isinstance(args, ValidatedArgs):
            raise TypeError("Tool.execute needs ValidatedArgs from Tool.validate_arguments")
        result = self._invoke(args.value, ctx)
        return to_output(result, self._name)


def to_output(result: Any, tool_name: str) -> ToolOutput:
    """Encode a function's return value (plain value, ToolReturn or ToolOutput)."""
    try:
        if isinstance(result, ToolOutput):
            return ToolOutput(encode(result.content), result.follow_up_messages)
        if isinstance(result, ToolReturn):
            return ToolOutput(encode(result.value), result.follow_up_messages)
        return ToolOutput(encode(result))
    except EncodeError as exc:
        raise EncodeError(f"tool {tool_name!r} returned a value that is not JSON: {exc}", path=exc.path) from None


def _second_param_is_context(function: Callable[..., Any]) -> bool:
    try:
        signature = inspect.signature(function)
    except (TypeError, ValueError):
        return False
    positional = [
        p for p in signature.parameters.values()
        if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)
    ]
    if len(positional) < 2:
        return False
    second = positional[1]
    annotation = second.annotation
    if isinstance(annotation, str):
        try:
            annotation = typing.get_type_hints(function).get(second.name, annotation)
        except Exception:  # unresolved forward references: fall back to the name
            return annotation.endswith("ToolRunContext")
    if annotation is ToolRunContext:
        return True
    return second.default is inspect.Parameter.empty
