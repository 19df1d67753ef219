"""Bounded reads beneath a :class:`~zigai.environments.RootedDirectory`, shared by the
repository and skill capabilities (the rooted handle stays the only filesystem authority)."""

from __future__ import annotations

import os

from zigai.capabilities_builtin.backends import FileSlice
from zigai.environments import InvalidPath, RootedDirectory, SpecialFileRefused, SymlinkRefused

__all__ = ["PATH_ERRORS", "read_slice", "slice_text"]

PATH_ERRORS: tuple[type[BaseException], ...] = (
    InvalidPath, SymlinkRefused, SpecialFileRefused, FileNotFoundError, NotADirectoryError,
    IsADirectoryError, PermissionError,
)
"""Failures that describe the path the model chose (retried with a message), not a broken setup."""


def read_slice(root: RootedDirectory, path: str, *, offset: int, max_bytes: int) -> FileSlice:
    """At most ``max_bytes`` of the regular file ``path`` from byte ``offset``."""
    with root.open_file(path, "rb") as handle:
        size = os.fstat(handle.fileno()).st_size
        handle.seek(offset)
        chunks: list[bytes] = []
        wanted = max_bytes
        while wanted > 0:
            chunk = handle.read(wanted)
            if not chunk:
                break
            chunks.append(chunk)
            wanted -= len(chunk)
        return FileSlice(b"".join(chunks), size, offset)


def slice_text(path: str, part: FileSlice) -> str:
    """The slice as text the model can read, saying where it stops when the file goes on."""
    if b"\x00" in part.data[:8192]:
        return f"[{path} is a binary file of {part.size} bytes; not shown]"
    data = part.data
    if part.offset + len(data) < part.size:
        data = _whole_characters(data)
    text = data.decode("utf-8", errors="replace")
    end = part.offset + len(data)
    if end < part.size:
        text += f"\n[truncated: bytes {part.offset}-{end} of {part.size} shown; read again with offset={end}]"
    return text


def _whole_characters(data: bytes) -> bytes:
    """``data`` without a UTF-8 sequence the cut split, so the next offset starts on a character."""
    try:
        data.decode("utf-8")
    except UnicodeDecodeError as exc:
        if exc.reason == "unexpected end of data":
            return data[: exc.start]
    return data
