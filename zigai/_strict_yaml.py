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
* values are built straight from the parser's events (libyaml's parser when pyyaml has it,
  pyyaml's pure-Python one otherwise), so the first refusal in document order stops the read,
  no node tree is kept, and one huge scalar costs a C scan rather than a Python one;
* numbers are bounded by their text *before* a value is built: a scalar that YAML would read as
  an int or float is refused when longer than :data:`MAX_NUMBER_CHARS` characters or written in
  YAML 1.1's base-60 form (``1:30``), whose construction costs quadratic time in its length.
  A plain scalar longer than that made only of characters a number can contain is refused
  without running YAML's resolver over it; quote such a value to keep it as a string.
  :func:`bounded_loader` gives the same bound to zigai's looser YAML readers (cassettes,
  :mod:`zigai.conformance.cassette`, and skill front matter);
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
_NUMBER_CHARACTERS = "0123456789_:+-.xXoObBaAcCdDeEfF"
_STR = "tag:yaml.org,2002:str"
_PLAIN_TAGS = {_STR, "tag:yaml.org,2002:int", "tag:yaml.org,2002:float",
               "tag:yaml.org,2002:bool", "tag:yaml.org,2002:null"}


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
    """A safe loader (libyaml's ``CSafeLoader`` when pyyaml has it, else ``yaml.SafeLoader``)
    whose ints and floats pass :func:`number_problem` before they are built.

    A refused number raises ``yaml.constructor.ConstructorError`` (a ``yaml.YAMLError``).
    """
    import yaml

    class NumberBoundedLoader(getattr(yaml, "CSafeLoader", yaml.SafeLoader)):  # type: ignore[misc]
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

    loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)(text)
    try:
        loader.get_event()  # stream start
        if loader.check_event(yaml.StreamEndEvent):
            raise fail("$", "the document is empty")
        loader.get_event()  # document start
        value = _Reader(loader, fail, what).value("$")
        loader.get_event()  # document end
        if not loader.check_event(yaml.StreamEndEvent):
            raise fail("$", "not valid YAML: expected a single document in the stream")
        return value
    except yaml.YAMLError as exc:
        raise fail("$", f"not valid YAML: {exc}") from None
    except RecursionError:
        raise fail("$", f"nesting exceeds the {limits_text} limits") from None
    finally:
        loader.dispose()


class _Reader:
    """Plain values from the loader's events, checked in document order."""

    def __init__(self, loader: Any, fail: Fail, what: str) -> None:
        import yaml

        self.yaml = yaml
        self.loader = loader
        self.fail = fail
        self.what = what

    def _event(self) -> Any:
        event = self.loader.get_event()
        line = event.start_mark.line + 1
        if isinstance(event, self.yaml.AliasEvent):
            raise self.fail("$", f"YAML aliases are refused (line {line}); {self.what} is plain data")
        if getattr(event, "anchor", None):
            raise self.fail("$", f"YAML anchors are refused (line {line}); {self.what} is plain data")
        return event

    def _tag(self, event: Any, kind: Any, value: Any = None) -> str:
        tag = event.tag
        if tag is None or tag == "!":
            tag = self.loader.resolve(kind, value, event.implicit)
        return str(tag)

    def value(self, path: str) -> Any:
        yaml = self.yaml
        event = self._event()
        if isinstance(event, yaml.MappingStartEvent):
            if self._tag(event, yaml.MappingNode) != "tag:yaml.org,2002:map":
                raise self.fail(path, f"YAML tag {event.tag!r} is refused")
            result: dict[str, Any] = {}
            while not self.loader.check_event(yaml.MappingEndEvent):
                key_event = self._event()
                if not isinstance(key_event, yaml.ScalarEvent) or self._scalar_tag(key_event, path) != _STR:
                    raise self.fail(path, f"keys must be strings (line {key_event.start_mark.line + 1})")
                key = key_event.value
                where = child_path(path, key)
                if key in result:
                    raise self.fail(where, "duplicate key")
                result[key] = self.value(where)
            self.loader.get_event()
            return result
        if isinstance(event, yaml.SequenceStartEvent):
            if self._tag(event, yaml.SequenceNode) != "tag:yaml.org,2002:seq":
                raise self.fail(path, f"YAML tag {event.tag!r} is refused")
            items: list[Any] = []
            while not self.loader.check_event(yaml.SequenceEndEvent):
                items.append(self.value(child_path(path, len(items))))
            self.loader.get_event()
            return items
        return self._scalar(event, path)

    def _scalar_tag(self, event: Any, path: str) -> str:
        text = event.value
        if event.tag is None and event.implicit[0] and len(text) > MAX_NUMBER_CHARS \
                and text.lstrip("+-")[:1] in tuple("0123456789.") and not text.strip(_NUMBER_CHARACTERS):
            # number-shaped: refused without running the resolver's regexes over all of it
            raise self.fail(path, f"an unquoted scalar of {len(text)} characters looks like a number; numbers "
                                  f"are limited to {MAX_NUMBER_CHARS} characters (quote it to keep it as text)")
        return self._tag(event, self.yaml.ScalarNode, text)

    def _scalar(self, event: Any, path: str) -> Any:
        tag = self._scalar_tag(event, path)
        if tag not in _PLAIN_TAGS:
            raise self.fail(path, f"YAML tag {tag!r} is refused (only strings, numbers, booleans and null)")
        problem = number_problem(tag, event.value)
        if problem is not None:
            raise self.fail(path, problem)
        node = self.yaml.ScalarNode(tag, event.value, event.start_mark, event.end_mark, style=event.style)
        value = self.loader.construct_object(node)
        if isinstance(value, float) and not math.isfinite(value):
            raise self.fail(path, "numbers must be finite")
        return value
