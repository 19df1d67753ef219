"""Case evaluators: the read-only view they see, their result shape, and the built-ins.

An evaluator has a ``name`` and ``evaluate(context) -> bool | int | float | Grade``:
a ``bool`` is a pass/fail assertion, a number is a score, a :class:`Grade` carries both
plus a reason.  :class:`Check` turns any such callback into an evaluator; the built-ins
(:class:`ExactMatch`, :class:`Contains`, :class:`IsJson`, :class:`MatchesSchema`) are
deterministic.

Invariants:

* an evaluator sees an :class:`EvalContext`: an immutable view of the case, the task's
  output and its usage; case metadata is a read-only mapping;
* an evaluator exception, or a result of the wrong type, is recorded in that evaluator's
  :class:`EvaluationResult` (``error_type`` / ``error_message``) and fails the case; it
  never aborts the run or hides the other evaluators' results;
* built-ins never raise for an output of an unexpected type: they fail with a reason.
"""

from __future__ import annotations

import json as _stdlib_json
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from zigai.evals.errors import InvalidEvaluator, InvalidEvaluatorResult
from zigai.json import Limits, is_valid
from zigai.json_schema import Validator
from zigai.usage import RunUsage

__all__ = [
    "EvalContext",
    "Grade",
    "EvaluationResult",
    "Evaluator",
    "Check",
    "ExactMatch",
    "Contains",
    "IsJson",
    "MatchesSchema",
    "DEFAULT_JSON_LIMITS",
]

DEFAULT_JSON_LIMITS = Limits(
    max_document_bytes=8 * 1024 * 1024, max_value_bytes=1024 * 1024, max_depth=64, max_items=100_000
)


@dataclass(frozen=True, slots=True)
class EvalContext:
    """What an evaluator may read about one case run (never mutate ``inputs`` or ``output``)."""

    case_name: str
    case_index: int
    inputs: Any
    expected_output: Any
    metadata: Mapping[str, Any]
    output: Any
    usage: RunUsage
    repetition: int = 0


@dataclass(frozen=True, slots=True)
class Grade:
    """An evaluator's full verdict: an assertion, a score, or both, with an optional reason."""

    passed: bool | None = None
    score: float | None = None
    reason: str | None = None

    def __post_init__(self) -> None:
        if self.passed is None and self.score is None:
            raise InvalidEvaluatorResult("a Grade needs passed=, score= or both")
        if self.passed is not None and not isinstance(self.passed, bool):
            raise InvalidEvaluatorResult(f"Grade.passed must be a bool, got {type(self.passed).__name__}")
        if self.score is not None:
            if isinstance(self.score, bool) or not isinstance(self.score, int | float):
                raise InvalidEvaluatorResult(
                    f"Grade.score must be an int or float, got {type(self.score).__name__}"
                )
            object.__setattr__(self, "score", float(self.score))
        if self.reason is not None and not isinstance(self.reason, str):
            raise InvalidEvaluatorResult(f"Grade.reason must be a str, got {type(self.reason).__name__}")


@dataclass(frozen=True, slots=True)
class EvaluationResult:
    """One evaluator's outcome for one case run.

    ``passed`` is the assertion (``None`` for a score-only evaluator); a recorded error
    (``error_type`` set) counts as failed.  ``attempts`` counts the calls made (retries
    included).
    """

    name: str
    passed: bool | None = None
    score: float | None = None
    reason: str | None = None
    error_type: str | None = None
    error_message: str | None = None
    attempts: int = 1

    @property
    def failed(self) -> bool:
        return self.error_type is not None or self.passed is False


class Evaluator:
    """Base of every case evaluator: a unique ``name`` and :meth:`evaluate`."""

    __slots__ = ("name",)

    def __init__(self, name: str) -> None:
        if not isinstance(name, str) or not name:
            raise InvalidEvaluator(f"an evaluator name must be a non-empty str, got {name!r}")
        self.name = name

    def evaluate(self, context: EvalContext) -> bool | int | float | Grade:
        raise NotImplementedError  # pragma: no cover - abstract

    def __repr__(self) -> str:
        return f"{type(self).__name__}(name={self.name!r})"


class Check(Evaluator):
    """A custom evaluator from a callback ``function(context) -> bool | number | Grade``."""

    __slots__ = ("_function",)

    def __init__(self, name: str, function: Callable[[EvalContext], bool | int | float | Grade]) -> None:
        super().__init__(name)
        if not callable(function):
            raise InvalidEvaluator(f"Check {name!r} needs a callable, got {type(function).__name__}")
        self._function = function

    def evaluate(self, context: EvalContext) -> bool | int | float | Grade:
        return self._function(context)


class _Unset:
    """"No value given": compares against the case's expected output.  Pickles as itself, so a
    copy of an evaluator (on a Dask worker) still recognizes it."""

    __slots__ = ()

    def __reduce__(self) -> str:
        return "_UNSET"


