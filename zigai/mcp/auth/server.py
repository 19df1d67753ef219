"""MCP server authorization policy: Bearer validation for the canonical resource, RFC 9728 metadata.

Job
    :class:`BearerAuthPolicy` decides, from the request headers alone (before the body is read
    or parsed), whether an HTTP request to a protected MCP server may reach the dispatcher, and
    builds the owned ``WWW-Authenticate`` answer when it may not.  It also renders the
    server's protected resource metadata for ``/.well-known/oauth-protected-resource[/path]``.

Invariants
    * The application's ``verify`` callable maps a token to an :class:`AccessToken` (or None);
      the policy then requires the token's audience to include the canonical resource (RFC
      8707: a token minted for another server is refused), an unexpired ``expires_at`` and
      every scope the request needs (``required_scopes`` plus ``scopes_for(method, name)``,
      read from the ``Mcp-Method`` / ``Mcp-Name`` headers the dispatcher later checks against
      the body).
    * Missing token -> ``401`` with ``resource_metadata`` and ``scope`` but no ``error``
      (RFC 6750 section 3.1); unusable token -> ``401 invalid_token``; malformed
      ``Authorization`` -> ``400 invalid_request``; missing scope -> ``403 insufficient_scope``
      naming every scope the request needs.
    * A token never appears in a reply, a log line or an exception message; a ``verify`` that
      raises is treated as "not valid" and logged without the token.
"""

from __future__ import annotations

import logging
import re
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlsplit

from zigai.mcp.auth.discovery import McpAuthError, canonical_resource
from zigai.mcp.wire.jsonrpc import HEADER_METHOD, HEADER_NAME

__all__ = ["AccessToken", "TokenVerifier", "AuthRefusal", "BearerAuthPolicy", "PROTECTED_RESOURCE_WELL_KNOWN"]

PROTECTED_RESOURCE_WELL_KNOWN = "/.well-known/oauth-protected-resource"
_TOKEN68 = re.compile(r"[A-Za-z0-9\-._~+/]+=*")
_log = logging.getLogger("zigai.mcp.auth_server")


@dataclass(frozen=True, slots=True)
class AccessToken:
    """What ``verify`` learned about a presented token.

    ``audience`` lists the resources the token was issued for (the RFC 8707 ``resource`` /
    JWT ``aud``); ``expires_at`` is a ``time.time()`` value or None.
    """

    scopes: tuple[str, ...] = ()
    audience: tuple[str, ...] = ()
    expires_at: float | None = None
    subject: str | None = None
    client_id: str | None = None


TokenVerifier = Callable[[str], AccessToken | None]


@dataclass(frozen=True, slots=True)
class AuthRefusal:
    """Why a request is refused: HTTP ``status``, the ``WWW-Authenticate`` value, an OAuth body."""

    status: int
    www_authenticate: str
    error: str
    description: str

    def body(self) -> dict[str, Any]:
        """The JSON body of the refusal (RFC 6750 style, not JSON-RPC)."""
        return {"error": self.error or "invalid_token", "error_description": self.description}


def _canonical_or_raw(audience: str) -> str:
    try:
        return canonical_resource(audience)
    except McpAuthError:
        return audience


def _quoted(value: str) -> str:
    return '"' + value.replace("\\", "\\\\").replace('"', '\\"') + '"'


