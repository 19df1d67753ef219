"""Parameter descriptions from a function's docstring (private).

Three common layouts are recognised; the first one found wins:

* Google: an ``Args:`` / ``Arguments:`` / ``Parameters:`` section of ``name (type): text``
  lines, continuation lines indented deeper;
* NumPy: a ``Parameters`` heading underlined with dashes, then ``name : type`` lines with the
  text indented below;
* Sphinx / reST: ``:param name: text`` (or ``:param type name: text``) fields.

:func:`parse_docstring` returns the description without those parameter sections (what the
model reads as the tool's description) and the per-parameter texts.  Sections after the
parameters (``Returns:``, ``Raises:`` ...) stay in the description.
"""

from __future__ import annotations

import re

__all__ = ["parse_docstring"]

_GOOGLE_HEAD = re.compile(r"^(Args|Arguments|Parameters|Params)\s*:\s*$")
_GOOGLE_ITEM = re.compile(r"^\*{0,2}(?P<name>[A-Za-z_][A-Za-z0-9_]*)\s*(\([^)]*\))?\s*:\s*(?P<text>.*)$")
_SECTION = re.compile(r"^[A-Z][A-Za-z ]*:\s*$")
_NUMPY_ITEM = re.compile(r"^(?P<name>[A-Za-z_][A-Za-z0-9_]*)\s*(:.*)?$")
_SPHINX = re.compile(r"^:param\s+(?:[^:\s]+\s+)?(?P<name>[A-Za-z_][A-Za-z0-9_]*)\s*:\s*(?P<text>.*)$")
_SPHINX_OTHER = re.compile(r"^:(type|param|raises?|returns?|rtype|keyword|kwarg)\b")


def _indent(line: str) -> int:
    return len(line) - len(line.lstrip())


def _join(lines: list[str]) -> str:
    return " ".join(part.strip() for part in lines if part.strip())


def _google(lines: list[str]) -> tuple[list[str], dict[str, str]] | None:
    start = next((i for i, line in enumerate(lines) if _GOOGLE_HEAD.match(line.strip())), None)
    if start is None:
        return None
    base = _indent(lines[start])
    params: dict[str, list[str]] = {}
    current: str | None = None
    item_indent: int | None = None
    end = len(lines)
    for index in range(start + 1, len(lines)):
        line = lines[index]
        if not line.strip():
            continue
        indent = _indent(line)
        if indent <= base:
            end = index
            break
        match = _GOOGLE_ITEM.match(line.strip())
        if match and (item_indent is None or indent <= item_indent):
            item_indent = indent
            current = match.group("name")
            params[current] = [match.group("text")]
        elif current is not None:
            params[current].append(line)
    kept = lines[:start] + lines[end:]
    return kept, {name: _join(text) for name, text in params.items()}


def _numpy(lines: list[str]) -> tuple[list[str], dict[str, str]] | None:
    start = next((i for i in range(len(lines) - 1)
                  if lines[i].strip() in ("Parameters", "Arguments", "Args")
                  and set(lines[i + 1].strip()) == {"-"}), None)
    if start is None:
        return None
    base = _indent(lines[start])
    params: dict[str, list[str]] = {}
    current: str | None = None
    end = len(lines)
    index = start + 2
    while index < len(lines):
        line = lines[index]
        if line.strip() and _indent(line) <= base:
            following = lines[index + 1].strip() if index + 1 < len(lines) else ""
            if following and set(following) == {"-"}:  # the next section heading
                end = index
                break
            match = _NUMPY_ITEM.match(line.strip())
            if match is None:
                end = index
                break
            current = match.group("name")
            params[current] = []
        elif current is not None:
            params[current].append(line)
        index += 1
    kept = lines[:start] + lines[end:]
    return kept, {name: _join(text) for name, text in params.items()}


def _sphinx(lines: list[str]) -> tuple[list[str], dict[str, str]] | None:
    params: dict[str, list[str]] = {}
    kept: list[str] = []
    current: str | None = None
    found = False
    for line in lines:
        stripped = line.strip()
        match = _SPHINX.match(stripped)
        if match:
            found = True
            current = match.group("name")
            params[current] = [match.group("text")]
            continue
        if _SPHINX_OTHER.match(stripped):
            found = True
            current = None
            if not stripped.startswith((":type", ":param")):
                kept.append(line)
            continue
        if current is not None and stripped and _indent(line) > 0:
            params[current].append(line)
            continue
        current = None
        kept.append(line)
    if not found:
        return None
    return kept, {name: _join(text) for name, text in params.items()}


def parse_docstring(doc: str | None) -> tuple[str, dict[str, str]]:
    """``(description, {parameter: text})`` from a cleaned docstring (``inspect.getdoc``)."""
    if not doc:
        return "", {}
    lines = doc.splitlines()
    for parser in (_google, _numpy, _sphinx):
        parsed = parser(lines)
        if parsed is not None:
            kept, params = parsed
            text = "\n".join(kept).strip()
            text = re.sub(r"\n{3,}", "\n\n", text)
            return text, {k: v for k, v in params.items() if v}
    return doc.strip(), {}
