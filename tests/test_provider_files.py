"""Provider files: OpenAI, Anthropic and Google upload / inspect / download / delete (loopback).

The loopback server parses every multipart body with the standard library's MIME parser, an
implementation independent of zigai's encoder, so framing errors cannot hide behind a parser
written to match it.
"""

from __future__ import annotations

import json
import pickle
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from email.message import Message
from email.parser import BytesParser
from email.policy import HTTP
from typing import Any

import pytest
from support.file_redaction import (
    REDACTED_CONTENT,
    file_filters,
    redact_file_body,
    redact_session_url,
)
from support.loopback import LoopbackServer, Received, Reply

from zigai.agent import Agent, ForeignUploadedFile
from zigai.messages import TextContent, UploadedFile, UploadedFileContent
from zigai.provider import (
    ForeignProviderFile,
    InvalidProviderFileHandle,
    InvalidProviderFileInput,
    InvalidProviderFileResponse,
    OwnedProviderFile,
    OwnedProviderFileDownload,
    ProviderFile,
    ProviderFileInput,
    ProviderFileLimits,
    ProviderFileTooLarge,
    UnsupportedProviderOperation,
    UploadSessionRejected,
)
from zigai.provider.files import (
    ProviderFileResultClosed,
    check_handle,
    encode_multipart,
    encode_path_segment,
    file_metadata,
    frozen_metadata,
    opt_field,
)
from zigai.providers import anthropic, google, openai, vertex_ai
from zigai.providers.google._files import file_path, same_origin
from zigai.security import UrlPolicy
from zigai.transport import HttpTransport, TransportRequest

POLICY = UrlPolicy.local_development()
TRICKY = b"line one\r\n--zigai-0000\r\nnot a boundary\x00\xff\r\n\r\nend"


@contextmanager
def serve(handler: Callable[[Received], Reply]) -> Iterator[tuple[LoopbackServer, HttpTransport]]:
    with LoopbackServer(handler) as server, HttpTransport(url_policy=POLICY,
                                                          default_timeout_s=10.0) as transport:
        yield server, transport


def parse_form(received: Received) -> dict[str, tuple[str | None, str | None, bytes]]:
    """{field name: (filename, content type, content)} parsed by the stdlib MIME parser."""
    head = f"Content-Type: {received.headers['content-type']}\r\n\r\n".encode()
    message: Message = BytesParser(policy=HTTP).parsebytes(head + received.body)
    assert message.is_multipart()
    fields = {}
    for part in message.iter_parts():  # type: ignore[attr-defined]
        name = part.get_param("name", header="content-disposition")
        content_type = part.get("content-type")
        fields[name] = (part.get_filename(), None if content_type is None else str(content_type),
                        part.get_payload(decode=True))
    return fields


def openai_file(file_id: str = "file-abc", size: int = len(TRICKY), purpose: str = "user_data") -> dict[str, Any]:
    return {"object": "file", "id": file_id, "purpose": purpose, "filename": "notes.bin",
            "bytes": size, "created_at": 1786821430, "expires_at": None, "status": "processed"}


def openai_server(overrides: dict[str, Reply] | None = None) -> Callable[[Received], Reply]:
    def handle(received: Received) -> Reply:
        key = f"{received.method} {received.target}"
        if overrides and key in overrides:
            return overrides[key]
        if key == "POST /v1/files":
            fields = parse_form(received)
            return Reply.of_json(openai_file(size=len(fields["file"][2]),
                                             purpose=fields["purpose"][2].decode()))
        if key == "GET /v1/files/file-abc":
            return Reply.of_json(openai_file())
        if key == "GET /v1/files/file-abc/content":
            return Reply(200, (("Content-Type", "application/octet-stream"),), TRICKY)
        if key == "DELETE /v1/files/file-abc":
            return Reply.of_json({"object": "file", "deleted": True, "id": "file-abc"})
        return Reply.of_json({"error": {"message": f"unexpected {key}"}}, status=404)

    return handle


def openai_provider(server: LoopbackServer, transport: HttpTransport, **options: Any) -> openai.Provider:
    return openai.Provider("sk-test", transport=transport, url_policy=POLICY,
                           base_url=f"{server.url}/v1", **options)


