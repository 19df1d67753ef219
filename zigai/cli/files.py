"""Files the CLI reads and writes: bounded reads, atomic replacement, canonical history.

* :func:`read_bounded` reads at most ``limit`` bytes (one more byte is an error), so no
  operator-named file is read into memory unbounded;
* :func:`atomic_write_text` writes a sibling temporary file, flushes and fsyncs it, then
  ``os.replace``-s it over the target.  A failure (or crash) at any point before the rename
  leaves the previous file byte-for-byte intact; the temporary file is removed on failure;
* :func:`load_history` / :func:`save_history` use the canonical version-2 history format
  of :mod:`zigai.history` (version-1 files are migrated on load and saved as version 2).

Every failure to read an operator-named file is a :class:`~zigai.cli.errors.CliUsageError`.
"""

from __future__ import annotations

import os
import tempfile
from pathlib import Path
from typing import Any

from zigai.cli.errors import CliUsageError, OutputFileNotWritten

__all__ = [
    "read_bounded", "atomic_write_text", "check_writable", "read_json_file", "load_history",
    "save_history",
]


def read_bounded(path: str | os.PathLike[str], limit: int, what: str) -> bytes:
    """The bytes of ``path``; more than ``limit`` bytes raises :class:`CliUsageError`."""
    try:
        with open(path, "rb") as handle:
            data = handle.read(limit + 1)
    except OSError as exc:
        raise CliUsageError(f"cannot read {what} {str(path)!r}: {exc.strerror or exc}") from None
    if len(data) > limit:
        raise CliUsageError(f"{what} {str(path)!r} is larger than {limit} bytes")
    return data


def check_writable(path: str | os.PathLike[str], what: str) -> None:
    """Raise :class:`CliUsageError` (naming ``path``) unless ``path`` can be written.

    Called before a run starts, so a missing or read-only folder is reported before any model
    request is paid for."""
    target = Path(path)
    directory = target.parent if str(target.parent) else Path(".")
    if target.is_dir():
        raise CliUsageError(f"{what} {str(path)!r} is a directory; name a file")
    if not directory.is_dir():
        raise CliUsageError(
            f"cannot write {what} {str(path)!r}: folder {str(directory)!r} does not exist "
            "(create it first)"
        )
    if not os.access(directory, os.W_OK | os.X_OK):
        raise CliUsageError(f"cannot write {what} {str(path)!r}: folder {str(directory)!r} is not writable")


def atomic_write_text(path: str | os.PathLike[str], text: str, what: str = "file") -> None:
    """Replace ``path`` with ``text`` (UTF-8) atomically; the old file survives any failure.

    An operating-system failure is an :class:`OutputFileNotWritten` naming ``path`` (never the
    temporary sibling)."""
    try:
        _atomic_write(Path(path), text)
    except OSError as exc:
        raise OutputFileNotWritten(f"cannot write {what} {str(path)!r}: {exc.strerror or exc}") from None


def _atomic_write(target: Path, text: str) -> None:
    directory = target.parent if str(target.parent) else Path(".")
    fd, temp = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".tmp", dir=directory)
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(text.encode("utf-8"))
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(temp, target)
    except BaseException:
        try:
            os.unlink(temp)
        except OSError:
            pass
        raise


def read_json_file(path: str | os.PathLike[str], limits: Any, what: str) -> Any:
    """Parse a JSON file under a :class:`zigai.json.Limits` profile (operator input)."""
    from zigai import json as zjson
    from zigai.errors import JsonError

    data = read_bounded(path, limits.max_document_bytes, what)
    try:
        return zjson.parse(data, limits)
    except JsonError as exc:
        raise CliUsageError(f"{what} {str(path)!r} is not acceptable JSON: {exc}") from None


def load_history(path: str | os.PathLike[str]) -> tuple[Any, ...]:
    """The messages of a history file, or ``()`` when the file does not exist yet."""
    from zigai import history
    from zigai.errors import HistoryError
    from zigai.json import defaults

    if not os.path.exists(path):
        return ()
    data = read_bounded(path, defaults.history.max_document_bytes, "history file")
    try:
        with history.parse(data) as owned:
            return tuple(owned.messages)
    except HistoryError as exc:
        raise CliUsageError(f"history file {str(path)!r} is invalid: {exc}") from None


def save_history(path: str | os.PathLike[str], messages: Any) -> None:
    """Write ``messages`` as canonical version-2 history, atomically."""
    from zigai import history

    atomic_write_text(path, history.stringify(messages), "history file")
