"""``agent.instructions`` and ``agent.system_prompt``: tuples of strings that are also decorators.

Both names are :class:`~zigai.agent.config.AgentConfig` fields holding the configured strings,
while code written for PydanticAI registers functions under the same names
(``@agent.instructions``, ``@agent.system_prompt``, ``@agent.system_prompt(dynamic=True)``).
:class:`~zigai.agent.Agent` puts a :class:`InstructionField` descriptor over each of the two
slots.  Reading gives a view: a ``tuple`` subclass holding the very strings stored (it compares,
hashes, iterates, prints and pickles exactly as the plain tuple does) that is also callable.
Calling it registers the function as a dynamic instruction of the agent it was read from, by
that agent's registering rule: allowed only before its first run, then ``AgentFrozen``.
Writing stores into the slot (a view handed back, as ``copy.copy`` does, is unwrapped first),
so construction, ``dataclasses.replace``, copying and unpickling store plain tuples as before.

A view is a subclass, so code that insists on exactly ``tuple`` (``type(x) is tuple``,
``yaml.safe_dump``) takes ``tuple(agent.instructions)``; rebuilding one with
``type(view)(items)`` gives a plain tuple.

Invariants: the stored value is always a plain ``tuple[str, ...]``; a view is built on each
read and holds only the strings and one bound registering method of its agent; nothing here
changes an agent except through that method.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any, Generic, Self, TypeVar, overload

__all__ = ["InstructionField", "InstructionsView", "SystemPromptView"]

F = TypeVar("F", bound=Callable[..., Any])
V = TypeVar("V", bound="_View")

# register(field_name, function) -> None; the agent's own method, which applies the rule
Register = Callable[[str, Callable[..., Any]], None]


class _View(tuple[str, ...]):
    """The stored strings plus the agent's registering method (never pickled or copied)."""

    _field = ""
    _register: Register

    def __new__(cls, items: tuple[str, ...], register: Register | None = None) -> Self:
        if register is None:  # type(view)(items), as generic tuple-rebuilding code does
            return tuple(items)  # type: ignore[return-value]
        view = super().__new__(cls, items)
        view._register = register
        return view

    def __reduce__(self) -> tuple[Any, ...]:
        return (tuple, (tuple(self),))

    def _decorate(self, function: Callable[..., Any] | None) -> Any:
        def add(target: F) -> F:
            self._register(self._field, target)
            return target

        return add if function is None else add(function)


class InstructionsView(_View):
    """``agent.instructions``: the static instruction strings; ``@agent.instructions`` (bare or
    called) registers a ``(ctx)`` / ``()`` function returning a string as a dynamic instruction."""

    _field = "instructions"

    @overload
    def __call__(self, function: F, /) -> F: ...

    @overload
    def __call__(self, /) -> Callable[[F], F]: ...

    def __call__(self, function: Callable[..., Any] | None = None, /) -> Any:
        return self._decorate(function)


class SystemPromptView(_View):
    """``agent.system_prompt``: the static system prompt strings; ``@agent.system_prompt``
    registers a dynamic instruction the same way.  ``dynamic=True`` is accepted for ported
    code and changes nothing: every dynamic instruction is evaluated again on every run."""

    _field = "system_prompt"

    @overload
    def __call__(self, function: F, /) -> F: ...

    @overload
    def __call__(self, /, *, dynamic: bool = False) -> Callable[[F], F]: ...

    def __call__(self, function: Callable[..., Any] | None = None, /, *, dynamic: bool = False) -> Any:
        return self._decorate(function)


class InstructionField(Generic[V]):
    """A data descriptor over a slot of strings: reads give a ``view`` bound to the instance's
    ``_register_instruction``; writes (only ``object.__setattr__`` gets here on a frozen
    agent) go to the slot unchanged."""

    def __init__(self, slot: Any, view: type[V]) -> None:
        self._slot = slot
        self._view = view

    if not TYPE_CHECKING:  # hidden so type checkers keep refusing `agent.instructions = ...`

        def __set__(self, instance: object, value: Any) -> None:
            if isinstance(value, _View):  # copy.copy and __setstate__ hand a read view back
                value = tuple(value)
            self._slot.__set__(instance, value)

    @overload
    def __get__(self, instance: None, owner: type | None = None) -> Self: ...

    @overload
    def __get__(self, instance: object, owner: type | None = None) -> V: ...

    def __get__(self, instance: object | None, owner: type | None = None) -> Any:
        if instance is None:
            return self
        stored = self._slot.__get__(instance, owner)
        if not isinstance(stored, tuple):  # only while __post_init__ normalizes the argument
            return stored
        return self._view(stored, instance._register_instruction)  # type: ignore[attr-defined]