class BearerAuthPolicy:
    """Bearer token validation for one MCP server (see the module docstring).

    ``resource`` is the server's URL (its canonical form is the resource identifier);
    ``authorization_servers`` the issuers that mint tokens for it; ``scopes_supported`` is
    published in the metadata (default: ``required_scopes``).
    """

    def __init__(
        self,
        resource: str,
        authorization_servers: Sequence[str],
        verify: TokenVerifier,
        *,
        required_scopes: Sequence[str] = (),
        scopes_for: Callable[[str, str | None], Sequence[str]] | None = None,
        scopes_supported: Sequence[str] | None = None,
        resource_name: str | None = None,
        realm: str | None = None,
    ) -> None:
        self.resource = canonical_resource(resource)
        if not authorization_servers or not all(isinstance(item, str) and item for item in authorization_servers):
            raise ValueError("authorization_servers must list at least one issuer URL")
        self.authorization_servers = tuple(authorization_servers)
        self.verify = verify
        self.required_scopes = tuple(required_scopes)
        self.scopes_for = scopes_for
        self.scopes_supported = tuple(scopes_supported) if scopes_supported is not None else self.required_scopes
        self.resource_name = resource_name
        self.realm = realm
        parts = urlsplit(self.resource)
        self.metadata_path = PROTECTED_RESOURCE_WELL_KNOWN + parts.path
        self.metadata_url = f"{parts.scheme}://{parts.netloc}{self.metadata_path}"

    def __repr__(self) -> str:
        return f"BearerAuthPolicy(resource={self.resource!r}, authorization_servers={self.authorization_servers!r})"

    def metadata(self) -> dict[str, Any]:
        """The RFC 9728 protected resource metadata document."""
        document: dict[str, Any] = {
            "resource": self.resource,
            "authorization_servers": list(self.authorization_servers),
            "bearer_methods_supported": ["header"],
        }
        if self.scopes_supported:
            document["scopes_supported"] = list(self.scopes_supported)
        if self.resource_name is not None:
            document["resource_name"] = self.resource_name
        return document

    def challenge(self, *, error: str | None = None, scope: Sequence[str] = (), description: str | None = None) -> str:
        """A ``WWW-Authenticate`` value for this resource."""
        params = []
        if self.realm is not None:
            params.append(f"realm={_quoted(self.realm)}")
        params.append(f"resource_metadata={_quoted(self.metadata_url)}")
        if scope:
            params.append(f"scope={_quoted(' '.join(scope))}")
        if error is not None:
            params.append(f"error={_quoted(error)}")
        if description is not None:
            params.append(f"error_description={_quoted(description)}")
        return "Bearer " + ", ".join(params)

    def needed_scopes(self, method: str, name: str | None) -> tuple[str, ...]:
        """``required_scopes`` plus whatever ``scopes_for`` asks for this method and name."""
        extra = tuple(self.scopes_for(method, name)) if self.scopes_for is not None else ()
        return tuple(dict.fromkeys((*self.required_scopes, *extra)))

    def check(self, headers: Mapping[str, Sequence[str]]) -> tuple[AccessToken | None, AuthRefusal | None]:
        """Validate the request (``headers`` keyed by lower-case name): (token, None) or (None, refusal)."""
        method = (headers.get(HEADER_METHOD.lower()) or ("",))[0]
        names = headers.get(HEADER_NAME.lower())
        needed = self.needed_scopes(method, names[0] if names else None)
        values = headers.get("authorization") or ()
        if not values:
            return None, AuthRefusal(401, self.challenge(scope=needed), "invalid_token",
                                     "this MCP server requires a Bearer access token")
        scheme, _, token = values[0].strip().partition(" ")
        token = token.strip()
        if len(values) != 1 or scheme.lower() != "bearer" or not _TOKEN68.fullmatch(token):
            return None, AuthRefusal(400, self.challenge(error="invalid_request", scope=needed), "invalid_request",
                                     "send exactly one 'Authorization: Bearer <token>' header")
        try:
            info = self.verify(token)
        except Exception as exc:  # the verifier is application code; its failure must not leak the token
            _log.warning("token verification raised %s; treating the token as invalid", type(exc).__name__)
            info = None
        problem = None
        if info is None:
            problem = "the access token is not valid"
        elif self.resource not in {_canonical_or_raw(item) for item in info.audience}:
            problem = "the access token was not issued for this resource"
        elif info.expires_at is not None and info.expires_at <= time.time():
            problem = "the access token has expired"
        if problem is not None:
            return None, AuthRefusal(401, self.challenge(error="invalid_token", scope=needed, description=problem),
                                     "invalid_token", problem)
        assert info is not None
        missing = [scope for scope in needed if scope not in info.scopes]
        if missing:
            description = f"this request needs scope {' '.join(needed)!r}"
            return None, AuthRefusal(403, self.challenge(error="insufficient_scope", scope=needed,
                                                         description=description),
                                     "insufficient_scope", description)
        return info, None
