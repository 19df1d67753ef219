"""Provider.list_models for OpenAI, Anthropic, Google, Vertex and compatible providers (loopback)."""

from __future__ import annotations

import pickle
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any
from urllib.parse import parse_qs, urlsplit

import pytest
from support.loopback import LoopbackServer, Received, Reply

from zigai.control import CancellationToken, Cancelled, RunControl
from zigai.provider import (
    DiscoveryLimitExceeded,
    DiscoveryLimits,
    DuplicateDiscoveredModel,
    InvalidModelListing,
    OwnedProviderModels,
    ProviderAuthError,
    ProviderModelDescriptor,
    UnsupportedProviderOperation,
)
from zigai.provider.discovery import DiscoveryResultClosed, check_model_id
from zigai.providers import anthropic, google, groq, openai, vertex_ai
from zigai.providers import openai_compatible as oc
from zigai.providers.http import Configured
from zigai.security import UrlPolicy
from zigai.transport import HttpTransport

POLICY = UrlPolicy.local_development()


@contextmanager
def serve(handler: Callable[[Received], Reply]) -> Iterator[tuple[LoopbackServer, HttpTransport]]:
    with LoopbackServer(handler) as server, HttpTransport(url_policy=POLICY,
                                                          default_timeout_s=10.0) as transport:
        yield server, transport


def query(received: Received) -> dict[str, str]:
    return {k: v[0] for k, v in parse_qs(urlsplit(received.target).query).items()}


def paged(pages: list[list[str]], render: Callable[[list[str], int, bool], Any]) -> Callable[[Received], Reply]:
    """A handler serving ``pages`` in order: page n is chosen by how many requests came before."""
    state = {"served": 0}

    def handle(received: Received) -> Reply:
        index = state["served"]
        state["served"] += 1
        if index >= len(pages):
            return Reply.of_json({"error": {"message": "no such page"}}, status=404)
        return Reply.of_json(render(pages[index], index, index < len(pages) - 1))

    return handle


def anthropic_page(ids: list[str], index: int, more: bool) -> Any:
    return {"data": [{"type": "model", "id": i, "display_name": i.upper(),
                      "created_at": "2026-01-01T00:00:00Z"} for i in ids],
            "has_more": more, "first_id": ids[0] if ids else None,
            "last_id": ids[-1] if ids else None}


def gemini_page(ids: list[str], index: int, more: bool) -> Any:
    page: dict[str, Any] = {"models": [{"name": f"models/{i}", "displayName": i.title(),
                                        "inputTokenLimit": 1048576,
                                        "supportedGenerationMethods": ["generateContent"]}
                                       for i in ids]}
    if more:
        page["nextPageToken"] = f"token-{index + 1}/=+"
    return page


def openai_page(ids: list[str], index: int, more: bool) -> Any:
    page: dict[str, Any] = {"object": "list", "data": [
        {"id": i, "object": "model", "created": 1700000000, "owned_by": "system"} for i in ids]}
    if more:
        page["has_more"] = True
        page["last_id"] = ids[-1]
    return page


THREE = [["m-1", "m-2"], ["m-3", "m-4"], ["m-5"]]


# ------------------------------------------------------------------ each provider, real HTTP


def test_openai_lists_one_page_with_bearer_auth() -> None:
    with serve(paged([["gpt-5-mini", "gpt-4o-mini"]], openai_page)) as (server, transport):
        provider = openai.Provider("sk-test", transport=transport, url_policy=POLICY,
                                   base_url=f"{server.url}/v1")
        with provider.list_models() as models:
            assert models.ids() == ("gpt-5-mini", "gpt-4o-mini")
            assert models.provider_name == "openai" and models.pages == 1 and len(models) == 2
            first = models.get("gpt-5-mini")
            assert first is not None and first.resource_name == "gpt-5-mini"
            assert first.display_name is None
            assert first.metadata["owned_by"] == "system"
            assert models.get("GPT-5-MINI") is None  # exact, case-sensitive
    (received,) = server.requests
    assert (received.method, received.target) == ("GET", "/v1/models")
    assert received.headers["authorization"] == "Bearer sk-test" and received.body == b""


def test_anthropic_follows_after_id_for_three_pages_with_its_headers() -> None:
    with serve(paged(THREE, anthropic_page)) as (server, transport):
        provider = anthropic.Provider("sk-ant", transport, url_policy=POLICY,
                                      base_url=f"{server.url}/v1",
                                      discovery_limits=DiscoveryLimits(page_size=2))
        with provider.list_models() as models:
            assert models.ids() == ("m-1", "m-2", "m-3", "m-4", "m-5")
            assert models.pages == 3
            assert [d.display_name for d in models][:2] == ["M-1", "M-2"]
    targets = [(r.target.split("?")[0], query(r)) for r in server.requests]
    assert targets == [
        ("/v1/models", {"limit": "2"}),
        ("/v1/models", {"limit": "2", "after_id": "m-2"}),
        ("/v1/models", {"limit": "2", "after_id": "m-4"}),
    ]
    for received in server.requests:
        assert received.headers["anthropic-version"] == anthropic.API_VERSION
        assert received.headers["x-api-key"] == "sk-ant"


