"""History workload: ``zigai.history.stringify`` + ``parse`` of a realistic 1000-message history.

The history imitates an agent conversation: a system prompt, then rounds of a
user question, a response with thinking + text + one or two tool calls (JSON
argument text, provider ids and replay details), a request with the matching
tool returns (structured JSON content), and a final text answer with usage.
Generation is deterministic (fixed seed).  Importing this module has no side
effects; the history is built on demand.
"""

from __future__ import annotations

import json
import random
import statistics
import time
from datetime import UTC, datetime, timedelta

from zigai import history
from zigai import messages as m
from zigai.usage import RequestUsage

_WORDS = (
    "the agent keeps history bounded while tools return structured results; naïve café "
    "résumé Привет 你好 🙂 weather forecast tomorrow cloudy rain sunny temperature"
).split()


def _text(rng: random.Random, words: int) -> str:
    return " ".join(rng.choice(_WORDS) for _ in range(words))


def build_history(count: int = 1000, seed: int = 7) -> tuple[m.Message, ...]:
    """A deterministic conversation of exactly ``count`` messages (requests first)."""
    rng = random.Random(seed)
    start = datetime(2025, 1, 1, tzinfo=UTC)
    result: list[m.Message] = [m.RequestMessage(
        [m.SystemPromptPart(_text(rng, 40), timestamp=start), m.UserPromptPart(_text(rng, 20))],
        instructions=_text(rng, 15), timestamp=start,
    )]
    call = 0
    while len(result) < count:
        stamp = start + timedelta(seconds=len(result))
        if isinstance(result[-1], m.RequestMessage):
            if rng.random() < 0.6:
                calls = []
                for _ in range(rng.randint(1, 2)):
                    call += 1
                    args = {"city": rng.choice(_WORDS), "days": rng.randint(1, 7)}
                    calls.append(m.ToolCallPart("get_forecast", args, f"call_{call}",
                                                id=f"fc_{call}"))
                parts: list[m.ResponsePart] = [
                    m.ThinkingPart(_text(rng, 30), signature="c2lnbmF0dXJl" * 4),
                    m.TextPart(_text(rng, 10)), *calls,
                ]
                reason = m.FinishReason.tool_call
            else:
                parts = [m.TextPart(_text(rng, 80))]
                reason = m.FinishReason.stop
            result.append(m.ResponseMessage(
                parts,
                usage=RequestUsage(input_tokens=1200 + len(result), output_tokens=200,
                                   cache_read_tokens=1000, reasoning_tokens=50),
                model_name="gpt-5-mini", provider_name="openai",
                provider_response_id=f"resp_{len(result)}", finish_reason=reason,
                raw_finish_reason=reason.value, timestamp=stamp,
                provider_details=m.ProviderDetails.from_value({"service_tier": "default"}),
            ))
        else:
            previous = result[-1]
            returns = [
                m.ToolReturnPart(p.tool_name, p.tool_call_id, {
                    "forecast": [{"day": d, "summary": _text(rng, 6),
                                  "high": round(rng.uniform(-5, 30), 1)} for d in range(3)],
                }, timestamp=stamp)
                for p in previous.parts if isinstance(p, m.ToolCallPart)
            ]
            result.append(m.RequestMessage(returns or [m.UserPromptPart(_text(rng, 20))],
                                           timestamp=stamp))
    return tuple(result)


def history_1000_roundtrip_ms(reps: int) -> float:
    """Median milliseconds to ``stringify`` and ``parse`` a realistic 1000-message history.

    Both sides get one untimed warm-up round trip first, so neither pays its one-time setup
    (zigai's per-class codec caches, pydantic-core's first-use costs) inside a sample.
    """
    messages = build_history(1000)
    history.parse(history.stringify(messages)).close()  # warm-up: per-class codec caches
    samples = []
    for _ in range(max(reps, 1)):
        began = time.perf_counter()
        with history.parse(history.stringify(messages)) as owned:
            assert len(owned) == 1000
        samples.append((time.perf_counter() - began) * 1000.0)
    return statistics.median(samples)


def history_json_value(value: object) -> str:
    """Canonical JSON text of a frozen zigai JSON value (plain containers for the peer)."""
    from zigai.json import dumps

    return dumps(value)


def _peer_history(messages: tuple[m.Message, ...]) -> list:
    """The same conversation as PydanticAI 2.x message objects (dev-only peer)."""
    from pydantic_ai import messages as pm
    from pydantic_ai.usage import RequestUsage as PeerUsage

    converted: list = []
    for message in messages:
        if isinstance(message, m.RequestMessage):
            parts: list = []
            for part in message.parts:
                if isinstance(part, m.SystemPromptPart):
                    parts.append(pm.SystemPromptPart(part.content, timestamp=part.timestamp))
                elif isinstance(part, m.UserPromptPart):
                    parts.append(pm.UserPromptPart(part.content))
                elif isinstance(part, m.ToolReturnPart):
                    content = json.loads(history_json_value(part.content))
                    parts.append(pm.ToolReturnPart(part.tool_name, content, part.tool_call_id,
                                                   timestamp=part.timestamp))
            converted.append(pm.ModelRequest(parts, instructions=message.instructions))
        else:
            parts = []
            for part in message.parts:
                if isinstance(part, m.ThinkingPart):
                    parts.append(pm.ThinkingPart(part.content, signature=part.signature))
                elif isinstance(part, m.TextPart):
                    parts.append(pm.TextPart(part.content))
                elif isinstance(part, m.ToolCallPart):
                    parts.append(pm.ToolCallPart(part.tool_name, part.args, part.tool_call_id,
                                                 id=part.id))
            usage = message.usage
            converted.append(pm.ModelResponse(
                parts,
                usage=PeerUsage(input_tokens=usage.input_tokens, output_tokens=usage.output_tokens,
                                cache_read_tokens=usage.cache_read_tokens),
                model_name=message.model_name, timestamp=message.timestamp,
                provider_name=message.provider_name,
                provider_response_id=message.provider_response_id,
                provider_details={"service_tier": "default"},
            ))
    return converted


def peer_history_1000_roundtrip_ms(reps: int) -> float:
    """The same round trip through PydanticAI's ``ModelMessagesTypeAdapter`` (JSON bytes)."""
    from pydantic_ai.messages import ModelMessagesTypeAdapter

    peer = _peer_history(build_history(1000))
    ModelMessagesTypeAdapter.validate_json(ModelMessagesTypeAdapter.dump_json(peer))  # warm-up
    samples = []
    for _ in range(max(reps, 1)):
        began = time.perf_counter()
        loaded = ModelMessagesTypeAdapter.validate_json(ModelMessagesTypeAdapter.dump_json(peer))
        assert len(loaded) == 1000
        samples.append((time.perf_counter() - began) * 1000.0)
    return statistics.median(samples)
