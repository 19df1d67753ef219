"""Editor-owned operations the agent asks the client for: files, permissions, terminals.

:class:`EditorHandlers` answers the ACP client methods:

* ``fs/read_text_file`` and ``fs/write_text_file`` — the absolute ACP path is reduced to a
  path relative to the session root and resolved through a
  :class:`~zigai.environments.RootedDirectory` (no ``..``, no symbolic links, no special
  files); a path outside the root is refused with :class:`AcpPathOutsideRoot`;
* ``session/request_permission`` — the application's ``choose`` callback sees the
  request and returns an ``optionId`` or None (cancelled); an id the agent did not
  advertise is refused (:class:`AcpPermissionRejected`), so a buggy chooser cannot invent
  a permission;
* ``terminal/*`` — delegated to a replaceable :class:`TerminalProvider`; without one the
  client does not advertise terminals and the methods are not found.
"""

from __future__ import annotations

import os
import posixpath
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Protocol

from zigai.environments import RootedDirectory
from zigai.errors import AcpError

__all__ = ["EditorHandlers", "PermissionRequest", "TerminalProvider", "AcpPathOutsideRoot",
           "AcpPermissionRejected", "AcpInvalidParams"]


class AcpInvalidParams(AcpError):
    """An agent request's params do not have the documented shape (JSON-RPC -32602)."""


class AcpPathOutsideRoot(AcpInvalidParams):
    """An ACP path is not absolute or lies outside the session root."""


class AcpPermissionRejected(AcpError):
    """The permission chooser returned an option the agent did not advertise."""


@dataclass(frozen=True, slots=True)
class PermissionRequest:
    session_id: str
    tool_call: dict[str, Any]
    options: tuple[dict[str, Any], ...]

    @property
    def option_ids(self) -> tuple[str, ...]:
        return tuple(str(o.get("optionId")) for o in self.options)


class TerminalProvider(Protocol):
    """Terminal methods (params and results as the ACP JSON objects)."""

    def create(self, params: dict[str, Any]) -> dict[str, Any]: ...

    def output(self, params: dict[str, Any]) -> dict[str, Any]: ...

    def wait_for_exit(self, params: dict[str, Any]) -> dict[str, Any]: ...

    def kill(self, params: dict[str, Any]) -> dict[str, Any]: ...

    def release(self, params: dict[str, Any]) -> dict[str, Any]: ...


def _str(params: dict[str, Any], key: str) -> str:
    value = params.get(key)
    if not isinstance(value, str):
        raise AcpInvalidParams(f"params.{key} must be a string")
    return value


def _optional_int(params: dict[str, Any], key: str) -> int | None:
    value = params.get(key)
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise AcpInvalidParams(f"params.{key} must be a positive integer")
    return value


class EditorHandlers:
    """Files beneath ``root``, validated permission choices, optional terminals."""

    def __init__(self, root: str | os.PathLike[str], *,
                 choose: Callable[[PermissionRequest], str | None] | None = None,
                 terminals: TerminalProvider | None = None, max_read_bytes: int = 1024 * 1024) -> None:
        self.root = os.path.realpath(os.fspath(root))
        self._directory = RootedDirectory.open(self.root)
        self.choose = choose
        self.terminals = terminals
        self.max_read_bytes = max_read_bytes

    def close(self) -> None:
        self._directory.close()

    def capabilities(self) -> dict[str, Any]:
        return {"fs": {"readTextFile": True, "writeTextFile": True},
                "terminal": self.terminals is not None}

    def relative(self, path: str) -> str:
        """``path`` (absolute, as ACP sends it) relative to the root, or AcpPathOutsideRoot."""
        if not path.startswith("/"):
            raise AcpPathOutsideRoot(f"ACP paths are absolute; {path!r} is not")
        normal = posixpath.normpath(path)
        root = self.root.rstrip("/") or "/"
        if normal == root:
            raise AcpPathOutsideRoot(f"{path!r} is the root directory, not a file in it")
        prefix = root if root.endswith("/") else root + "/"
        if not normal.startswith(prefix):
            raise AcpPathOutsideRoot(f"{path!r} is outside the session root {self.root!r}")
        return normal[len(prefix):]

    def read_text_file(self, params: dict[str, Any]) -> dict[str, Any]:
        relative = self.relative(_str(params, "path"))
        line, limit = _optional_int(params, "line"), _optional_int(params, "limit")
        text = self._directory.read_text(relative, max_bytes=self.max_read_bytes)
        if line is not None or limit is not None:
            lines = text.splitlines(keepends=True)
            start = (line or 1) - 1
            text = "".join(lines[start: None if limit is None else start + limit])
        return {"content": text}

    def write_text_file(self, params: dict[str, Any]) -> dict[str, Any] | None:
        relative = self.relative(_str(params, "path"))
        self._directory.write_text(relative, _str(params, "content"))
        return None

    def request_permission(self, params: dict[str, Any]) -> dict[str, Any]:
        options = params.get("options")
        if not isinstance(options, list) or not all(isinstance(o, dict) for o in options):
            raise AcpInvalidParams("params.options must be an array of permission options")
        tool_call = params.get("toolCall")
        request = PermissionRequest(_str(params, "sessionId"),
                                    tool_call if isinstance(tool_call, dict) else {}, tuple(options))
        chosen = self.choose(request) if self.choose is not None else None
        if chosen is None:
            return {"outcome": {"outcome": "cancelled"}}
        if chosen not in request.option_ids:
            raise AcpPermissionRejected(
                f"option {chosen!r} was not offered; the agent offered {list(request.option_ids)}"
            )
        return {"outcome": {"outcome": "selected", "optionId": chosen}}

    def handlers(self) -> dict[str, Callable[[dict[str, Any]], Any]]:
        table: dict[str, Callable[[dict[str, Any]], Any]] = {
            "fs/read_text_file": self.read_text_file,
            "fs/write_text_file": self.write_text_file,
            "session/request_permission": self.request_permission,
        }
        if self.terminals is not None:
            terminals = self.terminals
            table.update({
                "terminal/create": terminals.create, "terminal/output": terminals.output,
                "terminal/wait_for_exit": terminals.wait_for_exit, "terminal/kill": terminals.kill,
                "terminal/release": terminals.release,
            })
        return table
