"""MCP wire framing: the SSE parser, JSON-RPC classification and the HTTP header codec."""

from __future__ import annotations

import pytest

from zigai.json import Limits, defaults
from zigai.mcp.errors import (
    HeaderMismatch,
    InvalidMcpMessage,
    InvalidMcpRequest,
    McpMessageTooLarge,
    SseEventTooLarge,
)
from zigai.mcp.wire import headers as mh
from zigai.mcp.wire.jsonrpc import (
    JsonRpcError,
    JsonRpcNotification,
    JsonRpcRequest,
    JsonRpcResponse,
    check_request_id,
    decode_message,
    encode,
)
from zigai.mcp.wire.sse import LINE_OVERHEAD_BYTES, SseEvent, SseParser

# ----------------------------------------------------------------------------- SSE

STREAM = (
    b": keep-alive comment\r\n"
    b"event: message\r\n"
    b"id: 41\r\n"
    b"retry: 3000\r\n"
    b"data: {\"a\":\r\n"
    b"data:1}\r\n"
    b"\r\n"
    b"data: second\n"
    b"\n"
    b"data: third\r"
    b"\r"
    b"event: other\n"
    b"data\n"
    b"\n"
    b"id: only-an-id\n"
    b"\n"
    b"data: unterminated"
)
EXPECTED = [
    SseEvent("message", b'{"a":\n1}'),
    SseEvent("message", b"second"),
    SseEvent("message", b"third"),
    SseEvent("other", b""),
    SseEvent("message", b"unterminated"),
]


def _parse(pieces: list[bytes], limit: int = 1024) -> list[SseEvent]:
    parser = SseParser(limit)
    events: list[SseEvent] = []
    for piece in pieces:
        events.extend(parser.feed(piece))
    return events + parser.finish()


def test_sse_fields_comments_and_session_era_fields() -> None:
    assert _parse([STREAM]) == EXPECTED


def test_sse_split_at_every_byte_boundary_yields_the_same_events() -> None:
    for cut in range(len(STREAM) + 1):
        assert _parse([STREAM[:cut], STREAM[cut:]]) == EXPECTED, cut
    assert _parse([bytes([b]) for b in STREAM]) == EXPECTED


def test_sse_crlf_split_between_cr_and_lf_is_one_line_end() -> None:
    assert _parse([b"data: x\r", b"\n\r", b"\n"]) == [SseEvent("message", b"x")]
    assert _parse([b"data: x\r", b"\r\n"]) == [SseEvent("message", b"x")]


def test_sse_event_exactly_at_the_limit_passes_and_one_more_byte_fails() -> None:
    limit = 100
    # two data lines joined by "\n": 49 + 1 + 50 = 100 bytes of event data
    exact = b"data: " + b"a" * 49 + b"\ndata: " + b"b" * 50 + b"\n\n"
    assert _parse([exact], limit)[0].data == b"a" * 49 + b"\n" + b"b" * 50
    over = b"data: " + b"a" * 49 + b"\ndata: " + b"b" * 51 + b"\n\n"
    with pytest.raises(SseEventTooLarge) as caught:
        _parse([over], limit)
    assert caught.value.limit == limit
    single = b"data: " + b"c" * limit + b"\n\n"
    assert _parse([single], limit)[0].data == b"c" * limit
    with pytest.raises(SseEventTooLarge):
        _parse([b"data: " + b"c" * (limit + 1) + b"\n\n"], limit)


def test_sse_unterminated_line_is_bounded_before_it_completes() -> None:
    limit = 10
    parser = SseParser(limit)
    parser.feed(b":" + b"x" * (limit + LINE_OVERHEAD_BYTES - 1))  # a comment exactly at the line bound
    with pytest.raises(SseEventTooLarge):
        parser.feed(b"x")


def test_sse_parser_rejects_a_bad_limit() -> None:
    with pytest.raises(ValueError):
        SseParser(-1)
    with pytest.raises(ValueError):
        SseParser(True)


# ----------------------------------------------------------------------------- JSON-RPC


