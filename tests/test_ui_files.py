"""Files attached to browser messages: Vercel ``file`` parts and AG-UI media parts.

``tests/test_ui_node.py`` sends file parts through the ``ai`` package's
``DefaultChatTransport`` and ``tests/test_ui_browser.py`` attaches files on the page; these
tests hold the checks at their exact limits.
"""

from __future__ import annotations

import base64
import http.client
import json
from typing import Any
from urllib.parse import urlsplit

import pytest
from support.ui_agents import files_agent

from zigai.messages import BytesSource, DocumentContent, ImageContent, TextContent, UrlSource
from zigai.security import UrlPolicy
from zigai.ui import (
    ClientMessageLimits,
    ClientMessagesTooLarge,
    InvalidClientMessages,
    LocalServer,
    ui_app,
)
from zigai.ui.agui import parse_run_input
from zigai.ui.files import FileLimits, client_file
from zigai.ui.trust import to_history
from zigai.ui.vercel import parse_chat_request

PNG = b"\x89PNG\r\n\x1a\n" + b"rest"
DATA = "data:image/png;base64," + base64.b64encode(PNG).decode()


def vercel_user(*parts: dict[str, Any]) -> dict[str, Any]:
    return {"id": "c", "messages": [{"id": "u", "role": "user", "parts": list(parts)}]}


def test_vercel_file_parts_become_user_content_in_the_prompt() -> None:
    chat = parse_chat_request(vercel_user(
        {"type": "text", "text": "look"},
        {"type": "file", "mediaType": "image/png", "url": DATA, "filename": "a.png"},
        {"type": "file", "mediaType": "application/pdf", "url": "https://docs.example.org/a.pdf",
         "filename": "a.pdf"}))
    history, prompt = to_history(chat.messages, ClientMessageLimits())
    assert history == ()
    assert prompt == (TextContent("look"), ImageContent(BytesSource(PNG, "image/png")),
                      DocumentContent(UrlSource("https://docs.example.org/a.pdf", "application/pdf"), "a.pdf"))
    only_file = parse_chat_request(vercel_user({"type": "file", "mediaType": "image/png", "url": DATA}))
    assert to_history(only_file.messages, ClientMessageLimits())[1] == (ImageContent(BytesSource(PNG, "image/png")),)


def test_agui_media_parts_become_user_content_and_stay_in_history() -> None:
    image = {"type": "image", "source": {"type": "data", "value": base64.b64encode(PNG).decode(),
                                         "mimeType": "image/png"}}
    document = {"type": "document", "source": {"type": "url", "value": "https://docs.example.org/x.txt",
                                               "mimeType": "text/plain"}, "metadata": {"filename": "x.txt"}}
    parsed = parse_run_input({"messages": [
        {"id": "1", "role": "user", "content": [{"type": "text", "text": "first"}, image]},
        {"id": "2", "role": "assistant", "content": "seen"},
        {"id": "3", "role": "user", "content": [document]}]})
    history, prompt = to_history(parsed.messages, ClientMessageLimits())
    assert history[0].parts[0].content == (TextContent("first"), ImageContent(BytesSource(PNG, "image/png")))
    assert prompt == (DocumentContent(UrlSource("https://docs.example.org/x.txt", "text/plain"), "x.txt"),)


@pytest.mark.parametrize(("kwargs", "message"), [
    ({"media_type": "image/svg+xml", "url": DATA}, "'image/svg\\+xml' is not accepted"),
    ({"media_type": None, "url": DATA}, "needs a media type"),
    ({"media_type": "image/png", "url": "data:image/png," + "abc"}, "must be base64"),
    ({"media_type": "image/png", "url": "data:image/jpeg;base64," + base64.b64encode(PNG).decode()},
     "the data URL says 'image/jpeg'"),
    ({"media_type": "image/png", "data": "not base64!"}, "not valid base64"),
    ({"media_type": "image/jpeg", "data": base64.b64encode(PNG).decode()}, "not image/jpeg"),
    ({"media_type": "image/webp", "data": base64.b64encode(b"RIFF0000WEBX").decode()}, "not image/webp"),
    ({"media_type": "text/plain", "data": base64.b64encode(b"\xff\xfe").decode()}, "not text/plain"),
    ({"media_type": "image/png", "url": "http://cdn.example.org/a.png"}, "the file URL is refused"),
    ({"media_type": "image/png", "url": "https://127.0.0.1/a.png"}, "the file URL is refused"),
    ({"media_type": "image/png"}, "needs a url"),
])
def test_files_that_are_not_what_they_claim_are_refused(kwargs: dict[str, Any], message: str) -> None:
    media_type = kwargs.pop("media_type")
    with pytest.raises(InvalidClientMessages, match=message):
        client_file(media_type, where="file", limits=FileLimits(), **kwargs)


