"""zigai.models: model strings for every implemented provider, credentials from the environment."""

from __future__ import annotations

import pickle
import subprocess
import sys

import pytest

from zigai.models import (
    MAX_MODEL_STRING,
    PROVIDERS,
    InvalidModelString,
    MissingCredentials,
    ModelString,
    UnknownModelProvider,
    credential_variables,
    infer_model,
    parse_model_string,
)

# Every required variable of every provider, with dummy values.
FULL_ENV = {
    "OPENAI_API_KEY": "k-openai", "ANTHROPIC_API_KEY": "k-anthropic", "GEMINI_API_KEY": "k-g",
    "GOOGLE_CLOUD_ACCESS_TOKEN": "tok", "GOOGLE_CLOUD_PROJECT": "proj-1",
    "GROQ_API_KEY": "k", "TOGETHER_API_KEY": "k", "DEEPSEEK_API_KEY": "k", "MISTRAL_API_KEY": "k",
    "CEREBRAS_API_KEY": "k", "CO_API_KEY": "k", "HF_TOKEN": "k", "OPENROUTER_API_KEY": "k",
    "OVHCLOUD_API_KEY": "k", "CRUSOE_API_KEY": "k", "DOUBLEWORD_API_KEY": "k", "ZAI_API_KEY": "k",
    "AZURE_OPENAI_API_KEY": "k", "AZURE_OPENAI_RESOURCE": "my-resource",
    "AWS_BEARER_TOKEN_BEDROCK": "k", "AWS_REGION": "us-east-1",
    "SNOWFLAKE_PAT": "k", "SNOWFLAKE_ACCOUNT": "acme", "XAI_API_KEY": "k",
    "OPENAI_COMPATIBLE_BASE_URL": "https://gateway.example.com/v1",
}


def _adapter_available(name: str) -> bool:
    import importlib.util

    module = PROVIDERS[name].module if name in PROVIDERS else name
    return importlib.util.find_spec(f"zigai.providers.{module}") is not None


@pytest.mark.parametrize("provider", list(PROVIDERS))
def test_every_provider_prefix_builds_a_model_named_after_the_string(provider: str) -> None:
    if not _adapter_available(provider):
        pytest.skip(f"zigai.providers.{provider} has not landed in this checkout")
    model = infer_model(f"{provider}:some-model-1", env=FULL_ENV)
    assert model.model_name == "some-model-1"
    assert hasattr(model, "profile") and hasattr(model, "request") and hasattr(model, "stream")


@pytest.mark.parametrize("provider", [p for p, s in PROVIDERS.items() if s.credentials])
def test_missing_credential_names_the_variable_and_no_value(provider: str) -> None:
    env = {k: v for k, v in FULL_ENV.items() if k not in PROVIDERS[provider].credentials}
    with pytest.raises(MissingCredentials) as info:
        infer_model(f"{provider}:m", env=env)
    assert info.value.variables == PROVIDERS[provider].credentials
    assert info.value.provider == provider
    for name in PROVIDERS[provider].credentials:
        assert name in str(info.value)
    assert "k-openai" not in str(info.value)


def test_empty_credential_counts_as_missing_and_second_variable_is_tried() -> None:
    with pytest.raises(MissingCredentials, match="GEMINI_API_KEY or GOOGLE_API_KEY"):
        infer_model("google:gemini-2.5-flash", env={"GEMINI_API_KEY": ""})
    if _adapter_available("google"):
        assert infer_model("google:g", env={"GOOGLE_API_KEY": "x"}).model_name == "g"


def test_required_setting_variable_is_reported_like_a_credential() -> None:
    with pytest.raises(MissingCredentials, match="AWS_REGION or AWS_DEFAULT_REGION") as info:
        infer_model("bedrock:m", env={"AWS_BEARER_TOKEN_BEDROCK": "k"})
    assert info.value.variables == ("AWS_REGION", "AWS_DEFAULT_REGION")


def test_api_key_env_replaces_the_conventional_variable() -> None:
    model = infer_model("openai:gpt-5-mini", env={"MY_KEY": "x"}, api_key_env="MY_KEY")
    assert model.model_name == "gpt-5-mini"
    with pytest.raises(MissingCredentials, match="MY_KEY") as info:
        infer_model("openai:gpt-5-mini", env={"OPENAI_API_KEY": "x"}, api_key_env="MY_KEY")
    assert info.value.variables == ("MY_KEY",)


def test_test_model_needs_no_environment() -> None:
    from zigai.testing import TestModel

    assert isinstance(infer_model("test", env={}), TestModel)
    assert isinstance(infer_model("test:anything", env={}), TestModel)


def test_ollama_uses_its_local_policy_and_takes_no_credential() -> None:
    from zigai.providers import ollama

    model = infer_model("ollama:llama3.2:latest", env={})
    assert model.model_name == "llama3.2:latest"
    assert model._provider.provider().url_policy == ollama.local_request_policy


def test_vertex_location_selects_the_regional_root() -> None:
    env = {"GOOGLE_CLOUD_ACCESS_TOKEN": "t", "GOOGLE_CLOUD_PROJECT": "p-1",
           "GOOGLE_CLOUD_LOCATION": "europe-west4"}
    if not _adapter_available("vertex_ai"):
        pytest.skip("zigai.providers.vertex_ai has not landed")
    from zigai.providers import vertex_ai

    model = infer_model("vertex_ai:gemini-2.5-flash", env=env)
    assert model.model_name == "gemini-2.5-flash"
    assert vertex_ai.regional_api_base("europe-west4") != vertex_ai.API_BASE


