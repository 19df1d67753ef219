"""zigai.models.Fallback and Selector: routing behind the Model contract, over real loopback HTTP."""

from __future__ import annotations

import json
import pickle
import socket
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import pytest
from support.loopback import LoopbackServer, Received, Reply

from zigai.agent import Agent, ForeignUploadedFile
from zigai.control import CancellationToken, Cancelled, RunControl
from zigai.messages import (
    RequestMessage,
    ResponseMessage,
    TextContent,
    UploadedFile,
    UploadedFileContent,
    UserPromptPart,
)
from zigai.model import ModelProfile, ModelRequest, ToolDefinition, UnsupportedModelFeature
from zigai.models import (
    DEFAULT_FALLBACK_ON,
    Fallback,
    FallbackAttempt,
    InvalidFallback,
    InvalidSelection,
    Selector,
)
from zigai.provider import ProviderAuthError, ProviderBadRequest, ProviderServerError, RateLimited
from zigai.providers import openai_compatible as oc
from zigai.security import UrlPolicy
from zigai.testing import FunctionModel, TestModel
from zigai.tool import Tool
from zigai.transport import HttpTransport, ResponseTooLarge, TransportConnectionFailed

POLICY = UrlPolicy.local_development()


def completion(text: str, model: str = "m") -> Reply:
    return Reply.of_json({
        "id": "c1", "object": "chat.completion", "model": model,
        "choices": [{"index": 0, "message": {"role": "assistant", "content": text},
                     "finish_reason": "stop"}],
        "usage": {"prompt_tokens": 3, "completion_tokens": 2, "total_tokens": 5},
    })


def chunk(delta: dict[str, Any], finish: str | None = None) -> str:
    return json.dumps({"id": "c1", "object": "chat.completion.chunk", "model": "m",
                       "choices": [{"index": 0, "delta": delta, "finish_reason": finish}]})


STREAM = [chunk({"role": "assistant", "content": "Hel"}), chunk({"content": "lo"}, "stop"), "[DONE]"]


def error(status: int, message: str = "nope") -> Reply:
    return Reply.of_json({"error": {"message": message, "code": str(status)}}, status=status)


@contextmanager
def servers(*handlers: Any) -> Iterator[tuple[list[LoopbackServer], HttpTransport]]:
    running: list[LoopbackServer] = []
    try:
        for handler in handlers:
            server = LoopbackServer(handler if callable(handler) else (lambda _r, h=handler: h))
            running.append(server.__enter__())
        with HttpTransport(url_policy=POLICY, default_timeout_s=10.0) as transport:
            yield running, transport
    finally:
        for server in running:
            server.__exit__(None, None, None)


def client(base: str, transport: HttpTransport, model: str = "m", **options: Any) -> oc.Client:
    provider = oc.Provider("key", transport, url_policy=POLICY, base_url=f"{base}/v1",
                           name=options.pop("name", "openai_compatible"))
    options.setdefault("fallback_profile", "full")
    return oc.Client(model, provider, **options)


def closed_port_url() -> str:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    return f"http://127.0.0.1:{port}"  # nothing listens once the probe is closed


# ------------------------------------------------------------------ buffered, real HTTP


def test_rate_limit_then_success_falls_back_and_says_which_candidate_answered() -> None:
    with servers(error(429, "slow down"), completion("from b", model="b-model")) as (srv, tr):
        seen: list[FallbackAttempt] = []
        routed = Fallback([client(srv[0].url, tr, "a"), client(srv[1].url, tr, "b", name="second")],
                          on_fallback=seen.append)
        with Agent(routed).run("hi") as result:
            assert result.output == "from b"
            response = [m for m in result.messages if isinstance(m, ResponseMessage)][-1]
        assert [len(s.requests) for s in srv] == [1, 1]
    assert response.provider_name == "second" and response.model_name == "b-model"
    assert response.metadata is not None
    assert response.metadata["fallback"] == {
        "candidate": 1, "skipped": ({"candidate": 0, "category": "rate_limit"},)
    }
    assert [(a.candidate, a.category, a.next_candidate, a.model_name) for a in seen] == [
        (0, "rate_limit", 1, "a")
    ]
    assert isinstance(seen[0].error, RateLimited)


