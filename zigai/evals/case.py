"""One evaluation case: a named input, an optional expected output and read-only metadata.

Invariants: a :class:`Case` is immutable; its ``metadata`` is a read-only copy of the
mapping given, keyed by ``str``; names are non-empty and at most
:data:`MAX_CASE_NAME_BYTES` UTF-8 bytes.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any

from zigai.agent import RunOptions
from zigai.evals.errors import InvalidDataset

__all__ = ["Case", "MAX_CASE_NAME_BYTES", "check_name"]

MAX_CASE_NAME_BYTES = 256

_NO_EXPECTED: Any = None


def check_name(owner: str, name: object) -> str:
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
    ``expected_output`` is ``None`` when the case has no expected value.  ``options`` are
    per-case :class:`zigai.agent.RunOptions` (deps, model settings, limits ...) for an
    ``Agent`` task; they stay in code: dataset documents refuse them.
    """

    name: str
    inputs: Any
    expected_output: Any = _NO_EXPECTED
    metadata: Mapping[str, Any] = field(default_factory=lambda: MappingProxyType({}))
    options: RunOptions | None = None

    def __post_init__(self) -> None:
        check_name("case", self.name)
        if not isinstance(self.metadata, Mapping):
            raise InvalidDataset(
                f"case {self.name!r} metadata must be a mapping, got {type(self.metadata).__name__}"
            )
        for key in self.metadata:
            if not isinstance(key, str):
                raise InvalidDataset(f"case {self.name!r} metadata keys must be str, got {key!r}")
        object.__setattr__(self, "metadata", MappingProxyType(dict(self.metadata)))
        if self.options is not None and not isinstance(self.options, RunOptions):
            raise InvalidDataset(
                f"case {self.name!r} options must be a zigai.agent.RunOptions, got {type(self.options).__name__}"
            )

    def __reduce__(self) -> tuple[Any, ...]:
        return (Case, (self.name, self.inputs, self.expected_output, dict(self.metadata), self.options))
