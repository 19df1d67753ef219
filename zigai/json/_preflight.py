"""The limit preflight: measures one JSON document against :class:`Limits` at C speed.

Theory of operation.  A character loop in Python costs far more than the C
decoder it guards, so the scan is built from whole-buffer primitives
(``bytes.count/replace/translate/find`` and a few compiled ``re`` patterns)
that each cost one linear pass.  No value graph is built and nothing about
the document is retained after the call.

1. Size: the UTF-8 length is checked first (``str`` input is measured as its
   UTF-8 encoding); ``bytes`` must then decode strictly as UTF-8.
2. Escapes are neutralised without moving any byte: every ``\\\\`` and
   ``\\"`` becomes ``__``.  In a valid document backslashes occur only in
   strings, so afterwards every ``"`` delimits a string and offsets still match
   the original bytes.  Escaped UTF-16 surrogates must pair up.  This is one
   left-to-right ``re.sub`` of ``\\[\\\\"]`` (a literal-prefix search, faster
   than ``bytes.replace`` for these needles).  It equals replacing ``\\\\``
   everywhere and then ``\\"``: both pair a run of backslashes from its left
   end, and an odd run's last backslash takes a following ``"`` in either
   (``tests/test_json_fast_paths.py`` checks every input of up to seven
   characters over ``\\"ua``).  Without a backslash the bytes are used as they
   are; the surrogate search needs no ``\\u`` pre-test (it is one search).
3. Strings: one possessive regex walks string/non-string runs and stops only
   at a string whose *encoded* length exceeds ``max_value_bytes``.  The decoded
   size never exceeds the encoded size, so only those few strings are decoded
   exactly (escapes shrink them) before deciding.
4. Numbers: number bytes map to ``0`` and everything else to a space; a run of
   ``max_value_bytes + 1`` zeros is an upper bound (digits inside strings count
   too).  Only when it fires are strings blanked out and the test repeated.
5. Structure: everything except ``"[]{},`` is deleted.  When the count of
   openers is at most ``max_depth`` and the count of commas is below
   ``max_items`` nothing more is needed.  Otherwise strings are removed from
   that small skeleton (braces count as brackets).  The depth is the maximum running sum of
   +1/-1 per bracket (``itertools.accumulate`` over a signed byte array, a C
   loop).  For items, leaf containers (``[`` commas ``]``) are peeled off one
   level per ``re.sub`` round: a container becomes a leaf only after all its
   children are gone, so its commas form one contiguous run at that moment,
   and a run of ``max_items`` commas means one collection has more than
   ``max_items``.
   When :func:`preflight_counting_members` asks, ``:`` stays in the skeleton
   and is counted once strings are gone: in a well-formed document that is
   the number of object members, which lets :func:`zigai.json.parse` detect
   duplicate keys without a per-object hook.

The preflight proves limits only for well-formed documents; syntax is then
checked by the stdlib decoder.  For a document that is both malformed and
over a limit either error may be reported.
"""

from __future__ import annotations

import functools
import json
import re
from array import array
from itertools import accumulate

from zigai.json._errors import (
    DocumentTooLarge,
    MalformedJson,
    NestingTooDeep,
    TooManyItems,
    ValueTooLarge,
)
from zigai.json._limits import Limits

__all__ = ["preflight", "preflight_counting_members"]

_STRUCTURAL = b'"[]{},'
_DELETE_NON_STRUCTURAL = bytes(range(256)).translate(None, _STRUCTURAL)
_DELETE_NON_STRUCTURAL_BUT_COLONS = bytes(range(256)).translate(None, _STRUCTURAL + b":")
_BRACES_AS_BRACKETS = bytes.maketrans(b"{}", b"[]")
_MEMBER_SEPARATOR = b":"
_BRACKETS_AS_STEPS = bytes.maketrans(b"[]", b"\x01\xff")
_NUMBER_BYTES = b"0123456789+-.eE"
_NUMBERS_AS_ZEROS = bytes(
    ord("0") if byte in _NUMBER_BYTES else ord(" ") for byte in range(256)
)

_STRING = re.compile(rb'"[^"]*"')
_LEAF = re.compile(rb"\[,*\]")
_COMMAS = re.compile(rb",*")
_ZEROS = re.compile(rb"0*")
_ESCAPED_BACKSLASH_OR_QUOTE = re.compile(rb'\\[\\"]')
_SURROGATE_ESCAPE = re.compile(rb"\\u[dD][89a-fA-F][0-9a-fA-F]{2}")
_SURROGATE_PAIR = re.compile(rb"\\u[dD][89abAB][0-9a-fA-F]{2}\\u[dD][c-fC-F][0-9a-fA-F]{2}")


