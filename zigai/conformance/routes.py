"""Provider routes of recordings, and the zigai client that speaks each one.

Job
    Read the route facts of a recording (API root, model id, the named provider from the file
    or folder name) and build the zigai adapter for it, configured only from those facts and the
    scenario's adapter hints (``profile``, ``chat_options``, ``responses_options``).

Invariants
    Recordings on reserved test hosts (``*.test``) and of local servers (loopback) get an
    explicit local-development URL policy; every other route the default policy.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

__all__ = ["Route", "Skip", "build_file_provider", "build_model", "detect_route"]

LOOPBACK_HOSTS = frozenset({"127.0.0.1", "localhost", "::1"})
FILE_PROVIDERS = ("anthropic", "google", "openai")
NAMED_COMPATIBLE = (
    "azure_openai", "bedrock", "cerebras", "cohere", "crusoe", "deepseek", "doubleword", "groq",
    "huggingface", "mistral", "ollama", "openrouter", "ovhcloud", "snowflake", "together", "zai",
)


class Skip(Exception):  # noqa: N818 - a verdict, not an error
    """This recording cannot run here, for the stated reason."""


@dataclass(frozen=True)
class Route:
    kind: str
    api_root: str
    model_id: str
    named: str | None


def detect_route(path: Path, first: Any) -> Route:
    uri = first.uri
    parts = urlsplit(uri)
    body = first.request_body
    content = body.content if body is not None and body.type == "json" else {}
    model_id = content.get("model") if isinstance(content, dict) else None
    stem = path.stem
    # The named provider is the file name (corpus: ``buffered/groq.yaml``) or, for the
    # project's own recordings, the folder (``katan/groq/buffered_text.yaml``).
    named = next((n for n in sorted(NAMED_COMPATIBLE, key=len, reverse=True)
                  if stem == n or stem.startswith(n + "_") or path.parent.name == n), None)
    origin = f"{parts.scheme}://{parts.netloc}"
    p = parts.path
    if p.endswith("/files") or "/files/" in p:
        provider = next((n for n in FILE_PROVIDERS if stem == n or stem.startswith(n + "_")), None)
        root = p.rsplit("/files", 1)[0]
        if root.startswith("/upload/"):  # Google's resumable upload root mirrors the API root
            root = root[len("/upload"):]
        return Route("provider-files", origin + root, "", provider)
    if p.endswith("/converse") or p.endswith("/converse-stream"):
        from urllib.parse import unquote

        encoded = p.removeprefix("/model/").rsplit("/", 1)[0]
        return Route("bedrock-converse", origin, unquote(encoded), None)
    if p.endswith("/conversations"):
        root = origin + p[: -len("/conversations")]
        return Route("mistral-conversations", root, model_id or "", None)
    if p.endswith("/v2/chat"):
        return Route("cohere-v2", origin + p[: -len("/chat")], model_id or "", None)
    if ":generateContent" in p or ":streamGenerateContent" in p:
        root, _, rest = p.partition("/models/")
        return Route("gemini", origin + root, rest.split(":", 1)[0], None)
    if p.endswith("/chat/completions"):
        return Route("chat-completions", origin + p[: -len("/chat/completions")], model_id or "", named)
    if p.endswith("/responses"):
        kind = "azure-responses" if parts.netloc.endswith(".openai.azure.com") else "openai-responses"
        return Route(kind, origin + p[: -len("/responses")], model_id or "", None)
    if p.endswith("/messages"):
        return Route("anthropic-messages", origin + p[: -len("/messages")], model_id or "", None)
    raise Skip(f"no adapter route recognizes {uri}")


def _import(module: str) -> Any:
    import importlib

    return importlib.import_module(module)


def _openai_profile(profile: dict[str, Any]) -> Any:
    """The conservative profile of a model the catalog does not know (a local server's),
    with what the scenario says that server accepts."""
    from zigai.providers.openai import profiles

    settings = profiles.BASE_SETTINGS
    if profile.get("sampling"):
        settings = settings | profiles.SAMPLING_SETTINGS
    efforts = frozenset(profile.get("reasoning_efforts", ()))
    if not efforts:
        return dataclasses.replace(profiles.UNKNOWN_PROFILE, settings=settings)
    return dataclasses.replace(profiles.UNKNOWN_PROFILE, settings=settings, supports_thinking=True,
                               reasoning_efforts=efforts)


def build_model(route: Route, transport: Any, profile: dict[str, Any] | None = None,
                chat_options: dict[str, Any] | None = None,
                responses_options: dict[str, Any] | None = None) -> Any:
    """The adapter client for a route, configured only from route facts (and, for a model
    the catalog does not know, the scenario's ``profile``; for a Chat Completions server, its
    ``chat_options``; for a Responses one, its ``responses_options``)."""
    from zigai.security import UrlPolicy

    if profile is not None and route.kind != "openai-responses":
        raise AssertionError(f"a scenario profile applies to openai-responses routes, not {route.kind}")
    if chat_options is not None and (route.kind != "chat-completions" or route.named is not None):
        raise AssertionError(f"chat_options apply to plain chat-completions routes, not {route.kind}")
    if responses_options is not None and route.kind != "openai-responses":
        raise AssertionError(f"responses_options apply to openai-responses routes, not {route.kind}")
    host = urlsplit(route.api_root).hostname or ""
    # Recordings on reserved test hosts (*.test) and of local servers (loopback) need an
    # explicit local-development policy.
    loopback = host in LOOPBACK_HOSTS
    policy = UrlPolicy.local_development() if host.endswith(".test") or loopback else UrlPolicy()
    key = "sk-conformance-not-a-secret"
    if route.kind == "openai-responses":
        openai = _import("zigai.providers.openai")
        provider = openai.Provider(key, transport=transport, base_url=route.api_root, url_policy=policy)
        options = responses_options or {}
        if profile is None:
            return openai.Client(route.model_id, provider, **options)
        return openai.Client(route.model_id, provider, profile=_openai_profile(profile), **options)
    if route.kind == "azure-responses":
        azure = _import("zigai.providers.azure_openai")
        provider = azure.Provider(key, transport, resource=host.split(".", 1)[0])
        return azure.ResponsesClient(route.model_id, provider)
    if route.kind == "bedrock-converse":
        bedrock = _import("zigai.providers.bedrock")
        provider = bedrock.Provider(key, host.split(".")[1], transport)
        return bedrock.Client(route.model_id, provider)
    if route.kind == "mistral-conversations":
        mistral = _import("zigai.providers.mistral")
        provider = mistral.ConversationsProvider(key, transport, base_url=route.api_root,
                                                 url_policy=policy)
        return mistral.ConversationsClient(route.model_id, provider)
    if route.kind == "cohere-v2":
        cohere = _import("zigai.providers.cohere")
        provider = cohere.ChatProvider(key, transport, base_url=route.api_root, url_policy=policy)
        return cohere.ChatClient(route.model_id, provider)
    if route.kind == "anthropic-messages":
        anthropic = _import("zigai.providers.anthropic")
        provider = anthropic.Provider(key, transport=transport, base_url=route.api_root, url_policy=policy)
        return anthropic.Client(route.model_id, provider)
    if route.kind == "gemini":
        google = _import("zigai.providers.google")
        provider = google.Provider(key, transport=transport, base_url=route.api_root, url_policy=policy)
        return google.Client(route.model_id, provider)
    # chat-completions: the one route kind left
    if route.named is None:
        compat = _import("zigai.providers.openai_compatible")
        provider = compat.Provider(
            key, transport=transport, base_url=route.api_root, name="openai_compatible",
            url_policy=policy,
        )
        if chat_options is None:
            return compat.Client(route.model_id, provider)
        return compat.Client(route.model_id, provider, options=compat.ChatOptions(**chat_options))
    module = _import(f"zigai.providers.{route.named}")
    # Deployment-scoped roots take their one route fact (resource, region) from the host;
    # every other named provider must reproduce the recording from its built-in root.
    if route.named == "azure_openai":
        resource = host.split(".", 1)[0]
        return module.ChatClient(route.model_id, module.Provider(key, transport, resource=resource))
    if route.named == "bedrock":
        region = host.split(".")[1]
        return module.MantleClient(route.model_id, module.MantleProvider(key, transport, region=region))
    if loopback:  # a local server standing in for the named provider's own root
        return module.Client(route.model_id, module.Provider(
            key, transport, base_url=route.api_root, url_policy=policy))
    return module.Client(route.model_id, module.Provider(key, transport))


def build_file_provider(route: Route, transport: Any) -> Any:
    """The provider object whose file operations a files route exercises."""
    key = "sk-conformance-not-a-secret"
    parts = urlsplit(route.api_root)
    api_root, upload = route.api_root, f"{parts.scheme}://{parts.netloc}/upload{parts.path}"
    if route.named == "openai":
        openai = _import("zigai.providers.openai")
        return openai.Provider(key, transport=transport, base_url=api_root)
    if route.named == "anthropic":
        anthropic = _import("zigai.providers.anthropic")
        return anthropic.Provider(key, transport, base_url=api_root)
    if route.named == "google":
        google = _import("zigai.providers.google")
        return google.Provider(key, transport, base_url=api_root, upload_base_url=upload)
    raise Skip(f"no files provider is named by this cassette ({route.api_root})")
