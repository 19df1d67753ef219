"""Named compatible providers: roots, auth, four-layer profiles and typed named controls."""

from __future__ import annotations

import json
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest
import yaml
from support.corpus import corpus_dir
from support.katan_model import katan_cases
from support.mock_transport import MockResponse, MockTransport
from support.replays import Replay, assert_text_answer, assert_tool_loop, replay_params

from zigai.messages import (
    ProviderDetails,
    ProviderPart,
    RequestMessage,
    ResponseMessage,
    SystemPromptPart,
    TextPart,
    ThinkingPart,
    ToolReturnPart,
    UserPromptPart,
)
from zigai.model import ModelProfile, ModelRequest, ToolDefinition, UnsupportedModelFeature
from zigai.providers import (
    azure_openai,
    bedrock,
    cerebras,
    cohere,
    crusoe,
    deepseek,
    doubleword,
    groq,
    huggingface,
    mistral,
    ollama,
    openrouter,
    ovhcloud,
    profiles,
    snowflake,
    together,
    zai,
)
from zigai.security import UrlPolicy, UrlPolicyViolation
from zigai.settings import (
    ExtraBodyRejected,
    ModelSettings,
    ProviderExtraBody,
    UnsupportedModelSetting,
)

TOOL = ToolDefinition("weather", "Get weather.", {"type": "object"})


def _reply(message: dict[str, Any] | None = None, **extra: Any) -> MockResponse:
    return MockResponse.of_json({
        "choices": [{"message": message or {"role": "assistant", "content": "ok"},
                     "finish_reason": "stop"}],
        "usage": {"prompt_tokens": 1, "completion_tokens": 1}, **extra,
    })


def _request(*messages: Any, **fields: Any) -> ModelRequest:
    return ModelRequest(messages=messages or (RequestMessage(parts=(UserPromptPart("hi"),)),),
                        **fields)


@pytest.mark.parametrize(
    ("module", "root", "name"),
    [
        (groq, "https://api.groq.com/openai/v1/", "groq"),
        (together, "https://api.together.xyz/v1/", "together"),
        (deepseek, "https://api.deepseek.com/v1/", "deepseek"),
        (cerebras, "https://api.cerebras.ai/v1/", "cerebras"),
        (huggingface, "https://router.huggingface.co/v1/", "huggingface"),
        (mistral, "https://api.mistral.ai/v1/", "mistral"),
        (openrouter, "https://openrouter.ai/api/v1/", "openrouter"),
        (doubleword, "https://api.doubleword.ai/v1/", "doubleword"),
        (ovhcloud, "https://oai.endpoints.kepler.ai.cloud.ovh.net/v1/", "ovhcloud"),
        (crusoe, "https://api.inference.crusoecloud.com/v1/", "crusoe"),
        (zai, "https://api.z.ai/api/paas/v4/", "zai"),
        (cohere, "https://api.cohere.ai/compatibility/v1/", "cohere"),
    ],
)
def test_named_modules_own_root_identity_and_bearer_auth(
    module: ModuleType, root: str, name: str
) -> None:
    transport = MockTransport(lambda request: _reply())
    provider = module.Provider("key-1", transport)
    assert (provider.api_root, provider.name) == (root, name)
    client = module.Client("unknown-family-model", provider)
    assert client.profile == profiles.UNKNOWN
    assert client.request(_request(settings=ModelSettings(max_tokens=3))).provider_name == name
    sent = transport.requests[0]
    assert sent.url == root + "chat/completions"
    assert dict(sent.headers)["Authorization"] == "Bearer key-1"


def test_unknown_families_fail_closed_before_io() -> None:
    transport = MockTransport(lambda request: pytest.fail("no I/O expected"))
    client = groq.Client("mystery-model", groq.Provider("k", transport))
    with pytest.raises(UnsupportedModelFeature):
        client.request(_request(tools=(TOOL,)))
    with pytest.raises(UnsupportedModelSetting):
        client.request(_request(settings=ModelSettings(temperature=0.3)))
    assert transport.requests == []


