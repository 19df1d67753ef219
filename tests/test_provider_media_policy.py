"""Media URLs are checked by the provider boundary, so a direct model call cannot bypass the
provider's UrlPolicy (issue 11 item 7).

The agent checks media URLs too, but ``client.request()`` / ``client.stream()`` called
directly never passes through the agent.  Each adapter below must refuse a request whose
image points at the cloud metadata address before anything reaches the transport, and send
the same request once the URL is public.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
from support.mock_transport import MockResponse, MockTransport

from zigai.messages import (
    FilePart,
    ImageContent,
    RequestMessage,
    ResponseMessage,
    TextContent,
    UrlSource,
    UserPromptPart,
)
from zigai.model import ModelRequest
from zigai.providers._wire import media_urls
from zigai.security import UrlPolicyViolation, UrlRejection

METADATA = "https://169.254.169.254/latest/meta-data/iam.png"
PUBLIC = "https://images.example.com/cat.png"


def _never(request: Any) -> MockResponse:
    raise AssertionError(f"the transport must not be called: {request.url}")


def _openai_compatible(transport: MockTransport) -> Any:
    from zigai.providers import openai_compatible as oc

    provider = oc.Provider("sk-test", transport, base_url="https://api.example.com/v1")
    return oc.Client("m", provider, fallback_profile="full")


def _responses(transport: MockTransport) -> Any:
    from zigai.providers.openai import Client, Provider

    return Client("gpt-4o", Provider("sk-test", transport=transport))


def _anthropic(transport: MockTransport) -> Any:
    from zigai.providers import anthropic

    return anthropic.Client("claude-sonnet-4-5", anthropic.Provider("sk-test", transport))


ADAPTERS: dict[str, Callable[[MockTransport], Any]] = {
    "chat completions": _openai_compatible,
    "responses": _responses,
    "anthropic": _anthropic,
}


def _image_request(url: str) -> ModelRequest:
    prompt = UserPromptPart((TextContent("What is this?"), ImageContent(UrlSource(url, "image/png"))))
    return ModelRequest((RequestMessage((prompt,)),))


@pytest.mark.parametrize("adapter", list(ADAPTERS))
@pytest.mark.parametrize("streamed", [False, True], ids=["request", "stream"])
def test_a_private_media_url_never_reaches_the_wire(adapter: str, streamed: bool) -> None:
    transport = MockTransport(_never)
    client = ADAPTERS[adapter](transport)
    with pytest.raises(UrlPolicyViolation) as caught:
        if streamed:
            with client.stream(_image_request(METADATA)) as stream:
                list(stream)
        else:
            client.request(_image_request(METADATA))
    assert caught.value.reason is UrlRejection.non_public_address
    assert transport.requests == []


@pytest.mark.parametrize("adapter", list(ADAPTERS))
def test_a_public_media_url_is_sent(adapter: str) -> None:
    seen: list[bytes] = []

    def record(request: Any) -> MockResponse:
        seen.append(request.body)
        return MockResponse(500, (), b'{"error":{"message":"stop here"}}')

    client = ADAPTERS[adapter](MockTransport(record))
    with pytest.raises(Exception, match="500"):
        client.request(_image_request(PUBLIC))
    assert seen and PUBLIC.encode() in seen[0]


def test_media_urls_are_found_in_user_content_and_earlier_responses() -> None:
    image = ImageContent(UrlSource(PUBLIC, "image/png"))
    request = ModelRequest((
        RequestMessage((UserPromptPart((TextContent("a"), image, image)),)),
        ResponseMessage((FilePart(UrlSource(METADATA, "image/png")),)),
    ))
    assert media_urls(request) == (PUBLIC, METADATA)
    assert media_urls(ModelRequest((RequestMessage((UserPromptPart("text only"),)),))) == ()


def test_provider_http_request_media_urls_must_be_strings() -> None:
    from zigai.provider import ProviderHttpRequest

    assert ProviderHttpRequest("p", media_urls=[PUBLIC]).media_urls == (PUBLIC,)
    with pytest.raises(TypeError, match="media_urls"):
        ProviderHttpRequest("p", media_urls=(1,))  # type: ignore[arg-type]
