"""Feed raw SSE bytes, split into chunks, through an adapter's pure stream decoder.

Every adapter test checks that a recorded stream decodes to the same events whatever the
chunk boundaries; this is the one loop they share (frame with ``SseDecoder``, flush its
last event, then ``finish()`` the decoder).
"""

from __future__ import annotations

from typing import Any

from zigai.providers.sse import SseDecoder


def feed_chunks(decoder: Any, chunks: list[bytes]) -> list[Any]:
    """All model stream events ``decoder`` produces for ``chunks``, ending with ``finish()``."""
    sse, events = SseDecoder(), []
    for chunk in chunks:
        for event in sse.feed(chunk):
            events.extend(decoder.feed(event))
    last = sse.finish()
    if last is not None:
        events.extend(decoder.feed(last))
    events.extend(decoder.finish())
    return events