def test_bad_request_does_not_fall_back() -> None:
    with servers(error(400, "bad field"), completion("never")) as (srv, tr):
        routed = Fallback([client(srv[0].url, tr), client(srv[1].url, tr)])
        with pytest.raises(ProviderBadRequest):
            Agent(routed).run("hi")
        assert [len(s.requests) for s in srv] == [1, 0]


def test_auth_failure_does_not_fall_back() -> None:
    with servers(error(401), completion("never")) as (srv, tr):
        with pytest.raises(ProviderAuthError):
            Fallback([client(srv[0].url, tr), client(srv[1].url, tr)]).request(
                ModelRequest(messages=(RequestMessage.user("hi"),)))
        assert len(srv[1].requests) == 0


def test_server_error_and_connection_failure_fall_back_in_order() -> None:
    with servers(error(503), completion("third")) as (srv, tr):
        routed = Fallback([
            client(srv[0].url, tr, "a"), client(closed_port_url(), tr, "b"),
            client(srv[1].url, tr, "c"),
        ])
        response = routed.request(ModelRequest(messages=(RequestMessage.user("hi"),)))
    assert response.text == "third"
    assert response.metadata is not None and response.metadata["fallback"] == {
        "candidate": 2,
        "skipped": ({"candidate": 0, "category": "server_error"},
                    {"candidate": 1, "category": "connection"}),
    }


def test_every_candidate_failing_raises_the_last_error_with_a_note() -> None:
    with servers(error(500), error(429)) as (srv, tr):
        routed = Fallback([client(srv[0].url, tr), client(srv[1].url, tr)])
        with pytest.raises(RateLimited) as caught:
            routed.request(ModelRequest(messages=(RequestMessage.user("hi"),)))
    assert any("candidate 0: server_error" in note for note in caught.value.__notes__)


def test_fallback_on_narrows_the_categories() -> None:
    with servers(error(503), completion("never")) as (srv, tr):
        routed = Fallback([client(srv[0].url, tr), client(srv[1].url, tr)],
                          fallback_on={"rate_limit"})
        with pytest.raises(ProviderServerError):
            routed.request(ModelRequest(messages=(RequestMessage.user("hi"),)))
        assert len(srv[1].requests) == 0


# ------------------------------------------------------------------ streams, real HTTP


def test_stream_failing_after_its_first_delta_does_not_fall_back() -> None:
    with servers(Reply.sse(STREAM, abort_after=1), Reply.sse(STREAM)) as (srv, tr):
        routed = Fallback([client(srv[0].url, tr), client(srv[1].url, tr)])
        texts: list[str] = []
        with pytest.raises(TransportConnectionFailed):
            with Agent(routed).run_stream("hi") as stream:
                for event in stream:
                    delta = getattr(getattr(event, "delta", None), "content_delta", None)
                    part = getattr(getattr(event, "part", None), "content", None)
                    texts.extend(t for t in (delta, part) if isinstance(t, str))
        assert [len(s.requests) for s in srv] == [1, 0]
    assert texts == ["Hel"]


def test_stream_failing_before_any_event_falls_back() -> None:
    with servers(Reply.sse(STREAM, abort_after=0), error(503), Reply.sse(STREAM)) as (srv, tr):
        routed = Fallback([client(s.url, tr, f"m{i}") for i, s in enumerate(srv)])
        with Agent(routed).run_stream("hi") as stream:
            for _ in stream:
                pass
            with stream.result() as result:
                assert result.output == "Hello"
                response = [m for m in result.messages if isinstance(m, ResponseMessage)][-1]
                assert result.usage.requests == 1
        assert [len(s.requests) for s in srv] == [1, 1, 1]
    assert response.metadata is not None and response.metadata["fallback"] == {
        "candidate": 2,
        "skipped": ({"candidate": 0, "category": "connection"},
                    {"candidate": 1, "category": "server_error"}),
    }