def test_four_layer_resolution_order() -> None:
    app = ModelProfile(supports_tools=False, settings=frozenset({"seed"}))
    seen: list[str] = []

    def lookup(name: str) -> ModelProfile | None:
        return app if name == "custom" else None

    def override(name: str, profile: ModelProfile) -> ModelProfile:
        seen.append(name)
        return profile.with_changes(json_object_output=True)

    provider = groq.Provider("k", MockTransport(lambda r: _reply()), profile_lookup=lookup,
                             profile_override=override)
    assert groq.Client("custom", provider).profile == app.with_changes(json_object_output=True)
    builtin = groq.Client("llama-3.3-70b", provider).profile
    assert builtin.supports_tools and builtin.json_object_output
    assert "presence_penalty" not in builtin.settings
    assert groq.Client("nope", provider).profile == profiles.UNKNOWN.with_changes(
        json_object_output=True)
    custom_fallback = groq.Client("nope", provider, fallback_profile="basic").profile
    assert custom_fallback.supports_tools
    explicit = groq.Client("nope", provider, profile=profiles.COMPATIBLE_MINIMAL).profile
    assert explicit == profiles.COMPATIBLE_MINIMAL
    assert seen == ["custom", "llama-3.3-70b", "nope", "nope"]


@pytest.mark.parametrize(
    ("lookup", "model", "check"),
    [
        (profiles.azure_openai, "gpt-4o", lambda p: p.json_schema_output and "image" in p.content_kinds),
        (profiles.azure_openai, "o3-mini", lambda p: "temperature" not in p.settings
         and p.reasoning_efforts == {"low", "medium", "high"}),
        (profiles.deepseek, "deepseek-reasoner", lambda p: "tool_choice" not in p.settings),
        (profiles.deepseek, "deepseek-v4-flash", lambda p: p.supports_tools
         and not p.json_schema_output),
        (profiles.bedrock_mantle, "openai.gpt-oss-20b", lambda p: "medium" in p.reasoning_efforts),
        (profiles.cerebras, "gpt-oss-120b", lambda p: not p.supports_parallel_tool_calls
         and "parallel_tool_calls" not in p.settings),
        (profiles.openrouter, "~anthropic/claude-sonnet-4:free", lambda p: p.supports_tools),
        (profiles.together, "openai/gpt-oss-20b", lambda p: "seed" not in p.settings),
        (profiles.huggingface, "CohereLabs/c4ai-command-r7b-12-2024", lambda p: p.supports_tools),
        (profiles.ollama, "library/llama3.2:latest", lambda p: p.json_schema_output),
        (profiles.ollama, "gpt-oss:20b", lambda p: "medium" in p.reasoning_efforts),
        (profiles.crusoe, "meta-llama/Llama-3.3-70B-Instruct", lambda p: p.json_schema_output
         and p.json_object_output),
        (profiles.crusoe, "moonshotai/Kimi-K2-Instruct", lambda p: p.supports_tools),
        (profiles.snowflake, "openai-gpt-4.1", lambda p: p.supports_tools and p.json_schema_output),
        (profiles.snowflake, "claude-sonnet-4-5", lambda p: p.supports_tools
         and not p.json_schema_output and not p.json_object_output),
        (profiles.snowflake, "llama3.1-70b", lambda p: not p.supports_tools),
        (profiles.zai, "glm-4.6", lambda p: p.supports_tools and p.json_object_output),
        (profiles.groq, "compound-beta", lambda p: p.supports_tools),
        (profiles.mistral, "codestral-latest", lambda p: p.supports_tools),
        (profiles.cohere, "command-a-03-2025", lambda p: "seed" not in p.settings),
        (profiles.ovhcloud, "Qwen3-32B", lambda p: not p.json_schema_output),
    ],
)
def test_builtin_family_profiles(lookup: Any, model: str, check: Any) -> None:
    profile = lookup(model)
    assert profile is not None and check(profile)


