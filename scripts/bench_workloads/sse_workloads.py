"""SSE decode throughput of the recorded provider streams, next to a ``bytes.split`` floor.

The workload reads the text (SSE) response bodies of every cassette under the corpus's
``streamed/`` folder (read in place; nothing is copied), concatenates them into one stream
and repeats it to about 1 MiB.  The measured path is the production one: the transport's
line-limit guard (what ``ChunkedStreamResponse.chunks`` applies) over 16 KiB socket-sized
pieces (cut before timing starts: they are what the socket delivered), then
``iter_sse_batches`` consumed the way every streaming adapter consumes it, producing every
``SseEvent``.  The floor is ``bytes.split(b"\\n")`` over the same bytes.
``ratio`` is decode MB/s divided by floor MB/s (higher is better; the target is >= 0.3).
"""

from __future__ import annotations

import os
import statistics
import time
from pathlib import Path

PIECE = 16 * 1024
TARGET_BYTES = 1 << 20


def _corpus() -> Path:
    root = Path(__file__).resolve().parents[2]
    base = os.environ.get("ZIGAI_CONFORMANCE_DIR") or str(root.parent / "shared" / "conformance")
    return Path(base) / "zigai-cassettes" / "streamed"


def recorded_stream() -> bytes | None:
    """All recorded SSE bodies joined and repeated to ~1 MiB (None without the corpus)."""
    import yaml

    folder = _corpus()
    if not folder.is_dir():
        return None
    bodies = []
    for path in sorted(folder.rglob("*.yaml")):
        data = yaml.safe_load(path.read_text(encoding="utf-8"))
        for interaction in data.get("interactions", []):
            body = interaction["response"].get("body") or {}
            if body.get("type") == "text":
                text = body["content"].encode("utf-8")
                bodies.append(text if text.endswith(b"\n\n") else text.rstrip(b"\r\n") + b"\n\n")
    if not bodies:
        return None
    once = b"".join(bodies)
    return once * max(1, TARGET_BYTES // len(once))


def _decode(pieces: list[bytes]) -> int:
    from zigai.providers.sse import iter_sse_batches
    from zigai.transport import Limits, guarded_pieces

    chunks = guarded_pieces(pieces, Limits().max_stream_line_bytes)  # StreamResponse.chunks()
    count = 0
    for batch in iter_sse_batches(chunks):  # consumed the way the adapters consume it
        for _event in batch:
            count += 1
    return count


def sse_decode_vs_split_floor(reps: int) -> dict[str, float]:
    stream = recorded_stream()
    if stream is None:
        return {"ratio": float("nan"), "decode_mb_s": float("nan"), "floor_mb_s": float("nan")}
    # The pieces stand for what the socket delivered: they exist before any decoding starts.
    pieces = [stream[start:start + PIECE] for start in range(0, len(stream), PIECE)]
    decode_s, floor_s = [], []
    for _ in range(max(reps, 1)):
        started = time.perf_counter()
        stream.split(b"\n")
        floor_s.append(time.perf_counter() - started)
        started = time.perf_counter()
        _decode(pieces)
        decode_s.append(time.perf_counter() - started)
    mb = len(stream) / 1e6
    decode = mb / statistics.median(decode_s)
    floor = mb / statistics.median(floor_s)
    return {"ratio": decode / floor, "decode_mb_s": decode, "floor_mb_s": floor}
