"""AG-UI client tools, shared state and context: parsed, bounded and handed to the run.

Job
    Read the parts of a ``RunAgentInput`` that belong to the browser application —
    ``tools`` (frontend tools), ``state``, ``context`` and ``forwardedProps`` — into values
    (:class:`FrontendTool`, :class:`ContextEntry`) and give a run a :class:`SharedState`
    through which tools and dynamic instructions read them and tools update the state.  An
    update is queued on the run's outbox as a ``zigai.state_snapshot`` / ``zigai.state_delta``
    event, which the AG-UI encoder sends as ``STATE_SNAPSHOT`` / ``STATE_DELTA``.

Invariants
    * Everything is bounded by :class:`ClientStateLimits` (tool count and size, context
      entries, state bytes, patch operations); exactly-at-limit is accepted.
    * Frontend tools never run on the server: they are declared ``external``, so a call to
      one pauses the run and goes to the browser, whose next run carries the result.
    * Client values never become instructions by themselves: ``context`` and ``state`` are
      data the application's own tools and instructions may read.
    * A state update is all-or-nothing: a patch that fails (bad path, failed ``test``,
      result too large) leaves the state as it was and emits nothing.
"""

from __future__ import annotations

import copy
import json
import re
import threading
from dataclasses import dataclass
from typing import Any

from zigai.errors import UiError

__all__ = [
    "ClientStateLimits", "ContextEntry", "FrontendTool", "InvalidClientState", "SharedState",
    "StateTooLarge", "STATE_DELTA", "STATE_SNAPSHOT", "parse_context", "parse_tools",
]

STATE_SNAPSHOT = "zigai.state_snapshot"
STATE_DELTA = "zigai.state_delta"
_TOOL_NAME = re.compile(r"^[A-Za-z0-9_-]{1,64}$")


class InvalidClientState(UiError):
    """The client's tools, context, state or a state patch is malformed; fix the request."""


class StateTooLarge(InvalidClientState):
    """The shared state (or a patch, tools or context) is over its :class:`ClientStateLimits`."""


@dataclass(frozen=True, slots=True)
class ClientStateLimits:
    """Bounds on what a browser application may put into a run."""

    max_tools: int = 32
    max_tool_bytes: int = 16 * 1024
    max_context_entries: int = 64
    max_context_bytes: int = 64 * 1024
    max_state_bytes: int = 256 * 1024
    max_patch_operations: int = 256


@dataclass(frozen=True, slots=True)
class FrontendTool:
    """A tool the browser declared and executes itself (``RunAgentInput.tools``)."""

    name: str
    description: str
    parameters: dict[str, Any]


@dataclass(frozen=True, slots=True)
class ContextEntry:
    """One ``RunAgentInput.context`` item: what the value is, and the value (text)."""

    description: str
    value: str


def _size(value: Any) -> int:
    return len(json.dumps(value, ensure_ascii=False, separators=(",", ":")).encode())


def parse_tools(raw: Any, limits: ClientStateLimits) -> tuple[FrontendTool, ...]:
    """``RunAgentInput.tools`` as frontend tools (names unique, schemas objects, bounded)."""
    if raw is None:
        return ()
    if not isinstance(raw, list):
        raise InvalidClientState("RunAgentInput.tools must be an array")
    if len(raw) > limits.max_tools:
        raise StateTooLarge(f"{len(raw)} client tools; the limit is {limits.max_tools}")
    tools: list[FrontendTool] = []
    for index, item in enumerate(raw):
        where = f"tools[{index}]"
        if not isinstance(item, dict) or not isinstance(item.get("name"), str):
            raise InvalidClientState(f"{where} needs a name")
        name = item["name"]
        if not _TOOL_NAME.fullmatch(name):
            raise InvalidClientState(f"{where}.name must match [A-Za-z0-9_-]{{1,64}}")
        if any(tool.name == name for tool in tools):
            raise InvalidClientState(f"{where}: the tool name {name!r} is declared twice")
        description = item.get("description", "")
        if not isinstance(description, str):
            raise InvalidClientState(f"{where}.description must be a string")
        parameters = item.get("parameters")
        if parameters is None:
            parameters = {"type": "object", "properties": {}}
        if not isinstance(parameters, dict) or parameters.get("type") != "object":
            raise InvalidClientState(f"{where}.parameters must be a JSON Schema of type object")
        if _size(item) > limits.max_tool_bytes:
            raise StateTooLarge(f"{where} is over {limits.max_tool_bytes} bytes")
        tools.append(FrontendTool(name, description, parameters))
    return tuple(tools)


def parse_context(raw: Any, limits: ClientStateLimits) -> tuple[ContextEntry, ...]:
    """``RunAgentInput.context`` as entries of description and text value (bounded)."""
    if raw is None:
        return ()
    if not isinstance(raw, list):
        raise InvalidClientState("RunAgentInput.context must be an array")
    if len(raw) > limits.max_context_entries:
        raise StateTooLarge(f"{len(raw)} context entries; the limit is {limits.max_context_entries}")
    if _size(raw) > limits.max_context_bytes:
        raise StateTooLarge(f"the context is over {limits.max_context_bytes} bytes")
    entries = []
    for index, item in enumerate(raw):
        if (not isinstance(item, dict) or not isinstance(item.get("description"), str)
                or not isinstance(item.get("value"), str)):
            raise InvalidClientState(f"context[{index}] needs description and value strings")
        entries.append(ContextEntry(item["description"], item["value"]))
    return tuple(entries)


