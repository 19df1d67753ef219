"""AWS credential values and the errors of the credential chain (no I/O here).

Job
    :class:`AwsCredentials` holds one access key pair, an optional session token and an
    optional expiry; :func:`parse_expiry` reads the ISO 8601 ``Expiration`` every credential
    source answers with; the :class:`AwsCredentialsError` family names what went wrong.

Invariants: the secret access key and session token never appear in ``repr`` or error
messages, and credentials refuse to be pickled.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

from zigai.errors import ProviderError

__all__ = [
    "AwsCredentials", "AwsCredentialsError", "AwsProfileNotFound", "IncompleteAwsCredentials",
    "NoAwsCredentials", "UnsupportedAwsCredentialSource", "parse_expiry",
]


class AwsCredentialsError(ProviderError):
    """Base of the AWS credential errors; nothing was sent."""


class NoAwsCredentials(AwsCredentialsError):
    """No source in the chain held credentials."""


class IncompleteAwsCredentials(AwsCredentialsError):
    """A source held an access key id without its secret (or the other way round)."""


class AwsProfileNotFound(AwsCredentialsError):
    """The profile named by ``profile`` / ``AWS_PROFILE`` is in neither shared file."""


class UnsupportedAwsCredentialSource(AwsCredentialsError):
    """The profile or environment asks for a source zigai does not implement (assume-role,
    web identity, IAM Identity Center); nothing falls back silently."""


@dataclass(frozen=True, slots=True)
class AwsCredentials:
    """An access key pair, an optional session token and an optional UTC expiry."""

    access_key_id: str
    secret_access_key: str = field(repr=False)
    session_token: str | None = field(default=None, repr=False)
    expiry: datetime | None = None
    source: str = "explicit"

    def __post_init__(self) -> None:
        for name in ("access_key_id", "secret_access_key"):
            value = getattr(self, name)
            if not isinstance(value, str) or not value.strip() or not value.isascii():
                raise IncompleteAwsCredentials(f"{name} must be a non-empty ASCII string")
        token = self.session_token
        if token is not None and (not isinstance(token, str) or not token.isascii()):
            raise IncompleteAwsCredentials("session_token must be an ASCII string")
        if self.expiry is not None and self.expiry.tzinfo is None:
            raise ValueError("expiry must be timezone-aware")

    def __reduce__(self) -> Any:
        raise TypeError("AwsCredentials hold a secret and cannot be pickled")

    def secrets(self) -> tuple[str, ...]:
        """The values redaction must hide."""
        return (self.secret_access_key,) + ((self.session_token,) if self.session_token else ())


def parse_expiry(text: Any, source: str) -> datetime:
    """An ISO 8601 expiry (``2026-12-05T07:00:00Z``) as an aware UTC datetime."""
    if not isinstance(text, str):
        raise AwsCredentialsError(f"{source}: Expiration must be an ISO 8601 string")
    try:
        parsed = datetime.fromisoformat(text.replace("Z", "+00:00"))
    except ValueError:
        raise AwsCredentialsError(f"{source}: Expiration is not ISO 8601") from None
    if parsed.tzinfo is None:
        parsed = parsed.replace(tzinfo=UTC)
    return parsed.astimezone(UTC)
