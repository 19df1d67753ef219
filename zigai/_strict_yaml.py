"""Strict, data-only YAML: the one YAML reader of zigai's own document formats.

Agent specs (:mod:`zigai.agent_spec`) and evaluation documents (:mod:`zigai.evals.io`) are
plain data that operators review; this module turns their YAML text into the same plain
``dict`` / ``list`` / ``str`` / ``int`` / ``float`` / ``bool`` / ``None`` values
:func:`zigai.json.parse` returns, so one set of limits and field checks applies to both syntaxes.

Invariants:

* refused, each at its exact path (``$.cases[2].name``): aliases and anchors, any tag but
  the plain map / seq / str / int / float / bool / null ones (so no ``!!python``, no
  timestamps, no binary, no merge keys), non-string keys, duplicate keys, non-finite numbers,
  an empty document, more than one document;
* numbers are bounded by their text *before* a value is built: a plain scalar that YAML would
  read as an int or float is refused when longer than :data:`MAX_NUMBER_CHARS` characters or
  written in YAML 1.1's base-60 form (``1:30``), whose construction costs quadratic time in
  its length; quote such a value to keep it as a string.  :func:`bounded_loader` gives the
  same bound to zigai's looser YAML readers (the demo cassette, skill front matter);
* the caller's ``fail(path, what)`` builds every error, so each format keeps its own named
  error class; a parse error or runaway nesting is reported at ``$``;
* ``pyyaml`` is imported only when a YAML document is read (``import zigai`` stays free
  of third-party imports).
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable
from typing import Any

__all__ = ["MAX_NUMBER_CHARS", "bounded_loader", "child_path", "load_plain", "number_problem"]

MAX_NUMBER_CHARS = 128
"""The longest YAML int or float scalar (its text, signs and underscores included) zigai reads."""

Fail = Callable[[str, str], Exception]

_IDENTIFIER = re.compile(r"^[A-Za-z_][A-Za-z0-9_]{0,127}$")
_NUMBER_TAGS = frozenset({"tag:yaml.org,2002:int", "tag:yaml.org,2002:float"})
_PLAIN_TAGS = {
    "tag:yaml.org,2002:str", "tag:yaml.org,2002:int", "tag:yaml.org,2002:float",
    "tag:yaml.org,2002:bool", "tag:yaml.org,2002:null",
}


def child_path(path: str, key: str | int) -> str:
    """``$.a.b`` for a name key, ``$.a["odd key"]`` for any other, ``$.a[3]`` for an index."""
    if isinstance(key, int):
        return f"{path}[{key}]"
    if _IDENTIFIER.match(key):
        return f"{path}.{key}"
    return f"{path}[{key!r}]"


def number_problem(tag: str, text: str) -> str | None:
    """Why the YAML scalar ``text`` resolved to ``tag`` must not be built as a number, or None."""
    if tag not in _NUMBER_TAGS:
        return None
    if len(text) > MAX_NUMBER_CHARS:
        return (f"a number is {len(text)} characters long; the limit is {MAX_NUMBER_CHARS} "
                "(quote a long digit string to keep it as text)")
    if ":" in text:
        return "base-60 numbers (YAML 1.1 '1:30') are refused; quote the value or write it in base 10"
    return None


def bounded_loader() -> Any:
    """A ``yaml.SafeLoader`` subclass whose ints and floats pass :func:`number_problem` first.

    A refused number raises ``yaml.constructor.ConstructorError`` (a ``yaml.YAMLError``).
    """
    import yaml

    class NumberBoundedLoader(yaml.SafeLoader):
        def construct_object(self, node: Any, deep: bool = False) -> Any:
            if isinstance(node, yaml.ScalarNode):
                problem = number_problem(node.tag, node.value)
                if problem is not None:
                    raise yaml.constructor.ConstructorError(None, None, problem, node.start_mark)
            return super().construct_object(node, deep)

    return NumberBoundedLoader


def load_plain(text: str, fail: Fail, what: str, limits_text: str) -> Any:
    """The one YAML document in ``text`` as plain values; every refusal is ``fail(path, why)``.

    ``what`` names the document in messages ("an agent spec"); ``limits_text`` describes the
    limit profile a too-deep document exceeded.
    """
    import yaml

    class StrictLoader(yaml.SafeLoader):
        def compose_node(self, parent: Any, index: Any) -> Any:
            event = self.peek_event()
            if self.check_event(yaml.AliasEvent):
                raise fail("$", f"YAML aliases are refused (line {event.start_mark.line + 1}); "
                                f"{what} is plain data")
            if getattr(event, "anchor", None):
                raise fail("$", f"YAML anchors are refused (line {event.start_mark.line + 1}); "
                                f"{what} is plain data")
            return super().compose_node(parent, index)

    loader = StrictLoader(text)
    try:
        node = loader.get_single_node()
        if node is None:
            raise fail("$", "the document is empty")
        return _plain(loader, node, "$", fail)
    except yaml.YAMLError as exc:
        raise fail("$", f"not valid YAML: {exc}") from None
    except RecursionError:
        raise fail("$", f"nesting exceeds the {limits_text} limits") from None
    finally:
        loader.dispose()


def _plain(loader: Any, node: Any, path: str, fail: Fail) -> Any:
    import yaml

    if isinstance(node, yaml.MappingNode):
        if node.tag != "tag:yaml.org,2002:map":
            raise fail(path, f"YAML tag {node.tag!r} is refused")
        result: dict[str, Any] = {}
        for key_node, value_node in node.value:
            if not isinstance(key_node, yaml.ScalarNode) or key_node.tag != "tag:yaml.org,2002:str":
                raise fail(path, f"keys must be strings (line {key_node.start_mark.line + 1})")
            key = key_node.value
            where = child_path(path, key)
            if key in result:
                raise fail(where, "duplicate key")
            result[key] = _plain(loader, value_node, where, fail)
        return result
    if isinstance(node, yaml.SequenceNode):
        if node.tag != "tag:yaml.org,2002:seq":
            raise fail(path, f"YAML tag {node.tag!r} is refused")
        return [_plain(loader, item, child_path(path, i), fail) for i, item in enumerate(node.value)]
    if node.tag not in _PLAIN_TAGS:
        raise fail(path, f"YAML tag {node.tag!r} is refused (only strings, numbers, booleans and null)")
    problem = number_problem(node.tag, node.value)
    if problem is not None:
        raise fail(path, problem)
    value = loader.construct_object(node)
    if isinstance(value, float) and not math.isfinite(value):
        raise fail(path, "numbers must be finite")
    return value