@pytest.mark.parametrize(
    ("lookup", "model"),
    [(profiles.azure_openai, "unknown"), (profiles.bedrock_mantle, "anthropic.claude"),
     (profiles.cerebras, "other"), (profiles.crusoe, "custom-deployment"),
     (profiles.crusoe, "acme/model"), (profiles.ollama, "my-own"), (profiles.openrouter, "x/y"),
     (profiles.snowflake, "mystery"), (profiles.zai, "glm-4-plus"), (profiles.zai, "gpt-4o"),
     (profiles.groq, "unknown"), (profiles.huggingface, "nodelimiter")],
)
def test_unknown_families_are_not_guessed(lookup: Any, model: str) -> None:
    assert lookup(model) is None


# ------------------------------------------------------------------------------ roots


def test_azure_uses_api_key_header_and_validated_resource_root() -> None:
    transport = MockTransport(lambda request: _reply())
    provider = azure_openai.Provider("az-key", transport, resource="my-res")
    assert provider.api_root == "https://my-res.openai.azure.com/openai/v1/"
    azure_openai.ChatClient("gpt-4o", provider).request(_request())
    headers = {k.lower(): v for k, v in transport.requests[0].headers}
    assert headers["api-key"] == "az-key" and "authorization" not in headers
    for bad in ("", "UPPER", "-x", "x-", "a.b", "a/b", "x" * 65):
        with pytest.raises(azure_openai.InvalidAzureResource):
            azure_openai.api_base(bad)
    assert azure_openai.api_base("x" * 64).startswith("https://" + "x" * 64)


def test_bedrock_mantle_root_is_built_from_one_region_label() -> None:
    assert bedrock.mantle_api_base("us-east-1") == "https://bedrock-mantle.us-east-1.api.aws/v1"
    for bad in ("", "us east", "evil.com/x", "a.b", "US-EAST-1", "x:1"):
        with pytest.raises(bedrock.InvalidBedrockRegion):
            bedrock.mantle_api_base(bad)


@pytest.mark.parametrize(
    ("account", "root"),
    [
        ("myorg-myaccount", "https://myorg-myaccount.snowflakecomputing.com/api/v2/cortex/v1"),
        ("xy12345.us-east-1", "https://xy12345.us-east-1.snowflakecomputing.com/api/v2/cortex/v1"),
        ("myorg-myaccount.snowflakecomputing.com",
         "https://myorg-myaccount.snowflakecomputing.com/api/v2/cortex/v1"),
    ],
)
def test_snowflake_api_base_accepts_identifiers_and_canonical_hosts(account: str, root: str) -> None:
    assert snowflake.api_base(account) == root


@pytest.mark.parametrize(
    "account",
    ["", "https://myorg.snowflakecomputing.com", "myorg/path", "myorg:443", ".acct", "acct.",
     "a..b", "my org", "a" * 201, "acct?x=1", "user@acct"],
)
def test_snowflake_api_base_rejects_schemes_paths_ports_and_bad_labels(account: str) -> None:
    with pytest.raises(snowflake.InvalidSnowflakeAccount):
        snowflake.api_base(account)


def test_snowflake_account_length_limit_is_inclusive() -> None:
    assert snowflake.api_base("a" * 200).startswith("https://" + "a" * 200)


def test_ollama_needs_no_credential_and_only_its_local_policy_accepts_the_default_root() -> None:
    transport = MockTransport(lambda request: _reply())
    provider = ollama.Provider(transport)
    assert provider.api_root == "http://localhost:11434/v1/"
    ollama.Client("qwen3:8b", provider).request(_request(tools=(TOOL,)))
    headers = {k.lower() for k, _ in transport.requests[0].headers}
    assert "authorization" not in headers
    with pytest.raises(UrlPolicyViolation):
        ollama.Provider(transport, url_policy=UrlPolicy())
    with pytest.raises(UrlPolicyViolation):
        ollama.Provider(transport, base_url="http://10.0.0.5:11434/v1")
    assert ollama.Client("mystery", provider).profile == profiles.UNKNOWN


