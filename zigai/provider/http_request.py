"""``ProviderHttpRequest``: one adapter request, relative to the provider's API root.

A value module below the provider boundary (:mod:`zigai.provider` re-exports it), so the
boundary's own submodules (discovery, files) can build requests without importing the
package back.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from zigai.control import RunControl
from zigai.provider._errors import ProviderErrorView
from zigai.security import UrlPolicy
from zigai.transport.base import ResponseHeaderSink

__all__ = ["ProviderHttpRequest"]


@dataclass(frozen=True, slots=True)
class ProviderHttpRequest:
    """One adapter request, relative to the provider's API root.

    ``path`` is a relative endpoint (``"responses"``, ``"messages"``,
    ``"models/gemini-2.5-flash:generateContent?alt=sse"``); the provider joins it to its root
    and refuses anything that would leave it.  ``json_body`` is serialized by the provider;
    ``body`` is sent as given instead (file uploads: the adapter also sets ``Content-Type``).
    At most one of the two may be set.
    ``headers`` are adapter headers (e.g. ``anthropic-version``); they may not carry
    credentials and may not conflict with configured headers.  ``deadline`` is an absolute
    monotonic time; the provider tightens it with its own request timeout.
    ``idempotency_key`` is sent under ``idempotency_header`` (the adapter copies it from its
    model profile) or, when that is None, under the provider's configured idempotency header;
    with neither, no key is sent.  ``response_header_sink`` is passed to the transport, which
    shows it the raw response head while the response is open (trusted adapter code only).
    ``media_urls`` are the media URLs the encoded body carries (the provider fetches them):
    the provider checks each against its URL policy before sending, as it checks its own
    endpoint, so a direct model call cannot send a host the policy refuses.  ``url_policy``
    (the caller's, e.g. the agent's) is checked as well, on the endpoint and every media
    URL: a URL must pass both policies.
    """

    path: str
    json_body: Any = None
    method: str = "POST"
    headers: tuple[tuple[str, str], ...] = ()
    deadline: float | None = None
    control: RunControl | None = None
    idempotency_key: str | None = None
    idempotency_header: str | None = None
    error_observer: Callable[[ProviderErrorView], None] | None = None
    capture_error_body: bool = False
    max_error_body_bytes: int = 4096
    response_header_sink: ResponseHeaderSink | None = None
    body: bytes | None = None
    media_urls: tuple[str, ...] = ()
    url_policy: UrlPolicy | None = None

    def __post_init__(self) -> None:
        if not isinstance(self.path, str):
            raise TypeError("ProviderHttpRequest.path must be a string")
        object.__setattr__(self, "media_urls", tuple(self.media_urls))
        if not all(isinstance(url, str) for url in self.media_urls):
            raise TypeError("ProviderHttpRequest.media_urls must be strings")
        if self.url_policy is not None and not isinstance(self.url_policy, UrlPolicy):
            raise TypeError("ProviderHttpRequest.url_policy must be a zigai.security.UrlPolicy or None")
        if self.body is not None:
            if not isinstance(self.body, bytes):
                raise TypeError("ProviderHttpRequest.body must be bytes or None")
            if self.json_body is not None:
                raise ValueError("ProviderHttpRequest takes json_body or body, not both")
        object.__setattr__(self, "headers", tuple((str(k), str(v)) for k, v in self.headers))
        if isinstance(self.max_error_body_bytes, bool) or self.max_error_body_bytes < 0:
            raise ValueError("max_error_body_bytes must be a non-negative int")
