"""Who may reach a zigai HTTP endpoint: the deployment policy shared by the MCP server and the UI.

Job
    :class:`DeploymentPolicy` holds the allowlists; :meth:`DeploymentPolicy.check` decides from
    the request's ``Host`` and ``Origin`` headers and its TLS state alone, before any body is
    read, whether an endpoint serves the request.  A leaf: no I/O, stdlib only.

Invariants
    * The default policy serves loopback ``Host`` values only (DNS rebinding points a foreign
      name at 127.0.0.1; its ``Host`` still names the foreign site), accepts browser ``Origin``
      values only from loopback pages, and accepts cleartext only for a loopback ``Host``.
    * Widening is explicit: ``allowed_hosts`` / ``allowed_origins`` replace the loopback rule
      with an exact list (``"name:*"`` matches any port).
    * Exactly one ``Host`` is required; a repeated ``Origin`` or ``Origin: null`` is refused.
      A request without ``Origin`` (not sent by a browser) passes the Origin check.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from zigai.security import is_loopback_host

__all__ = ["DeploymentPolicy", "Refusal", "fold_headers"]

def _is_loopback(host: str) -> bool:
    """A loopback ``Host``/``Origin`` name: :func:`~zigai.security.is_loopback_host`, plus any
    ``*.localhost`` name (RFC 6761 keeps them on this machine) and a trailing dot."""
    host = host.strip("[]").rstrip(".").lower()
    return host.endswith(".localhost") or is_loopback_host(host)


def _split_host(value: str) -> tuple[str, str | None]:
    if value.startswith("["):
        host, _, rest = value[1:].partition("]")
        return host.lower(), rest[1:] if rest.startswith(":") else None
    host, colon, port = value.rpartition(":")
    if not colon or ":" in host:
        return value.lower(), None
    return host.lower(), port


def _allowed(value: str, patterns: Sequence[str]) -> bool:
    for pattern in patterns:
        if pattern.endswith(":*"):
            if value.lower().startswith(pattern[:-1].lower()) and value[len(pattern) - 1:].isdigit():
                return True
        elif value.lower() == pattern.lower():
            return True
    return False


def fold_headers(lines: Sequence[tuple[str, str]]) -> dict[str, tuple[str, ...]]:
    """Header lines as sent, as :meth:`DeploymentPolicy.check` takes them: lower-cased names,
    every value of a repeated name kept in order, surrounding blanks stripped."""
    folded: dict[str, tuple[str, ...]] = {}
    for name, value in lines:
        key = name.lower()
        folded[key] = (*folded.get(key, ()), value.strip(" \t"))
    return folded


@dataclass(frozen=True, slots=True)
class Refusal:
    """Why a request is refused: HTTP ``status``, a stable ``code`` and a ``reason`` for people."""

    status: int
    code: str
    reason: str


@dataclass(frozen=True, slots=True)
class DeploymentPolicy:
    """Who may reach an HTTP endpoint (see the module docstring).

    ``allowed_hosts`` are ``Host`` values (``"mcp.example.com"``, ``"127.0.0.1:8000"``,
    ``"localhost:*"`` for any port); None allows loopback hosts only.  ``allowed_origins`` are
    browser origins (``"https://app.example.com"``, ``"http://localhost:*"``); None allows
    loopback origins only.  ``require_tls`` None means "TLS unless the Host is loopback".
    ``max_body_bytes``, ``sse_commit_s`` and ``keepalive_s`` are read by the MCP HTTP server only.
    """

    allowed_hosts: tuple[str, ...] | None = None
    allowed_origins: tuple[str, ...] | None = None
    require_tls: bool | None = None
    max_body_bytes: int | None = None
    sse_commit_s: float = 15.0
    keepalive_s: float = 15.0

    def check(self, headers: Mapping[str, tuple[str, ...]], tls: bool) -> Refusal | None:
        """The refusal for a request with these (lower-cased, unfolded) headers, or None."""
        host_values = headers.get("host", ())
        if len(host_values) != 1:
            return Refusal(421, "HostNotAllowed", "exactly one Host header is required")
        host_value = host_values[0]
        loopback = _is_loopback(_split_host(host_value)[0])
        if self.allowed_hosts is None:
            if not loopback:
                return Refusal(421, "HostNotAllowed", "this endpoint serves loopback Host names only")
        elif not _allowed(host_value, self.allowed_hosts):
            return Refusal(421, "HostNotAllowed", "the Host header is not one this endpoint serves")
        require_tls = (not loopback) if self.require_tls is None else self.require_tls
        if require_tls and not tls:
            return Refusal(403, "TlsRequired", "cleartext HTTP is not accepted here; use https")
        origins = headers.get("origin", ())
        if origins and not self.origin_allowed(origins):
            return Refusal(403, "OriginNotAllowed", "the Origin header is not allowed")
        return None

    def origin_allowed(self, origins: Sequence[str]) -> bool:
        """Whether a browser ``Origin`` (the header's values) may use this endpoint."""
        if len(origins) != 1 or origins[0] == "null":
            return False
        origin = origins[0]
        if self.allowed_origins is not None:
            return _allowed(origin, self.allowed_origins)
        scheme, sep, rest = origin.partition("://")
        return bool(sep) and scheme in ("http", "https") and _is_loopback(_split_host(rest)[0])

    def refusal(self, headers: Mapping[str, tuple[str, ...]], tls: bool) -> tuple[int, str] | None:
        """(status, reason) when the request must be refused before its body is read."""
        refused = self.check(headers, tls)
        return None if refused is None else (refused.status, refused.reason)
