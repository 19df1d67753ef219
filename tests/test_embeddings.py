"""zigai.embeddings: Embedder guarantees and both adapters against loopback HTTP servers."""

from __future__ import annotations

import json
import random
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

import pytest
from support.loopback import LoopbackServer, Received, Reply

from zigai.control import CancellationToken, Cancelled, RunTimedOut
from zigai.embeddings import (
    Embedder,
    EmbeddingBatch,
    EmbeddingInputTooLarge,
    EmbeddingLimits,
    EmbeddingModel,
    EmbeddingProfile,
    EmbeddingRequest,
    EmbeddingResultClosed,
    GeminiEmbeddingModel,
    InvalidEmbeddingDimensions,
    InvalidEmbeddingInput,
    InvalidEmbeddingResponse,
    OpenAIEmbeddingModel,
    TooManyEmbeddingInputs,
)
from zigai.embeddings.gemini import decode_batch_embeddings
from zigai.embeddings.openai import decode_embeddings
from zigai.provider import ProviderBadRequest, RateLimited
from zigai.providers import google, openai
from zigai.retry import RetryPolicy
from zigai.security import UrlPolicy
from zigai.transport import HttpTransport

POLICY = UrlPolicy.local_development()
FAST_RETRY = RetryPolicy(max_attempts=3, initial_delay_ms=1, max_delay_ms=5, jitter=False)


def vector_for(text: str, dims: int = 3) -> list[float]:
    """A deterministic vector that identifies its text (so order mistakes are visible)."""
    seed = sum(text.encode())
    return [float(seed), float(len(text))] + [0.5] * (dims - 2)


@contextmanager
def serve(handler: Callable[[Received], Reply]) -> Iterator[tuple[LoopbackServer, HttpTransport]]:
    with LoopbackServer(handler) as server, HttpTransport(url_policy=POLICY,
                                                          default_timeout_s=10.0) as transport:
        yield server, transport


def openai_handler(*, shuffle: bool = True, fail_first: int = 0, status: int = 429) -> Any:
    state = {"calls": 0}

    def handle(received: Received) -> Reply:
        state["calls"] += 1
        if state["calls"] <= fail_first:
            return Reply.of_json({"error": {"message": "slow down", "code": "rate_limit"}},
                                 status=status, headers=(("Retry-After", "0"),))
        body = received.json()
        dims = body.get("dimensions", 3)
        data = [{"object": "embedding", "index": i, "embedding": vector_for(t, dims)}
                for i, t in enumerate(body["input"])]
        if shuffle:
            random.Random(len(data)).shuffle(data)
        return Reply.of_json({"object": "list", "model": body["model"], "data": data,
                              "usage": {"prompt_tokens": 2 * len(data), "total_tokens": 2 * len(data)}})

    handle.state = state  # type: ignore[attr-defined]
    return handle


def openai_model(transport: HttpTransport, server: LoopbackServer, name: str = "text-embedding-3-small",
                 **kwargs: Any) -> OpenAIEmbeddingModel:
    provider = openai.Provider("sk-test", transport=transport, base_url=server.url + "/v1",
                               url_policy=POLICY)
    return OpenAIEmbeddingModel(provider, name, **kwargs)


# -- OpenAI-compatible adapter over loopback ------------------------------------------------------


def test_openai_restores_source_order_from_shuffled_indexes_across_batches() -> None:
    texts = [f"text number {i}" for i in range(7)]
    with serve(openai_handler()) as (server, transport):
        embedder = Embedder(openai_model(transport, server), batch_size=3)
        with embedder.embed(texts) as result:
            assert result.vectors == tuple(tuple(vector_for(t)) for t in texts)
            assert result.usage.requests == 3
            assert result.usage.input_tokens == 14
            assert result.dimensions == 3
            assert result.model_name == "text-embedding-3-small"
            assert result.provider_name == "openai"
    bodies = [r.json() for r in server.requests]
    assert [b["input"] for b in bodies] == [texts[0:3], texts[3:6], texts[6:7]]
    assert all(r.target == "/v1/embeddings" for r in server.requests)
    assert server.requests[0].headers["authorization"] == "Bearer sk-test"
    assert bodies[0] == {"model": "text-embedding-3-small", "input": texts[0:3],
                         "encoding_format": "float"}