def test_google_follows_page_tokens_and_strips_the_resource_prefix() -> None:
    with serve(paged(THREE, gemini_page)) as (server, transport):
        provider = google.Provider("g-key", transport, url_policy=POLICY,
                                   base_url=f"{server.url}/v1beta")
        with provider.list_models(limits=DiscoveryLimits(page_size=50)) as models:
            assert models.ids() == ("m-1", "m-2", "m-3", "m-4", "m-5")
            descriptor = models.models[0]
            assert descriptor.resource_name == "models/m-1"
            assert descriptor.display_name == "M-1"
            assert descriptor.provider_name == "gcp.gen_ai"
            assert descriptor.metadata_value()["supportedGenerationMethods"] == ["generateContent"]
    assert [query(r) for r in server.requests] == [
        {"pageSize": "50"}, {"pageSize": "50", "pageToken": "token-1/=+"},
        {"pageSize": "50", "pageToken": "token-2/=+"},
    ]
    assert "%2F" in server.requests[1].target  # the token travels percent-encoded
    assert all(r.headers["x-goog-api-key"] == "g-key" for r in server.requests)


def test_vertex_lists_publisher_models_under_v1beta1() -> None:
    def page(ids: list[str], index: int, more: bool) -> Any:
        body: dict[str, Any] = {"publisherModels": [
            {"name": f"publishers/google/models/{i}", "versionId": "001",
             "launchStage": "GA"} for i in ids]}
        if more:
            body["nextPageToken"] = "next"
        return body

    with serve(paged([["gemini-2.5-flash"], ["gemini-2.5-pro"]], page)) as (server, transport):
        provider = vertex_ai.Provider("ya29.token", "proj-1", transport=transport,
                                      url_policy=POLICY, base_url=f"{server.url}/v1")
        with provider.list_models() as models:
            assert models.ids() == ("gemini-2.5-flash", "gemini-2.5-pro")
            assert models.models[1].resource_name == "publishers/google/models/gemini-2.5-pro"
            assert models.provider_name == "gcp.vertex_ai"
    assert [r.target.split("?")[0] for r in server.requests] == [
        "/v1beta1/publishers/google/models"] * 2
    assert all(r.headers["authorization"] == "Bearer ya29.token" for r in server.requests)
    assert all("x-goog-api-key" not in r.headers for r in server.requests)


def test_vertex_without_a_v1_root_needs_an_explicit_discovery_root() -> None:
    provider = vertex_ai.Provider("tok", "proj-1", transport=HttpTransport(url_policy=POLICY),
                                  url_policy=POLICY, base_url="http://127.0.0.1:9/custom")
    with pytest.raises(UnsupportedProviderOperation, match="discovery_base_url"):
        provider.list_models()
    assert vertex_ai.discovery_api_base("https://europe-west4-aiplatform.googleapis.com/v1") == (
        "https://europe-west4-aiplatform.googleapis.com/v1beta1")


def test_compatible_and_named_providers_follow_has_more_cursors() -> None:
    with serve(paged(THREE, openai_page)) as (server, transport):
        named = groq.Provider("gsk", transport, url_policy=POLICY, base_url=f"{server.url}/openai/v1")
        with named.list_models() as models:
            assert models.ids() == ("m-1", "m-2", "m-3", "m-4", "m-5")
            assert models.provider_name == "groq"
    assert [query(r) for r in server.requests] == [{}, {"after": "m-2"}, {"after": "m-4"}]
    assert server.requests[0].target == "/openai/v1/models"


def test_a_cursor_without_last_id_continues_after_the_last_entry() -> None:
    def page(ids: list[str], index: int, more: bool) -> Any:
        body = openai_page(ids, index, more)
        body.pop("last_id", None)
        return body

    with serve(paged([["a"], ["b"]], page)) as (server, transport):
        provider = oc.Provider("k", transport, url_policy=POLICY, base_url=f"{server.url}/v1")
        with provider.list_models() as models:
            assert models.ids() == ("a", "b")
    assert query(server.requests[1]) == {"after": "a"}


# ------------------------------------------------------------------ bounds