def test_a_model_value_passes_through_unchanged() -> None:
    from zigai.testing import TestModel

    model = TestModel()
    assert infer_model(model) is model


def test_parse_splits_at_the_first_colon_and_canonicalizes_aliases() -> None:
    assert parse_model_string("ollama:qwen3:8b") == ModelString("ollama", "qwen3:8b")
    assert parse_model_string("google-gla:gemini-2.5-pro") == ModelString("google", "gemini-2.5-pro")
    assert parse_model_string("OpenAI:gpt-5") == ModelString("openai", "gpt-5")
    assert parse_model_string("test") == ModelString("test", "")


@pytest.mark.parametrize("bad", ["", "openai", "openai:", ":gpt", "openai:gpt 5", "a:b\n", 5])
def test_malformed_model_strings_are_rejected(bad: object) -> None:
    with pytest.raises(InvalidModelString):
        parse_model_string(bad)  # type: ignore[arg-type]


def test_unknown_provider_lists_known_ones() -> None:
    with pytest.raises(UnknownModelProvider, match="known providers: test, openai") as info:
        infer_model("nope:model", env={})
    assert info.value.provider == "nope"
    with pytest.raises(UnknownModelProvider):
        credential_variables("nope")


def test_model_string_length_bound() -> None:
    name = "x" * (MAX_MODEL_STRING - len("openai:"))
    assert parse_model_string("openai:" + name).model_name == name
    with pytest.raises(InvalidModelString, match="at most"):
        parse_model_string("openai:" + name + "x")


def test_errors_pickle_with_their_attributes() -> None:
    error = MissingCredentials("m", provider="openai", variables=("OPENAI_API_KEY",))
    copy = pickle.loads(pickle.dumps(error))
    assert (str(copy), copy.provider, copy.variables) == ("m", "openai", ("OPENAI_API_KEY",))
    unknown = pickle.loads(pickle.dumps(UnknownModelProvider("u", provider="x")))
    assert unknown.provider == "x"


def test_importing_zigai_models_loads_no_adapter_or_third_party_module() -> None:
    code = (
        "import sys, zigai.models\n"
        "bad = [m for m in sys.modules if m.startswith('zigai.providers.') or m.startswith('zigai.testing')"
        " or m in ('urllib3', 'yaml', 'jsonschema')]\n"
        "print(bad)\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"


def test_agent_accepts_a_model_string(monkeypatch: pytest.MonkeyPatch) -> None:
    from zigai.agent import Agent
    from zigai.testing import TestModel

    assert isinstance(Agent("test").model, TestModel)
    monkeypatch.setenv("OPENAI_API_KEY", "sk-from-env")
    assert Agent("openai:gpt-5-mini").model.model_name == "gpt-5-mini"
    monkeypatch.delenv("OPENAI_API_KEY")
    with pytest.raises(MissingCredentials, match="OPENAI_API_KEY"):
        Agent("openai:gpt-5-mini")


def test_native_route_prefixes_build_the_native_clients() -> None:
    from zigai.providers import azure_openai, bedrock, cohere, mistral, xai

    converse = infer_model("bedrock_converse:us.anthropic.claude-sonnet-4-6", env=FULL_ENV)
    assert isinstance(converse, bedrock.Client)
    assert converse.provider.api_root == "https://bedrock-runtime.us-east-1.amazonaws.com/"
    assert isinstance(infer_model("cohere_v2:command-a-03-2025", env=FULL_ENV), cohere.ChatClient)
    assert isinstance(infer_model("mistral_conversations:mistral-small-latest", env=FULL_ENV),
                      mistral.ConversationsClient)
    responses = infer_model("azure_openai_responses:gpt-4o", env=FULL_ENV)
    assert isinstance(responses, azure_openai.ResponsesClient)
    assert responses.provider.api_root == "https://my-resource.openai.azure.com/openai/v1/"
    endpoint = infer_model("azure_openai_responses:gpt-4o", env={
        "AZURE_OPENAI_API_KEY": "k", "AZURE_OPENAI_ENDPOINT": "https://gw.example.com/openai/v1"})
    assert endpoint.provider.api_root == "https://gw.example.com/openai/v1/"
    assert isinstance(infer_model("xai:grok-4", env=FULL_ENV), xai.Client)
    assert isinstance(infer_model("grok:grok-4", env=FULL_ENV), xai.Client)
    assert isinstance(infer_model("xai_chat:grok-3", env=FULL_ENV), xai.ChatClient)
    with pytest.raises(MissingCredentials, match="AWS_REGION"):
        infer_model("bedrock_converse:m", env={"AWS_BEARER_TOKEN_BEDROCK": "k"})
    with pytest.raises(MissingCredentials, match="AZURE_OPENAI_RESOURCE"):
        infer_model("azure_openai_responses:m", env={"AZURE_OPENAI_API_KEY": "k"})


def test_every_prefix_and_its_variables_are_in_the_providers_table() -> None:
    from pathlib import Path

    page = (Path(__file__).resolve().parent.parent / "docs" / "providers.md").read_text()
    table = [line for line in page.splitlines() if line.startswith("| `")]
    for name, spec in PROVIDERS.items():
        rows = [row for row in table if f"`{name}`" in row.split("|")[1]]
        assert len(rows) == 1, f"docs/providers.md needs one table row naming `{name}`"
        for variable in (*spec.credentials, *spec.settings):
            templated = "<NAME>_API_KEY" in rows[0] and variable == f"{name.upper()}_API_KEY"
            assert variable in rows[0] or templated, (name, variable)
