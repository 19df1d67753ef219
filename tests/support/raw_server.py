"""A raw-socket HTTP server on 127.0.0.1 whose replies are scripted byte by byte.

``RawServer(script)`` accepts connections on an ephemeral port; for each one it reads the
request head (and a Content-Length body, unless ``read_body=False``), then calls
``script(conn, stop)`` on that connection's thread.  The script writes whatever bytes it
likes -- a status line one byte at a time, 150 headers, a stream that never sends -- and must
return when ``stop`` is set (use ``stop.wait(seconds)`` for every pause).

Everything is bounded: sockets have timeouts, the accept loop polls, and leaving the ``with``
block sets ``stop``, closes every connection and joins the threads.
"""

from __future__ import annotations

import socket
import ssl
import threading
from collections.abc import Callable

__all__ = ["RawServer", "Script"]

Script = Callable[[socket.socket, threading.Event], None]


class RawServer:
    def __init__(
        self,
        script: Script,
        *,
        read_body: bool = True,
        tls: ssl.SSLContext | None = None,
        host: str = "127.0.0.1",
    ) -> None:
        self.script = script
        self.read_body = read_body
        self.tls = tls
        self.stop = threading.Event()
        self.requests: list[bytes] = []
        self.connections = 0
        self._listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        self._listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        self._listener.bind((host, 0))
        self._listener.listen(16)
        self._listener.settimeout(0.05)
        self.port = self._listener.getsockname()[1]
        self._threads: list[threading.Thread] = []
        self._open: list[socket.socket] = []
        self._lock = threading.Lock()

    def url(self, path: str = "/", scheme: str = "http", host: str = "127.0.0.1") -> str:
        return f"{scheme}://{host}:{self.port}{path}"

    def __enter__(self) -> RawServer:
        thread = threading.Thread(target=self._accept, daemon=True)
        thread.start()
        self._threads.append(thread)
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop.set()
        with self._lock:
            for conn in self._open:
                try:
                    conn.shutdown(socket.SHUT_RDWR)  # wakes a serving thread blocked in recv
                except OSError:
                    pass
                try:
                    conn.close()
                except OSError:
                    pass
        for thread in list(self._threads):
            thread.join(5)
        self._listener.close()

    def _accept(self) -> None:
        while not self.stop.is_set():
            try:
                conn, _ = self._listener.accept()
            except (TimeoutError, OSError):
                continue
            self.connections += 1
            thread = threading.Thread(target=self._serve, args=(conn,), daemon=True)
            with self._lock:
                self._open.append(conn)
                self._threads.append(thread)
            thread.start()

    def _serve(self, conn: socket.socket) -> None:
        conn.settimeout(5)
        try:
            if self.tls is not None:
                conn = self.tls.wrap_socket(conn, server_side=True)
                with self._lock:
                    self._open.append(conn)
            head = b""
            while b"\r\n\r\n" not in head and len(head) < 65536:
                data = conn.recv(4096)
                if not data:
                    return
                head += data
            header, _, rest = head.partition(b"\r\n\r\n")
            length = 0
            for line in header.split(b"\r\n")[1:]:
                name, _, value = line.partition(b":")
                if name.strip().lower() == b"content-length":
                    length = int(value.strip())
            if self.read_body:
                while len(rest) < length:
                    data = conn.recv(65536)
                    if not data:
                        break
                    rest += data
            self.requests.append(header)
            self.script(conn, self.stop)
        except (OSError, ssl.SSLError):
            pass
        finally:
            try:
                conn.close()
            except OSError:
                pass