def test_signatures_that_match_are_accepted() -> None:
    limits = FileLimits(media_types=frozenset({"image/webp", "image/gif", "application/x-custom"}))
    webp = b"RIFF\x00\x00\x00\x00WEBPVP8 "
    assert client_file("image/webp", where="f", limits=limits, data=base64.b64encode(webp).decode())
    assert client_file("IMAGE/GIF; x=1", where="f", limits=limits, data=base64.b64encode(b"GIF89a..").decode())
    text = client_file("text/plain", where="f", limits=FileLimits(), data=base64.b64encode("é".encode()).decode())
    assert text == DocumentContent(BytesSource("é".encode(), "text/plain"))
    with pytest.raises(InvalidClientMessages, match="part 0 is not a text part; this server accepts text, and image"):
        parse_run_input({"messages": [{"role": "user", "content": [{"type": "audio", "source": {}}]}]})
    custom = client_file("application/x-custom", where="f", limits=limits, data="AAAA", filename="c.bin")
    assert custom == DocumentContent(BytesSource(b"\x00\x00\x00", "application/x-custom"), "c.bin")
    local = FileLimits(url_policy=UrlPolicy(allow_http=True, allow_local_network=True))
    assert client_file("image/png", where="f", limits=local, url="http://127.0.0.1/a.png") == \
        ImageContent(UrlSource("http://127.0.0.1/a.png", "image/png"))


def test_file_size_and_count_are_bounded_at_the_limit() -> None:
    exact = FileLimits(max_file_bytes=len(PNG))
    assert client_file("image/png", where="f", limits=exact, url=DATA)
    with pytest.raises(ClientMessagesTooLarge, match=f"is {len(PNG)} bytes; the limit is {len(PNG) - 1}"):
        client_file("image/png", where="f", limits=FileLimits(max_file_bytes=len(PNG) - 1), url=DATA)
    with pytest.raises(ClientMessagesTooLarge, match="is over 3 bytes"):  # refused before decoding
        client_file("image/png", where="f", limits=FileLimits(max_file_bytes=3), url=DATA)
    part = {"type": "file", "mediaType": "image/png", "url": DATA}
    assert len(parse_chat_request(vercel_user(*[part] * 2), FileLimits(max_files=2)).messages[0].files) == 2
    with pytest.raises(ClientMessagesTooLarge, match="more than 2 files"):
        parse_chat_request(vercel_user(*[part] * 3), FileLimits(max_files=2))
    image = {"type": "image", "source": {"type": "url", "value": "https://docs.example.org/a.png",
                                         "mimeType": "image/png"}}
    with pytest.raises(ClientMessagesTooLarge, match="more than 1 files"):
        parse_run_input({"messages": [{"role": "user", "content": [image, image]}]}, files=FileLimits(max_files=1))
    for bad in ({"type": "image", "source": {"type": "file", "value": "file-1"}}, {"type": "document"}):
        with pytest.raises(InvalidClientMessages, match="data or url source"):
            parse_run_input({"messages": [{"role": "user", "content": [bad]}]})
    with pytest.raises(InvalidClientMessages, match="needs a url string"):
        parse_chat_request(vercel_user({"type": "file", "mediaType": "image/png"}))
    with pytest.raises(InvalidClientMessages, match="send text and file parts"):
        parse_chat_request(vercel_user({"type": "source-url", "url": "https://docs.example.org"}))


def post(url: str, body: Any) -> tuple[int, str]:
    parts = urlsplit(url)
    connection = http.client.HTTPConnection(parts.hostname, parts.port, timeout=10)
    connection.request("POST", "/", json.dumps(body).encode(), {"Content-Type": "application/json"})
    response = connection.getresponse()
    text = response.read().decode()
    connection.close()
    return response.status, text


def test_the_endpoints_answer_413_and_400_for_refused_files() -> None:
    part = {"type": "file", "mediaType": "image/png", "url": DATA}
    app = ui_app(files_agent(), "vercel", file_limits=FileLimits(max_file_bytes=len(PNG)))
    with LocalServer(app) as server:
        status, text = post(server.url, vercel_user({"type": "text", "text": "hi"}, part))
        assert status == 200 and f"image image/png {len(PNG)} bytes" in text
        status, text = post(server.url, vercel_user({**part, "url": DATA + "AAAA"}))
        assert status == 413 and json.loads(text)["error"]["code"] == "ClientMessagesTooLarge"
        status, text = post(server.url, vercel_user({**part, "mediaType": "image/svg+xml"}))
        assert status == 400 and json.loads(text)["error"]["code"] == "InvalidClientMessages"