UPLOAD = ProviderFileInput("notes.bin", TRICKY, "application/octet-stream")


# ------------------------------------------------------------------ OpenAI


def test_openai_round_trip_with_default_purpose_and_exact_multipart() -> None:
    with serve(openai_server()) as (server, transport):
        provider = openai_provider(server, transport)
        with provider.upload_file(UPLOAD) as uploaded:
            value = uploaded.value
            handle = uploaded.uploaded_file()
        assert value.purpose == "user_data" and value.size_bytes == len(TRICKY)
        assert handle == UploadedFile("openai", "file-abc", "application/octet-stream")
        with provider.inspect_file(handle) as inspected:
            assert inspected.value.filename == "notes.bin"
            assert inspected.value.metadata["status"] == "processed"
            assert inspected.value.created_at == 1786821430
        with provider.download_file(handle) as download:
            assert download.data == TRICKY
            assert download.value.size_bytes == len(TRICKY)
        provider.delete_file(handle)
    upload = server.requests[0]
    fields = parse_form(upload)
    assert list(fields) == ["purpose", "file"]
    assert fields["purpose"] == (None, None, b"user_data")
    assert fields["file"] == ("notes.bin", "application/octet-stream", TRICKY)
    boundary = upload.headers["content-type"].split("boundary=", 1)[1]
    assert boundary.startswith("zigai-") and boundary.encode() not in TRICKY
    assert upload.headers["authorization"] == "Bearer sk-test"
    assert [f"{r.method} {r.target}" for r in server.requests] == [
        "POST /v1/files", "GET /v1/files/file-abc", "GET /v1/files/file-abc/content",
        "DELETE /v1/files/file-abc",
    ]
    assert server.requests[2].headers["accept"] == "*/*"


def test_openai_sends_the_given_purpose() -> None:
    with serve(openai_server()) as (server, transport):
        with openai_provider(server, transport).upload_file(
            ProviderFileInput("train.jsonl", b"{}\n", "application/jsonl", "fine-tune")
        ) as uploaded:
            assert uploaded.value.purpose == "fine-tune"
    assert parse_form(server.requests[0])["purpose"][2] == b"fine-tune"


@pytest.mark.parametrize(
    ("key", "reply", "call"),
    [
        ("POST /v1/files", Reply.of_json(openai_file(size=3)), "upload"),
        ("POST /v1/files", Reply.of_json(openai_file(purpose="batch")), "upload"),
        ("POST /v1/files", Reply.of_json({"object": "file"}), "upload"),
        ("POST /v1/files", Reply.of_json({**openai_file(), "object": "model"}), "upload"),
        ("POST /v1/files", Reply.of_json({**openai_file(), "bytes": -1}), "upload"),
        ("POST /v1/files", Reply.of_json({**openai_file(), "bytes": True}), "upload"),
        ("POST /v1/files", Reply.of_json([openai_file()]), "upload"),
        ("POST /v1/files", Reply(200, (), b"not json"), "upload"),
        ("GET /v1/files/file-abc", Reply.of_json(openai_file("file-other")), "inspect"),
        ("DELETE /v1/files/file-abc", Reply.of_json({"deleted": False, "id": "file-abc"}), "delete"),
        ("DELETE /v1/files/file-abc", Reply.of_json({"deleted": True, "id": "file-x"}), "delete"),
    ],
)
def test_openai_results_that_contradict_the_request_are_refused(key: str, reply: Reply, call: str) -> None:
    handle = UploadedFile("openai", "file-abc")
    with serve(openai_server({key: reply})) as (server, transport):
        provider = openai_provider(server, transport)
        operations = {"upload": lambda: provider.upload_file(UPLOAD),
                      "inspect": lambda: provider.inspect_file(handle),
                      "delete": lambda: provider.delete_file(handle)}
        with pytest.raises(InvalidProviderFileResponse):
            operations[call]()


