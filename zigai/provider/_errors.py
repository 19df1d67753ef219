"""Normalized provider request errors, the error observer view and error-body decoding.

Job
    Turn one non-success provider exchange (status, headers, bounded body) into two separate
    things: a stable :class:`ProviderRequestError` subclass chosen by status, which drives the
    agent's retry policy, and an optional :class:`ProviderErrorView` handed synchronously to an
    observer.

Invariants
    * Every string stored on an error or a view (message, code, request id) has the provider's
      configured secrets replaced *before* it is truncated, so no prefix of a secret survives.
    * The raw body reaches the view only when the caller opted in (``capture_body``); it is
      redacted, then cut to ``max_body_bytes``.  A body exactly at the cap is complete and
      ``body_truncated`` is False; one byte more sets it.
    * Parsed messages and codes have their own, smaller caps
      (:data:`MAX_ERROR_MESSAGE_CHARS`, :data:`MAX_ERROR_CODE_CHARS`).
    * Errors keep only the message positionally; everything else is an attribute, so they
      pickle.  They never hold the raw body.
    * ``rate_limits`` (on errors and views) are the response's rate-limit counts as plain
      integers (:func:`zigai.transport.extract_rate_limits`), empty when none were sent.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any

from zigai.errors import JsonError, ProviderRequestError
from zigai.security import redact_bytes, redact_text

_log = logging.getLogger("zigai.provider")

__all__ = [
    "MAX_ERROR_CODE_CHARS",
    "MAX_ERROR_MESSAGE_CHARS",
    "ProviderAuthError",
    "ProviderBadRequest",
    "ProviderClientError",
    "ProviderConnectionError",
    "ProviderErrorView",
    "ProviderNotFound",
    "ProviderResponseDecodeError",
    "ProviderServerError",
    "RateLimited",
    "UnexpectedRedirect",
    "decode_error_body",
    "error_class_for_status",
    "raise_provider_error",
    "redact_body",
]

MAX_ERROR_MESSAGE_CHARS = 1024
MAX_ERROR_CODE_CHARS = 128
# Error bodies larger than this are not parsed for a code/message (the raw-body capture is
# separate and has its own cap).  Provider error documents are small; this bounds the work.
MAX_PARSED_ERROR_BODY_BYTES = 256 * 1024


class _StatusFields:
    """Shared constructor (a mixin, not an error class): the message positionally, the
    normalized facts as attributes."""

    status: int | None
    code: str | None
    message: str | None
    request_id: str | None
    retry_after_s: float | None
    provider_name: str
    rate_limits: dict[str, int]

    def __init__(
        self,
        message: str,
        *,
        status: int | None = None,
        code: str | None = None,
        provider_message: str | None = None,
        request_id: str | None = None,
        retry_after_s: float | None = None,
        provider_name: str = "",
        rate_limits: Mapping[str, int] | None = None,
    ) -> None:
        super().__init__(message)  # type: ignore[call-arg]
        self.rate_limits = dict(rate_limits or {})
        self.status = status
        self.code = code
        self.message = provider_message  # the provider's own (redacted, capped) message
        self.request_id = request_id
        self.retry_after_s = retry_after_s
        self.provider_name = provider_name


class RateLimited(_StatusFields, ProviderRequestError):
    """HTTP 429: the provider asked the caller to slow down (``retry_after_s`` when sent)."""


class ProviderServerError(_StatusFields, ProviderRequestError):
    """HTTP 5xx, including 529 "overloaded"."""


class ProviderClientError(_StatusFields, ProviderRequestError):
    """A 4xx other than 429 (the specific ones below are subclasses)."""


class ProviderAuthError(ProviderClientError):
    """HTTP 401/403: the credential was missing, invalid or not permitted."""


class ProviderNotFound(ProviderClientError):
    """HTTP 404: unknown model or endpoint."""


class ProviderBadRequest(ProviderClientError):
    """HTTP 400/409/413/422: the provider refused the request as sent."""


class UnexpectedRedirect(_StatusFields, ProviderRequestError):
    """A 3xx reached the provider boundary (only when the transport returns redirects)."""


class ProviderConnectionError(_StatusFields, ProviderRequestError):
    """The exchange with the provider broke before a complete response (retry category
    ``connection``).  Adapters and custom providers raise it; ``status`` is None."""


class ProviderResponseDecodeError(_StatusFields, ProviderRequestError):
    """A successful response could not be decoded as the provider's wire format (retry
    category ``decode``).  ``status`` is the HTTP status of the undecodable response."""


def error_class_for_status(status: int) -> type[ProviderRequestError]:
    """The normalized error class for a non-2xx status."""
    if status == 429:
        return RateLimited
    if 500 <= status <= 599:
        return ProviderServerError
    if status in (401, 403):
        return ProviderAuthError
    if status == 404:
        return ProviderNotFound
    if status in (400, 409, 413, 422):
        return ProviderBadRequest
    if 400 <= status <= 499:
        return ProviderClientError
    if 300 <= status <= 399:
        return UnexpectedRedirect
    # 1xx or out-of-range codes: the provider broke HTTP; treat like a server fault.
    return ProviderServerError


@dataclass(frozen=True, slots=True)
class ProviderErrorView:
    """What an error observer sees for one non-success response.

    ``body`` is None unless the request opted in; then it is the redacted body cut to the
    configured cap, and ``body_truncated`` says whether anything was cut.  Observers are
    synchronous; copy what you need.
    """

    provider_name: str
    status: int
    code: str | None
    message: str | None
    request_id: str | None
    retry_after_s: float | None
    body: bytes | None = None
    body_truncated: bool = False
    rate_limits: Mapping[str, int] = field(default_factory=lambda: MappingProxyType({}))


def _short_text(value: Any, cap: int, secrets: Iterable[str]) -> str | None:
    if isinstance(value, bool) or value is None:
        return None
    if isinstance(value, (int, float)):
        value = str(value)
    if not isinstance(value, str) or not value:
        return None
    return redact_text(value, secrets, cap)


def _json_object(body: bytes) -> dict[str, Any] | None:
    if not body or len(body) > MAX_PARSED_ERROR_BODY_BYTES:
        return None
    from zigai import json as zjson  # leaf module; imported on the error path only

    try:
        value = zjson.parse(body, zjson.defaults.provider_response)
    except JsonError:
        return None
    return value if isinstance(value, dict) else None


def _pick_code(container: dict[str, Any], keys: tuple[str, ...]) -> Any:
    """The first non-empty string under ``keys``; else the first integer (Google repeats the
    HTTP status as a numeric ``code`` and names the category in ``status``)."""
    for key in keys:
        candidate = container.get(key)
        if isinstance(candidate, str) and candidate:
            return candidate
    for key in keys:
        candidate = container.get(key)
        if isinstance(candidate, int) and not isinstance(candidate, bool):
            return candidate
    return None


def decode_error_body(
    body: bytes, secrets: Iterable[str] = ()
) -> tuple[str | None, str | None]:
    """``(code, message)`` from the common JSON error shapes, or ``(None, None)``.

    Shapes: ``{"error": {"message", "type"|"code"|"status"}}`` (OpenAI, Google, compatible
    gateways), ``{"type": "error", "error": {"type", "message"}}`` (Anthropic), a plain
    ``{"error": "text"}``, and top-level ``message`` / ``code``.  Anything else gives no
    message.  Values are redacted with ``secrets`` and capped.
    """
    document = _json_object(body)
    if document is None:
        return None, None
    secret_list = tuple(secrets)
    inner = document.get("error")
    code: Any = None
    message: Any = None
    if isinstance(inner, dict):
        message = inner.get("message")
        code = _pick_code(inner, ("code", "type", "status"))
    elif isinstance(inner, str):
        message = inner
    if message is None:
        message = document.get("message")
    if code is None:
        code = _pick_code(
            {k: v for k, v in document.items() if not (k == "type" and v == "error")},
            ("code", "type"),
        )
    return (
        _short_text(code, MAX_ERROR_CODE_CHARS, secret_list),
        _short_text(message, MAX_ERROR_MESSAGE_CHARS, secret_list),
    )


def redact_body(body: bytes, secrets: Iterable[str]) -> bytes:
    """``body`` with every secret occurrence (UTF-8 or any JSON spelling) replaced."""
    return redact_bytes(body, secrets)


def raise_provider_error(
    *,
    provider_name: str,
    status: int,
    body: bytes,
    request_id: str | None,
    retry_after_s: float | None,
    secrets: Iterable[str] = (),
    observer: Callable[[ProviderErrorView], None] | None = None,
    capture_body: bool = False,
    max_body_bytes: int = 4096,
    rate_limits: Mapping[str, int] | None = None,
) -> None:
    """Decode, observe and raise the normalized error for one non-2xx response.

    The observer (if any) runs before the error is raised.  It is infallible as far as the
    caller is concerned: an ``Exception`` from it is logged (logger ``zigai.provider``) and
    the normalized error is raised anyway, so a faulty observer can never change the error
    category that retry policy depends on.  Always raises.
    """
    secret_list = tuple(secrets)
    code, message = decode_error_body(body, secret_list)
    safe_request_id = (
        None if request_id is None else redact_text(request_id, secret_list)
    )
    if observer is not None:
        captured: bytes | None = None
        truncated = False
        if capture_body:
            redacted = redact_body(body, secret_list)
            truncated = len(redacted) > max_body_bytes
            captured = redacted[:max_body_bytes]
        view = ProviderErrorView(
            provider_name=provider_name,
            status=status,
            code=code,
            message=message,
            request_id=safe_request_id,
            retry_after_s=retry_after_s,
            body=captured,
            body_truncated=truncated,
            rate_limits=MappingProxyType(dict(rate_limits or {})),
        )
        try:
            observer(view)
        except Exception as exc:  # fail-open: observation must not change the outcome
            _log.warning(
                "provider error observer raised %s; raising the HTTP %d error regardless",
                type(exc).__name__, status, exc_info=True,
            )
    cls: Callable[..., ProviderRequestError] = error_class_for_status(status)
    summary = f"{provider_name or 'provider'} answered HTTP {status}"
    if code:
        summary += f" ({code})"
    if message:
        summary += f": {message}"
    raise cls(
        redact_text(summary, secret_list),
        status=status,
        code=code,
        provider_message=message,
        request_id=safe_request_id,
        retry_after_s=retry_after_s,
        provider_name=provider_name,
        rate_limits=rate_limits,
    )