# ------------------------------------------------------------------------------ typed controls


def test_snowflake_reasoning_is_typed_claude_only_and_pins_temperature() -> None:
    transport = MockTransport(lambda request: _reply())
    provider = snowflake.Provider("tok", transport, account="myorg-acct")
    client = snowflake.Client("claude-sonnet-4-5", provider,
                              reasoning=snowflake.Reasoning(effort="high"))
    client.request(_request())
    body = json.loads(transport.requests[0].body)
    assert body["reasoning"] == {"effort": "high"} and body["temperature"] == 1
    budget = snowflake.Client("claude-sonnet-4-5", provider,
                              reasoning=snowflake.Reasoning(max_tokens=2048))
    assert budget.encode(_request())["reasoning"] == {"max_tokens": 2048}
    with pytest.raises(UnsupportedModelSetting):
        client.request(_request(settings=ModelSettings(temperature=0.5)))
    assert len(transport.requests) == 1
    for bad in ({}, {"effort": "high", "max_tokens": 5}, {"effort": "max"}, {"max_tokens": 0}):
        with pytest.raises(snowflake.InvalidSnowflakeReasoning):
            snowflake.Reasoning(**bad)
    with pytest.raises(snowflake.InvalidSnowflakeReasoning):
        snowflake.Client("openai-gpt-4.1", provider, reasoning=snowflake.Reasoning(effort="low"))
    reserved = ModelSettings(extra_body=ProviderExtraBody("snowflake", {"reasoning": {}}))
    with pytest.raises(ExtraBodyRejected):
        client.request(_request(settings=reserved))
    raw = ModelSettings(extra_body=ProviderExtraBody("snowflake", {"guardrails": True}))
    assert snowflake.Client("claude-sonnet-4-5", provider).encode(
        _request(settings=raw))["guardrails"] is True


def test_openrouter_routing_object_metadata_header_and_details() -> None:
    metadata = {"stages": [{"type": "provider_selection", "selected": "anthropic"}]}
    transport = MockTransport(lambda request: _reply(provider="Anthropic",
                                                     openrouter_metadata=metadata))
    routing = openrouter.Routing(
        order=["anthropic", "google-vertex"], allow_fallbacks=False, require_parameters=True,
        data_collection="deny", zdr=True, ignore=["azure"], quantizations=["fp8"],
        sort=openrouter.Sort("price", partition="none"),
        max_price=openrouter.MaxPrice(prompt=1.5, completion=0),
        preferred_max_latency=openrouter.Percentiles(p90=2.5), preferred_min_throughput=50,
    )
    client = openrouter.Client("anthropic/claude-sonnet-4.5", openrouter.Provider("k", transport),
                               routing=routing, include_router_metadata=True)
    response = client.request(_request())
    sent = transport.requests[0]
    assert json.loads(sent.body)["provider"] == {
        "order": ["anthropic", "google-vertex"], "allow_fallbacks": False,
        "require_parameters": True, "data_collection": "deny", "zdr": True,
        "ignore": ["azure"], "quantizations": ["fp8"], "sort": {"by": "price", "partition": "none"},
        "max_price": {"prompt": 1.5, "completion": 0}, "preferred_min_throughput": 50,
        "preferred_max_latency": {"p90": 2.5},
    }
    assert dict(sent.headers)["X-OpenRouter-Metadata"] == "enabled"
    assert response.provider_details == ProviderDetails(
        {"provider": "Anthropic", "openrouter_metadata": metadata})
    with pytest.raises(ExtraBodyRejected):
        client.encode(_request(settings=ModelSettings(
            extra_body=ProviderExtraBody("openrouter", {"provider": {"order": ["x"]}}))))
    assert client.encode(_request(settings=ModelSettings(
        extra_body=ProviderExtraBody("openrouter", {"transforms": ["middle-out"]}))))[
        "transforms"] == ["middle-out"]


