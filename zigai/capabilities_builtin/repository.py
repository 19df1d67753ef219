"""The ``repository`` capability: list, read and search the files of one rooted directory.

Invariants:

* every path goes through the borrowed :class:`~zigai.environments.RootedDirectory`
  (relative paths only, resolved beneath the root, symbolic links and special files refused);
  a refused or missing path is a model-visible retry, a closed root fails the run;
* a read returns at most ``max_file_bytes`` from ``offset`` and says where to continue; a
  listing at most ``max_listing_entries``; a search visits at most ``max_search_files``
  files (``.git`` is skipped), reads at most ``max_file_bytes`` of each and returns at most
  ``max_search_matches`` lines of at most ``max_line_chars`` characters — each cut is stated
  in the result.
"""

from __future__ import annotations

from collections import deque

from zigai.capabilities_builtin._files import PATH_ERRORS, read_slice, slice_text
from zigai.capabilities_builtin.bounds import BuiltinLimits, bounded_list, bounded_text
from zigai.capability import Capability
from zigai.environments import RootedDirectory
from zigai.reflect import tool
from zigai.tool import ModelRetry

__all__ = ["repository_capability"]

_SKIPPED_DIRECTORIES = frozenset({".git"})


def repository_capability(root: RootedDirectory, limits: BuiltinLimits) -> Capability:
    """The ``repository`` bundle over ``root`` (borrowed: the caller closes it)."""

    def repository_list(path: str = "") -> list[str]:
        """List one directory of the repository (a path relative to its root; directories end with '/')."""
        try:
            entries = root.list_dir(path)
        except PATH_ERRORS as exc:
            raise ModelRetry(f"cannot list {path!r}: {exc}") from None
        names = [name + ("/" if kind == "directory" else "") for name, kind in entries]
        return bounded_list(names, limits.max_listing_entries, "entries")

    def repository_read(path: str, offset: int = 0) -> str:
        """Read a text file of the repository; a long file is returned in parts (pass the offset it names)."""
        if offset < 0:
            raise ModelRetry("offset must be >= 0")
        try:
            part = read_slice(root, path, offset=offset, max_bytes=limits.max_file_bytes)
        except PATH_ERRORS as exc:
            raise ModelRetry(f"cannot read {path!r}: {exc}") from None
        return slice_text(path, part)

    def repository_search(text: str, path: str = "", ignore_case: bool = False) -> list[str]:
        """Find lines containing `text` (plain text, not a pattern) in the files under `path`; each match is 'file:line: content'."""
        if not text:
            raise ModelRetry("give a non-empty text to search for")
        needle = text.casefold() if ignore_case else text
        matches: list[str] = []
        visited = 0
        stopped = False
        pending: deque[str] = deque([path.strip("/")])
        try:
            while pending and not stopped:
                directory = pending.popleft()
                for name, kind in root.list_dir(directory):
                    child = f"{directory}/{name}" if directory else name
                    if kind == "directory" and name not in _SKIPPED_DIRECTORIES:
                        pending.append(child)
                    elif kind == "file":
                        if visited == limits.max_search_files:
                            stopped = True
                            break
                        visited += 1
                        if not _search_file(root, child, needle, ignore_case, limits, matches):
                            return matches + ["[more matches not shown; search a narrower path or text]"]
        except PATH_ERRORS as exc:
            raise ModelRetry(f"cannot search {path!r}: {exc}") from None
        if stopped:
            matches.append(f"[search stopped after {visited} files; search a subdirectory for the rest]")
        return matches

    return Capability(
        id="repository",
        description="Read-only access to the files of one repository: list, read, search.",
        tools=(tool("repository_list", None, repository_list),
               tool("repository_read", None, repository_read),
               tool("repository_search", None, repository_search)),
        instructions="Use repository_list, repository_read and repository_search to look at the "
                     "repository's files; paths are relative to its root.",
    )


def _search_file(root: RootedDirectory, path: str, needle: str, ignore_case: bool,
                 limits: BuiltinLimits, matches: list[str]) -> bool:
    """Append this file's matching lines; False once one more match than allowed was found."""
    try:
        data = read_slice(root, path, offset=0, max_bytes=limits.max_file_bytes).data
    except PATH_ERRORS:  # pragma: no cover - a race: the file vanished or was swapped between list and open
        return True  # a file that vanished or became a link while searching has no match
    if b"\x00" in data[:8192]:
        return True
    for number, line in enumerate(data.decode("utf-8", errors="replace").splitlines(), 1):
        haystack = line.casefold() if ignore_case else line
        if needle in haystack:
            if len(matches) == limits.max_search_matches:
                return False
            matches.append(f"{path}:{number}: {bounded_text(line, limits.max_line_chars)}")
    return True