def test_foreign_and_unusable_handles_never_reach_the_provider() -> None:
    with serve(openai_server()) as (server, transport):
        provider = openai_provider(server, transport)
        with pytest.raises(ForeignProviderFile) as caught:
            provider.inspect_file(UploadedFile("anthropic", "file_1"))
        assert (caught.value.owner, caught.value.provider) == ("anthropic", "openai")
        for bad in ("a/b", "..", "with space", "x" * 1025, "tab\there"):
            with pytest.raises(InvalidProviderFileHandle):
                provider.delete_file(UploadedFile("openai", bad))
        with pytest.raises(InvalidProviderFileHandle):
            provider.download_file("file-abc")
        assert server.requests == []


def test_file_ids_are_percent_encoded_as_one_segment() -> None:
    assert encode_path_segment("file-abc_1.2~") == "file-abc_1.2~"
    assert encode_path_segment("a:b@c") == "a%3Ab%40c"
    with pytest.raises(InvalidProviderFileHandle):
        encode_path_segment("a\\b")
    with serve(openai_server({"GET /v1/files/a%3Ab": Reply.of_json(openai_file("a:b"))})) as (s, t):
        with openai_provider(s, t).inspect_file(UploadedFile("openai", "a:b")) as found:
            assert found.value.file_id == "a:b"
    assert s.requests[0].target == "/v1/files/a%3Ab"


def test_upload_limits_hold_at_the_exact_byte_before_io() -> None:
    data = b"x" * 100
    exact = ProviderFileLimits(max_upload_bytes=100)
    with serve(openai_server()) as (server, transport):
        with openai_provider(server, transport, file_limits=exact).upload_file(
            ProviderFileInput("a.txt", data, "text/plain")
        ) as ok:
            assert ok.value.size_bytes == 100
        tight = openai_provider(server, transport, file_limits=ProviderFileLimits(max_upload_bytes=99))
        with pytest.raises(ProviderFileTooLarge) as caught:
            tight.upload_file(ProviderFileInput("a.txt", data, "text/plain"))
        assert (caught.value.limit_name, caught.value.limit, caught.value.value) == (
            "max_upload_bytes", 99, 100)
        named = openai_provider(server, transport, file_limits=ProviderFileLimits(max_filename_bytes=5))
        with named.upload_file(ProviderFileInput("ab.é", b"1", "text/plain")):  # 5 UTF-8 bytes
            pass
        with pytest.raises(ProviderFileTooLarge, match="filename"):
            named.upload_file(ProviderFileInput("abc.é", b"1", "text/plain"))
        assert len(server.requests) == 2


def test_multipart_metadata_limit_is_exact() -> None:
    file = ProviderFileInput("a.txt", b"content", "text/plain")
    _, body = encode_multipart([("purpose", "user_data")], "file", file, ProviderFileLimits(),
                               boundary="b")
    metadata = len(body) - len(b"content")
    encode_multipart([("purpose", "user_data")], "file", file,
                     ProviderFileLimits(max_metadata_bytes=metadata), boundary="b")
    with pytest.raises(ProviderFileTooLarge) as caught:
        encode_multipart([("purpose", "user_data")], "file", file,
                         ProviderFileLimits(max_metadata_bytes=metadata - 1), boundary="b")
    assert caught.value.value == metadata


def test_a_colliding_boundary_is_redrawn_or_refused(monkeypatch: pytest.MonkeyPatch) -> None:
    import zigai.provider.files as files

    draws = iter(["0000", "1111"])
    monkeypatch.setattr(files.secrets, "token_hex", lambda n: next(draws))
    content_type, body = encode_multipart([], "file", ProviderFileInput(
        "a.txt", b"xx--zigai-0000xx", "text/plain"), ProviderFileLimits())
    assert content_type.endswith("boundary=zigai-1111")
    assert body.startswith(b"--zigai-1111\r\n") and body.endswith(b"\r\n--zigai-1111--\r\n")
    with pytest.raises(InvalidProviderFileInput, match="boundary"):
        encode_multipart([], "file", ProviderFileInput("a.txt", b"--b", "text/plain"),
                         ProviderFileLimits(), boundary="b")
    with pytest.raises(InvalidProviderFileInput):
        encode_multipart([("bad name", "v")], "file", ProviderFileInput("a", b"", "text/plain"),
                         ProviderFileLimits())
    with pytest.raises(InvalidProviderFileInput):
        encode_multipart([("purpose", "two\r\nlines")], "file",
                         ProviderFileInput("a", b"", "text/plain"), ProviderFileLimits())
    with pytest.raises(InvalidProviderFileInput):
        encode_multipart([], "bad field", ProviderFileInput("a", b"", "text/plain"),
                         ProviderFileLimits())


