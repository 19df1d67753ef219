"""AWS credentials from the container credentials endpoint and EC2 instance metadata (IMDSv2).

Job
    :func:`container_credentials` reads ``AWS_CONTAINER_CREDENTIALS_RELATIVE_URI`` (joined to
    ``http://169.254.170.2``) or ``AWS_CONTAINER_CREDENTIALS_FULL_URI`` and sends the token of
    ``AWS_CONTAINER_AUTHORIZATION_TOKEN_FILE`` (preferred) or
    ``AWS_CONTAINER_AUTHORIZATION_TOKEN`` as ``Authorization`` (ECS task roles, EKS Pod
    Identity).  :func:`instance_credentials` speaks IMDSv2: ``PUT /latest/api/token``, then
    the role name and the role's credentials with the session token; it is skipped when
    ``AWS_EC2_METADATA_DISABLED`` is ``true`` and reads ``AWS_EC2_METADATA_SERVICE_ENDPOINT``
    / ``AWS_EC2_METADATA_SERVICE_ENDPOINT_MODE`` (``IPv6``) like the SDKs.

Invariants
    * The metadata addresses are link-local and every default :class:`~zigai.security.UrlPolicy`
      refuses them.  :func:`metadata_policy` is the one documented exception: plain ``http``
      is allowed only to :data:`METADATA_HOSTS` and loopback hosts (the rule the SDKs apply to
      ``AWS_CONTAINER_CREDENTIALS_FULL_URI``), each call's policy allows exactly that one host,
      and ``https`` endpoints keep the default policy.  The provider's own policy is unchanged.
    * Each call is bounded in time (``timeout_s``) and size (:data:`MAX_METADATA_BYTES`); no
      redirect is followed; IMDSv1 (no token) is never used.
    * Failures raise :class:`MetadataCredentialsError` with the endpoint's host and the HTTP
      status only: a response body may hold a secret.  An unreachable instance metadata
      service means "not on EC2" and yields ``None``.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any
from urllib.parse import urlsplit

from zigai.errors import TransportError
from zigai.providers.bedrock.aws_values import (
    AwsCredentials,
    AwsCredentialsError,
    parse_expiry,
)
from zigai.security import UrlPolicy, UrlPolicyViolation, is_loopback_host

__all__ = [
    "CONTAINER_HOST", "MAX_METADATA_BYTES", "METADATA_HOSTS", "MetadataCredentialsError",
    "container_credentials", "container_url", "instance_credentials", "metadata_policy",
]

CONTAINER_HOST = "169.254.170.2"
#: The AWS metadata addresses the metadata policy exception admits over plain http.
METADATA_HOSTS: frozenset[str] = frozenset({
    "169.254.169.254", "fd00:ec2::254", CONTAINER_HOST, "169.254.170.23", "fd00:ec2::23",
})
MAX_METADATA_BYTES = 64 * 1024
_TOKEN_TTL_S = "21600"


class MetadataCredentialsError(AwsCredentialsError):
    """A container or instance metadata endpoint refused, failed or answered malformed JSON."""


def metadata_policy(url: str) -> UrlPolicy:
    """The URL policy one metadata call runs under (see the module invariants)."""
    parts = urlsplit(url)
    host = (parts.hostname or "").lower()
    if parts.scheme == "https":
        return UrlPolicy()
    if parts.scheme == "http" and (host in METADATA_HOSTS or is_loopback_host(host)):
        return UrlPolicy(allow_http=True, allow_local_network=True, allowed_hosts=frozenset({host}))
    raise UrlPolicyViolation(
        f"credential endpoint host {host!r} is not allowed: plain http only reaches loopback "
        f"hosts and {', '.join(sorted(METADATA_HOSTS))}; use https otherwise"
    )


def _call(method: str, url: str, headers: tuple[tuple[str, str], ...],
          timeout_s: float) -> tuple[int, bytes]:
    import time

    from zigai.transport.base import Limits, TransportRequest
    from zigai.transport.http import HttpTransport

    with HttpTransport(limits=Limits(max_response_body_bytes=MAX_METADATA_BYTES),
                       url_policy=metadata_policy(url), default_timeout_s=timeout_s) as transport:
        response = transport.send(TransportRequest(
            method, url, headers, b"" if method == "PUT" else None, time.monotonic() + timeout_s))
    return response.status, response.body


def _get(url: str, headers: tuple[tuple[str, str], ...], timeout_s: float, source: str,
         host: str, *, missing_ok: bool = False) -> bytes | None:
    """The body of a 200 answer (None for 404 when ``missing_ok``); anything else raises."""
    try:
        status, body = _call("GET", url, headers, timeout_s)
    except TransportError as error:
        raise MetadataCredentialsError(
            f"{source} at {host} failed: {type(error).__name__}") from None
    if status == 404 and missing_ok:
        return None
    if status != 200:
        raise MetadataCredentialsError(f"{source} at {host} answered HTTP {status}")
    return body


def _credentials(body: bytes, source: str, host: str) -> AwsCredentials:
    try:
        value = json.loads(body.decode("utf-8"))
    except (UnicodeDecodeError, ValueError):
        raise MetadataCredentialsError(f"{source} at {host} answered no JSON object") from None
    if not isinstance(value, dict):
        raise MetadataCredentialsError(f"{source} at {host} answered no JSON object")
    if value.get("Code", "Success") != "Success":
        raise MetadataCredentialsError(f"{source} at {host} answered Code {value.get('Code')!r}")
    key_id, secret = value.get("AccessKeyId"), value.get("SecretAccessKey")
    token: Any = value.get("Token")
    if not (isinstance(key_id, str) and key_id and isinstance(secret, str) and secret):
        raise MetadataCredentialsError(f"{source} at {host} answered no AccessKeyId / "
                                       "SecretAccessKey")
    if token is not None and not isinstance(token, str):
        raise MetadataCredentialsError(f"{source} at {host} answered a non-string Token")
    expiry = value.get("Expiration")
    return AwsCredentials(key_id, secret, token or None,
                          None if expiry is None else parse_expiry(expiry, source), source)


def container_url(env: Mapping[str, str]) -> str | None:
    """The container credentials URL the variables name (the relative one wins), or None."""
    relative = env.get("AWS_CONTAINER_CREDENTIALS_RELATIVE_URI")
    if relative:
        return f"http://{CONTAINER_HOST}{relative if relative.startswith('/') else '/' + relative}"
    return env.get("AWS_CONTAINER_CREDENTIALS_FULL_URI") or None


def container_credentials(env: Mapping[str, str], timeout_s: float) -> AwsCredentials | None:
    """Credentials from the container endpoint, or None when no variable names one."""
    url = container_url(env)
    if url is None:
        return None
    source = "container credentials"
    token_file = env.get("AWS_CONTAINER_AUTHORIZATION_TOKEN_FILE")
    token = env.get("AWS_CONTAINER_AUTHORIZATION_TOKEN")
    if token_file:
        try:
            with open(token_file, "rb") as handle:
                token = handle.read(MAX_METADATA_BYTES).decode("ascii").strip()
        except (OSError, UnicodeDecodeError):
            raise MetadataCredentialsError(
                f"AWS_CONTAINER_AUTHORIZATION_TOKEN_FILE {token_file!r} cannot be read as ASCII"
            ) from None
    headers: tuple[tuple[str, str], ...] = (("Accept", "application/json"),)
    if token:
        headers += (("Authorization", token),)
    host = urlsplit(url).hostname or ""
    body = _get(url, headers, timeout_s, source, host)
    assert body is not None
    return _credentials(body, source, host)


def _imds_root(env: Mapping[str, str]) -> str:
    endpoint = env.get("AWS_EC2_METADATA_SERVICE_ENDPOINT")
    if endpoint:
        return endpoint.rstrip("/")
    if env.get("AWS_EC2_METADATA_SERVICE_ENDPOINT_MODE", "").lower() == "ipv6":
        return "http://[fd00:ec2::254]"
    return "http://169.254.169.254"


def instance_credentials(env: Mapping[str, str], timeout_s: float) -> AwsCredentials | None:
    """Credentials of the instance role over IMDSv2; None when metadata is disabled or not
    reachable (not on EC2)."""
    if env.get("AWS_EC2_METADATA_DISABLED", "").lower() == "true":
        return None
    root = _imds_root(env)
    host = urlsplit(root).hostname or ""
    source = "instance metadata"
    try:
        status, token = _call("PUT", f"{root}/latest/api/token",
                              (("X-aws-ec2-metadata-token-ttl-seconds", _TOKEN_TTL_S),), timeout_s)
    except TransportError:
        return None
    if status != 200 or not token:
        raise MetadataCredentialsError(
            f"{source} at {host} refused an IMDSv2 token (HTTP {status}); zigai does not fall "
            "back to IMDSv1")
    headers = (("X-aws-ec2-metadata-token", token.decode("ascii", "replace").strip()),)
    base = f"{root}/latest/meta-data/iam/security-credentials/"
    roles = _get(base, headers, timeout_s, source, host, missing_ok=True)
    role = [] if roles is None else roles.decode("utf-8", "replace").strip().splitlines()
    if not role or not role[0].strip():
        return None  # an instance without a role
    body = _get(base + role[0].strip(), headers, timeout_s, source, host)
    assert body is not None
    return _credentials(body, source, host)