def test_openai_sends_dimensions_only_when_asked() -> None:
    with serve(openai_handler()) as (server, transport):
        embedder = Embedder(openai_model(transport, server))
        with embedder.embed(["a b"], dimensions=5) as result:
            assert result.dimensions == 5
    assert server.requests[0].json()["dimensions"] == 5


def test_openai_retries_429_under_one_control_and_keeps_the_batch_whole() -> None:
    handler = openai_handler(fail_first=2)
    with serve(handler) as (server, transport):
        embedder = Embedder(openai_model(transport, server), retry_policy=FAST_RETRY, batch_size=2)
        with embedder.embed(["one", "two", "three"]) as result:
            assert [v[0] for v in result.vectors] == [vector_for(t)[0] for t in ("one", "two", "three")]
            assert result.usage.requests == 2
    assert len(server.requests) == 4  # two 429s, then one request per batch
    assert server.requests[0].body == server.requests[2].body


def test_openai_429_without_retry_raises_and_builds_no_result() -> None:
    with serve(openai_handler(fail_first=5)) as (server, transport):
        embedder = Embedder(openai_model(transport, server), retry_policy=FAST_RETRY)
        with pytest.raises(RateLimited):
            embedder.embed(["one"])
    assert len(server.requests) == 3  # max_attempts


def test_a_failed_later_batch_exposes_no_partial_result() -> None:
    state = {"calls": 0}

    def handle(received: Received) -> Reply:
        state["calls"] += 1
        if state["calls"] == 2:
            return Reply.of_json({"error": {"message": "bad input"}}, status=400)
        return openai_handler(shuffle=False)(received)

    with serve(handle) as (server, transport):
        embedder = Embedder(openai_model(transport, server), batch_size=1, retry_policy=FAST_RETRY)
        with pytest.raises(ProviderBadRequest):
            embedder.embed(["a", "b", "c"])
    assert len(server.requests) == 2  # 400 is never retried and the third batch never starts


def test_oversize_input_is_refused_before_any_io() -> None:
    with serve(openai_handler()) as (server, transport):
        model = openai_model(transport, server, profile=EmbeddingProfile(max_input_bytes=8))
        embedder = Embedder(model)
        with embedder.embed(["12345678"]) as result:  # exactly at the limit
            assert len(result) == 1
        with pytest.raises(EmbeddingInputTooLarge, match="9 UTF-8 bytes; the limit is 8"):
            embedder.embed(["ok", "123456789"])
        with pytest.raises(EmbeddingInputTooLarge):
            embedder.embed(["1234567é"])  # 9 bytes in UTF-8, 8 characters
        assert len(server.requests) == 1


# -- Gemini adapter over loopback -----------------------------------------------------------------


def gemini_handler(fail_first: int = 0) -> Any:
    state = {"calls": 0}

    def handle(received: Received) -> Reply:
        state["calls"] += 1
        if state["calls"] <= fail_first:
            return Reply.of_json({"error": {"code": 429, "message": "quota", "status": "RESOURCE_EXHAUSTED"}},
                                 status=429)
        requests = received.json()["requests"]
        out = [{"values": vector_for(r["content"]["parts"][0]["text"], r.get("outputDimensionality", 3))}
               for r in requests]
        return Reply.of_json({"embeddings": out, "usageMetadata": {"promptTokenCount": len(out)}})

    return handle


def gemini_model(transport: HttpTransport, server: LoopbackServer, **kwargs: Any) -> GeminiEmbeddingModel:
    provider = google.Provider("g-key", transport, base_url=server.url + "/v1beta", url_policy=POLICY)
    return GeminiEmbeddingModel(provider, **kwargs)