@pytest.mark.parametrize(
    "options",
    [
        {"filename": ""}, {"filename": "a\"b"}, {"filename": "dir/a"}, {"filename": "a\nb"},
        {"filename": ".."}, {"data": "text"}, {"media_type": "text"}, {"media_type": "a/b; x=1"},
        {"purpose": "Fine Tune"}, {"purpose": 3},
    ],
)
def test_invalid_upload_inputs_are_refused(options: dict[str, Any]) -> None:
    values: dict[str, Any] = {"filename": "a.txt", "data": b"x", "media_type": "text/plain"}
    values.update(options)
    with pytest.raises(InvalidProviderFileInput):
        ProviderFileInput(**values)


def test_limits_inputs_and_results_are_validated_and_pickle() -> None:
    with pytest.raises(ValueError):
        ProviderFileLimits(max_upload_bytes=0)
    assert "3 bytes" in repr(ProviderFileInput("a", b"abc", "text/plain"))
    with pytest.raises(InvalidProviderFileInput):
        openai.Provider("k").upload_file(b"raw")  # type: ignore[arg-type]
    error = ProviderFileTooLarge("big", limit_name="max_upload_bytes", limit=1, value=2)
    clone = pickle.loads(pickle.dumps(error))
    assert (clone.limit_name, clone.limit, clone.value) == ("max_upload_bytes", 1, 2)
    foreign = pickle.loads(pickle.dumps(ForeignProviderFile("f", owner="a", provider="b")))
    assert (foreign.owner, foreign.provider) == ("a", "b")


# ------------------------------------------------------------------ Anthropic


def anthropic_file(file_id: str = "file_011", downloadable: bool = False) -> dict[str, Any]:
    return {"type": "file", "id": file_id, "size_bytes": 29, "filename": "a.txt",
            "created_at": "2026-08-15T19:20:29.074000Z", "mime_type": "text/plain",
            "downloadable": downloadable}


def anthropic_server(overrides: dict[str, Reply] | None = None) -> Callable[[Received], Reply]:
    def handle(received: Received) -> Reply:
        key = f"{received.method} {received.target}"
        if overrides and key in overrides:
            return overrides[key]
        if key == "POST /v1/files":
            return Reply.of_json(anthropic_file())
        if key == "GET /v1/files/file_011":
            return Reply.of_json(anthropic_file())
        if key == "GET /v1/files/file_tool/content":
            return Reply(200, (), b"generated by a tool")
        if key == "DELETE /v1/files/file_011":
            return Reply.of_json({"id": "file_011", "type": "file_deleted"})
        return Reply.of_json({"error": {"message": f"unexpected {key}"}}, status=404)

    return handle


def test_anthropic_round_trip_sends_the_beta_header_and_no_purpose() -> None:
    text = ProviderFileInput("a.txt", b"zigai provider file cassette\n", "text/plain")
    with serve(anthropic_server()) as (server, transport):
        provider = anthropic.Provider("sk-ant", transport, url_policy=POLICY,
                                      base_url=f"{server.url}/v1")
        with provider.upload_file(text) as uploaded:
            assert uploaded.value.downloadable is False
            assert uploaded.value.media_type == "text/plain"
            handle = uploaded.uploaded_file()
        with provider.inspect_file(handle) as inspected:
            assert inspected.value.created_at == "2026-08-15T19:20:29.074000Z"
        with provider.download_file(UploadedFile("anthropic", "file_tool")) as download:
            assert download.data == b"generated by a tool" and download.value.downloadable
        provider.delete_file(handle)
        with pytest.raises(InvalidProviderFileInput, match="purpose"):
            provider.upload_file(ProviderFileInput("a.txt", b"x", "text/plain", "user_data"))
    assert list(parse_form(server.requests[0])) == ["file"]
    for received in server.requests:
        assert received.headers["anthropic-beta"] == anthropic.FILES_BETA
        assert received.headers["anthropic-version"] == anthropic.API_VERSION
        assert received.headers["x-api-key"] == "sk-ant"
    assert len(server.requests) == 4


