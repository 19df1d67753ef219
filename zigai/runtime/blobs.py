"""The blob service: immutable byte blobs whose identity is scoped to a tenant.

A blob's id is the SHA-256 of its content type and bytes, so storing the same bytes twice in
one tenant is idempotent.  Identity is always the pair ``(tenant_id, blob_id)``: the same
content in two tenants is two independent blobs, a tenant cannot read, stat or delete
another tenant's blob (it is :class:`UnknownRecord`, indistinguishable from a missing one),
and deleting one tenant's copy leaves the other's.

Invariants: sizes are checked (:class:`BlobLimits`) before anything is stored; the in-memory
store keeps its own immutable copy of every blob and returns ``bytes`` (immutable) on read;
the store is thread-safe.
"""

from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass
from typing import Protocol, runtime_checkable

from zigai.runtime._keys import check_key
from zigai.runtime._service import LockedService
from zigai.runtime.errors import BlobTooLarge, InvalidRuntimeRecord, UnknownRecord

__all__ = ["BlobLimits", "BlobRef", "BlobStore", "InMemoryBlobStore", "blob_id_for"]

_MIB = 1024 * 1024
_CONTENT_TYPE = re.compile(r"[A-Za-z0-9!#$&^_.+-]+/[A-Za-z0-9!#$&^_.+-]+(;[ -~]*)?")


@dataclass(frozen=True, slots=True)
class BlobLimits:
    """Bounds of a blob store.  Exactly-at-limit is accepted; one more raises :class:`BlobTooLarge`."""

    max_blob_bytes: int = 64 * _MIB
    max_total_bytes: int = 1024 * _MIB
    max_tenant_chars: int = 128

    def __post_init__(self) -> None:
        for name in ("max_blob_bytes", "max_total_bytes", "max_tenant_chars"):
            value = getattr(self, name)
            if type(value) is not int or value <= 0:
                raise ValueError(f"BlobLimits.{name} must be an int > 0, got {value!r}")


@dataclass(frozen=True, slots=True)
class BlobRef:
    """Where a blob lives and what it is: tenant, id, size, content type."""

    tenant_id: str
    blob_id: str
    size: int
    content_type: str


def blob_id_for(data: bytes, content_type: str) -> str:
    """The content identity of ``data`` with ``content_type`` (``sha256-<hex>``)."""
    digest = hashlib.sha256(content_type.encode("ascii") + b"\x00" + data).hexdigest()
    return f"sha256-{digest}"


@runtime_checkable
class BlobStore(Protocol):
    """The blob service contract; every operation carries the tenant."""

    def put(self, tenant_id: str, data: bytes, *, content_type: str = ...) -> BlobRef: ...

    def get(self, tenant_id: str, blob_id: str) -> bytes: ...

    def stat(self, tenant_id: str, blob_id: str) -> BlobRef: ...

    def delete(self, tenant_id: str, blob_id: str) -> None: ...

    def blobs(self, tenant_id: str) -> tuple[BlobRef, ...]: ...


class InMemoryBlobStore(LockedService):
    """A thread-safe in-process :class:`BlobStore`."""

    _service_name = "blob store"

    def __init__(self, limits: BlobLimits | None = None) -> None:
        self._limits = limits if limits is not None else BlobLimits()
        super().__init__()
        self._blobs: dict[tuple[str, str], tuple[BlobRef, bytes]] = {}
        self._total = 0

    @property
    def limits(self) -> BlobLimits:
        return self._limits

    @property
    def total_bytes(self) -> int:
        return self._total

    def _clear(self) -> None:
        self._blobs.clear()
        self._total = 0

    def put(self, tenant_id: str, data: bytes | bytearray | memoryview, *,
            content_type: str = "application/octet-stream") -> BlobRef:
        """Store ``data`` for ``tenant_id``; the same bytes and type again return the same ref."""
        check_key(tenant_id, "tenant id", self._limits.max_tenant_chars)
        if not isinstance(data, (bytes, bytearray, memoryview)):
            raise InvalidRuntimeRecord(f"blob data must be bytes, got {type(data).__name__}")
        if not isinstance(content_type, str) or not _CONTENT_TYPE.fullmatch(content_type):
            raise InvalidRuntimeRecord(f"content type {content_type!r} is not a media type like 'text/plain'")
        size = memoryview(data).nbytes
        if size > self._limits.max_blob_bytes:
            raise BlobTooLarge(f"blob is {size} bytes; the limit is {self._limits.max_blob_bytes}",
                               limit=self._limits.max_blob_bytes)
        owned = bytes(data)
        ref = BlobRef(tenant_id, blob_id_for(owned, content_type), size, content_type)
        with self._lock:
            self._check_open()
            if (tenant_id, ref.blob_id) in self._blobs:
                return ref
            if self._total + size > self._limits.max_total_bytes:
                raise BlobTooLarge(f"storing {size} bytes would exceed the store's capacity of "
                                   f"{self._limits.max_total_bytes} bytes", limit=self._limits.max_total_bytes)
            self._blobs[(tenant_id, ref.blob_id)] = (ref, owned)
            self._total += size
        return ref

    def _find(self, tenant_id: str, blob_id: str) -> tuple[BlobRef, bytes]:
        check_key(tenant_id, "tenant id", self._limits.max_tenant_chars)
        with self._lock:
            self._check_open()
            found = self._blobs.get((tenant_id, blob_id)) if isinstance(blob_id, str) else None
        if found is None:
            raise UnknownRecord(f"no blob {blob_id!r} in tenant {tenant_id!r}", key=str(blob_id))
        return found

    def get(self, tenant_id: str, blob_id: str) -> bytes:
        return self._find(tenant_id, blob_id)[1]

    def stat(self, tenant_id: str, blob_id: str) -> BlobRef:
        return self._find(tenant_id, blob_id)[0]

    def delete(self, tenant_id: str, blob_id: str) -> None:
        """Remove the tenant's blob (another tenant's copy of the same bytes stays)."""
        check_key(tenant_id, "tenant id", self._limits.max_tenant_chars)
        with self._lock:
            self._check_open()
            found = self._blobs.pop((tenant_id, blob_id), None) if isinstance(blob_id, str) else None
            if found is not None:
                self._total -= found[0].size
        if found is None:
            raise UnknownRecord(f"no blob {blob_id!r} in tenant {tenant_id!r}", key=str(blob_id))

    def blobs(self, tenant_id: str) -> tuple[BlobRef, ...]:
        """The tenant's blobs, oldest first."""
        check_key(tenant_id, "tenant id", self._limits.max_tenant_chars)
        with self._lock:
            self._check_open()
            return tuple(ref for (owner, _), (ref, _) in self._blobs.items() if owner == tenant_id)