def test_a_stream_chain_ending_in_a_bad_request_raises_it() -> None:
    with servers(Reply.sse(STREAM, abort_after=0), error(400), Reply.sse(STREAM)) as (srv, tr):
        routed = Fallback([client(s.url, tr) for s in srv])
        stream = routed.stream(ModelRequest(messages=(RequestMessage.user("hi"),)))
        with pytest.raises(ProviderBadRequest) as caught:
            list(stream)
        assert stream.candidate == 1
        assert [len(s.requests) for s in srv] == [1, 1, 0]
    assert any("candidate 0: connection" in note for note in caught.value.__notes__)


def test_stream_opening_with_a_rate_limit_falls_back_at_open() -> None:
    with servers(error(429), Reply.sse(STREAM)) as (srv, tr):
        routed = Fallback([client(srv[0].url, tr), client(srv[1].url, tr)])
        stream = routed.stream(ModelRequest(messages=(RequestMessage.user("hi"),)))
        with stream:
            assert stream.candidate == 1
            list(stream)
        assert stream.response().text == "Hello"


# ------------------------------------------------------------------ profiles, before I/O


def test_profile_intersection_is_enforced_before_any_request() -> None:
    with servers(completion("a"), completion("b")) as (srv, tr):
        no_tools = ModelProfile(supports_tools=False)
        routed = Fallback([client(srv[0].url, tr), client(srv[1].url, tr, profile=no_tools)])
        assert routed.profile.supports_tools is False
        weather = Tool.manual("weather", "Weather.", {"type": "object"}, lambda args: "sunny")
        with pytest.raises(UnsupportedModelFeature, match="tools"):
            Agent(routed, tools=[weather]).run("hi")
        with pytest.raises(UnsupportedModelFeature):
            routed.request(ModelRequest(
                messages=(RequestMessage.user("hi"),),
                tools=(ToolDefinition("weather", "Weather.", {"type": "object"}),),
            ))
        assert [len(s.requests) for s in srv] == [0, 0]


def test_profile_is_the_intersection_of_every_candidate() -> None:
    a = TestModel(profile=ModelProfile(json_schema_output=True, supports_thinking=True,
                                       reasoning_efforts=frozenset({"low", "high"})))
    b = TestModel(profile=ModelProfile(json_schema_output=True,
                                       reasoning_efforts=frozenset({"high"})))
    profile = Fallback([a, b]).profile
    assert profile.json_schema_output and not profile.supports_thinking
    assert profile.reasoning_efforts == frozenset({"high"})


def test_mixed_providers_own_no_uploaded_file() -> None:
    def answer(messages: Any, info: Any) -> ResponseMessage:
        return ResponseMessage.from_text("ok")

    a = FunctionModel(answer, provider_name="openai", profile=ModelProfile(
        content_kinds=frozenset({"text", "uploaded-file"})))
    b = FunctionModel(answer, provider_name="anthropic", profile=ModelProfile(
        content_kinds=frozenset({"text", "uploaded-file"})))
    prompt = [UploadedFileContent(UploadedFile("openai", "file-1")), TextContent("sum up")]
    assert Fallback([a, b]).provider_name == "fallback"
    with pytest.raises(ForeignUploadedFile):
        Agent(Fallback([a, b])).run(prompt)
    same = Fallback([a, FunctionModel(answer, provider_name="openai", profile=a.profile)])
    assert same.provider_name == "openai"
    with Agent(same).run(prompt) as result:
        assert result.output == "ok"


# ------------------------------------------------------------------ classification, unit


def _raising(exc: BaseException) -> FunctionModel:
    def fail(messages: Any, info: Any) -> ResponseMessage:
        raise exc

    return FunctionModel(fail)