def test_gemini_batches_task_types_titles_and_dimensions_stay_in_the_adapter() -> None:
    titles = {1: "Second doc"}
    with serve(gemini_handler(fail_first=1)) as (server, transport):
        model = gemini_model(transport, server, titles=lambda i, _t: titles.get(i))
        embedder = Embedder(model, batch_size=2, retry_policy=FAST_RETRY)
        with embedder.embed(["alpha", "beta", "gamma"], input_type="document", dimensions=4) as result:
            assert result.vectors == tuple(tuple(vector_for(t, 4)) for t in ("alpha", "beta", "gamma"))
            assert result.usage.input_tokens == 3
            assert result.usage.requests == 2
            assert result.provider_name == "gcp.gen_ai"
    assert len(server.requests) == 3  # the 429 was retried
    first = server.requests[1]
    assert first.target == "/v1beta/models/gemini-embedding-001:batchEmbedContents"
    assert first.headers["x-goog-api-key"] == "g-key"
    assert first.json() == {"requests": [
        {"model": "models/gemini-embedding-001", "content": {"parts": [{"text": "alpha"}]},
         "taskType": "RETRIEVAL_DOCUMENT", "outputDimensionality": 4},
        {"model": "models/gemini-embedding-001", "content": {"parts": [{"text": "beta"}]},
         "taskType": "RETRIEVAL_DOCUMENT", "title": "Second doc", "outputDimensionality": 4},
    ]}


def test_gemini_query_task_never_sends_a_title_and_explicit_task_wins() -> None:
    with serve(gemini_handler()) as (server, transport):
        query = gemini_model(transport, server, titles=lambda _i, _t: "ignored")
        Embedder(query).embed(["q"], input_type="query").close()
        plain = gemini_model(transport, server, task_type="CLUSTERING")
        Embedder(plain).embed(["q"], input_type="query").close()
        none = gemini_model(transport, server)
        Embedder(none).embed(["q"]).close()
    items = [r.json()["requests"][0] for r in server.requests]
    assert items[0]["taskType"] == "RETRIEVAL_QUERY" and "title" not in items[0]
    assert items[1]["taskType"] == "CLUSTERING"
    assert "taskType" not in items[2] and "outputDimensionality" not in items[2]


def test_gemini_oversize_input_is_refused_before_io() -> None:
    with serve(gemini_handler()) as (server, transport):
        embedder = Embedder(gemini_model(transport, server))
        limit = embedder.model.profile.max_input_bytes
        with pytest.raises(EmbeddingInputTooLarge):
            embedder.embed(["x" * (limit + 1)])
    assert server.requests == []


# -- Embedder validation and control (scripted model) ------------------------------------------------


class ScriptedModel:
    """An in-process EmbeddingModel that answers from a function (for the neutral rules)."""

    def __init__(self, answer: Callable[[EmbeddingRequest], EmbeddingBatch],
                 profile: EmbeddingProfile | None = None) -> None:
        self.answer = answer
        self.requests: list[EmbeddingRequest] = []
        self._profile = profile or EmbeddingProfile(max_batch_size=4, supports_dimensions=True,
                                                    max_dimensions=8)

    model_name = "scripted"
    provider_name = "local"

    @property
    def profile(self) -> EmbeddingProfile:
        return self._profile

    def embed(self, request: EmbeddingRequest) -> EmbeddingBatch:
        self.requests.append(request)
        return self.answer(request)


def echo(request: EmbeddingRequest) -> EmbeddingBatch:
    dims = request.dimensions or 2
    return EmbeddingBatch(tuple((float(len(t)),) * dims for t in request.inputs))


def test_scripted_model_satisfies_the_protocol() -> None:
    assert isinstance(ScriptedModel(echo), EmbeddingModel)


def test_input_validation_happens_before_io() -> None:
    model = ScriptedModel(echo)
    embedder = Embedder(model, limits=EmbeddingLimits(max_inputs=3, max_total_bytes=6))
    cases: list[tuple[Any, type[Exception]]] = [
        ("text", InvalidEmbeddingInput), ([], InvalidEmbeddingInput), ([1], InvalidEmbeddingInput),
        (["  "], InvalidEmbeddingInput), (["a", "b", "c", "d"], TooManyEmbeddingInputs),
        (["abcd", "efg"], EmbeddingInputTooLarge),
    ]
    for inputs, error in cases:
        with pytest.raises(error):
            embedder.embed(inputs)
    with pytest.raises(InvalidEmbeddingInput):
        embedder.embed(["a"], input_type="passage")  # type: ignore[arg-type]
    for bad in (0, -1, True, 9, "4"):
        with pytest.raises(InvalidEmbeddingDimensions):
            embedder.embed(["a"], dimensions=bad)  # type: ignore[arg-type]
    assert model.requests == []
    with embedder.embed(["abc", "def"], dimensions=8) as result:  # exactly at both limits
        assert result.dimensions == 8
    with embedder.embed(["a", "b", "c"]) as result:
        assert len(result) == 3