@pytest.mark.parametrize(
    ("render", "make"),
    [
        (anthropic_page, lambda url, t, lim: anthropic.Provider(
            "k", t, url_policy=POLICY, base_url=f"{url}/v1", discovery_limits=lim)),
        (gemini_page, lambda url, t, lim: google.Provider(
            "k", t, url_policy=POLICY, base_url=f"{url}/v1beta", discovery_limits=lim)),
        (openai_page, lambda url, t, lim: oc.Provider(
            "k", t, url_policy=POLICY, base_url=f"{url}/v1", discovery_limits=lim)),
    ],
    ids=["anthropic", "google", "compatible"],
)
def test_exact_page_limit_is_accepted_and_one_more_page_is_refused(render: Any, make: Any) -> None:
    with serve(paged(THREE, render)) as (server, transport):
        with make(server.url, transport, DiscoveryLimits(max_pages=3)).list_models() as models:
            assert models.pages == 3
    four = [*THREE, ["m-6"]]
    with serve(paged(four, render)) as (server, transport):
        with pytest.raises(DiscoveryLimitExceeded) as caught:
            make(server.url, transport, DiscoveryLimits(max_pages=3)).list_models()
        assert len(server.requests) == 3  # the fourth page is never requested
    assert (caught.value.limit_name, caught.value.limit) == ("max_pages", 3)


def test_exact_model_limit_is_accepted_and_one_more_model_is_refused() -> None:
    with serve(paged(THREE, anthropic_page)) as (server, transport):
        provider = anthropic.Provider("k", transport, url_policy=POLICY, base_url=f"{server.url}/v1")
        with provider.list_models(limits=DiscoveryLimits(max_models=5)) as models:
            assert len(models) == 5
    with serve(paged(THREE, anthropic_page)) as (server, transport):
        provider = anthropic.Provider("k", transport, url_policy=POLICY, base_url=f"{server.url}/v1")
        with pytest.raises(DiscoveryLimitExceeded) as caught:
            provider.list_models(limits=DiscoveryLimits(max_models=4))
        assert len(server.requests) == 3  # refused on the page that would pass the bound
    assert (caught.value.limit_name, caught.value.limit) == ("max_models", 4)


# ------------------------------------------------------------------ malformed listings


def _one_page(body: Any) -> Callable[[Received], Reply]:
    return lambda received: Reply.of_json(body)


@pytest.mark.parametrize(
    ("body", "entry"),
    [
        ([], None),
        ({"data": "nope", "has_more": False}, None),
        ({"data": [], "has_more": "no"}, None),
        ({"data": [{"id": "a"}], "has_more": True}, None),
        ({"data": ["a"], "has_more": False}, 0),
        ({"data": [{"id": "a"}, {"id": ""}], "has_more": False}, 1),
        ({"data": [{"id": "has space"}], "has_more": False}, 0),
        ({"data": [{"id": "x" * 257}], "has_more": False}, 0),
        ({"data": [{"id": "a", "type": "dataset"}], "has_more": False}, 0),
        ({"data": [{"id": "a", "display_name": 7}], "has_more": False}, 0),
    ],
)
def test_malformed_anthropic_pages_and_entries_are_refused_by_name(body: Any, entry: Any) -> None:
    with serve(_one_page(body)) as (server, transport):
        provider = anthropic.Provider("k", transport, url_policy=POLICY, base_url=f"{server.url}/v1")
        with pytest.raises(InvalidModelListing) as caught:
            provider.list_models()
    assert caught.value.page == 1 and caught.value.entry == entry


@pytest.mark.parametrize(
    "body",
    [
        {"models": {"name": "models/a"}},
        {"models": [{"name": "tunedModels/a"}]},
        {"models": [{"name": "models/a/b"}]},
        {"models": [{"name": "models/a"}], "nextPageToken": 5},
        {"models": [{"name": "models/a"}], "nextPageToken": "t" * 2049},
        ["models/a"],
    ],
)
def test_malformed_gemini_listings_are_refused(body: Any) -> None:
    with serve(_one_page(body)) as (server, transport):
        provider = google.Provider("k", transport, url_policy=POLICY, base_url=f"{server.url}/v1beta")
        with pytest.raises(InvalidModelListing):
            provider.list_models()


@pytest.mark.parametrize(
    "body",
    [
        {"object": "page", "data": []},
        {"object": "list"},
        {"object": "list", "data": [{"id": "a", "object": "file"}]},
        {"object": "list", "data": [], "has_more": 1},
        {"object": "list", "data": [], "has_more": True},
        [{"id": "a"}],
    ],
)
def test_malformed_openai_listings_are_refused(body: Any) -> None:
    with serve(_one_page(body)) as (server, transport):
        provider = openai.Provider("k", transport=transport, url_policy=POLICY,
                                   base_url=f"{server.url}/v1")
        with pytest.raises(InvalidModelListing):
            provider.list_models()