@functools.lru_cache(maxsize=32)
def _short_strings_walker(max_value_bytes: int) -> re.Pattern[bytes]:
    """Matches from a non-string position over every run until a string longer than the bound."""
    return re.compile(rb'[^"]*+(?:"[^"]{0,%d}+"[^"]*+)*+' % max_value_bytes)


def _match_end(pattern: re.Pattern[bytes], data: bytes, position: int) -> int:
    """End of ``pattern`` matched at ``position``; the patterns used here also match empty."""
    match = pattern.match(data, position)
    assert match is not None
    return match.end()


def preflight(data: bytes | bytearray | memoryview | str, limits: Limits) -> str:
    """Check ``data`` against ``limits`` and return its text for the syntax-checking decoder.

    Raises the named limit error, or :class:`MalformedJson` for invalid UTF-8,
    unpaired surrogate escapes and unterminated strings.  Does not check the
    remaining syntax.
    """
    raw, text = _encoded_and_text(data, limits.max_document_bytes)
    neutral = _neutralise_escapes(raw)
    _check_strings(raw, neutral, limits.max_value_bytes)
    _check_numbers(neutral, limits.max_value_bytes)
    _check_structure(neutral, limits.max_depth, limits.max_items, _DELETE_NON_STRUCTURAL)
    return text


def preflight_counting_members(
    data: bytes | bytearray | memoryview | str, limits: Limits
) -> tuple[str, int | None]:
    """:func:`preflight`, also returning the number of ``:`` outside strings when it was counted.

    The count is ``None`` when the structure was proven within limits without
    removing strings (step 5's first bound).  For a well-formed document it is
    exactly the number of object members in the whole document.
    """
    raw, text = _encoded_and_text(data, limits.max_document_bytes)
    neutral = _neutralise_escapes(raw)
    _check_strings(raw, neutral, limits.max_value_bytes)
    _check_numbers(neutral, limits.max_value_bytes)
    members = _check_structure(
        neutral, limits.max_depth, limits.max_items, _DELETE_NON_STRUCTURAL_BUT_COLONS
    )
    return text, members


def _encoded_and_text(data: bytes | bytearray | memoryview | str, limit: int) -> tuple[bytes, str]:
    if isinstance(data, str):
        if data.isascii():
            if len(data) > limit:
                raise _document_too_large(limit, len(data))
            return data.encode("ascii"), data
        if len(data) > limit:  # every character is at least one byte
            raise _document_too_large(limit, None)
        try:
            raw = data.encode("utf-8")
        except UnicodeEncodeError as exc:
            raise MalformedJson(
                f"text is not encodable as UTF-8 (lone surrogate at character {exc.start})"
            ) from None
        if len(raw) > limit:
            raise _document_too_large(limit, len(raw))
        return raw, data
    if isinstance(data, (bytearray, memoryview)):
        data = bytes(data)
    elif not isinstance(data, bytes):
        raise TypeError(f"JSON input must be bytes or str, not {type(data).__name__}")
    if len(data) > limit:
        raise _document_too_large(limit, len(data))
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise MalformedJson(f"invalid UTF-8 at byte {exc.start}", offset=exc.start) from None
    return data, text


def _document_too_large(limit: int, observed: int | None) -> DocumentTooLarge:
    size = "more than that" if observed is None else f"{observed} bytes"
    return DocumentTooLarge(
        f"JSON document is {size}; the limit is {limit} bytes", limit=limit, observed=observed
    )


def _neutralise_escapes(raw: bytes) -> bytes:
    """Replace escaped backslashes and quotes by ``__``; check escaped surrogates pair up."""
    if b"\\" not in raw:
        return raw
    neutral = _ESCAPED_BACKSLASH_OR_QUOTE.sub(b"__", raw)
    _check_surrogate_escapes(neutral)
    return neutral


def _check_surrogate_escapes(neutral: bytes) -> None:
    if _SURROGATE_ESCAPE.search(neutral) is None:
        return
    # Blank out well-formed pairs (same length, so offsets hold); any escape left is unpaired.
    lone = _SURROGATE_ESCAPE.search(_SURROGATE_PAIR.sub(b"_" * 12, neutral))
    if lone is not None:
        at = lone.start()
        raise MalformedJson(f"unpaired UTF-16 surrogate escape at byte {at}", offset=at)


