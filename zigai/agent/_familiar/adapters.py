"""PydanticAI-shaped callbacks as zigai callbacks: output validators and instruction functions.

* An output validator written ``(ctx, output)`` or ``(output)`` that returns the (possibly
  changed) output and raises ``ModelRetry`` to ask again becomes zigai's
  ``(choice_name, ctx, value) -> OutputResult``.  It is marked ``wants_decoded``: in a typed
  run it receives the decoded value (a ``Forecast``, not its JSON), and what it returns is
  encoded back and schema-checked (see :mod:`zigai.agent._accept`).  A three-parameter
  callable is already zigai-shaped and is used as is.
* An instruction function written ``(ctx)`` or ``()`` becomes a dynamic instruction.

Invariant: the shape is decided once, from the signature, when the agent is built.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable
from typing import Any

from zigai.agent.errors import InvalidAgentConfiguration
from zigai.output import OutputResult

__all__ = ["PortedValidator", "adapt_validator", "adapt_instruction"]


def _positional_count(fn: Callable[..., Any], what: str) -> int:
    try:
        params = inspect.signature(fn).parameters.values()
    except (TypeError, ValueError):  # pragma: no cover - builtins without a signature
        raise InvalidAgentConfiguration(f"{what} needs a readable signature") from None
    if inspect.iscoroutinefunction(fn):
        raise InvalidAgentConfiguration(
            f"{what} {getattr(fn, '__name__', fn)!r} is an async function; zigai calls it "
            "synchronously: write it as a plain `def`"
        )
    kinds = (inspect.Parameter.POSITIONAL_ONLY, inspect.Parameter.POSITIONAL_OR_KEYWORD)
    return sum(1 for p in params if p.kind in kinds and p.default is inspect.Parameter.empty)


class PortedValidator:
    """A ``(ctx, output)`` / ``(output)`` validator called as zigai's ``(name, ctx, value)``."""

    __slots__ = ("function", "takes_context", "__name__")
    wants_decoded = True

    def __init__(self, function: Callable[..., Any], takes_context: bool) -> None:
        self.function = function
        self.takes_context = takes_context
        self.__name__ = getattr(function, "__name__", "output_validator")

    def __call__(self, name: str, ctx: Any, value: Any) -> OutputResult:
        returned = self.function(ctx, value) if self.takes_context else self.function(value)
        return returned if isinstance(returned, OutputResult) else OutputResult.output(returned)

    def __repr__(self) -> str:
        return f"PortedValidator({self.__name__})"


def adapt_validator(fn: Callable[..., Any]) -> Callable[..., Any]:
    """zigai's validator shape for ``fn`` (see module docstring)."""
    if not callable(fn):
        raise InvalidAgentConfiguration("an output validator must be callable")
    count = _positional_count(fn, "output validator")
    if count == 3:
        return fn
    if count in (1, 2):
        return PortedValidator(fn, takes_context=count == 2)
    raise InvalidAgentConfiguration(
        f"output validator {getattr(fn, '__name__', fn)!r} takes {count} arguments; write "
        "(ctx, output) or (output) returning the output, or zigai's (name, ctx, value)"
    )


def adapt_instruction(fn: Callable[..., Any]) -> Callable[[Any], Any]:
    """A dynamic instruction for ``fn(ctx)`` or ``fn()``."""
    if not callable(fn):
        raise InvalidAgentConfiguration("an instruction function must be callable")
    count = _positional_count(fn, "instruction function")
    if count == 1:
        return fn
    if count == 0:
        def instruction(ctx: Any) -> Any:
            return fn()

        instruction.__name__ = getattr(fn, "__name__", "instruction")
        return instruction
    raise InvalidAgentConfiguration(
        f"instruction function {getattr(fn, '__name__', fn)!r} takes {count} arguments; "
        "write (ctx) or ()"
    )