_UNSET: Any = _Unset()


class ExactMatch(Evaluator):
    """Passes when the output equals ``value`` (default: the case's expected output)."""

    __slots__ = ("_value",)

    def __init__(self, value: Any = _UNSET, *, name: str = "exact_match") -> None:
        super().__init__(name)
        self._value = value

    def evaluate(self, context: EvalContext) -> Grade:
        wanted = context.expected_output if self._value is _UNSET else self._value
        if context.output == wanted:
            return Grade(passed=True)
        return Grade(passed=False, reason=f"expected {_short(wanted)}, got {_short(context.output)}")


class Contains(Evaluator):
    """Passes when ``value`` (default: the expected output) is in the output.

    Strings test substrings (``case_sensitive=False`` folds case); lists and tuples test
    membership; dicts test that every key/value of a dict ``value`` is present.
    """

    __slots__ = ("_value", "_case_sensitive")

    def __init__(self, value: Any = _UNSET, *, case_sensitive: bool = True, name: str = "contains") -> None:
        super().__init__(name)
        if not isinstance(case_sensitive, bool):
            raise InvalidEvaluator("Contains case_sensitive must be a bool")
        self._value = value
        self._case_sensitive = case_sensitive

    def evaluate(self, context: EvalContext) -> Grade:
        wanted = context.expected_output if self._value is _UNSET else self._value
        output = context.output
        if isinstance(output, str):
            if not isinstance(wanted, str):
                return Grade(passed=False, reason=f"cannot look for {type(wanted).__name__} in a str output")
            found = wanted in output if self._case_sensitive else wanted.casefold() in output.casefold()
        elif isinstance(output, dict) and isinstance(wanted, dict):
            found = all(key in output and output[key] == item for key, item in wanted.items())
        elif isinstance(output, list | tuple | set | frozenset | dict):
            found = wanted in output
        else:
            return Grade(passed=False, reason=f"output of type {type(output).__name__} cannot contain values")
        if found:
            return Grade(passed=True)
        return Grade(passed=False, reason=f"{_short(wanted)} not found in {_short(output)}")


class IsJson(Evaluator):
    """Passes when the output is a ``str`` holding one valid JSON document within ``limits``."""

    __slots__ = ("_limits",)

    def __init__(self, *, limits: Limits = DEFAULT_JSON_LIMITS, name: str = "is_json") -> None:
        super().__init__(name)
        if not isinstance(limits, Limits):
            raise InvalidEvaluator("IsJson limits must be a zigai.json.Limits")
        self._limits = limits

    def evaluate(self, context: EvalContext) -> Grade:
        if not isinstance(context.output, str):
            return Grade(passed=False, reason=f"output is a {type(context.output).__name__}, not a str")
        if is_valid(context.output, self._limits):
            return Grade(passed=True)
        return Grade(passed=False, reason="output is not valid JSON within the limits")


class MatchesSchema(Evaluator):
    """Passes when the output satisfies ``schema`` (the local JSON Schema dialect).

    A ``str`` output is parsed as JSON first (within ``limits``); any other output is checked
    as the value it is.  The schema is compiled once, here, so an unusable schema raises
    :class:`~zigai.json_schema.InvalidJsonSchema` / ``UnsupportedJsonSchema`` at construction.
    """

    __slots__ = ("_validator", "_limits")

    def __init__(self, schema: Any, *, limits: Limits = DEFAULT_JSON_LIMITS, name: str = "matches_schema") -> None:
        super().__init__(name)
        if not isinstance(limits, Limits):
            raise InvalidEvaluator("MatchesSchema limits must be a zigai.json.Limits")
        self._validator = Validator(schema)
        self._limits = limits

    def evaluate(self, context: EvalContext) -> Grade:
        value = context.output
        if isinstance(value, str):
            if not is_valid(value, self._limits):
                return Grade(passed=False, reason="output is not valid JSON within the limits")
            value = _stdlib_json.loads(value)
        failures = self._validator.errors(value)
        if not failures:
            return Grade(passed=True)
        path, message = failures[0]
        return Grade(passed=False, reason=f"{path}: {message}")


def _short(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 80 else text[:77] + "..."


def verdict_of(evaluator_name: str, verdict: Any) -> Grade:
    """Normalize an evaluator's return value into a :class:`Grade` (or raise why not)."""
    if isinstance(verdict, Grade):
        return verdict
    if isinstance(verdict, bool):
        return Grade(passed=verdict)
    if isinstance(verdict, int | float):
        return Grade(score=verdict)
    raise InvalidEvaluatorResult(
        f"evaluator {evaluator_name!r} returned {type(verdict).__name__}; "
        "return a bool, an int/float score or a Grade"
    )