def _check_strings(raw: bytes, neutral: bytes, limit: int) -> None:
    if len(raw) - 2 <= limit:
        return  # no string can be longer than the document around it
    walker = _short_strings_walker(limit)
    position = 0
    end_of_document = len(neutral)
    while True:
        start = _match_end(walker, neutral, position)
        if start == end_of_document:
            return
        close = neutral.find(b'"', start + 1)
        if close < 0:
            raise MalformedJson(f"unterminated string at byte {start}", offset=start)
        token = raw[start : close + 1]
        size = close - start - 1
        if b"\\" in token:
            try:
                decoded = json.loads(token.decode("utf-8"))
            except ValueError:
                raise MalformedJson(f"invalid string at byte {start}", offset=start) from None
            size = len(decoded) if decoded.isascii() else len(decoded.encode("utf-8"))
        if size > limit:
            raise ValueTooLarge(
                f"JSON string at byte {start} decodes to {size} bytes; the limit is {limit}",
                limit=limit,
                observed=size,
                kind="string",
                offset=start,
            )
        position = close + 1


def _check_numbers(neutral: bytes, limit: int) -> None:
    if len(neutral) <= limit:
        return
    too_long = b"0" * (limit + 1)
    if too_long not in neutral.translate(_NUMBERS_AS_ZEROS):
        return
    # The bound also saw digits inside strings: blank the strings out and look again.
    outside = _STRING.sub(b" ", neutral).translate(_NUMBERS_AS_ZEROS)
    start = outside.find(too_long)
    if start < 0:
        return
    size = _match_end(_ZEROS, outside, start) - start
    raise ValueTooLarge(
        f"JSON number token is {size} bytes; the limit is {limit}",
        limit=limit,
        observed=size,
        kind="number",
    )


def _check_structure(
    neutral: bytes, max_depth: int, max_items: int, delete: bytes
) -> int | None:
    """Raise the depth or items error; return the ``:`` count once strings are removed.

    ``delete`` keeps ``:`` in the skeleton only when the caller wants that count
    (otherwise it is 0).
    """
    skeleton = neutral.translate(None, delete)
    if not _structure_may_exceed(skeleton, max_depth, max_items):
        return None
    # Drop strings from the skeleton.  Removing any adjacent quote pair is safe:
    # either it is an empty string, or it joins two strings with nothing
    # structural between them; quote parity stays intact for the exact pass.
    skeleton = skeleton.replace(b'""', b"")
    if b'"' in skeleton:
        skeleton = _STRING.sub(b"", skeleton)
    members = skeleton.count(_MEMBER_SEPARATOR)
    skeleton = skeleton.translate(_BRACES_AS_BRACKETS, _MEMBER_SEPARATOR)
    if not _structure_may_exceed(skeleton, max_depth, max_items):
        return members
    openers = skeleton.count(b"[")
    if openers > max_depth:
        # Depth is the largest running sum of +1 per "[" and -1 per "]"; a
        # signed byte array makes accumulate() and max() run as C loops.
        steps = array("b", skeleton.translate(_BRACKETS_AS_STEPS, b","))
        depth = max(accumulate(steps), default=0)
        if depth > max_depth:
            raise NestingTooDeep(
                f"JSON nesting depth is {depth}; the limit is {max_depth}",
                limit=max_depth,
                observed=depth,
            )
    if skeleton.count(b",") < max_items:
        return members
    too_many = b"," * max_items
    while skeleton:
        start = skeleton.find(too_many)
        if start >= 0:
            items = _match_end(_COMMAS, skeleton, start) - start + 1
            raise TooManyItems(
                f"a JSON collection has {items} items; the limit is {max_items}",
                limit=max_items,
                observed=items,
            )
        peeled = _LEAF.sub(b"", skeleton)  # at most max_depth rounds: depth is within limit
        if len(peeled) == len(skeleton):
            return members  # unbalanced brackets: the syntax check reports it
        skeleton = peeled
    return members


def _structure_may_exceed(skeleton: bytes, max_depth: int, max_items: int) -> bool:
    openers = skeleton.count(b"[") + skeleton.count(b"{")
    return openers > max_depth or skeleton.count(b",") >= max_items