@pytest.mark.parametrize(
    ("key", "reply", "call"),
    [
        ("POST /v1/files", Reply.of_json({**anthropic_file(), "size_bytes": 30}), "upload"),
        ("POST /v1/files", Reply.of_json({**anthropic_file(), "type": "message"}), "upload"),
        ("POST /v1/files", Reply.of_json({**anthropic_file(), "id": ""}), "upload"),
        ("POST /v1/files", Reply.of_json({**anthropic_file(), "size_bytes": -3}), "upload"),
        ("POST /v1/files", Reply.of_json({**anthropic_file(), "downloadable": "no"}), "upload"),
        ("GET /v1/files/file_011", Reply.of_json(anthropic_file("file_999")), "inspect"),
        ("DELETE /v1/files/file_011", Reply.of_json({"id": "file_011", "type": "file"}), "delete"),
    ],
)
def test_anthropic_results_are_validated(key: str, reply: Reply, call: str) -> None:
    text = ProviderFileInput("a.txt", b"zigai provider file cassette\n", "text/plain")
    handle = UploadedFile("anthropic", "file_011")
    with serve(anthropic_server({key: reply})) as (server, transport):
        provider = anthropic.Provider("k", transport, url_policy=POLICY, base_url=f"{server.url}/v1")
        operations = {"upload": lambda: provider.upload_file(text),
                      "inspect": lambda: provider.inspect_file(handle),
                      "delete": lambda: provider.delete_file(handle)}
        with pytest.raises(InvalidProviderFileResponse):
            operations[call]()


# ------------------------------------------------------------------ Google


def gemini_file(root: str, name: str = "files/abc-123", size: str = "29") -> dict[str, Any]:
    return {"name": name, "displayName": "a.txt", "mimeType": "text/plain", "sizeBytes": size,
            "createTime": "2026-08-15T19:21:17Z", "expirationTime": "2026-08-17T19:21:17Z",
            "uri": f"{root}/v1beta/{name}", "state": "ACTIVE", "source": "UPLOADED"}


def google_server(session_url: Callable[[str], str | None],
                  overrides: dict[str, Reply] | None = None) -> Callable[[Received], Reply]:
    state: dict[str, str] = {}

    def handle(received: Received) -> Reply:
        key = f"{received.method} {received.target}"
        root = state.setdefault("root", "")
        if overrides and key in overrides:
            return overrides[key]
        if key == "POST /upload/v1beta/files":
            url = session_url(root)
            headers = () if url is None else (("X-Goog-Upload-URL", url),)
            return Reply(200, headers, b"")
        if key == "POST /upload/v1beta/files?upload_id=s1&upload_protocol=resumable":
            return Reply.of_json({"file": gemini_file(root, size=str(len(received.body)))})
        if key == "GET /v1beta/files/abc-123":
            return Reply.of_json(gemini_file(root))
        if key == "DELETE /v1beta/files/abc-123":
            return Reply.of_json({})
        return Reply.of_json({"error": {"message": f"unexpected {key}"}}, status=404)

    handle.state = state  # type: ignore[attr-defined]
    return handle


def google_provider(server: LoopbackServer, transport: HttpTransport, upload: str | None = None) -> google.Provider:
    return google.Provider("g-key", transport, url_policy=POLICY, base_url=f"{server.url}/v1beta",
                           upload_base_url=upload or f"{server.url}/upload/v1beta")


TEXT = ProviderFileInput("a.txt", b"zigai provider file cassette\n", "text/plain")