def test_openrouter_metadata_survives_streaming() -> None:
    stream = (b'data: {"choices":[{"index":0,"delta":{"content":"hi"},"finish_reason":"stop"}]}\n\n'
              b'data: {"choices":[],"usage":{"prompt_tokens":1,"completion_tokens":1},'
              b'"openrouter_metadata":{"attempts":1}}\n\ndata: [DONE]\n\n')
    client = openrouter.Client("openai/gpt-4o-mini", openrouter.Provider(
        "k", MockTransport(lambda request: MockResponse(200, (), stream))),
        include_router_metadata=True)
    with client.stream(_request()) as streamed:
        list(streamed)
    assert streamed.response().provider_details == ProviderDetails(
        {"openrouter_metadata": {"attempts": 1}})


@pytest.mark.parametrize(
    "fields",
    [{"order": ["a", "a"]}, {"order": ["bad name"]}, {"only": ["a"], "ignore": ["a"]},
     {"order": ["x"], "ignore": ["x"]}, {"quantizations": ["fp7"]}, {"sort": "cheapest"},
     {"preferred_min_throughput": -1}, {"preferred_max_latency": float("nan")},
     {"data_collection": "maybe"}, {"order": "anthropic"}],
)
def test_openrouter_rejects_invalid_routing_before_http(fields: dict[str, Any]) -> None:
    with pytest.raises(openrouter.InvalidRouting):
        openrouter.Routing(**fields)


def test_openrouter_rejects_empty_price_and_percentile_objects() -> None:
    with pytest.raises(openrouter.InvalidRouting):
        openrouter.MaxPrice()
    with pytest.raises(openrouter.InvalidRouting):
        openrouter.Percentiles()
    with pytest.raises(openrouter.InvalidRouting):
        openrouter.MaxPrice(prompt=float("inf"))
    assert openrouter.MaxPrice(prompt=0).to_wire() == {"prompt": 0}


def test_zai_thinking_controls_and_reasoning_content_replay() -> None:
    first = {"role": "assistant", "content": None, "reasoning_content": "Need the tool.",
             "tool_calls": [{"id": "c1", "type": "function",
                             "function": {"name": "weather", "arguments": "{}"}}]}
    replies = iter([_reply(first), _reply()])
    transport = MockTransport(lambda request: next(replies))
    client = zai.Client("glm-4.6", zai.Provider("k", transport), thinking=True,
                        clear_thinking=False)
    question = RequestMessage(parts=(UserPromptPart("weather?"),))
    response = client.request(_request(question, tools=(TOOL,)))
    assert response.parts[0] == ThinkingPart("Need the tool.", provider=ProviderPart(
        "zai", details=ProviderDetails({"field": "reasoning_content"})))
    follow_up = (question, response, RequestMessage(parts=(ToolReturnPart("weather", "c1", "sun"),)))
    client.request(_request(*follow_up, tools=(TOOL,)))
    body = json.loads(transport.requests[1].body)
    assert body["thinking"] == {"type": "enabled", "clear_thinking": False}
    assert body["messages"][1] == {
        "role": "assistant", "content": None, "reasoning_content": "Need the tool.",
        "tool_calls": [{"id": "c1", "type": "function",
                        "function": {"name": "weather", "arguments": "{}"}}]}
    assert zai.Client("glm-4.6", client.provider, thinking=False).encode(
        _request())["thinking"] == {"type": "disabled"}
    portable = zai.CompatibilityClient("glm-4.6", client.provider)
    portable_body = portable.encode(_request(*follow_up, tools=(TOOL,)))
    assert "thinking" not in portable_body
    assert "reasoning_content" not in portable_body["messages"][1]


