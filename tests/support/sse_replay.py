"""Feed raw SSE bytes, split into chunks, through an adapter's pure stream decoder.

Every adapter test checks that a recorded stream decodes to the same events whatever the
chunk boundaries; this is the one loop they share.  It frames events with
``iter_sse_batches``, exactly as the adapters' streamed responses do, then ``finish()``es
the decoder.
"""

from __future__ import annotations

from typing import Any

from zigai.providers.sse import iter_sse_batches


def feed_chunks(decoder: Any, chunks: list[bytes]) -> list[Any]:
    """All model stream events ``decoder`` produces for ``chunks``, ending with ``finish()``."""
    events = []
    for batch in iter_sse_batches(chunks):
        for event in batch:
            events.extend(decoder.feed(event))
    events.extend(decoder.finish())
    return events
