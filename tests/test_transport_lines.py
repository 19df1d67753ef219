"""The stream line limit, applied by the line splitter and by the piece guard alike.

Both readings of a streamed body must agree with one naive rule: lines end at ``\\n`` (a
``\\r`` just before it is part of the terminator), a line may be exactly the limit long, and
the first line over it ends the stream with ``StreamLineTooLarge`` after every complete line
before it has been delivered.
"""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from zigai.transport import (
    Headers,
    Limits,
    LineSplitter,
    MemoryStreamResponse,
    StreamLineGuard,
    StreamLineTooLarge,
    guarded_pieces,
)


def _reference(data: bytes, limit: int) -> tuple[list[bytes], bool]:
    """(the lines before the first one over the limit, whether there is one)."""
    parts = data.split(b"\n")
    complete, final = parts[:-1], parts[-1]
    good = []
    for line in complete:
        line = line[:-1] if line.endswith(b"\r") else line
        if len(line) > limit:
            return good, True
        good.append(line)
    if len(final) > limit:
        return good, True
    return good + ([final] if final else []), False


def _split(data: bytes, cuts: list[int]) -> list[bytes]:
    points = sorted({min(cut, len(data)) for cut in cuts})
    return [data[a:b] for a, b in zip([0, *points], [*points, len(data)], strict=True)]


def _splitter_lines(pieces: list[bytes], limit: int) -> tuple[list[bytes], bool]:
    splitter, lines = LineSplitter(limit), []
    try:
        for piece in pieces:
            lines += splitter.feed(piece)
        lines += list(splitter.finish())
    except StreamLineTooLarge as exc:
        assert exc.limit == limit
        return lines, True
    return lines, False


def _guarded_bytes(pieces: list[bytes], limit: int) -> tuple[bytes, bool]:
    delivered = bytearray()
    try:
        for piece in guarded_pieces(pieces, limit):
            delivered += piece
    except StreamLineTooLarge:
        return bytes(delivered), True
    return bytes(delivered), False


@settings(max_examples=500, deadline=None)
@given(
    data=st.lists(st.sampled_from([b"a", b"bb", b"\r", b"\n", b"\r\n", b"cccc"]), max_size=40)
    .map(b"".join),
    limit=st.integers(min_value=1, max_value=9),
    cuts=st.lists(st.integers(min_value=0, max_value=120), max_size=8),
)
def test_splitter_and_guard_agree_with_the_rule_at_any_split(
    data: bytes, limit: int, cuts: list[int]
) -> None:
    pieces = _split(data, cuts)
    expected_lines, expected_error = _reference(data, limit)
    assert _splitter_lines(pieces, limit) == (expected_lines, expected_error)
    delivered, failed = _guarded_bytes(pieces, limit)
    assert failed == expected_error
    if not failed:
        assert delivered == data
    else:
        whole = delivered[:delivered.rfind(b"\n") + 1]
        assert _reference(whole, limit) == (expected_lines, False)
        assert data.startswith(delivered)


@pytest.mark.parametrize("terminator", [b"\n", b"\r\n"])
def test_a_line_exactly_at_the_limit_passes_and_one_more_byte_fails(terminator: bytes) -> None:
    exact = b"x" * 10 + terminator + b"y" * 10
    assert _guarded_bytes([exact], 10) == (exact, False)
    over = b"ok" + terminator + b"x" * 11 + terminator
    delivered, failed = _guarded_bytes([over], 10)
    assert failed and delivered == b"ok" + terminator
    unterminated = b"ok" + terminator + b"x" * 11
    assert _guarded_bytes([unterminated], 10) == (b"ok" + terminator, True)


def test_a_cr_waiting_for_its_lf_does_not_count_against_the_limit() -> None:
    guard = StreamLineGuard(3)
    assert guard.check(b"abc\r") == b"abc\r"
    assert not guard.failed
    assert guard.check(b"\nd") == b"\nd"
    guard.finish()
    after_a_line = StreamLineGuard(3)
    assert after_a_line.check(b"x\nabc\r") == b"x\nabc\r" and not after_a_line.failed
    assert after_a_line.check(b"\n") == b"\n" and not after_a_line.failed
    plain = StreamLineGuard(3)
    assert plain.check(b"abcd") == b"" and plain.failed  # no CR: the fourth byte is too many
    late = StreamLineGuard(3)
    late.check(b"abc\r")
    with pytest.raises(StreamLineTooLarge):
        late.finish()  # at the end of the stream the CR is part of the line


def test_a_line_that_never_ends_is_refused_without_buffering_it() -> None:
    guard = StreamLineGuard(1000)
    for _ in range(62):
        assert guard.check(b"z" * 16) == b"z" * 16
    assert guard.check(b"z" * 8) == b"z" * 8  # 1000 bytes so far: still allowed
    assert guard.check(b"z") == b""
    assert guard.failed
    assert guard.check(b"\n") == b""  # nothing passes once failed


def test_memory_stream_chunks_apply_the_limit_and_are_consumed_once() -> None:
    body = b"data: 1\n\n" + b"e" * 100 + b"\n\n"
    ok = MemoryStreamResponse(200, Headers(), body, Limits(max_stream_line_bytes=100))
    assert b"".join(ok.chunks()) == body
    with pytest.raises(ValueError):
        list(ok.chunks())
    tight = MemoryStreamResponse(200, Headers(), body, Limits(max_stream_line_bytes=99))
    pieces = tight.chunks()
    assert next(pieces) == b"data: 1\n\n"
    with pytest.raises(StreamLineTooLarge):
        next(pieces)
