"""``DisposableWorkspace``: a fresh private directory that is destroyed when it closes.

Invariants: the directory is created with mode 0700 under the parent the application names
(the system temporary directory by default); while open, the only way in is the
:class:`RootedDirectory` handle (:attr:`files`) and the :class:`LocalEnvironment` over it
(:attr:`environment`) -- the host path is never exposed.  :meth:`close` closes the
environment and the handle *first*, then deletes the complete child tree without following
links (``shutil.rmtree``'s descriptor-based walk).  Closing twice is harmless.
"""

from __future__ import annotations

import os
import shutil
import tempfile

from zigai._owner import Owner
from zigai.environments.command import AuditSink, CommandRequest, CommandResult
from zigai.environments.errors import EnvironmentClosed
from zigai.environments.local import LocalEnvironment
from zigai.environments.rooted import RootedDirectory
from zigai.environments.sandbox import SandboxCapabilities

__all__ = ["DisposableWorkspace"]


class DisposableWorkspace(Owner):
    """A temporary rooted workspace with a local environment (see module docstring)."""

    __slots__ = ("_path", "_root", "_environment")

    _closed_error = EnvironmentClosed

    def __init__(self, *, parent: str | os.PathLike[str] | None = None, prefix: str = "zigai-workspace-",
                 audit: AuditSink | None = None) -> None:
        super().__init__()
        self._path = tempfile.mkdtemp(prefix=prefix, dir=None if parent is None else os.fspath(parent))
        try:
            self._root = RootedDirectory.open(self._path)
        except BaseException:  # pragma: no cover - mkdtemp just created it
            shutil.rmtree(self._path, ignore_errors=True)
            raise
        self._environment = LocalEnvironment(self._root, audit=audit, disposal=True)

    def _release(self) -> None:
        self._environment.close()
        self._root.close()
        shutil.rmtree(self._path)

    @property
    def files(self) -> RootedDirectory:
        """The workspace's rooted handle (borrowed until :meth:`close`)."""
        self._check()
        return self._root

    @property
    def environment(self) -> LocalEnvironment:
        """The local environment rooted in this workspace (borrowed until :meth:`close`)."""
        self._check()
        return self._environment

    @property
    def capabilities(self) -> SandboxCapabilities:
        return self.environment.capabilities

    def run(self, request: CommandRequest) -> CommandResult:
        """Shorthand for ``workspace.environment.run(request)``."""
        return self.environment.run(request)

    def __repr__(self) -> str:
        return f"DisposableWorkspace(closed={self._closed})"
