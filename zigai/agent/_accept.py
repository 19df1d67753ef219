"""Accepting one output candidate: output function, ordered validators, typed decoding.

The agent loop calls :func:`accept_candidate` with a schema-valid candidate.
It runs the choice's output function (an explicit ``OutputResult.retry`` — or a raised
``ModelRetry``, as in a tool — is a model-safe rejection; anything else raised propagates
unchanged), then every output
validator in order (each receives the previous one's value; a transformed
structured value is schema-checked again when no output function produced it),
then the typed decoder of ``run_typed``.  A validator marked ``wants_decoded`` (the
PydanticAI-shaped ones ``@agent.output_validator`` adapts) sees the decoded typed value instead
of JSON; what it returns is encoded back and schema-checked.  Rejections raise ``OutputRejected``.

Invariant: every callback runs under the run control — raced against the deadline and the
cancellation token (:func:`zigai.tool.race.call_bounded`), which are also checked after the
last.  With lifecycle hooks,
each validator is bracketed by ``output_validator_start`` and ``output_validator_end``
(``accepted`` or ``retry``), or ``output_validator_error`` when it raises or returns
something that is not an ``OutputResult``.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

from zigai.control import RunControl
from zigai.hooks import OutputValidatorEnd, OutputValidatorError, OutputValidatorStart
from zigai.output import (
    Candidate,
    InvalidOutputSpec,
    OutputChoice,
    OutputRejected,
    OutputResult,
    OutputRunContext,
    OutputValidator,
    PreparedOutput,
)
from zigai.tool import ModelRetry
from zigai.tool.race import call_bounded

if TYPE_CHECKING:
    from zigai.agent._core import RunCore

__all__ = ["accept_candidate", "choice_label"]

_VALIDATOR = "an output validator"


def choice_label(prepared: PreparedOutput, candidate: Candidate) -> str:
    """The name validators receive: the choice name, or the mode for text / JSON-object output."""
    if candidate.choice is not None:
        return candidate.choice.name
    return prepared.mode.value


def accept_candidate(
    prepared: PreparedOutput,
    candidate: Candidate,
    ctx: OutputRunContext,
    validators: Sequence[OutputValidator],
    control: RunControl,
    decoder: Callable[..., Any] | None,
    run: RunCore | None = None,
) -> tuple[Any, Any]:
    """Return ``(output, json_value)`` for an accepted candidate or raise OutputRejected."""
    value = candidate.value
    choice = candidate.choice
    function = choice.function if choice is not None else None
    if function is not None:
        try:
            returned = call_bounded(function, ctx, value, control=control, what="the output function")
        except ModelRetry as exc:
            raise OutputRejected(str(exc) or "Output rejected; please try again.") from None
        if isinstance(returned, OutputResult):
            if returned.kind == "retry":
                raise OutputRejected(returned.message or "Output rejected; please try again.")
            value = returned.value
        else:
            value = returned
    label = choice_label(prepared, candidate)
    hooked = run is not None and bool(run.hooks)
    for index, validator in enumerate(validators):
        control.check()
        typed = decoder is not None and getattr(validator, "wants_decoded", False)
        shown = _decoded(decoder, value, choice) if typed else value
        if hooked:
            assert run is not None
            verdict = _hooked_validator(run, validator, label, index, ctx, shown)
        else:
            verdict = call_bounded(_call, validator, label, ctx, shown, control=control, what=_VALIDATOR)
            if not isinstance(verdict, OutputResult):
                raise _not_a_result(validator, verdict)
        if verdict.kind == "retry":
            raise OutputRejected(verdict.message or "Output rejected; please try again.")
        new = verdict.value
        if typed:  # a validator written against the typed output: its value goes back to JSON
            new = value if new is shown else _encoded(new)
        if function is None and new is not value:
            prepared.recheck(choice, new)
        value = new
    control.check()
    if decoder is None:
        return value, value
    return _decoded(decoder, value, choice), value


def _decoded(decoder: Callable[..., Any] | None, value: Any, choice: OutputChoice | None) -> Any:
    """The typed value; ``decoder(value, choice_name)`` picks a union member by its output tool."""
    from zigai.reflect import DecodeError

    assert decoder is not None
    try:
        return decoder(value, choice.name if choice is not None else None)
    except DecodeError as exc:
        raise OutputRejected(f"The output could not be decoded: {exc}", cause=exc) from None


def _encoded(value: Any) -> Any:
    from zigai.reflect import encode

    return encode(value)  # an EncodeError is the application's bug: it propagates


def _call(validator: OutputValidator, label: str, ctx: OutputRunContext, value: Any) -> Any:
    """The validator's verdict; a raised ``ModelRetry`` is a retry with its message."""
    try:
        return validator(label, ctx, value)
    except ModelRetry as exc:
        return OutputResult.retry(str(exc) or "Output rejected; please try again.")


def _not_a_result(validator: Any, verdict: Any) -> InvalidOutputSpec:
    return InvalidOutputSpec(
        f"output validator {validator!r} returned {type(verdict).__name__}; "
        "it must return OutputResult.output(...) or OutputResult.retry(...)"
    )


def _hooked_validator(
    run: RunCore, validator: OutputValidator, label: str, index: int, ctx: OutputRunContext,
    value: Any,
) -> OutputResult:
    info = run.info
    run.fire(OutputValidatorStart(info, label, index, value))
    try:
        verdict = call_bounded(_call, validator, label, ctx, value, control=run.control, what=_VALIDATOR)
        if not isinstance(verdict, OutputResult):
            raise _not_a_result(validator, verdict)
    except BaseException as exc:
        run.fire_failure(OutputValidatorError(info, label, index, exc), exc)
        raise
    if verdict.kind == "retry":
        run.fire(OutputValidatorEnd(info, label, index, "retry", value))
    else:
        run.fire(OutputValidatorEnd(info, label, index, "accepted", verdict.value))
    return verdict