def test_classify_each_message_kind() -> None:
    limits = defaults.mcp_message
    assert decode_message(b'{"jsonrpc":"2.0","id":1,"method":"m","params":{"a":1}}', limits) == \
        JsonRpcRequest(1, "m", {"a": 1})
    assert decode_message('{"jsonrpc":"2.0","method":"n"}', limits) == JsonRpcNotification("n", None)
    assert decode_message('{"jsonrpc":"2.0","id":"x","result":{}}', limits) == JsonRpcResponse("x", {})
    assert decode_message('{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"p","data":[1]}}',
                          limits) == JsonRpcError(None, -32700, "p", [1])


@pytest.mark.parametrize("text", [
    "[]", '{"id":1,"method":"m"}', '{"jsonrpc":"2.0","id":true,"method":"m"}',
    '{"jsonrpc":"2.0","id":1,"method":""}', '{"jsonrpc":"2.0","id":1,"method":"m","params":[1]}',
    '{"jsonrpc":"2.0","id":1}', '{"jsonrpc":"2.0","id":1,"result":{},"error":{}}',
    '{"jsonrpc":"2.0","result":{}}', '{"jsonrpc":"2.0","id":1,"result":[]}',
    '{"jsonrpc":"2.0","id":1.5,"error":{"code":1,"message":"m"}}',
    '{"jsonrpc":"2.0","id":1,"error":[]}', '{"jsonrpc":"2.0","id":1,"error":{"code":true,"message":"m"}}',
    "not json", '{"jsonrpc":"2.0","id":1,"method":"m","method":"n"}',
])
def test_invalid_messages_are_refused(text: str) -> None:
    with pytest.raises(InvalidMcpMessage):
        decode_message(text, defaults.mcp_message)


def test_message_document_exactly_at_the_limit_passes_and_one_more_byte_fails() -> None:
    limits = Limits(max_document_bytes=200, max_value_bytes=200, max_depth=8, max_items=16)
    head, tail = b'{"jsonrpc":"2.0","id":1,"result":{"t":"', b'"}}'
    exact = head + b"x" * (200 - len(head) - len(tail)) + tail
    assert len(exact) == 200
    assert isinstance(decode_message(exact, limits), JsonRpcResponse)
    with pytest.raises(McpMessageTooLarge) as caught:
        decode_message(head + b"x" * (201 - len(head) - len(tail)) + tail, limits)
    assert caught.value.limit == 200


def test_request_ids_and_encoding() -> None:
    assert check_request_id(7) == 7 and check_request_id("a") == "a"
    for bad in (True, None, 1.5, [1]):
        with pytest.raises(InvalidMcpRequest):
            check_request_id(bad)
    assert encode({"a": "line\nbreak"}) == b'{"a":"line\\nbreak"}'
    with pytest.raises(InvalidMcpRequest):
        encode({"a": float("nan")})


# ----------------------------------------------------------------------------- headers


@pytest.mark.parametrize(("value", "encoded"), [
    ("us-west1", "us-west1"),
    ("Hello, 世界", "=?base64?SGVsbG8sIOS4lueVjA==?="),
    (" padded ", "=?base64?IHBhZGRlZCA=?="),
    ("line1\nline2", "=?base64?bGluZTEKbGluZTI=?="),
    ("=?base64?literal?=", "=?base64?PT9iYXNlNjQ/bGl0ZXJhbD89?="),
])
def test_header_value_encoding_matches_the_specification_examples(value: str, encoded: str) -> None:
    assert mh.encode_header_value(value) == encoded
    assert mh.decode_header_value(encoded) == value


def test_malformed_sentinels_decode_to_none() -> None:
    assert mh.decode_header_value(None) is None
    assert mh.decode_header_value("=?base64?!!!?=") is None
    assert mh.decode_header_value("=?base64?YQ=?=") is None  # not canonical base64
    assert mh.decode_header_value("=?base64?/w==?=") is None  # not UTF-8


SCHEMA = {
    "type": "object",
    "properties": {
        "region": {"type": "string", "x-mcp-header": "Region"},
        "opts": {"type": "object", "properties": {"shard": {"type": "integer", "x-mcp-header": "Shard"}}},
        "dry": {"type": "boolean", "x-mcp-header": "Dry"},
        "query": {"type": "string"},
    },
}