@pytest.mark.parametrize(
    "exc",
    [ResponseTooLarge("too big", limit=1), ValueError("application bug"),
     Cancelled("cancelled")],
)
def test_size_cancellation_and_application_errors_never_fall_back(exc: BaseException) -> None:
    calls: list[int] = []

    def second(messages: Any, info: Any) -> ResponseMessage:
        calls.append(1)
        return ResponseMessage.from_text("no")

    with pytest.raises(type(exc)):
        Fallback([_raising(exc), FunctionModel(second)]).request(
            ModelRequest(messages=(RequestMessage.user("hi"),)))
    assert calls == []


def test_a_cancelled_run_does_not_move_to_the_next_candidate() -> None:
    token = CancellationToken()

    def fail(messages: Any, info: Any) -> ResponseMessage:
        token.cancel()
        raise RateLimited("429", status=429)

    request = ModelRequest(messages=(RequestMessage.user("hi"),), control=RunControl(token=token))
    with pytest.raises(Cancelled):
        Fallback([FunctionModel(fail), TestModel()]).request(request)


class _RateLimitedModel:
    """A Model that fails with a rate limit without looking at the clock."""

    profile = ModelProfile()
    provider_name = "limited"

    def request(self, request: ModelRequest) -> ResponseMessage:
        raise RateLimited("429", status=429)

    def stream(self, request: ModelRequest) -> Any:
        raise RateLimited("429", status=429)


def test_an_expired_attempt_deadline_ends_the_chain_with_the_last_error() -> None:
    request = ModelRequest(messages=(RequestMessage.user("hi"),), deadline=0.0)
    routed = Fallback([_RateLimitedModel(), TestModel()])
    with pytest.raises(RateLimited):
        routed.request(request)
    with pytest.raises(RateLimited):
        routed.stream(request)


def test_on_fallback_errors_propagate() -> None:
    def refuse(attempt: FallbackAttempt) -> None:
        raise RuntimeError("stop here")

    with pytest.raises(RuntimeError, match="stop here"):
        Fallback([_raising(RateLimited("429", status=429)), TestModel()],
                 on_fallback=refuse).request(ModelRequest(messages=(RequestMessage.user("hi"),)))


def test_existing_response_metadata_is_kept_beside_the_fallback_record() -> None:
    from zigai.messages import Metadata

    def tagged(messages: Any, info: Any) -> ResponseMessage:
        return ResponseMessage.from_text("ok", metadata=Metadata.from_value({"app": 1}))

    response = Fallback([FunctionModel(tagged)]).request(
        ModelRequest(messages=(RequestMessage.user("hi"),)))
    assert response.metadata is not None
    assert response.metadata.to_value() == {"app": 1, "fallback": {"candidate": 0, "skipped": []}}


@pytest.mark.parametrize(
    ("candidates", "options", "message"),
    [
        ([], {}, "at least one"),
        ("openai:gpt-5", {}, "sequence"),
        ([object()], {}, "not a Model"),
        ([TestModel()] * 17, {}, "at most 16"),
        ([TestModel()], {"fallback_on": {"bad_request"}}, "unknown fallback categories"),
        ([TestModel()], {"on_fallback": 3}, "callable"),
    ],
)
def test_invalid_fallbacks_are_refused(candidates: Any, options: Any, message: str) -> None:
    with pytest.raises(InvalidFallback, match=message):
        Fallback(candidates, **options)


def test_fallback_identity_and_errors_pickle() -> None:
    routed = Fallback([TestModel(), TestModel()])
    assert routed.model() is routed
    assert routed.model_name.startswith("fallback(") and "Fallback(" in repr(routed)
    assert DEFAULT_FALLBACK_ON == {"rate_limit", "server_error", "timeout", "connection"}
    for error_value in (InvalidFallback("x"), InvalidSelection("y", reason="not_a_model")):
        clone = pickle.loads(pickle.dumps(error_value))
        assert str(clone) == str(error_value)
    assert pickle.loads(pickle.dumps(InvalidSelection("y", reason="unsupported"))).reason == "unsupported"


