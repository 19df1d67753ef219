"""Tools for the approval example in docs/tools.md: deleting needs an operator's approval."""

from zigai.reflect import tool


def delete_files(pattern: str) -> int:
    """Delete files matching a pattern (the example only pretends)."""
    return 3


TOOLS = [tool("delete_files", None, delete_files, execution="requires_approval")]
