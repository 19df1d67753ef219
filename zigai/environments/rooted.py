"""``RootedDirectory``: an open directory handle that is the only filesystem authority.

Every operation takes a *relative* path and resolves it beneath the handle one component at a
time: each intermediate component is opened with ``os.open(name, O_DIRECTORY | O_NOFOLLOW,
dir_fd=parent)`` and the final component is opened (or removed, created, renamed) relative to
the descriptor of its parent.  No operation ever builds an absolute host path from the input,
so a path never becomes an ambient process path.

Invariants:

* absolute paths and ``..`` components raise :class:`PathOutsideRoot`; empty, ``.`` (except
  the whole path ``""`` or ``"."``, meaning the root itself), NUL and backslash components
  raise :class:`InvalidPath` -- before any I/O;
* a symbolic link anywhere on the path raises :class:`SymlinkRefused`, whether it was present
  when the component was checked or swapped in between the check and the open (the open
  itself carries ``O_NOFOLLOW``, so the check is advisory and the open is the guarantee);
* file operations accept only regular files: devices, FIFOs and sockets raise
  :class:`SpecialFileRefused`.  Files are opened ``O_NONBLOCK | O_NOCTTY`` and re-checked with
  ``fstat`` on the open descriptor, so a FIFO planted after the check neither blocks nor passes;
* ordinary filesystem conditions stay ordinary ``OSError`` subclasses (``FileNotFoundError``,
  ``FileExistsError``, ``NotADirectoryError``, ``IsADirectoryError``);
* reads are bounded (:class:`FileTooLarge`: exactly ``max_bytes`` passes, one more fails);
* use after :meth:`close` raises :class:`EnvironmentClosed`.

Honest limits: the root path given to :meth:`RootedDirectory.open` is the application's own
choice and is opened once (following links in *that* path is the application's decision).  A
directory already opened beneath the root that another process later moves outside the root
keeps working through its descriptor; keep hostile writers out of the tree you hand to tools.
Linux ``openat2(RESOLVE_BENEATH)`` is not used: the portable walk is the implementation.
"""

from __future__ import annotations

import errno
import os
import shutil
import stat
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import BinaryIO, Literal

from zigai._owner import Owner
from zigai.environments.errors import (
    EnvironmentClosed,
    FileTooLarge,
    InvalidPath,
    PathOutsideRoot,
    SpecialFileRefused,
    SymlinkRefused,
)

__all__ = ["RootedDirectory", "PathInfo", "PathKind", "DEFAULT_MAX_READ_BYTES", "split_relative"]

DEFAULT_MAX_READ_BYTES = 16 * 1024 * 1024

PathKind = Literal["file", "directory", "symlink", "fifo", "socket", "char_device", "block_device", "other"]

_CLOEXEC = getattr(os, "O_CLOEXEC", 0)
_DIR_FLAGS = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | _CLOEXEC
_FILE_GUARD = os.O_NOFOLLOW | _CLOEXEC | os.O_NONBLOCK | getattr(os, "O_NOCTTY", 0)
_READ_CHUNK = 64 * 1024

_OPEN_MODES: dict[str, int] = {
    "rb": os.O_RDONLY,
    "wb": os.O_WRONLY | os.O_CREAT | os.O_TRUNC,
    "xb": os.O_WRONLY | os.O_CREAT | os.O_EXCL,
    "ab": os.O_WRONLY | os.O_CREAT | os.O_APPEND,
    "r+b": os.O_RDWR,
}


def _kind(mode: int) -> PathKind:
    if stat.S_ISREG(mode):
        return "file"
    if stat.S_ISDIR(mode):
        return "directory"
    if stat.S_ISLNK(mode):
        return "symlink"
    if stat.S_ISFIFO(mode):
        return "fifo"
    if stat.S_ISSOCK(mode):
        return "socket"
    if stat.S_ISCHR(mode):
        return "char_device"
    if stat.S_ISBLK(mode):
        return "block_device"
    return "other"  # pragma: no cover - no other file type exists on Linux