def test_google_resumable_upload_inspect_and_delete() -> None:
    handler = google_server(lambda root: f"{root}/upload/v1beta/files?upload_id=s1&upload_protocol=resumable")
    with serve(handler) as (server, transport):
        handler.state["root"] = server.url  # type: ignore[attr-defined]
        provider = google_provider(server, transport)
        with provider.upload_file(TEXT) as uploaded:
            handle = uploaded.uploaded_file()
            assert uploaded.value.size_bytes == 29 and uploaded.value.downloadable is False
        assert handle == UploadedFile("gcp.gen_ai", f"{server.url}/v1beta/files/abc-123", "text/plain")
        with provider.inspect_file(handle) as inspected:
            assert inspected.value.status == "ACTIVE"
        with pytest.raises(UnsupportedProviderOperation, match="download"):
            provider.download_file(handle)
        provider.delete_file(UploadedFile("gcp.gen_ai", "files/abc-123"))
    start, send = server.requests[:2]
    assert start.json() == {"file": {"display_name": "a.txt"}}
    assert start.headers["x-goog-upload-protocol"] == "resumable"
    assert start.headers["x-goog-upload-command"] == "start"
    assert start.headers["x-goog-upload-header-content-length"] == "29"
    assert start.headers["x-goog-upload-header-content-type"] == "text/plain"
    assert send.body == TEXT.data
    assert send.headers["x-goog-upload-command"] == "upload, finalize"
    assert send.headers["x-goog-upload-offset"] == "0"
    assert all(r.headers["x-goog-api-key"] == "g-key" for r in server.requests)
    assert [f"{r.method} {r.target}" for r in server.requests[2:]] == [
        "GET /v1beta/files/abc-123", "DELETE /v1beta/files/abc-123"]


def test_a_session_url_on_another_origin_receives_no_bytes() -> None:
    with serve(lambda r: Reply.of_json({"file": {}})) as (elsewhere, _):
        handler = google_server(lambda root: f"{elsewhere.url}/upload/v1beta/files?upload_id=s1")
        with serve(handler) as (server, transport):
            with pytest.raises(UploadSessionRejected, match="origin"):
                google_provider(server, transport).upload_file(TEXT)
            assert len(server.requests) == 1
        assert elsewhere.requests == []


@pytest.mark.parametrize(
    "session",
    [None, "x" * 5000],
)
def test_a_missing_or_oversized_session_url_is_rejected(session: str | None) -> None:
    handler = google_server(lambda root: session)
    with serve(handler) as (server, transport):
        with pytest.raises(UploadSessionRejected):
            google_provider(server, transport).upload_file(TEXT)
        assert len(server.requests) == 1


def test_google_results_and_handles_are_validated() -> None:
    handler = google_server(
        lambda root: f"{root}/upload/v1beta/files?upload_id=s1&upload_protocol=resumable",
        {"DELETE /v1beta/files/abc-123": Reply.of_json({"done": True})},
    )
    with serve(handler) as (server, transport):
        root = server.url
        handler.state["root"] = root  # type: ignore[attr-defined]
        provider = google_provider(server, transport)
        with pytest.raises(InvalidProviderFileResponse):
            provider.delete_file(UploadedFile("gcp.gen_ai", "files/abc-123"))
        for bad in ("https://evil.example/v1beta/files/abc-123", "files/ABC", "files/a/b",
                    f"{root}/v1beta/other/abc", f"{root}/v1beta/files/abc?x=1"):
            with pytest.raises(InvalidProviderFileHandle):
                provider.inspect_file(UploadedFile("gcp.gen_ai", bad))
        with pytest.raises(InvalidProviderFileInput, match="purpose"):
            provider.upload_file(ProviderFileInput("a.txt", b"x", "text/plain", "user_data"))
    assert same_origin("https://a.example/x", "https://A.example:443/y")
    assert not same_origin("https://a.example:8443/x", "https://a.example/y")
    assert not same_origin("https://a.example:bad/x", "https://a.example/y")
    assert file_path("files/abc", "https://x.example/") == "files/abc"


