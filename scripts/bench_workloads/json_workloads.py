"""Bounded-JSON workload: ``zigai.json.parse`` against plain ``json.loads``.

The document imitates a large OpenAI-Responses-style body: thousands of output
items (assistant messages with multi-paragraph text, escaped quotes, non-ASCII
text and emoji, function calls whose ``arguments`` are JSON-in-a-string,
reasoning summaries, per-token logprobs full of floats) plus a few long
opaque strings.  Generation is deterministic (fixed seed) and the result is
exactly ``target_bytes`` long, so a 16 MiB document sits precisely on the
provider-response document limit.

Importing this module has no side effects; the document is built on demand.
"""

from __future__ import annotations

import base64
import json
import random
import statistics
import time
from typing import Any

MIB = 1024 * 1024

_WORDS = (
    "the model returns structured output while the agent keeps history bounded and every "
    "tool call carries arguments that are validated before the callback runs; naïve café "
    "façade über straße déjà vu — résumé Привет мир 你好 世界 こんにちは 🙂 🚀 ✓"
).split()


def _text(rng: random.Random, words: int) -> str:
    parts = []
    for i in range(words):
        word = rng.choice(_WORDS)
        if i % 17 == 16:
            word += "\n\n"
        elif i % 11 == 10:
            word = f'"{word}"'
        parts.append(word)
    return " ".join(parts)


def _message_item(rng: random.Random, index: int) -> dict[str, Any]:
    tokens = [
        {
            "token": rng.choice(_WORDS),
            "logprob": -rng.random() * 5,
            "bytes": [rng.randrange(32, 127) for _ in range(rng.randrange(1, 5))],
            "top_logprobs": [],
        }
        for _ in range(rng.randrange(4, 12))
    ]
    return {
        "type": "message",
        "id": f"msg_{index:08x}{rng.getrandbits(64):016x}",
        "status": "completed",
        "role": "assistant",
        "content": [
            {
                "type": "output_text",
                "text": _text(rng, rng.randrange(20, 160)),
                "annotations": [],
                "logprobs": tokens,
            }
        ],
    }


def _function_call_item(rng: random.Random, index: int) -> dict[str, Any]:
    arguments = {
        "city": rng.choice(["Zürich", "São Paulo", "Kraków", "Reykjavík", "Oslo"]),
        "days": rng.randrange(1, 15),
        "units": "metric",
        "notes": _text(rng, rng.randrange(3, 20)),
        "threshold": round(rng.uniform(-40, 40), 3),
    }
    return {
        "type": "function_call",
        "id": f"fc_{index:08x}",
        "call_id": f"call_{rng.getrandbits(48):012x}",
        "name": "get_weather",
        "arguments": json.dumps(arguments, ensure_ascii=bool(index % 2)),
        "status": "completed",
    }


def _reasoning_item(rng: random.Random, index: int) -> dict[str, Any]:
    blob = base64.b64encode(rng.randbytes(rng.randrange(200, 2000))).decode("ascii")
    return {
        "type": "reasoning",
        "id": f"rs_{index:08x}",
        "summary": [{"type": "summary_text", "text": _text(rng, rng.randrange(10, 60))}],
        "encrypted_content": blob,
    }


def _envelope(output: list[dict[str, Any]], metadata_pad: str) -> dict[str, Any]:
    return {
        "id": "resp_0123456789abcdef",
        "object": "response",
        "created_at": 1767225600,
        "status": "completed",
        "model": "gpt-5-mini-2025-08-07",
        "output": output,
        "parallel_tool_calls": True,
        "temperature": 1.0,
        "top_p": 0.98,
        "usage": {
            "input_tokens": 123456,
            "input_tokens_details": {"cached_tokens": 4096},
            "output_tokens": 654321,
            "output_tokens_details": {"reasoning_tokens": 1024},
            "total_tokens": 777777,
        },
        "metadata": {"pad": metadata_pad},
    }


def _encode(value: Any) -> bytes:
    return json.dumps(value, ensure_ascii=False, separators=(",", ":")).encode("utf-8")


def make_provider_like_document(target_bytes: int) -> bytes:
    """A deterministic provider-response-like JSON document of exactly ``target_bytes``."""
    rng = random.Random(20260509)
    output: list[dict[str, Any]] = []
    budget = target_bytes - 1024
    size = len(_encode(_envelope(output, "")))
    if size > target_bytes:
        raise ValueError(f"target_bytes must be at least {size}")
    makers = (_message_item, _message_item, _function_call_item, _reasoning_item)
    index = 0
    while True:
        if index % 997 == 996:
            # an occasional long opaque string, as image or audio payloads produce
            item: dict[str, Any] = {
                "type": "image_generation_call",
                "id": f"ig_{index:08x}",
                "result": base64.b64encode(rng.randbytes(48 * 1024)).decode("ascii"),
            }
        else:
            item = makers[index % len(makers)](rng, index)
        grown = size + len(_encode(item)) + 1
        if grown > budget:
            break
        output.append(item)
        size = grown
        index += 1
    document = _encode(_envelope(output, ""))
    pad = target_bytes - len(document)
    return _encode(_envelope(output, "x" * pad))


def _seconds(fn: Any, data: bytes) -> float:
    start = time.perf_counter()
    fn(data)
    return time.perf_counter() - start


def bounded_json_16mib_vs_loads(reps: int) -> dict[str, float]:
    """Median seconds of ``zigai.json.parse`` and ``json.loads`` on one 16 MiB document.

    ``ratio`` is bounded/loads; the target of the bounded parser is at most 2.0.
    Both sides receive the same ``bytes``, so both include the UTF-8 decode.
    """
    from zigai import json as zjson

    data = make_provider_like_document(16 * MIB)
    limits = zjson.defaults.provider_response
    if zjson.parse(data, limits) != json.loads(data):
        raise AssertionError("bounded parse and json.loads disagree on the workload document")
    # Interleave the two sides so background load on a shared machine hits both alike.
    bounded_samples, loads_samples = [], []
    for _ in range(max(reps, 1)):
        bounded_samples.append(_seconds(lambda d: zjson.parse(d, limits), data))
        loads_samples.append(_seconds(json.loads, data))
    bounded = statistics.median(bounded_samples)
    loads = statistics.median(loads_samples)
    return {"bounded_parse_s": bounded, "json_loads_s": loads, "ratio": bounded / loads}