def test_dimensions_refused_when_the_model_cannot_shorten() -> None:
    model = ScriptedModel(echo, EmbeddingProfile(max_batch_size=2))
    with pytest.raises(InvalidEmbeddingDimensions, match="does not accept"):
        Embedder(model).embed(["a"], dimensions=2)
    assert model.requests == []


def test_inconsistent_or_missing_vectors_fail_the_whole_call() -> None:
    short = ScriptedModel(lambda r: EmbeddingBatch(((1.0, 2.0),) * (len(r.inputs) - 1)))
    with pytest.raises(InvalidEmbeddingResponse, match="1 vectors for 2 inputs"):
        Embedder(short).embed(["a", "b"])
    calls = {"n": 0}

    def drifting(request: EmbeddingRequest) -> EmbeddingBatch:
        calls["n"] += 1
        width = 2 if calls["n"] == 1 else 3
        return EmbeddingBatch(tuple((1.0,) * width for _ in request.inputs))

    with pytest.raises(InvalidEmbeddingDimensions, match="vector 4 has 3 dimensions; expected 2"):
        Embedder(ScriptedModel(drifting)).embed(["a"] * 6)
    asked = ScriptedModel(lambda r: EmbeddingBatch(tuple((1.0,) * 3 for _ in r.inputs)))
    with pytest.raises(InvalidEmbeddingDimensions):
        Embedder(asked).embed(["a"], dimensions=2)
    with pytest.raises(InvalidEmbeddingResponse, match="not an EmbeddingBatch"):
        Embedder(ScriptedModel(lambda r: [[1.0]])).embed(["a"])  # type: ignore[arg-type,return-value]


def test_one_control_spans_batches_cancellation_and_deadline() -> None:
    token = CancellationToken()

    def cancel_after_first(request: EmbeddingRequest) -> EmbeddingBatch:
        token.cancel("user stopped")
        return echo(request)

    model = ScriptedModel(cancel_after_first)
    with pytest.raises(Cancelled):
        Embedder(model, batch_size=1).embed(["a", "b"], cancellation=token)
    assert len(model.requests) == 1
    controls = ScriptedModel(echo)
    Embedder(controls, batch_size=1, request_timeout_ms=60_000).embed(["a", "b"], timeout_ms=5_000).close()
    first, second = controls.requests
    assert first.control is second.control and first.control is not None
    assert first.deadline is not None and first.deadline <= first.control.deadline  # type: ignore[operator]
    assert (first.source_offset, second.source_offset) == (0, 1)
    with pytest.raises(RunTimedOut):
        Embedder(ScriptedModel(echo)).embed(["a"], timeout_ms=0)


def test_result_is_an_owner() -> None:
    result = Embedder(ScriptedModel(echo)).embed(["abc"])
    assert repr(result) == "EmbeddingResult(1 vectors x 2)"
    assert result[0] == (3.0, 3.0)
    result.close()
    assert repr(result) == "EmbeddingResult(closed)"
    with pytest.raises(EmbeddingResultClosed):
        _ = result.vectors
    assert Embedder(ScriptedModel(echo)).embed_one("ab") == (2.0, 2.0)


def test_embedder_configuration_is_checked() -> None:
    model = ScriptedModel(echo)
    for bad in (0, 5, True):
        with pytest.raises(ValueError):
            Embedder(model, batch_size=bad)
    with pytest.raises(ValueError):
        Embedder(model, timeout_ms=-1)
    with pytest.raises(TypeError):
        Embedder(object())  # type: ignore[arg-type]
    with pytest.raises(ValueError):
        EmbeddingLimits(max_inputs=0)
    with pytest.raises(ValueError):
        EmbeddingProfile(max_batch_size=0)


# -- decoders: every malformed shape is refused ----------------------------------------------------


