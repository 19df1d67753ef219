"""Cases and datasets: the immutable, validated description of what an evaluation runs.

Invariants:

* a :class:`Case` is immutable; its ``metadata`` is a read-only copy of the mapping given;
* case names are non-empty, at most :data:`MAX_CASE_NAME_BYTES` UTF-8 bytes, and unique
  within a dataset; evaluator names are unique within a dataset (reports and later
  comparisons join results by these names);
* a dataset holds 1 to :data:`MAX_CASES` cases; case order is the source order of every
  report the dataset produces.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import TYPE_CHECKING, Any

from zigai.evals.errors import InvalidDataset
from zigai.evals.evaluators import Evaluator

if TYPE_CHECKING:
    from zigai.evals.report import Report
    from zigai.evals.run import Progress

__all__ = ["Case", "Dataset", "MAX_CASES", "MAX_CASE_NAME_BYTES"]

MAX_CASES = 10_000
MAX_CASE_NAME_BYTES = 256

_NO_EXPECTED: Any = None


def _check_name(owner: str, name: object) -> str:
    if not isinstance(name, str) or not name:
        raise InvalidDataset(f"{owner} name must be a non-empty str, got {name!r}")
    size = len(name.encode("utf-8"))
    if size > MAX_CASE_NAME_BYTES:
        raise InvalidDataset(
            f"{owner} name {name[:40]!r}... is {size} UTF-8 bytes; the limit is "
            f"{MAX_CASE_NAME_BYTES} -- shorten it"
        )
    return name


@dataclass(frozen=True, slots=True)
class Case:
    """One named input with an optional expected output and metadata.

    ``inputs`` is what the task receives (an ``Agent`` gets it as its prompt).
    ``expected_output`` is ``None`` when the case has no expected value.
    """

    name: str
    inputs: Any
    expected_output: Any = _NO_EXPECTED
    metadata: Mapping[str, Any] = field(default_factory=lambda: MappingProxyType({}))

    def __post_init__(self) -> None:
        _check_name("case", self.name)
        if not isinstance(self.metadata, Mapping):
            raise InvalidDataset(
                f"case {self.name!r} metadata must be a mapping, got {type(self.metadata).__name__}"
            )
        for key in self.metadata:
            if not isinstance(key, str):
                raise InvalidDataset(f"case {self.name!r} metadata keys must be str, got {key!r}")
        object.__setattr__(self, "metadata", MappingProxyType(dict(self.metadata)))

    def __reduce__(self) -> tuple[Any, ...]:
        return (Case, (self.name, self.inputs, self.expected_output, dict(self.metadata)))


class Dataset:
    """An ordered, immutable set of named cases plus the evaluators applied to every case."""

    __slots__ = ("_name", "_cases", "_evaluators")

    def __init__(
        self,
        cases: Iterable[Case],
        evaluators: Iterable[Evaluator] = (),
        *,
        name: str = "dataset",
    ) -> None:
        self._name = _check_name("dataset", name)
        owned = tuple(cases)
        if not owned:
            raise InvalidDataset("a dataset needs at least one case")
        if len(owned) > MAX_CASES:
            raise InvalidDataset(
                f"a dataset holds at most {MAX_CASES} cases, got {len(owned)}; split it"
            )
        seen: set[str] = set()
        for case in owned:
            if not isinstance(case, Case):
                raise InvalidDataset(f"dataset cases must be Case values, got {type(case).__name__}")
            if case.name in seen:
                raise InvalidDataset(f"case name {case.name!r} appears twice; case names must be unique")
            seen.add(case.name)
        checks = tuple(evaluators)
        names: set[str] = set()
        for evaluator in checks:
            if not isinstance(evaluator, Evaluator):
                raise InvalidDataset(
                    f"dataset evaluators must be Evaluator values, got {type(evaluator).__name__}"
                )
            if evaluator.name in names:
                raise InvalidDataset(
                    f"evaluator name {evaluator.name!r} appears twice; pass name= to tell them apart"
                )
            names.add(evaluator.name)
        self._cases = owned
        self._evaluators = checks

    @property
    def name(self) -> str:
        return self._name

    @property
    def cases(self) -> tuple[Case, ...]:
        return self._cases

    @property
    def evaluators(self) -> tuple[Evaluator, ...]:
        return self._evaluators

    def __len__(self) -> int:
        return len(self._cases)

    def evaluate(
        self,
        task: Any,
        *,
        max_concurrency: int = 1,
        progress: Callable[[Progress], None] | None = None,
    ) -> Report:
        """Run ``task`` over every case, apply every evaluator, and return the owned report.

        ``task`` is an :class:`~zigai.agent.Agent` (run with the case inputs as prompt) or
        any callable ``task(inputs) -> output``.  See :func:`zigai.evals.run.evaluate`.
        """
        from zigai.evals.run import evaluate

        return evaluate(self, task, max_concurrency=max_concurrency, progress=progress)

    def __repr__(self) -> str:
        return f"Dataset(name={self._name!r}, cases={len(self._cases)}, evaluators={len(self._evaluators)})"