def test_zai_rejects_lossy_thinking_parts_and_unknown_families_before_io() -> None:
    transport = MockTransport(lambda request: pytest.fail("no I/O expected"))
    client = zai.Client("glm-4.6", zai.Provider("k", transport))
    for part in (ThinkingPart("x", provider=ProviderPart("anthropic")),
                 ThinkingPart("x", signature="sig", provider=ProviderPart("zai")),
                 ThinkingPart("x")):
        history = (RequestMessage(parts=(UserPromptPart("q"),)),
                   ResponseMessage(parts=(part, TextPart("a"))),
                   RequestMessage(parts=(UserPromptPart("again"),)))
        with pytest.raises(UnsupportedModelFeature):
            client.request(_request(*history))
    with pytest.raises(UnsupportedModelFeature):
        zai.Client("glm-3-turbo", client.provider).request(_request(tools=(TOOL,)))
    for tag_client in (client, zai.CompatibilityClient("glm-4.6", client.provider)):
        with pytest.raises(ExtraBodyRejected):
            tag_client.request(_request(settings=ModelSettings(extra_body=ProviderExtraBody(
                "openai_compatible", {"thinking": {"type": "enabled"}}))))
    assert transport.requests == []


# ------------------------------------------------------------------------------ corpus


def _named_client(file_name: str, transport: Any, model: str) -> Any:
    prefix = file_name.split("_")[0]
    if prefix == "azure":
        return azure_openai.ChatClient(model, azure_openai.Provider("k", transport,
                                                                    resource="example"))
    if prefix == "bedrock":
        return bedrock.MantleClient(model, bedrock.MantleProvider("k", transport,
                                                                  region="example-region"))
    module = {"groq": groq, "together": together, "deepseek": deepseek, "cerebras": cerebras,
              "huggingface": huggingface, "mistral": mistral, "openrouter": openrouter,
              "doubleword": doubleword, "cohere": cohere}[prefix]
    return module.Client(model, module.Provider("k", transport))


# Our own recordings of the groq client against llm-katan (cassettes/katan/groq/) always; the
# shared corpus's recordings of every named provider as extra cases when it is present.


def _corpus_paths(folder: str) -> list[Path]:
    root = corpus_dir() / "zigai-cassettes" / folder
    return sorted(root.glob("*.yaml")) if root.is_dir() else []


def _first_body(path: Path) -> dict[str, Any]:
    return yaml.safe_load(path.read_text())["interactions"][0]["request"]["body"]["content"]  # type: ignore[no-any-return]


def _named(path: Path, **fields: Any) -> Replay:
    model = _first_body(path)["model"]
    return Replay(id=f"corpus-{path.parent.name}-{path.stem}", path=path,
                  client=lambda transport: _named_client(path.name, transport, model), **fields)


def _pong(responses: tuple[ResponseMessage, ...]) -> None:
    assert responses[-1].text.strip().lower().startswith("pong")


def _says_31(responses: tuple[ResponseMessage, ...]) -> None:
    assert "31" in responses[-1].text


_SMOKE_REPLAYS = katan_cases("groq", ["buffered_text"]) + [
    _named(path, messages=(RequestMessage(parts=(UserPromptPart(
        _first_body(path)["messages"][0]["content"]),)),),
           settings=ModelSettings(max_tokens=_first_body(path)["max_tokens"]), extra_check=_pong)
    for path in _corpus_paths("providers")]


def _tool_case(path: Path) -> Replay:
    body = _first_body(path)
    declared = body["tools"][0]["function"]
    return _named(
        path, messages=(RequestMessage(parts=(SystemPromptPart(body["messages"][0]["content"]),
                                              UserPromptPart(body["messages"][1]["content"]))),),
        tools=(ToolDefinition(declared["name"], declared["description"], declared["parameters"]),),
        tool_result={"temperature_c": 31, "condition": "sunny"}, extra_check=_says_31)


_TOOL_REPLAYS = katan_cases("groq", ["tool_loop"]) + [
    _tool_case(path) for path in _corpus_paths("compatible/tools")]


@pytest.mark.parametrize("case", replay_params(_SMOKE_REPLAYS))
def test_named_provider_text_answers_replay_strictly(case: Replay) -> None:
    assert_text_answer(case.run())


@pytest.mark.parametrize("case", replay_params(_TOOL_REPLAYS))
def test_named_provider_tool_loops_replay_strictly(case: Replay) -> None:
    assert_tool_loop(case.run(), "weather")
