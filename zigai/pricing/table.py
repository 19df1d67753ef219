"""Immutable, versioned price tables: :class:`PriceTable`.

A table maps ``(provider, model_id)`` to a :class:`~zigai.pricing.cost.ModelPrice`
and carries an explicit ``version`` string naming its snapshot, so a recorded
cost can always say which prices produced it.

Model lookup (:meth:`PriceTable.lookup`) is data-driven and case-sensitive;
nothing is guessed from the model name:

1. an exact ``(provider, model)`` key of ``entries``;
2. an exact ``(provider, alias)`` key of ``aliases``, naming a model id;
3. the **longest** ``(provider, prefix)`` of ``prefixes`` that ``model`` starts
   with, naming a model id.

Anything else is unknown and :meth:`PriceTable.estimate` returns ``None``, as it
does for usage in a bucket the model has no rate for.

Invariants: every alias and prefix names an entry of the same provider; an alias
never shadows an entry; provider, model, alias and prefix strings are non-empty;
the version is a non-empty string.  The mappings are copied on construction and
exposed read-only, so a table never changes after it is built.  Tables compare
and hash by value and pickle.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any

from zigai.errors import MessageError
from zigai.pricing.cost import ModelPrice, UsageCost
from zigai.usage import RequestUsage, RunUsage

__all__ = ["InvalidPriceTable", "PriceTable"]

ModelKey = tuple[str, str]


class InvalidPriceTable(MessageError):
    """A price table had a bad version, key, price, alias or prefix rule."""


def _check_key(what: str, key: object) -> ModelKey:
    if (
        not isinstance(key, tuple)
        or len(key) != 2
        or not all(isinstance(part, str) and part for part in key)
    ):
        raise InvalidPriceTable(f"{what} keys must be (provider, name) pairs of non-empty str, got {key!r}")
    return key


def _freeze_targets(
    what: str, rules: Mapping[ModelKey, str], entries: Mapping[ModelKey, ModelPrice]
) -> dict[ModelKey, str]:
    frozen: dict[ModelKey, str] = {}
    for key, target in sorted(rules.items()):
        provider, _ = _check_key(what, key)
        if not isinstance(target, str) or (provider, target) not in entries:
            raise InvalidPriceTable(f"{what} {key!r} names no entry of provider {provider!r}: {target!r}")
        frozen[key] = target
    return frozen


@dataclass(frozen=True, slots=True, eq=False, repr=False)
class PriceTable:
    """An immutable snapshot of model prices identified by ``version``."""

    version: str
    entries: Mapping[ModelKey, ModelPrice]
    aliases: Mapping[ModelKey, str] = field(default_factory=dict)
    prefixes: Mapping[ModelKey, str] = field(default_factory=dict)
    # provider -> prefixes sorted longest first (derived, not part of the value)
    _prefix_index: Mapping[str, tuple[tuple[str, str], ...]] = field(
        init=False, default_factory=dict, compare=False
    )

    def __post_init__(self) -> None:
        if not isinstance(self.version, str) or not self.version:
            raise InvalidPriceTable(f"PriceTable.version must be a non-empty str, got {self.version!r}")
        if not isinstance(self.entries, Mapping):
            raise InvalidPriceTable("PriceTable.entries must be a mapping")
        entries: dict[ModelKey, ModelPrice] = {}
        for key, price in sorted(self.entries.items()):
            _check_key("entry", key)
            if not isinstance(price, ModelPrice):
                raise InvalidPriceTable(f"entry {key!r} must be a ModelPrice, got {type(price).__name__}")
            entries[key] = price
        aliases = _freeze_targets("alias", self.aliases, entries)
        shadowing = sorted(set(aliases) & set(entries))
        if shadowing:
            raise InvalidPriceTable(f"aliases shadow entries: {shadowing!r}")
        prefixes = _freeze_targets("prefix", self.prefixes, entries)
        index: dict[str, list[tuple[str, str]]] = {}
        for (provider, prefix), target in prefixes.items():
            index.setdefault(provider, []).append((prefix, target))
        frozen_index = {
            provider: tuple(sorted(rules, key=lambda rule: (-len(rule[0]), rule[0])))
            for provider, rules in index.items()
        }
        object.__setattr__(self, "entries", MappingProxyType(entries))
        object.__setattr__(self, "aliases", MappingProxyType(aliases))
        object.__setattr__(self, "prefixes", MappingProxyType(prefixes))
        object.__setattr__(self, "_prefix_index", MappingProxyType(frozen_index))

    def resolve(self, provider: str, model: str) -> str | None:
        """The model id of ``entries`` that ``model`` names (exact, alias, longest prefix)."""
        key = (provider, model)
        if key in self.entries:
            return model
        target = self.aliases.get(key)
        if target is not None:
            return target
        for prefix, target in self._prefix_index.get(provider, ()):
            if model.startswith(prefix):
                return target
        return None

    def lookup(self, provider: str, model: str) -> ModelPrice | None:
        """The price of ``model`` at ``provider``, or ``None`` when the table does not know it."""
        model_id = self.resolve(provider, model)
        return None if model_id is None else self.entries[(provider, model_id)]

    def estimate(
        self, provider: str, model: str, usage: RequestUsage | RunUsage
    ) -> UsageCost | None:
        """Exact cost of ``usage``; ``None`` for an unknown model or a used bucket without a rate."""
        price = self.lookup(provider, model)
        return None if price is None else price.estimate(usage)

    def _value(self) -> tuple[Any, ...]:
        return (
            self.version,
            tuple(self.entries.items()),
            tuple(self.aliases.items()),
            tuple(self.prefixes.items()),
        )

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, PriceTable):
            return NotImplemented
        return self._value() == other._value()

    def __hash__(self) -> int:
        return hash(self._value())

    def __repr__(self) -> str:
        return (
            f"PriceTable(version={self.version!r}, entries={len(self.entries)}, "
            f"aliases={len(self.aliases)}, prefixes={len(self.prefixes)})"
        )

    def __reduce__(self) -> tuple[Any, ...]:
        return (
            PriceTable,
            (self.version, dict(self.entries), dict(self.aliases), dict(self.prefixes)),
        )