class SharedState:
    """The run's view of the browser application's state, context and forwarded props.

    ``state`` returns a copy; :meth:`set` replaces the state (``STATE_SNAPSHOT``) and
    :meth:`patch` applies RFC 6902 operations ``add``, ``remove``, ``replace`` and ``test``
    (``STATE_DELTA``).  Thread-safe: tools of one run may update it concurrently.
    """

    def __init__(self, state: Any = None, context: tuple[ContextEntry, ...] = (),
                 forwarded_props: Any = None, *, outbox: Any = None,
                 limits: ClientStateLimits | None = None) -> None:
        self.limits = limits if limits is not None else ClientStateLimits()
        self.context = context
        self.forwarded_props = copy.deepcopy(forwarded_props)
        self._outbox = outbox
        self._lock = threading.Lock()
        self._check_size(state)
        self._state = copy.deepcopy(state)

    @property
    def state(self) -> Any:
        with self._lock:
            return copy.deepcopy(self._state)

    def _check_size(self, value: Any) -> None:
        try:
            size = _size(value)
        except (TypeError, ValueError) as exc:
            raise InvalidClientState(f"the state must be JSON: {exc}") from None
        if size > self.limits.max_state_bytes:
            raise StateTooLarge(f"the state is {size} bytes; the limit is {self.limits.max_state_bytes}")

    def _emit(self, name: str, value: Any) -> None:
        if self._outbox is not None:
            self._outbox.put(name, value)

    def set(self, snapshot: Any) -> None:
        """Replace the state and send the browser a snapshot."""
        self._check_size(snapshot)
        value = copy.deepcopy(snapshot)
        with self._lock:
            self._state = value
            self._emit(STATE_SNAPSHOT, copy.deepcopy(value))

    def patch(self, operations: list[dict[str, Any]]) -> None:
        """Apply JSON Patch ``operations`` to the state and send the browser the delta."""
        if not isinstance(operations, list) or not operations:
            raise InvalidClientState("a state patch is a non-empty array of operations")
        if len(operations) > self.limits.max_patch_operations:
            raise StateTooLarge(f"{len(operations)} patch operations; the limit is "
                                f"{self.limits.max_patch_operations}")
        with self._lock:
            document = copy.deepcopy(self._state)
            for index, operation in enumerate(operations):
                document = _apply(document, operation, index)
            self._check_size(document)
            self._state = document
            self._emit(STATE_DELTA, copy.deepcopy(operations))


def _pointer(path: Any, index: int) -> list[str]:
    if not isinstance(path, str) or (path and not path.startswith("/")):
        raise InvalidClientState(f"patch[{index}].path must be a JSON Pointer ('' or '/…')")
    return [token.replace("~1", "/").replace("~0", "~") for token in path.split("/")[1:]]


def _step(container: Any, token: str, index: int, *, appending: bool = False) -> Any:
    if isinstance(container, dict):
        return token
    if isinstance(container, list):
        if appending and token == "-":
            return len(container)
        if not token.isdigit() or (token != "0" and token.startswith("0")):
            raise InvalidClientState(f"patch[{index}]: {token!r} is not an array index")
        return int(token)
    raise InvalidClientState(f"patch[{index}]: the path goes through a value that is not a container")


def _apply(document: Any, operation: Any, index: int) -> Any:
    if not isinstance(operation, dict):
        raise InvalidClientState(f"patch[{index}] must be an object")
    op = operation.get("op")
    if op not in ("add", "remove", "replace", "test"):
        raise InvalidClientState(f"patch[{index}].op must be add, remove, replace or test")
    tokens = _pointer(operation.get("path"), index)
    if op != "remove" and "value" not in operation:
        raise InvalidClientState(f"patch[{index}] ({op}) needs a value")
    value = operation.get("value")
    if not tokens:
        if op == "test":
            if document != value:
                raise InvalidClientState(f"patch[{index}]: test failed")
            return document
        if op == "remove":
            return None
        return copy.deepcopy(value)
    parent = document
    for token in tokens[:-1]:
        key = _step(parent, token, index)
        try:
            parent = parent[key]
        except (KeyError, IndexError):
            raise InvalidClientState(f"patch[{index}]: {operation['path']!r} does not exist") from None
    key = _step(parent, tokens[-1], index, appending=op == "add")
    exists = key in parent if isinstance(parent, dict) else 0 <= key < len(parent)
    if op == "add":
        if isinstance(parent, list):
            if key > len(parent):
                raise InvalidClientState(f"patch[{index}]: index {key} is past the end")
            parent.insert(key, copy.deepcopy(value))
        else:
            parent[key] = copy.deepcopy(value)
        return document
    if not exists:
        raise InvalidClientState(f"patch[{index}]: {operation['path']!r} does not exist")
    if op == "test":
        if parent[key] != value:
            raise InvalidClientState(f"patch[{index}]: test failed")
    elif op == "remove":
        del parent[key]
    else:
        parent[key] = copy.deepcopy(value)
    return document
