"""Optional provider operations: model discovery and files, with one stable "unsupported" error.

Job
    :class:`ProviderOperations` is the base every concrete provider inherits.  It declares
    ``list_models``, ``upload_file``, ``inspect_file``, ``download_file`` and ``delete_file``;
    each raises :class:`UnsupportedProviderOperation` until a provider implements it, so
    applications call the operation and catch one error instead of probing for callbacks.

Invariants
    * The defaults do no I/O and never look at their arguments.
    * ``UnsupportedProviderOperation`` names the operation and the provider.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from zigai.errors import ProviderError

if TYPE_CHECKING:
    from zigai.control import RunControl
    from zigai.provider.discovery import DiscoveryLimits, OwnedProviderModels
    from zigai.provider.files import (
        OwnedProviderFile,
        OwnedProviderFileDownload,
        ProviderFileInput,
    )

__all__ = ["ProviderOperations", "UnsupportedProviderOperation"]


class UnsupportedProviderOperation(ProviderError):
    """The provider does not offer this operation (``operation``, ``provider_name``)."""

    def __init__(self, message: str, *, operation: str = "", provider_name: str = "") -> None:
        super().__init__(message)
        self.operation = operation
        self.provider_name = provider_name


class ProviderOperations:
    """Discovery and file operations; every one is unsupported unless a provider overrides it."""

    __slots__ = ()

    def _unsupported(self, operation: str, why: str = "") -> UnsupportedProviderOperation:
        name = str(getattr(self, "name", type(self).__name__))
        detail = f": {why}" if why else ""
        return UnsupportedProviderOperation(
            f"provider {name!r} does not support {operation}{detail}",
            operation=operation, provider_name=name,
        )

    def list_models(
        self,
        *,
        limits: DiscoveryLimits | None = None,
        control: RunControl | None = None,
        deadline: float | None = None,
    ) -> OwnedProviderModels:
        """Every model the provider lists, bounded by ``limits`` (or the provider's option)."""
        raise self._unsupported("list_models")

    def upload_file(
        self, file: ProviderFileInput, *, control: RunControl | None = None,
        deadline: float | None = None,
    ) -> OwnedProviderFile:
        """Store ``file`` with the provider; the result's ``uploaded_file()`` is its handle."""
        raise self._unsupported("upload_file")

    def inspect_file(
        self, handle: Any, *, control: RunControl | None = None, deadline: float | None = None
    ) -> OwnedProviderFile:
        """The provider's current descriptor of an uploaded file."""
        raise self._unsupported("inspect_file")

    def download_file(
        self, handle: Any, *, control: RunControl | None = None, deadline: float | None = None
    ) -> OwnedProviderFileDownload:
        """The stored content of an uploaded file, with its descriptor."""
        raise self._unsupported("download_file")

    def delete_file(
        self, handle: Any, *, control: RunControl | None = None, deadline: float | None = None
    ) -> None:
        """Delete an uploaded file; returns once the provider confirmed the deletion."""
        raise self._unsupported("delete_file")
