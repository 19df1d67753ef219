"""``check_shape``: the recursion-free first half of :func:`zigai.json.bounded_copy`.

Values built by programs (a provider extra body, a tool schema, scripted output) are as
untrusted as text when they come from configuration, and Python's own walkers turn deep
nesting into a bare ``RecursionError``.  ``bounded_copy`` first walks the value without
recursion — refusing non-string keys, nesting past ``max_depth`` and a walk longer than
``max_document_bytes`` values (each value encodes to at least one byte, so a shared
sub-value repeated until its encoding explodes is refused quickly, and so is a cycle) —
then encodes it and parses the text under the same limits, so every bound is exact: at the
limit is accepted, one more fails with the named error.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from zigai.json._errors import DocumentTooLarge, MalformedJson, NestingTooDeep
from zigai.json._limits import Limits

__all__ = ["check_shape"]


def check_shape(value: Any, limits: Limits) -> None:
    """Refuse non-string keys, nesting past ``limits.max_depth`` and oversized walks, iteratively."""
    stack: list[tuple[Any, int]] = [(value, 1)]
    visited = 0
    budget = limits.max_document_bytes
    while stack:
        item, depth = stack.pop()
        visited += 1
        if visited > budget:
            raise DocumentTooLarge(f"the value encodes to more than {budget} bytes", limit=budget)
        if isinstance(item, Mapping):
            children: Iterable[Any] = item.values()
            if not all(isinstance(key, str) for key in item):
                raise MalformedJson("object keys must be strings")
        elif isinstance(item, (list, tuple)):
            children = item
        else:
            continue
        if depth > limits.max_depth:
            raise NestingTooDeep(f"containers nest deeper than {limits.max_depth}", limit=limits.max_depth)
        stack.extend((child, depth + 1) for child in children)