@pytest.mark.parametrize(
    "inner",
    [
        {"name": "corpora/x", "uri": "https://h/v1beta/corpora/x"},
        {"name": "files/abc", "uri": "https://h/v1beta/files/other"},
        {"name": "files/abc", "uri": "ftp://h/v1beta/files/abc"},
        {"name": "files/abc", "uri": "https://h/v1beta/files/abc", "sizeBytes": "-1"},
        {"name": "files/abc", "uri": "https://h/v1beta/files/abc", "sizeBytes": "30"},
        "not an object",
    ],
)
def test_google_upload_descriptors_are_validated(inner: Any) -> None:
    handler = google_server(
        lambda root: f"{root}/upload/v1beta/files?upload_id=s1&upload_protocol=resumable",
        {"POST /upload/v1beta/files?upload_id=s1&upload_protocol=resumable": Reply.of_json({"file": inner})},
    )
    with serve(handler) as (server, transport):
        handler.state["root"] = server.url  # type: ignore[attr-defined]
        with pytest.raises(InvalidProviderFileResponse):
            google_provider(server, transport).upload_file(TEXT)


def test_google_inspect_must_describe_the_requested_file() -> None:
    wrong = {"GET /v1beta/files/abc-123": Reply.of_json(gemini_file("https://h", "files/zzz"))}
    with serve(google_server(lambda root: None, wrong)) as (server, transport):
        with pytest.raises(InvalidProviderFileResponse, match="another file"):
            google_provider(server, transport).inspect_file(UploadedFile("gcp.gen_ai", "files/abc-123"))


def test_google_upload_root_must_not_carry_a_query() -> None:
    from zigai.providers.http import InvalidProviderConfiguration

    with pytest.raises(InvalidProviderConfiguration):
        google.Provider("k", upload_base_url="https://x.example/upload?key=1")


def test_vertex_and_compatible_providers_have_no_files_api() -> None:
    vertex = vertex_ai.Provider("tok", "proj-1", transport=HttpTransport())
    with pytest.raises(UnsupportedProviderOperation):
        vertex.upload_file(TEXT)
    from zigai.providers import groq

    with pytest.raises(UnsupportedProviderOperation):
        groq.Provider("k").upload_file(TEXT)


# ------------------------------------------------------------------ handles in prompts


def test_an_uploaded_handle_goes_straight_into_a_prompt_and_ownership_is_checked() -> None:
    answer = {"id": "resp_1", "object": "response", "model": "gpt-5-mini", "status": "completed",
              "output": [{"type": "message", "id": "m1", "role": "assistant", "status": "completed",
                          "content": [{"type": "output_text", "text": "summarized",
                                       "annotations": []}]}],
              "usage": {"input_tokens": 3, "output_tokens": 1, "total_tokens": 4}}
    handler = openai_server({"POST /v1/responses": Reply.of_json(answer)})
    with serve(handler) as (server, transport):
        provider = openai_provider(server, transport)
        with provider.upload_file(ProviderFileInput("a.pdf", b"%PDF-1.4", "application/pdf")) as up:
            handle = up.uploaded_file()
        agent = Agent(openai.Client("gpt-5-mini", provider))
        with agent.run([UploadedFileContent(handle), TextContent("Summarize.")]) as result:
            assert result.output == "summarized"
        sent = json.dumps(server.requests[-1].json())
        assert '"file_id": "file-abc"' in sent
        before = len(server.requests)
        with pytest.raises(ForeignUploadedFile):
            agent.run([UploadedFileContent(UploadedFile("anthropic", "file_1")), TextContent("x")])
        assert len(server.requests) == before


# ------------------------------------------------------------------ owners and helpers


def test_owned_results_refuse_use_after_close() -> None:
    owned = OwnedProviderFile(ProviderFile("openai", "file-1", media_type="text/plain"))
    assert "file-1" in repr(owned)
    owned.close()
    assert repr(owned) == "OwnedProviderFile(closed)"
    with pytest.raises(ProviderFileResultClosed):
        owned.uploaded_file()
    download = OwnedProviderFileDownload(ProviderFile("openai", "f", size_bytes=2), b"ab")
    assert "2 bytes" in repr(download)
    download.close()
    assert repr(download) == "OwnedProviderFileDownload(closed)"
    for use in (lambda: download.data, lambda: download.value):
        with pytest.raises(ProviderFileResultClosed):
            use()
    with pytest.raises(InvalidProviderFileResponse):
        OwnedProviderFileDownload(ProviderFile("openai", "f", size_bytes=3), b"ab")