@pytest.mark.parametrize("document, message", [
    ([], "must be an object"),
    ({"data": [{"index": 0, "embedding": [1.0]}]}, "1 embeddings for 2 inputs"),
    ({"data": [1, 2]}, "must be an object"),
    ({"data": [{"index": 0, "embedding": [1]}, {"index": 0, "embedding": [1]}]}, "appears twice"),
    ({"data": [{"index": 0, "embedding": [1]}, {"index": 2, "embedding": [1]}]}, "0..1"),
    ({"data": [{"index": True, "embedding": [1]}, {"index": 1, "embedding": [1]}]}, "0..1"),
    ({"data": [{"index": 0, "embedding": []}, {"index": 1, "embedding": [1]}]}, "non-empty array"),
    ({"data": [{"index": 0, "embedding": ["x"]}, {"index": 1, "embedding": [1]}]}, "non-numeric"),
    ({"data": [{"object": "list", "index": 0, "embedding": [1]}, {"index": 1, "embedding": [1]}]},
     "not 'embedding'"),
    ({"data": [{"index": 0, "embedding": [1]}, {"index": 1, "embedding": [1]}], "usage": 3}, "usage"),
    ({"data": [{"index": 0, "embedding": [1]}, {"index": 1, "embedding": [1]}],
      "usage": {"prompt_tokens": -1}}, "prompt_tokens"),
])
def test_openai_decoder_refuses_malformed_answers(document: Any, message: str) -> None:
    with pytest.raises(InvalidEmbeddingResponse, match=message) as caught:
        decode_embeddings(document, 2, status=200, request_id="req-1")
    assert caught.value.request_id == "req-1"


@pytest.mark.parametrize("document, message", [
    ({"embeddings": {}}, "must be an object"),
    ({"embeddings": [{"values": [1]}]}, "1 embeddings for 2"),
    ({"embeddings": [{"values": [1]}, 3]}, "must be an object"),
    ({"embeddings": [{"values": [1]}, {"values": [float("nan")]}]}, "non-finite"),
    ({"embeddings": [{"values": [1]}, {"values": [1]}], "usageMetadata": {"promptTokenCount": "2"}},
     "promptTokenCount"),
    ({"embeddings": [{"values": [1]}, {"values": [1]}], "usageMetadata": []}, "promptTokenCount"),
])
def test_gemini_decoder_refuses_malformed_answers(document: Any, message: str) -> None:
    with pytest.raises(InvalidEmbeddingResponse, match=message):
        decode_batch_embeddings(document, 2)


def test_malformed_2xx_is_a_decode_error_the_retry_policy_may_retry() -> None:
    state = {"calls": 0}

    def handle(received: Received) -> Reply:
        state["calls"] += 1
        if state["calls"] == 1:
            return Reply(200, (("Content-Type", "application/json"),), json.dumps({"data": "x"}).encode())
        return openai_handler()(received)

    with serve(handle) as (server, transport):
        embedder = Embedder(openai_model(transport, server), retry_policy=FAST_RETRY)
        with embedder.embed(["a"]) as result:
            assert len(result) == 1
    assert len(server.requests) == 2


def test_adapter_construction_is_checked() -> None:
    provider = openai.Provider("k", url_policy=POLICY)
    with pytest.raises(TypeError):
        OpenAIEmbeddingModel(object(), "m")  # type: ignore[arg-type]
    with pytest.raises(ValueError):
        OpenAIEmbeddingModel(provider, " ")
    assert OpenAIEmbeddingModel(provider, "custom-model").profile.max_batch_size == 64
    assert "text-embedding-3-large" in repr(OpenAIEmbeddingModel(provider, "text-embedding-3-large"))
    gp = google.Provider("k")
    with pytest.raises(ValueError):
        GeminiEmbeddingModel(gp, "bad/name")
    with pytest.raises(ValueError):
        GeminiEmbeddingModel(gp, task_type="SEARCH")
    with pytest.raises(TypeError):
        GeminiEmbeddingModel(gp, titles="x")  # type: ignore[arg-type]
    with pytest.raises(TypeError):
        GeminiEmbeddingModel(object())  # type: ignore[arg-type]
    assert "gemini-embedding-001" in repr(GeminiEmbeddingModel(gp))
    bad_title = GeminiEmbeddingModel(gp, titles=lambda _i, _t: 3)  # type: ignore[arg-type,return-value]
    with pytest.raises(TypeError):
        bad_title.encode(EmbeddingRequest(("x",), input_type="document"))
