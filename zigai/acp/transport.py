"""ACP transports: newline-delimited JSON-RPC messages over a replaceable byte channel.

:class:`AcpTransport` is what the client needs: send one encoded message, receive the next
one (bounded, with a timeout), close.  :class:`StdioTransport` owns only the subprocess and
its framing: it starts the agent command, writes one JSON document per line to its stdin,
reads lines from its stdout on a reader thread (each bounded by ``max_message_bytes``), and
on close terminates the process group politely, then kills it, and reaps it.

Read-ahead is bounded: the reader holds at most ``max_message_bytes`` of received, unclaimed
messages (one message always fits when nothing is waiting) and otherwise stops reading, so an
agent that writes faster than the client takes messages is pushed back by the pipe instead of
growing the client's memory.

The agent starts in its own session with :func:`zigai.child_process.child_environment`'s
environment: a small allowlist (``HOME``, ``PATH``, ``LANG``, ...; no API keys) plus the
names in ``pass_env`` plus ``env``'s values; ``inherit_env=True`` copies everything instead.
:meth:`StdioTransport.close` stops the whole group (:func:`zigai.child_process.stop_group`:
stdin closed, ``shutdown_timeout_s`` to exit, SIGTERM, ``terminate_timeout_s``, SIGKILL) and
joins the reader thread, so helpers the agent started are not left behind.

Writes are bounded: :meth:`StdioTransport.send` gives up after ``send_timeout_s`` (default 30 s)
when the agent does not read its stdin (:func:`zigai.pipe_write.write_before`), raises
:class:`AcpConnectionClosed`, kills the agent's process group, and every later ``send`` fails
the same way at once (a half-written line cannot be taken back).
"""

from __future__ import annotations

import subprocess
import threading
import time
from collections import deque
from collections.abc import Mapping, Sequence
from typing import Protocol, runtime_checkable

from zigai.child_process import child_environment, kill_group, spawn_options, stop_group
from zigai.errors import AcpError
from zigai.pipe_write import write_before

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


class _Inbox:
    """A FIFO of received items bounded in bytes; ``put`` waits for room, ``close`` releases it."""

    def __init__(self, max_bytes: int) -> None:
        self._max_bytes = max_bytes
        self._items: deque[tuple[object, int]] = deque()
        self._bytes = 0
        self._closed = False
        self._changed = threading.Condition()

    def put(self, item: object, size: int = 0) -> None:
        with self._changed:
            while self._items and self._bytes + size > self._max_bytes and not self._closed:
                self._changed.wait()
            self._items.append((item, size))
            self._bytes += size
            self._changed.notify_all()

    def get(self, timeout: float | None) -> object:
        deadline = None if timeout is None else time.monotonic() + timeout
        with self._changed:
            while not self._items:
                remaining = None if deadline is None else deadline - time.monotonic()
                if remaining is not None and remaining <= 0:
                    raise TimeoutError("no message from the agent in time")
                self._changed.wait(remaining)
            item, size = self._items.popleft()
            self._bytes -= size
            self._changed.notify_all()
            return item

    def close(self) -> None:
        """Stop bounding: a reader waiting for room finishes (the transport is closing)."""
        with self._changed:
            self._closed = True
            self._changed.notify_all()


class StdioTransport:
    """An agent subprocess speaking ACP on stdin/stdout (see module docs)."""

    def __init__(self, argv: Sequence[str], *, cwd: str | None = None,
                 env: Mapping[str, str] | None = None, max_message_bytes: int = 4 * 1024 * 1024,
                 pass_env: Sequence[str] = (), inherit_env: bool = False,
                 shutdown_timeout_s: float = 2.0, terminate_timeout_s: float = 2.0,
                 send_timeout_s: float = 30.0) -> None:
        if not argv or not all(isinstance(a, str) for a in argv):
            raise ValueError("argv must be a non-empty sequence of strings")
        if isinstance(pass_env, str):
            raise ValueError("pass_env must be a sequence of variable names, not one string")
        self.max_message_bytes = max_message_bytes
        self._shutdown_s = shutdown_timeout_s
        self._terminate_s = terminate_timeout_s
        if isinstance(send_timeout_s, bool) or not isinstance(send_timeout_s, (int, float)) or not send_timeout_s > 0:
            raise ValueError("send_timeout_s must be a number of seconds > 0")
        self.send_timeout_s = float(send_timeout_s)
        self._send_error: AcpConnectionClosed | None = None
        child_env = child_environment(env, pass_through=pass_env, inherit_all=inherit_env)
        self._process = subprocess.Popen(
            list(argv), stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
            cwd=cwd, env=child_env, **spawn_options(),
        )
        self._lines = _Inbox(max_message_bytes)
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
                    self._lines.put(stripped, len(stripped))
        except (OSError, ValueError):  # pragma: no cover - the pipe was closed under us
            pass
        finally:
            self._lines.put(_EOF)

    def send(self, message: bytes) -> None:
        """Write one message line within ``send_timeout_s`` (see module docs)."""
        stdin = self._process.stdin
        assert stdin is not None
        deadline = time.monotonic() + self.send_timeout_s
        if not self._write_lock.acquire(timeout=self.send_timeout_s):
            raise self._stalled()
        try:
            if self._send_error is not None:
                raise self._send_error
            try:
                write_before(stdin.fileno(), message + b"\n", deadline)
            except TimeoutError:
                raise self._stalled() from None
            except (ValueError, OSError):
                raise AcpConnectionClosed("the agent process closed its input") from None
        finally:
            self._write_lock.release()

    def _stalled(self) -> AcpConnectionClosed:
        """The agent stopped reading: the connection is dropped and its process group killed."""
        if self._send_error is None:
            self._send_error = AcpConnectionClosed(
                f"the agent did not read its input for {self.send_timeout_s:g} s; the connection was closed")
            kill_group(self._process, reap=False)
        return self._send_error

    def receive(self, timeout: float | None) -> bytes | None:
        item = self._lines.get(timeout)
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
        self._lines.close()  # a reader waiting for room goes on to read until end of file
        if process.returncode is None:
            stop_group(process, shutdown_s=self._shutdown_s, terminate_s=self._terminate_s, drained=drained)
        reader.join(timeout=2)  # the group is gone, so the pipe reaches end of file
        if process.stdout is not None:
            process.stdout.close()
