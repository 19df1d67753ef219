"""Preparing an ``OutputSpec`` for one model and checking what the model returned.

:func:`prepare_output` turns agent behaviour into the provider-facing pieces
(``OutputFormat``, synthetic output ``ToolDefinition`` values, the prompted
instruction) and compiles every local validator.  It runs before the first
model request; capability mismatches raise ``UnsupportedModelFeature`` and
malformed schemas ``InvalidJsonSchema`` / ``UnsupportedJsonSchema`` /
:class:`InvalidOutputSpec` there, never after network I/O.

:class:`PreparedOutput` then checks candidates: text (JSON parse with the
provider-response limits, schema, choice selection for unions) and output tool
arguments (wrapper schema, unwrap).  Failures raise :class:`OutputRejected`
carrying a model-safe message; the agent turns it into a correction request.

Invariants: a ``PreparedOutput`` is immutable and shareable between runs of
the same agent and profile; schemas combined into ``anyOf`` unions keep their
``$defs`` at the root so ``#/$defs/...`` references still resolve.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from zigai.json_schema import OutputSchemaValidationFailed, Validator
from zigai.model import (
    TEXT_OUTPUT,
    ModelProfile,
    OutputFormat,
    ToolDefinition,
    UnsupportedModelFeature,
)
from zigai.output.spec import (
    DEFAULT_PROMPT_TEMPLATE,
    SCHEMA_MARKER,
    InvalidOutputSpec,
    OutputChoice,
    OutputMode,
    OutputSpec,
)

__all__ = ["PreparedOutput", "PreparedChoice", "OutputRejected", "prepare_output", "Candidate"]

_WRAP_KEY = "value"
_ROOT_ONLY = ("$defs", "$schema", "$id")


class OutputRejected(Exception):
    """Internal control flow: a candidate failed; ``message`` is safe for the model."""

    def __init__(self, message: str, *, cause: BaseException | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.cause = cause


@dataclass(frozen=True, slots=True)
class PreparedChoice:
    """One choice with its compiled validator (of the provider-facing schema)."""

    choice: OutputChoice
    validator: Validator
    wrapped: bool = False


@dataclass(frozen=True, slots=True)
class Candidate:
    """A schema-valid output value and the choice it matched (None for text/json_object)."""

    value: Any
    choice: OutputChoice | None


def _has_root_ref(value: Any) -> bool:
    if isinstance(value, dict):
        if value.get("$ref") == "#":
            return True
        return any(_has_root_ref(v) for v in value.values())
    if isinstance(value, list):
        return any(_has_root_ref(v) for v in value)
    return False


def _split_root(schema: dict[str, Any], owner: str, defs: dict[str, Any]) -> dict[str, Any]:
    """Remove root-only keywords from ``schema``, merging its ``$defs`` into ``defs``."""
    body = {k: v for k, v in schema.items() if k not in _ROOT_ONLY}
    for name, definition in (schema.get("$defs") or {}).items():
        if name in defs and defs[name] != definition:
            raise InvalidOutputSpec(
                f"output {owner!r}: $defs entry {name!r} conflicts with another choice"
            )
        defs[name] = definition
    if _has_root_ref(body):
        raise InvalidOutputSpec(f"output {owner!r}: a '#' self-reference cannot be combined")
    return body


def _combine(choices: tuple[OutputChoice, ...]) -> dict[str, Any]:
    if len(choices) == 1:
        return dict(choices[0].schema)
    defs: dict[str, Any] = {}
    arms = [_split_root(dict(c.schema), c.name, defs) for c in choices]
    combined: dict[str, Any] = {"anyOf": arms}
    if defs:
        combined["$defs"] = defs
    return combined


def _wrap(schema: dict[str, Any], owner: str) -> tuple[dict[str, Any], bool]:
    if schema.get("type") == "object":
        return schema, False
    defs: dict[str, Any] = {}
    inner = _split_root(schema, owner, defs)
    wrapper: dict[str, Any] = {
        "type": "object",
        "properties": {_WRAP_KEY: inner},
        "required": [_WRAP_KEY],
        "additionalProperties": False,
    }
    if defs:
        wrapper["$defs"] = defs
    return wrapper, True


def _first_line(error: OutputSchemaValidationFailed) -> str:
    failures = getattr(error, "errors", None) or ()
    if failures:
        return "; ".join(f"{path}: {reason}" for path, reason in list(failures)[:8])
    return str(error)


@dataclass(frozen=True, slots=True)
class PreparedOutput:
    """The output contract of one agent for one model profile."""

    spec: OutputSpec
    output_format: OutputFormat
    tool_definitions: tuple[ToolDefinition, ...]
    instruction: str | None
    choices: tuple[PreparedChoice, ...]
    union_validator: Validator | None

    @property
    def mode(self) -> OutputMode:
        return self.spec.mode

    @property
    def tool_names(self) -> frozenset[str]:
        return frozenset(d.name for d in self.tool_definitions)

    def choice_for_tool(self, name: str) -> PreparedChoice | None:
        for prepared in self.choices:
            if prepared.choice.name == name:
                return prepared
        return None

    def parse_text(self, text: str) -> Candidate:
        """Check a text answer for text/json_object/native/prompted output."""
        mode = self.spec.mode
        if mode is OutputMode.text:
            return Candidate(text, None)
        if mode is OutputMode.tool:
            names = ", ".join(sorted(self.tool_names))
            raise OutputRejected(
                f"Plain text responses are not accepted. Call one of the output tools ({names})."
            )
        value = _decode_json(text, strip_fences=mode is OutputMode.prompted)
        if mode is OutputMode.json_object:
            if not isinstance(value, dict):
                raise OutputRejected("The response must be a JSON object.")
            return Candidate(value, None)
        return self.check_value(value)

    def check_value(self, value: Any) -> Candidate:
        """Schema-check a decoded native/prompted value; pick the first matching choice."""
        if len(self.choices) == 1:
            prepared = self.choices[0]
            _validate(prepared.validator, value)
            return Candidate(value, prepared.choice)
        for prepared in self.choices:
            if prepared.validator.is_valid(value):
                return Candidate(value, prepared.choice)
        assert self.union_validator is not None
        _validate(self.union_validator, value)  # raises with the union's failures
        raise OutputRejected("The response matches none of the output schemas.")

    def check_tool_args(self, prepared: PreparedChoice, arguments: str) -> Candidate:
        """Validate output-tool arguments and unwrap ``{"value": ...}`` when wrapped."""
        value = _decode_json(arguments if arguments.strip() else "{}", strip_fences=False)
        if not isinstance(value, dict):
            raise OutputRejected("The output tool arguments must be a JSON object.")
        _validate(prepared.validator, value)
        if prepared.wrapped:
            value = value[_WRAP_KEY]
        return Candidate(value, prepared.choice)

    def recheck(self, choice: OutputChoice | None, value: Any) -> None:
        """Schema-check a value a validator transformed (structured modes only)."""
        mode = self.spec.mode
        if mode is OutputMode.text:
            return
        if mode is OutputMode.json_object:
            if not isinstance(value, dict):
                raise OutputRejected("The transformed output must be a JSON object.")
            return
        for prepared in self.choices:
            if choice is None or prepared.choice is choice:
                _validate(prepared.validator, value, unwrapped=prepared.wrapped)
                return


def _validate(validator: Validator, value: Any, *, unwrapped: bool = False) -> None:
    checked = {_WRAP_KEY: value} if unwrapped else value
    try:
        validator.validate(checked)
    except OutputSchemaValidationFailed as exc:
        raise OutputRejected(
            f"The output does not match the JSON Schema: {_first_line(exc)}", cause=exc
        ) from None
    except (TypeError, ValueError) as exc:
        raise OutputRejected(f"The output is not a JSON value: {exc}", cause=exc) from None


def _strip_fences(text: str) -> str:
    stripped = text.strip()
    if stripped.startswith("```") and stripped.endswith("```") and len(stripped) >= 6:
        inner = stripped[3:-3]
        newline = inner.find("\n")
        if newline >= 0 and inner[:newline].strip().isalnum():
            inner = inner[newline + 1:]
        return inner.strip()
    return stripped


def _decode_json(text: str, *, strip_fences: bool) -> Any:
    from zigai import json as bounded_json
    from zigai.errors import JsonError

    candidate = _strip_fences(text) if strip_fences else text
    try:
        return bounded_json.parse(candidate, bounded_json.defaults.provider_response)
    except JsonError as exc:
        raise OutputRejected(f"The response is not valid JSON: {exc}", cause=exc) from None


def prepare_output(spec: OutputSpec, profile: ModelProfile) -> PreparedOutput:
    """Check ``spec`` against ``profile`` and compile it; raise before any model request."""
    if not isinstance(spec, OutputSpec):
        raise InvalidOutputSpec(f"Agent.output must be an OutputSpec, got {type(spec).__name__}")
    mode = spec.mode
    if mode is OutputMode.text:
        return PreparedOutput(spec, TEXT_OUTPUT, (), None, (), None)
    if mode is OutputMode.json_object:
        if not profile.json_object_output:
            raise UnsupportedModelFeature("model does not support JSON-object output")
        return PreparedOutput(spec, OutputFormat("json_object"), (), None, (), None)
    if mode is OutputMode.tool:
        if not profile.supports_tools:
            raise UnsupportedModelFeature("tool output needs a model that supports tools")
        prepared: list[PreparedChoice] = []
        definitions: list[ToolDefinition] = []
        for choice in spec.choices:
            schema, wrapped = _wrap(dict(choice.schema), choice.name)
            prepared.append(PreparedChoice(choice, Validator(schema), wrapped))
            definitions.append(
                ToolDefinition(
                    name=choice.name,
                    description=choice.description or "",
                    parameters_json_schema=schema,
                    kind="output",
                    strict=choice.strict,
                )
            )
        return PreparedOutput(spec, TEXT_OUTPUT, tuple(definitions), None, tuple(prepared), None)
    # native and prompted share choice validators and the combined schema
    choices = tuple(PreparedChoice(c, Validator(c.schema)) for c in spec.choices)
    combined = _combine(spec.choices)
    union_validator = Validator(combined) if len(choices) > 1 else None
    if mode is OutputMode.native:
        if not profile.json_schema_output:
            raise UnsupportedModelFeature("model does not support native JSON-schema output")
        single = spec.choices[0] if len(spec.choices) == 1 else None
        fmt = OutputFormat(
            "json_schema",
            name=single.name if single else spec.union_name,
            schema=combined,
            description=single.description if single else None,
            strict=single.strict if single else None,
        )
        return PreparedOutput(spec, fmt, (), None, choices, union_validator)
    if not profile.supports_system_messages:
        raise UnsupportedModelFeature("prompted output needs a model that accepts instructions")
    template = spec.template if spec.template is not None else DEFAULT_PROMPT_TEMPLATE
    rendered = template.replace(SCHEMA_MARKER, _schema_text(combined))
    fmt = OutputFormat("json_object") if profile.json_object_output else TEXT_OUTPUT
    return PreparedOutput(spec, fmt, (), rendered, choices, union_validator)


def _schema_text(schema: Mapping[str, Any]) -> str:
    return json.dumps(schema, ensure_ascii=False, sort_keys=True, separators=(",", ":"))