def test_header_parameters_follow_pure_properties_chains() -> None:
    assert mh.invalid_header_annotation(SCHEMA) is None
    assert mh.header_parameters(SCHEMA) == {
        ("region",): ("Region", "string"), ("opts", "shard"): ("Shard", "integer"), ("dry",): ("Dry", "boolean"),
    }
    headers = mh.param_headers(mh.header_parameters(SCHEMA),
                               {"region": "eu 1", "opts": {"shard": 42}, "dry": False, "query": "q"})
    assert dict(headers) == {"Mcp-Param-Region": "eu 1", "Mcp-Param-Shard": "42", "Mcp-Param-Dry": "false"}
    assert mh.param_headers(mh.header_parameters(SCHEMA), {"region": None, "opts": "x"}) == ()


@pytest.mark.parametrize(("schema", "reason"), [
    ({"type": "object", "x-mcp-header": "Root"}, "only allowed on properties"),
    ({"type": "object", "properties": {"a": {"type": "array", "items": {"type": "string", "x-mcp-header": "A"}}}},
     "only allowed on properties"),
    ({"type": "object", "anyOf": [{"properties": {"a": {"type": "string", "x-mcp-header": "A"}}}]},
     "only allowed on properties"),
    ({"type": "object", "properties": {"a": {"type": "number", "x-mcp-header": "A"}}}, "needs type"),
    ({"type": "object", "properties": {"a": {"type": "string", "x-mcp-header": "Bad Name"}}}, "HTTP token"),
    ({"type": "object", "properties": {"a": {"type": "string", "x-mcp-header": ""}}}, "HTTP token"),
    ({"type": "object", "properties": {"a": {"type": "string", "x-mcp-header": "X"},
                                       "b": {"type": "string", "x-mcp-header": "x"}}}, "repeats"),
])
def test_invalid_annotations_are_named(schema: dict, reason: str) -> None:
    found = mh.invalid_header_annotation(schema)
    assert found is not None and reason in found


def test_unrenderable_mirrored_values_are_refused_before_io() -> None:
    parameters = mh.header_parameters(SCHEMA)
    for bad in ({"region": {"nested": 1}}, {"opts": {"shard": 2**53}}, {"opts": {"shard": 1.5}}):
        with pytest.raises(InvalidMcpRequest):
            mh.param_headers(parameters, bad)
    assert dict(mh.param_headers(parameters, {"opts": {"shard": 2**53 - 1}})) == \
        {"Mcp-Param-Shard": str(2**53 - 1)}


def _h(**pairs: str | tuple[str, ...]) -> dict[str, tuple[str, ...]]:
    return {f"mcp-param-{k.lower()}": (v,) if isinstance(v, str) else v for k, v in pairs.items()}


def test_server_side_param_header_validation() -> None:
    arguments = {"region": "eu 1", "opts": {"shard": 42}}
    mh.check_param_headers(SCHEMA, arguments, _h(region="eu 1", shard="42"))
    mh.check_param_headers(SCHEMA, arguments, _h(region="=?base64?ZXUgMQ==?=", shard="42.0"))
    failures = [
        (_h(shard="42"), "missing"),
        (_h(region="eu 2", shard="42"), "does not match"),
        (_h(region="eu 1", shard="43"), "does not match"),
        (_h(region="eu 1", shard="42", dry="true"), "is present"),
        (_h(region=("eu 1", "eu 1"), shard="42"), "more than once"),
        (_h(region="=?base64?###?=", shard="42"), "malformed"),
    ]
    for headers, words in failures:
        with pytest.raises(HeaderMismatch, match=words):
            mh.check_param_headers(SCHEMA, arguments, headers)
    with pytest.raises(HeaderMismatch, match="does not match"):
        mh.check_param_headers(SCHEMA, {"region": ["x"]}, _h(region="x"))
    mh.check_param_headers(SCHEMA, {"region": ["x"]}, {})  # no header form, no header: fine
    invalid = {"type": "object", "properties": {"a": {"type": "number", "x-mcp-header": "A"}}}
    mh.check_param_headers(invalid, {"a": 1.5}, {})  # invalid annotations validate nothing