@dataclass(frozen=True, slots=True)
class PathInfo:
    """What :meth:`RootedDirectory.stat` reports about one entry (links are not followed)."""

    kind: PathKind
    size: int
    mode: int
    mtime_ns: int


def split_relative(path: str) -> tuple[str, ...]:
    """The components of a root-relative POSIX path (``""`` and ``"."`` are the root itself)."""
    if not isinstance(path, str):
        raise InvalidPath(f"a rooted path must be a str, got {type(path).__name__}")
    if path in ("", "."):
        return ()
    if "\x00" in path:
        raise InvalidPath("a rooted path must not contain NUL", path=path.replace("\x00", "\\0"))
    if "\\" in path:
        raise InvalidPath("a rooted path uses '/' separators; backslashes are refused", path=path)
    if path.startswith("/"):
        raise PathOutsideRoot(f"absolute path {path!r} refused: paths are relative to the root", path=path)
    parts = tuple(path.split("/"))
    for part in parts:
        if part == "..":
            raise PathOutsideRoot(f"path {path!r} refused: '..' would leave the directory", path=path)
        if part in ("", "."):
            raise InvalidPath(f"path {path!r} has an empty or '.' component", path=path)
    return parts


# The check half of check-then-open.  A module-level function so a test can interpose between
# the check and the open deterministically; the open never relies on this result.
def _lstat(name: str, dir_fd: int) -> os.stat_result | None:
    try:
        return os.stat(name, dir_fd=dir_fd, follow_symlinks=False)
    except FileNotFoundError:
        return None


def _refuse_kind(st: os.stat_result, shown: str, want: str) -> None:
    kind = _kind(st.st_mode)
    if kind == "symlink":
        raise SymlinkRefused(f"{shown!r} is a symbolic link; rooted paths never follow links", path=shown)
    if kind in ("fifo", "socket", "char_device", "block_device", "other"):
        raise SpecialFileRefused(f"{shown!r} is a {kind.replace('_', ' ')}; only {want}s are allowed",
                                 path=shown, kind=kind)


def _explain_open_failure(exc: OSError, name: str, dir_fd: int, shown: str, want: str) -> None:
    """Turn ELOOP/ENOTDIR/ENXIO from a no-follow open into the named refusal when it is one."""
    if exc.errno in (errno.ELOOP, errno.ENOTDIR, errno.ENXIO, errno.EMLINK):
        st = _lstat(name, dir_fd)
        if st is not None:
            _refuse_kind(st, shown, want)
    exc.filename = shown
    raise exc


