"""Vertex AI provider for the Gemini client: bearer token, project + location resource paths.

Job
    :class:`Provider` owns a :class:`~zigai.providers.http.Configured` (bearer access token,
    identity ``gcp.vertex_ai``, default root ``https://aiplatform.googleapis.com/v1``) and maps the
    Gemini client's relative model operations onto the Vertex resource
    ``projects/{project}/locations/{location}/publishers/google/models/{model}:{operation}``.
    :func:`regional_api_base` returns a regional root.  ``Client`` is the Gemini client.
    :meth:`Provider.list_models` lists Google's publisher models through Model Garden
    (``v1beta1`` ``publishers/google/models``) on a second configuration with the same
    credential; ids are the last resource segment.  Vertex does not offer the AI Studio Files
    API, so the file operations stay unsupported.

Invariants
    * Only ``generateContent`` and SSE ``streamGenerateContent`` are accepted; every resource
      segment (project, location, model) is validated before any HTTP (``InvalidVertexResource``).
    * No ``x-goog-api-key`` is ever sent; the access token is borrowed — refresh it by creating a
      new provider.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable
from contextlib import AbstractContextManager
from dataclasses import replace
from typing import Any

from zigai.control import RunControl
from zigai.errors import ProviderError
from zigai.model import ModelProfile
from zigai.provider import (
    ProviderHttpRequest,
    ProviderHttpResponse,
    ProviderLineStream,
    ProviderOperations,
)
from zigai.provider.discovery import DiscoveryLimits, OwnedProviderModels
from zigai.providers._discovery import list_models_with
from zigai.providers._wire import LazyHttpTransport
from zigai.providers.google import Client
from zigai.providers.google._discovery import VertexModelListing
from zigai.providers.http import AuthStyle, Configured
from zigai.security import UrlPolicy

__all__ = [
    "API_BASE",
    "PROVIDER_NAME",
    "discovery_api_base",
    "Client",
    "InvalidVertexResource",
    "Provider",
    "regional_api_base",
]

API_BASE = "https://aiplatform.googleapis.com/v1"
PROVIDER_NAME = "gcp.vertex_ai"
_PROJECT = re.compile(r"^[a-z0-9][a-z0-9-]{0,61}[a-z0-9]$|^[a-z0-9]$")
_LOCATION = re.compile(r"^[a-z][a-z0-9-]{0,62}$")
_MODEL = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._@-]{0,127}$")
_OPERATION = re.compile(r"^models/([^/:?]+):(generateContent|streamGenerateContent\?alt=sse)$")


class InvalidVertexResource(ProviderError):
    """A project, location, model or operation is not a valid Vertex resource segment."""


def _check(value: Any, pattern: re.Pattern[str], what: str) -> str:
    if not isinstance(value, str) or not pattern.match(value):
        raise InvalidVertexResource(f"{what} {value!r} is not a valid Vertex resource segment")
    return value


def regional_api_base(location: str) -> str:
    """``https://{location}-aiplatform.googleapis.com/v1`` (``global`` gives the global root)."""
    _check(location, _LOCATION, "location")
    if location == "global":
        return API_BASE
    return f"https://{location}-aiplatform.googleapis.com/v1"


def discovery_api_base(base_url: str) -> str | None:
    """The ``v1beta1`` root Model Garden listing lives under, for a ``.../v1`` root."""
    trimmed = base_url.rstrip("/")
    return trimmed[: -len("/v1")] + "/v1beta1" if trimmed.endswith("/v1") else None


class Provider(ProviderOperations):
    """Vertex AI boundary: maps Gemini model operations onto project/location resources.

    ``discovery_base_url`` defaults to the ``v1beta1`` sibling of ``base_url``;
    ``discovery_limits`` bounds :meth:`list_models`.
    """

    __slots__ = ("name", "project", "location", "_http", "_discovery", "discovery_limits")

    def __init__(
        self,
        access_token: str,
        project: str,
        location: str = "global",
        transport: Any = None,
        *,
        base_url: str = API_BASE,
        headers: Iterable[tuple[str, str]] = (),
        url_policy: UrlPolicy | None = None,
        profile_lookup: Callable[[str], ModelProfile | None] | None = None,
        request_timeout_ms: int | None = None,
        discovery_base_url: str | None = None,
        discovery_limits: DiscoveryLimits | None = None,
    ) -> None:
        headers = tuple(headers)
        self.project = _check(project, _PROJECT, "project")
        self.location = _check(location, _LOCATION, "location")
        if transport is None:
            transport = LazyHttpTransport(url_policy)  # built on first request
        self.name = PROVIDER_NAME
        self._http = Configured(
            PROVIDER_NAME, base_url, transport, credential=access_token, auth=AuthStyle.bearer(),
            headers=headers, url_policy=url_policy, request_timeout_ms=request_timeout_ms,
            profile_lookup=profile_lookup,
        )
        root = discovery_base_url if discovery_base_url is not None else discovery_api_base(base_url)
        self._discovery = None if root is None else Configured(
            PROVIDER_NAME, root, transport, credential=access_token, auth=AuthStyle.bearer(),
            headers=headers, url_policy=url_policy,
            request_timeout_ms=request_timeout_ms,
        )
        self.discovery_limits = discovery_limits

    def __repr__(self) -> str:
        return f"vertex_ai.Provider(project={self.project!r}, location={self.location!r}, {self._http!r})"

    def __reduce__(self) -> Any:
        raise TypeError("a Vertex provider holds a credential and cannot be pickled")

    def resource_path(self, path: str) -> str:
        """The Vertex resource path for a Gemini client's relative operation."""
        match = _OPERATION.match(path) if isinstance(path, str) else None
        if match is None:
            raise InvalidVertexResource(
                "only models/{model}:generateContent and :streamGenerateContent?alt=sse are "
                "supported on Vertex"
            )
        model = _check(match.group(1), _MODEL, "model")
        return (f"projects/{self.project}/locations/{self.location}/publishers/google/models/"
                f"{model}:{match.group(2)}")

    def _mapped(self, request: ProviderHttpRequest) -> ProviderHttpRequest:
        return replace(request, path=self.resource_path(request.path))

    def send(self, request: ProviderHttpRequest) -> ProviderHttpResponse:
        return self._http.send(self._mapped(request))

    def stream_lines(self, request: ProviderHttpRequest) -> AbstractContextManager[ProviderLineStream]:
        return self._http.stream_lines(self._mapped(request))

    def profile_for(self, model_name: str) -> ModelProfile | None:
        return self._http.profile_for(model_name)

    def provider(self) -> Provider:
        return self

    def list_models(
        self,
        *,
        limits: DiscoveryLimits | None = None,
        control: RunControl | None = None,
        deadline: float | None = None,
    ) -> OwnedProviderModels:
        """Google's publisher models (``publishers/google/models``), every page, bounded."""
        if self._discovery is None:
            raise self._unsupported(
                "list_models", "base_url does not end in /v1; pass discovery_base_url"
            )
        return list_models_with(
            self._discovery, lambda bounds: VertexModelListing(bounds.page_size), limits=limits,
            default_limits=self.discovery_limits, control=control, deadline=deadline,
        )