def test_descriptor_handles_and_helpers() -> None:
    odd = ProviderFile("openai", "f", media_type="not a media type")
    assert odd.uploaded_file().media_type is None
    frozen = frozen_metadata(file_metadata(b'{"a": [1]}', "x"), "x")
    assert ProviderFile("openai", "f", metadata=frozen).metadata_value() == {"a": [1]}
    assert check_handle(OwnedProviderFile(ProviderFile("openai", "f")), "openai").file_id == "f"
    assert check_handle(ProviderFile("openai", "f"), "openai").file_id == "f"
    with pytest.raises(InvalidProviderFileResponse):
        file_metadata(b"[1]", "x")
    with pytest.raises(InvalidProviderFileResponse):
        file_metadata(b'{"a": "' + b"x" * 70_000 + b'"}', "x")
    assert opt_field({"a": True}, "a", bool, "x") is True
    with pytest.raises(InvalidProviderFileResponse):
        opt_field({"a": "1"}, "a", int, "x")


# ------------------------------------------------------------------ cassette redactions


def _request(body: bytes, *headers: tuple[str, str], url: str = "https://h/v1/files") -> TransportRequest:
    return TransportRequest("POST", url, headers=headers, body=body)


def test_the_redaction_rewrites_exactly_the_boundary_and_the_file_content() -> None:
    file = ProviderFileInput("a.jsonl", b"{}\r\n--zigai-x\n", "text/plain", "fine-tune")
    content_type, body = encode_multipart([("purpose", "fine-tune")], "file", file,
                                          ProviderFileLimits())
    redacted = redact_file_body(_request(body, ("Content-Type", content_type)))
    assert redacted == (
        b'--zigai-redacted-boundary\nContent-Disposition: form-data; name="purpose"\n\n'
        b'fine-tune\n--zigai-redacted-boundary\nContent-Disposition: form-data; name="file"; '
        b'filename="a.jsonl"\nContent-Type: text/plain\n\n' + REDACTED_CONTENT.encode()
        + b"\n--zigai-redacted-boundary--\n"
    )


@pytest.mark.parametrize(
    "body",
    [
        b"--b\nContent-Disposition: form-data; name=\"file\"; filename=\"a\"\n\nx\n--b--\n",
        b"--b\r\nContent-Disposition: form-data; name=\"p\"\r\n\r\nx\r\n--c--\r\n",
        b"--b\r\nno blank line\r\n--b--\r\n",
        b"--b\r\nX: y\r\n\r\nx\r\n--b--\r\n",
        b"--b\r\nContent-Disposition: form-data; name=\"p\"\r\n\r\ntwo\r\nlines\r\n--b--\r\n",
    ],
)
def test_malformed_multipart_is_left_alone_so_the_match_fails(body: bytes) -> None:
    assert redact_file_body(_request(body, ("Content-Type", "multipart/form-data; boundary=b"))) == body


def test_only_upload_commands_lose_their_bytes_and_session_urls_are_mapped() -> None:
    assert redact_file_body(_request(b"raw", ("X-Goog-Upload-Command", "upload, finalize"))) == (
        REDACTED_CONTENT.encode())
    assert redact_file_body(_request(b'{"a":1}', ("X-Goog-Upload-Command", "start"))) == b'{"a":1}'
    assert redact_file_body(TransportRequest("GET", "https://h/v1/files/x")) is None
    assert redact_session_url("https://h/upload/v1beta/files?upload_id=abc&upload_protocol=resumable") == (
        "https://h/upload/v1beta/files/REDACTED")
    assert redact_session_url("https://h/v1beta/files?upload_id=abc") == (
        "https://h/v1beta/files?upload_id=abc")
    assert redact_session_url("https://h/upload/v1beta/files") == "https://h/upload/v1beta/files"
    assert file_filters().apply_url("https://h/upload/v1/files?upload_id=1").endswith("/REDACTED")
