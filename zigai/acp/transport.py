"""ACP transports: newline-delimited JSON-RPC messages over a replaceable byte channel.

:class:`AcpTransport` is what the client needs: send one encoded message, receive the next
one (bounded, with a timeout), close.  :class:`StdioTransport` owns only the subprocess and
its framing: it starts the agent command, writes one JSON document per line to its stdin,
reads lines from its stdout on a reader thread (each bounded by ``max_message_bytes``), and
on close terminates the process group politely, then kills it, and reaps it.

The agent starts in its own session with :func:`zigai.child_process.child_environment`'s
environment: a small allowlist (``HOME``, ``PATH``, ``LANG``, ...; no API keys) plus the
names in ``pass_env`` plus ``env``'s values; ``inherit_env=True`` copies everything instead.
:meth:`StdioTransport.close` stops the whole group (:func:`zigai.child_process.stop_group`:
stdin closed, ``shutdown_timeout_s`` to exit, SIGTERM, ``terminate_timeout_s``, SIGKILL) and
joins the reader thread, so helpers the agent started are not left behind.
"""

from __future__ import annotations

import queue
import subprocess
import threading
from collections.abc import Mapping, Sequence
from typing import Protocol, runtime_checkable

from zigai.child_process import child_environment, spawn_options, stop_group
from zigai.errors import AcpError

__all__ = ["AcpTransport", "StdioTransport", "AcpConnectionClosed", "AcpMessageTooLarge"]


class AcpConnectionClosed(AcpError):
    """The connection to the agent ended; ``prompt_in_flight`` says a prompt had no answer."""

    def __init__(self, message: str, *, prompt_in_flight: bool = False) -> None:
        super().__init__(message)
        self.prompt_in_flight = prompt_in_flight


class AcpMessageTooLarge(AcpError):
    """One line from the agent exceeds ``max_message_bytes``; the connection is closed."""


@runtime_checkable
class AcpTransport(Protocol):
    def send(self, message: bytes) -> None: ...

    def receive(self, timeout: float | None) -> bytes | None:
        """The next message (without its newline); None at end of stream."""
        ...

    def close(self) -> None: ...


_EOF = object()


class StdioTransport:
    """An agent subprocess speaking ACP on stdin/stdout (see module docs)."""

    def __init__(self, argv: Sequence[str], *, cwd: str | None = None,
                 env: Mapping[str, str] | None = None, max_message_bytes: int = 4 * 1024 * 1024,
                 pass_env: Sequence[str] = (), inherit_env: bool = False,
                 shutdown_timeout_s: float = 2.0, terminate_timeout_s: float = 2.0) -> None:
        if not argv or not all(isinstance(a, str) for a in argv):
            raise ValueError("argv must be a non-empty sequence of strings")
        if isinstance(pass_env, str):
            raise ValueError("pass_env must be a sequence of variable names, not one string")
        self.max_message_bytes = max_message_bytes
        self._shutdown_s = shutdown_timeout_s
        self._terminate_s = terminate_timeout_s
        child_env = child_environment(env, pass_through=pass_env, inherit_all=inherit_env)
        self._process = subprocess.Popen(
            list(argv), stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
            cwd=cwd, env=child_env, **spawn_options(),
        )
        self._lines: queue.Queue[object] = queue.Queue()
        self._write_lock = threading.Lock()
        self._reader = threading.Thread(target=self._read, daemon=True, name="zigai-acp-stdio")
        self._reader.start()

    @property
    def pid(self) -> int:
        return self._process.pid

    def _read(self) -> None:
        stdout = self._process.stdout
        assert stdout is not None
        try:
            while True:
                line = stdout.readline(self.max_message_bytes + 2)
                if not line:
                    break
                if not line.endswith(b"\n") and len(line) > self.max_message_bytes:
                    self._lines.put(AcpMessageTooLarge(
                        f"an agent message exceeds {self.max_message_bytes} bytes"))
                    break
                stripped = line.rstrip(b"\r\n")
                if stripped:
                    self._lines.put(stripped)
        except (OSError, ValueError):  # pragma: no cover - the pipe was closed under us
            pass
        finally:
            self._lines.put(_EOF)

    def send(self, message: bytes) -> None:
        stdin = self._process.stdin
        assert stdin is not None
        with self._write_lock:
            try:
                stdin.write(message + b"\n")
                stdin.flush()
            except (BrokenPipeError, ValueError, OSError):
                raise AcpConnectionClosed("the agent process closed its input") from None

    def receive(self, timeout: float | None) -> bytes | None:
        try:
            item = self._lines.get(timeout=timeout)
        except queue.Empty:
            raise TimeoutError("no message from the agent in time") from None
        if item is _EOF:
            self._lines.put(_EOF)  # later calls see the end too
            return None
        if isinstance(item, AcpError):
            raise item
        assert isinstance(item, bytes)
        return item

    def close(self) -> None:
        """Stop the agent's whole process group, reap it and join the reader thread."""
        reader = self._reader

        def drained(timeout: float) -> bool:
            reader.join(timeout)
            return not reader.is_alive()

        process = self._process
        if process.returncode is None:
            stop_group(process, shutdown_s=self._shutdown_s, terminate_s=self._terminate_s, drained=drained)
        reader.join(timeout=2)  # the group is gone, so the pipe reaches end of file
        if process.stdout is not None:
            process.stdout.close()
