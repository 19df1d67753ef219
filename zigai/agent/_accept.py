"""Accepting one output candidate: output function, ordered validators, typed decoding.

The agent loop calls :func:`accept_candidate` with a schema-valid candidate.
It runs the choice's output function (an explicit ``OutputResult.retry`` is a
model-safe rejection; anything raised propagates unchanged), then every output
validator in order (each receives the previous one's value; a transformed
structured value is schema-checked again when no output function produced it),
then the typed decoder of ``run_typed``.  Rejections raise ``OutputRejected``.

Invariant: every callback runs under the run control — the deadline and the
cancellation token are checked before each one and after the last.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from zigai.control import RunControl
from zigai.output import (
    Candidate,
    InvalidOutputSpec,
    OutputRejected,
    OutputResult,
    OutputRunContext,
    OutputValidator,
    PreparedOutput,
)

__all__ = ["accept_candidate", "choice_label"]


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
    decoder: Callable[[Any], Any] | None,
) -> tuple[Any, Any]:
    """Return ``(output, json_value)`` for an accepted candidate or raise OutputRejected."""
    value = candidate.value
    choice = candidate.choice
    function = choice.function if choice is not None else None
    if function is not None:
        control.check()
        returned = function(ctx, value)
        if isinstance(returned, OutputResult):
            if returned.kind == "retry":
                raise OutputRejected(returned.message or "Output rejected; please try again.")
            value = returned.value
        else:
            value = returned
    label = choice_label(prepared, candidate)
    for validator in validators:
        control.check()
        verdict = validator(label, ctx, value)
        if not isinstance(verdict, OutputResult):
            raise InvalidOutputSpec(
                f"output validator {validator!r} returned {type(verdict).__name__}; "
                "it must return OutputResult.output(...) or OutputResult.retry(...)"
            )
        if verdict.kind == "retry":
            raise OutputRejected(verdict.message or "Output rejected; please try again.")
        if function is None and verdict.value is not value:
            prepared.recheck(choice, verdict.value)
        value = verdict.value
    control.check()
    if decoder is None:
        return value, value
    from zigai.reflect import DecodeError

    try:
        return decoder(value), value
    except DecodeError as exc:
        raise OutputRejected(f"The output could not be decoded: {exc}", cause=exc) from None