# ------------------------------------------------------------------ Selector


def test_selector_routes_each_request_through_real_http() -> None:
    with servers(completion("small"), completion("large")) as (srv, tr):
        small, large = client(srv[0].url, tr, "small"), client(srv[1].url, tr, "large")

        def choose(request: ModelRequest) -> Any:
            return large if request.tools else small

        routed = Selector(choose, profile=ModelProfile(), provider_name="openai_compatible")
        assert Agent(routed).run("hi").output == "small"
        weather = Tool.manual("weather", "Weather.", {"type": "object"}, lambda args: "sunny")
        assert Agent(routed, tools=[weather]).run("hi").output == "large"
        assert [len(s.requests) for s in srv] == [1, 1]


def test_selector_streams_through_the_chosen_model() -> None:
    with servers(Reply.sse(STREAM)) as (srv, tr):
        routed = Selector(lambda request: client(srv[0].url, tr), profile=ModelProfile())
        with Agent(routed).run_stream("hi") as stream:
            for _ in stream:
                pass
            assert stream.result().output == "Hello"


def test_selector_checks_its_declared_profile_before_choosing() -> None:
    chosen: list[int] = []

    def choose(request: ModelRequest) -> Any:
        chosen.append(1)
        return TestModel()

    routed = Selector(choose, profile=ModelProfile(supports_tools=False))
    weather = Tool.manual("weather", "Weather.", {"type": "object"}, lambda args: "sunny")
    with pytest.raises(UnsupportedModelFeature):
        Agent(routed, tools=[weather]).run("hi")
    assert chosen == []


def test_selector_refuses_a_choice_that_breaks_its_promise() -> None:
    request = ModelRequest(
        messages=(RequestMessage.user("hi"),),
        tools=(ToolDefinition("weather", "Weather.", {"type": "object"}),),
    )
    weak = TestModel(profile=ModelProfile(supports_tools=False))
    with pytest.raises(InvalidSelection) as caught:
        Selector(lambda r: weak, profile=ModelProfile()).request(request)
    assert caught.value.reason == "unsupported"
    with pytest.raises(InvalidSelection) as caught:
        Selector(lambda r: "gpt-5", profile=ModelProfile()).stream(request)
    assert caught.value.reason == "not_a_model"


def test_selector_refuses_files_the_chosen_provider_does_not_own() -> None:
    kinds = frozenset({"text", "uploaded-file"})
    prompt = RequestMessage(parts=(UserPromptPart(
        (UploadedFileContent(UploadedFile("anthropic", "file_1")), TextContent("hi"))),))
    other = TestModel(profile=ModelProfile(content_kinds=kinds))
    routed = Selector(lambda r: other, profile=ModelProfile(content_kinds=kinds),
                      provider_name="anthropic")
    history = (RequestMessage.user("earlier"), ResponseMessage.from_text("noted"), prompt)
    with pytest.raises(InvalidSelection) as caught:
        routed.request(ModelRequest(messages=history))
    assert caught.value.reason == "foreign_file"


def test_selector_construction_is_checked() -> None:
    with pytest.raises(TypeError):
        Selector(3, profile=ModelProfile())  # type: ignore[arg-type]
    with pytest.raises(TypeError):
        Selector(lambda r: None, profile="full")  # type: ignore[arg-type]
    with pytest.raises(TypeError):
        Selector(lambda r: None, profile=ModelProfile(), provider_name="")
    routed = Selector(lambda r: None, profile=ModelProfile())
    assert routed.model() is routed and routed.provider_name == "selector"
    assert routed.model_name == "selector" and "Selector(" in repr(routed)


def test_received_helper_decodes_json() -> None:
    assert Received("POST", "/", {}, b'{"a": 1}').json() == {"a": 1}