class RootedDirectory(Owner):
    """An open directory handle; every path is resolved beneath it (see module docstring)."""

    __slots__ = ("_fd",)

    _closed_error = EnvironmentClosed

    def __init__(self, fd: int) -> None:
        super().__init__()
        self._fd = fd

    @classmethod
    def open(cls, path: str | os.PathLike[str]) -> RootedDirectory:
        """Open ``path`` (an existing directory, the application's choice) as a new root."""
        fd = os.open(os.fspath(path), os.O_RDONLY | os.O_DIRECTORY | _CLOEXEC)
        return cls(fd)

    def _release(self) -> None:
        fd, self._fd = self._fd, -1
        os.close(fd)

    def fileno(self) -> int:
        """The directory descriptor (borrowed: valid until :meth:`close`)."""
        self._check()
        return self._fd

    # -- resolution ---------------------------------------------------------------------------

    def _open_child_dir(self, dir_fd: int, name: str, shown: str) -> int:
        st = _lstat(name, dir_fd)
        if st is None:
            raise FileNotFoundError(errno.ENOENT, "no such directory", shown)
        _refuse_kind(st, shown, "directory")
        try:
            return os.open(name, _DIR_FLAGS, dir_fd=dir_fd)
        except OSError as exc:
            _explain_open_failure(exc, name, dir_fd, shown, "directory")
            raise  # pragma: no cover - _explain_open_failure always raises

    def _walk(self, parts: tuple[str, ...]) -> int:
        """A new descriptor for the directory named by ``parts`` (the caller closes it)."""
        self._check()
        fd = os.dup(self._fd)
        try:
            for index, name in enumerate(parts):
                child = self._open_child_dir(fd, name, "/".join(parts[: index + 1]))
                os.close(fd)
                fd = child
        except BaseException:
            os.close(fd)
            raise
        return fd

    @contextmanager
    def _parent(self, path: str) -> Iterator[tuple[int, str, str]]:
        """``(parent_fd, final_name, shown_path)`` for a path naming something below the root."""
        parts = split_relative(path)
        if not parts:
            raise InvalidPath("this operation needs a path below the root, not the root itself", path=path)
        fd = self._walk(parts[:-1])
        try:
            yield fd, parts[-1], "/".join(parts)
        finally:
            os.close(fd)

    # -- files --------------------------------------------------------------------------------

    def _open_file_fd(self, path: str, flags: int, mode: int) -> int:
        with self._parent(path) as (dir_fd, name, shown):
            st = _lstat(name, dir_fd)
            if st is not None:
                _refuse_kind(st, shown, "regular file")
                if stat.S_ISDIR(st.st_mode):
                    raise IsADirectoryError(errno.EISDIR, "is a directory", shown)
            try:
                fd = os.open(name, flags | _FILE_GUARD, mode, dir_fd=dir_fd)
            except OSError as exc:
                _explain_open_failure(exc, name, dir_fd, shown, "regular file")
                raise  # pragma: no cover - _explain_open_failure always raises
            try:
                opened = os.fstat(fd)
                if not stat.S_ISREG(opened.st_mode):
                    kind = _kind(opened.st_mode)
                    if kind == "directory":
                        raise IsADirectoryError(errno.EISDIR, "is a directory", shown)
                    raise SpecialFileRefused(f"{shown!r} is a {kind.replace('_', ' ')}; only regular files "
                                             "are allowed", path=shown, kind=kind)
                os.set_blocking(fd, True)
            except BaseException:
                os.close(fd)
                raise
            return fd

    def open_file(self, path: str, mode: str = "rb", *, permissions: int = 0o644) -> BinaryIO:
        """A binary file object for a regular file beneath the root (the caller closes it).

        ``mode`` is one of ``rb``, ``wb``, ``xb``, ``ab``, ``r+b``; ``permissions`` applies
        when the file is created.
        """
        try:
            flags = _OPEN_MODES[mode]
        except KeyError:
            raise ValueError(f"mode must be one of {sorted(_OPEN_MODES)}, got {mode!r}") from None
        fd = self._open_file_fd(path, flags, permissions)
        return open(fd, mode, buffering=0, closefd=True)  # type: ignore[return-value]

    def read_bytes(self, path: str, *, max_bytes: int = DEFAULT_MAX_READ_BYTES) -> bytes:
        """The whole file, refusing one byte over ``max_bytes`` (:class:`FileTooLarge`)."""
        if isinstance(max_bytes, bool) or not isinstance(max_bytes, int) or max_bytes < 0:
            raise ValueError("max_bytes must be an int >= 0")
        with self.open_file(path, "rb") as handle:
            chunks: list[bytes] = []
            total = 0
            while True:
                chunk = handle.read(min(_READ_CHUNK, max_bytes + 1 - total))
                if not chunk:
                    break
                total += len(chunk)
                if total > max_bytes:
                    raise FileTooLarge(f"{path!r} is larger than max_bytes={max_bytes}",
                                       path=path, limit=max_bytes)
                chunks.append(chunk)
            return b"".join(chunks)

    def read_text(self, path: str, *, max_bytes: int = DEFAULT_MAX_READ_BYTES, encoding: str = "utf-8") -> str:
        """:meth:`read_bytes` decoded strictly."""
        return self.read_bytes(path, max_bytes=max_bytes).decode(encoding)

    def write_bytes(self, path: str, data: bytes, *, exclusive: bool = False, permissions: int = 0o644) -> None:
        """Create or truncate a regular file and write ``data`` (``exclusive``: must not exist)."""
        with self.open_file(path, "xb" if exclusive else "wb", permissions=permissions) as handle:
            view = memoryview(bytes(data))
            while view:
                written = handle.write(view)
                view = view[written:]

    def write_text(self, path: str, text: str, *, exclusive: bool = False, encoding: str = "utf-8") -> None:
        self.write_bytes(path, text.encode(encoding), exclusive=exclusive)

    # -- directories and entries --------------------------------------------------------------

    def open_dir(self, path: str) -> RootedDirectory:
        """A new, independently closed root for a directory beneath this one."""
        return RootedDirectory(self._walk(split_relative(path)))

    def mkdir(self, path: str, *, parents: bool = False, exist_ok: bool = False, permissions: int = 0o755) -> None:
        """Create a directory; ``parents`` creates missing intermediate directories too."""
        parts = split_relative(path)
        if not parts:
            if exist_ok:
                self._check()
                return
            raise FileExistsError(errno.EEXIST, "the root exists", "")
        if parents:
            for index in range(1, len(parts)):
                self.mkdir("/".join(parts[:index]), exist_ok=True, permissions=permissions)
        with self._parent(path) as (dir_fd, name, shown):
            try:
                os.mkdir(name, permissions, dir_fd=dir_fd)
            except FileExistsError:
                st = _lstat(name, dir_fd)
                if st is not None:
                    _refuse_kind(st, shown, "directory")
                if not exist_ok or st is None or not stat.S_ISDIR(st.st_mode):
                    raise FileExistsError(errno.EEXIST, "already exists", shown) from None

    def list_dir(self, path: str = "") -> tuple[tuple[str, PathKind], ...]:
        """``(name, kind)`` of every entry, sorted by name; links are reported, not followed."""
        fd = self._walk(split_relative(path))
        try:
            entries = []
            with os.scandir(fd) as scan:
                for entry in scan:
                    st = entry.stat(follow_symlinks=False)
                    entries.append((entry.name, _kind(st.st_mode)))
            return tuple(sorted(entries))
        finally:
            os.close(fd)

    def stat(self, path: str) -> PathInfo:
        """Facts about one entry without following a final link (intermediate links refused)."""
        parts = split_relative(path)
        if not parts:
            st = os.fstat(self.fileno())
        else:
            with self._parent(path) as (dir_fd, name, shown):
                found = _lstat(name, dir_fd)
                if found is None:
                    raise FileNotFoundError(errno.ENOENT, "no such file or directory", shown)
                st = found
        return PathInfo(kind=_kind(st.st_mode), size=st.st_size, mode=stat.S_IMODE(st.st_mode),
                        mtime_ns=st.st_mtime_ns)

    def exists(self, path: str) -> bool:
        """True when the entry exists (a link counts as existing; it is not followed)."""
        try:
            self.stat(path)
        except FileNotFoundError:
            return False
        return True

    def remove(self, path: str) -> None:
        """Remove a file, link or special entry (never what a link points at)."""
        with self._parent(path) as (dir_fd, name, _shown):
            os.unlink(name, dir_fd=dir_fd)

    def remove_dir(self, path: str) -> None:
        """Remove an empty directory."""
        with self._parent(path) as (dir_fd, name, _shown):
            os.rmdir(name, dir_fd=dir_fd)

    def remove_tree(self, path: str) -> None:
        """Remove a directory and everything beneath it without following any link."""
        with self._parent(path) as (dir_fd, name, shown):
            st = _lstat(name, dir_fd)
            if st is None:
                raise FileNotFoundError(errno.ENOENT, "no such directory", shown)
            _refuse_kind(st, shown, "directory")
            if not stat.S_ISDIR(st.st_mode):
                raise NotADirectoryError(errno.ENOTDIR, "not a directory", shown)
            shutil.rmtree(name, dir_fd=dir_fd)

    def rename(self, source: str, target: str) -> None:
        """Rename an entry; both paths are resolved beneath this root."""
        with self._parent(source) as (src_fd, src_name, _s), self._parent(target) as (dst_fd, dst_name, _t):
            os.rename(src_name, dst_name, src_dir_fd=src_fd, dst_dir_fd=dst_fd)

    def __repr__(self) -> str:
        return f"RootedDirectory(fd={self._fd}, closed={self._closed})"