def test_duplicate_ids_across_pages_are_refused_not_collapsed() -> None:
    with serve(paged([["a", "b"], ["b"]], anthropic_page)) as (server, transport):
        provider = anthropic.Provider("k", transport, url_policy=POLICY, base_url=f"{server.url}/v1")
        with pytest.raises(DuplicateDiscoveredModel) as caught:
            provider.list_models()
    assert caught.value.model_id == "b"


def test_a_repeated_cursor_is_a_malformed_listing() -> None:
    def looping(received: Received) -> Reply:
        count = len(looping.seen)  # type: ignore[attr-defined]
        looping.seen.append(1)  # type: ignore[attr-defined]
        return Reply.of_json({"models": [{"name": f"models/m{count}"}], "nextPageToken": "same"})

    looping.seen = []  # type: ignore[attr-defined]
    with serve(looping) as (server, transport):
        provider = google.Provider("k", transport, url_policy=POLICY, base_url=f"{server.url}/v1beta")
        with pytest.raises(InvalidModelListing, match="repeats an earlier cursor"):
            provider.list_models()
        assert len(server.requests) == 2


def test_provider_errors_during_discovery_are_the_normal_provider_errors() -> None:
    with serve(lambda r: Reply.of_json({"error": {"message": "bad key"}}, status=401)) as (server, tr):
        with pytest.raises(ProviderAuthError):
            openai.Provider("k", transport=tr, url_policy=POLICY, base_url=f"{server.url}/v1").list_models()


def test_a_cancelled_control_stops_discovery_before_io() -> None:
    token = CancellationToken()
    token.cancel()
    with serve(paged(THREE, openai_page)) as (server, transport):
        provider = openai.Provider("k", transport=transport, url_policy=POLICY,
                                   base_url=f"{server.url}/v1")
        with pytest.raises(Cancelled):
            provider.list_models(control=RunControl(token=token))
        assert server.requests == []


# ------------------------------------------------------------------ values and lifetime


def test_unsupported_providers_raise_one_stable_error() -> None:
    plain = Configured("custom", "https://api.example.com/v1", HttpTransport())
    for call in (plain.list_models, lambda: plain.upload_file(None),  # type: ignore[arg-type]
                 lambda: plain.inspect_file(None), lambda: plain.download_file(None),
                 lambda: plain.delete_file(None)):
        with pytest.raises(UnsupportedProviderOperation) as caught:
            call()
        assert caught.value.provider_name == "custom"
    assert caught.value.operation == "delete_file"
    clone = pickle.loads(pickle.dumps(caught.value))
    assert clone.operation == "delete_file" and str(clone) == str(caught.value)


def test_owned_models_refuse_use_after_close() -> None:
    descriptor = ProviderModelDescriptor("p", "m", "m", None, __import__(
        "zigai.messages.json_value", fromlist=["FrozenDict"]).FrozenDict({"id": "m"}))
    owned = OwnedProviderModels("p", [descriptor], 1)
    assert "1 models" in repr(owned)
    owned.close()
    assert repr(owned) == "OwnedProviderModels(closed)"
    for use in (lambda: owned.models, owned.ids, lambda: owned.get("m"), lambda: len(owned),
                lambda: list(owned), lambda: owned.pages, lambda: owned.provider_name):
        with pytest.raises(DiscoveryResultClosed):
            use()


def test_owned_models_check_their_descriptors() -> None:
    from zigai.messages.json_value import FrozenDict

    foreign = ProviderModelDescriptor("other", "m", "m", None, FrozenDict())
    with pytest.raises(InvalidModelListing):
        OwnedProviderModels("p", [foreign], 1)
    same = ProviderModelDescriptor("p", "m", "m", None, FrozenDict())
    with pytest.raises(DuplicateDiscoveredModel):
        OwnedProviderModels("p", [same, same], 1)


@pytest.mark.parametrize(
    "options",
    [{"max_pages": 0}, {"max_models": -1}, {"page_size": 1001}, {"max_pages": True},
     {"page_size": 1.5}],
)
def test_discovery_limits_are_validated(options: dict[str, Any]) -> None:
    with pytest.raises(ValueError):
        DiscoveryLimits(**options)


def test_limits_must_be_a_limits_value() -> None:
    provider = openai.Provider("k", transport=HttpTransport(url_policy=POLICY), url_policy=POLICY,
                               base_url="http://127.0.0.1:9/v1")
    with pytest.raises(TypeError):
        provider.list_models(limits={"max_pages": 2})  # type: ignore[arg-type]
    from zigai.provider.discovery import collect_models
    from zigai.providers._discovery import OpenAIStyleListing

    with pytest.raises(TypeError):
        collect_models(provider, OpenAIStyleListing(), limits=None)  # type: ignore[arg-type]


def test_model_ids_are_checked() -> None:
    assert check_model_id("gpt-5") == "gpt-5"
    with pytest.raises(ValueError):
        check_model_id(None)
