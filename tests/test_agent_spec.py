"""zigai.agent_spec: strict parsing with exact paths, the secret-free dry run, full resolution."""

from __future__ import annotations

import dataclasses
import socket
from pathlib import Path
from typing import Any

import pytest

from zigai.agent import Agent
from zigai.agent_spec import (
    LIMITS,
    AgentSpecClosed,
    BuiltModel,
    CapabilityDependencyCycle,
    Catalogs,
    InvalidAgentSpec,
    MissingEnvironment,
    ModelRef,
    ProviderEntry,
    ProviderValidationFailed,
    UnresolvedReference,
    load,
    model_string_catalog,
    model_string_factory,
    parse,
    resolve,
    validate_resolution,
)
from zigai.capability import Capability
from zigai.mcp import McpConnectionFailed
from zigai.models import MissingCredentials
from zigai.reflect import tool as reflect_tool
from zigai.retry import RetryPolicy
from zigai.testing import TestModel

EXAMPLES = Path(__file__).resolve().parent.parent / "docs" / "examples" / "agent_spec"
MINIMAL = "version: 1\nmodel: {provider: test, name: default}\n"


def get_weather(city: str) -> str:
    """Weather for a city."""
    return f"sunny in {city}"


def Cap(name: str, *deps: str, **options: Any) -> Capability:  # noqa: N802 - reads like the class
    return Capability(name, dependencies=deps, **options)


WEATHER = reflect_tool(get_weather)
ENV = {"SUPPORT_REGION": "north", "SUPPORT_OPENAI_KEY": "sk-never-printed"}


def catalogs(**capabilities: Any) -> Catalogs:
    return Catalogs(providers=model_string_catalog(), tools={"get_weather": WEATHER},
                    capabilities=capabilities or {"weather_notes": Cap("weather_notes")})


def error_for(text: str, format: Any = None) -> InvalidAgentSpec:
    with pytest.raises(InvalidAgentSpec) as info:
        parse(text, format=format)
    assert str(info.value).startswith(info.value.path + ":")
    return info.value


# -- golden documents ----------------------------------------------------------------------------


def test_the_yaml_and_json_golden_specs_resolve_to_equal_agents() -> None:
    model = TestModel()

    def factory(ref: Any, env: Any) -> Any:
        assert ref.name == "gpt-5-mini" and env == {"SUPPORT_OPENAI_KEY": "sk-never-printed",
                                                     "SUPPORT_REGION": "north"}
        return model

    with load(EXAMPLES / "support.yaml") as yaml_spec, load(EXAMPLES / "support.json") as json_spec:
        assert (yaml_spec.source_format, json_spec.source_format) == ("yaml", "json")
        assert yaml_spec.spec == json_spec.spec
        with resolve(yaml_spec, catalogs(), factory, ENV) as a, resolve(json_spec, catalogs(), factory, ENV) as b:
            assert isinstance(a.agent, Agent)
            # capabilities compare by identity (they hold callables): each resolution attaches its
            # own copy carrying the spec's loading mode, over the same borrowed bundle
            assert dataclasses.replace(a.agent, capabilities=()) == dataclasses.replace(b.agent, capabilities=())
            assert [(c.id, c.loading, c.tools) for c in a.agent.capabilities] == \
                [(c.id, c.loading, c.tools) for c in b.agent.capabilities]
            agent = a.agent
    assert agent.instructions == ("You answer weather questions for the north desk.",
                                  "Prices are written as ${amount}.")
    assert agent.tools == (WEATHER,) and agent.name == "support-bot"
    assert agent.limits.max_requests == 8 and agent.limits.max_tool_calls == 16
    assert agent.run_timeout_ms == 60000 and agent.request_timeout_ms == 20000
    assert (agent.max_tool_retries, agent.max_output_retries) == (2, 1)
    assert agent.retry_policy == RetryPolicy(max_attempts=4, initial_delay_ms=250,
                                             retry_on=frozenset({"rate_limit", "server_error"}))
    assert agent.model_settings is not None and agent.model_settings.temperature == 0.2
    assert agent.output.choices[0].name == "answer" and agent.output.mode.value == "tool"


def test_the_resolved_plan_keeps_capabilities_and_their_loading_mode() -> None:
    with load(EXAMPLES / "support.yaml") as spec:
        with resolve(spec, catalogs(), lambda ref, env: TestModel(), ENV) as resolved:
            [cap] = resolved.capabilities
            assert (cap.name, cap.loading, cap.required_by) == ("weather_notes", "on_demand", None)
        with pytest.raises(AgentSpecClosed):
            _ = resolved.agent
    with pytest.raises(AgentSpecClosed):
        _ = spec.spec


def test_the_offline_example_runs_with_the_test_model() -> None:
    with load(EXAMPLES / "offline.yaml") as spec, \
            resolve(spec, catalogs(), model_string_factory, {}) as resolved:
        result = resolved.agent.run("weather in Paris?")
        assert "sunny in" in str(result.messages)


# -- strictness: each rule fails with the exact path --------------------------------------------


@pytest.mark.parametrize(("text", "path", "words"), [
    (MINIMAL + "colour: blue\n", "$.colour", "unknown key"),
    (MINIMAL + "limits: {max_requests: 2, max_requets: 3}\n", "$.limits.max_requets", "unknown key"),
    (MINIMAL + "limits: {max_requests: '2'}\n", "$.limits.max_requests", "expected a whole number"),
    (MINIMAL + "limits: {max_requests: true}\n", "$.limits.max_requests", "expected a whole number"),
    (MINIMAL + "tools: get_weather\n", "$.tools", "expected a list"),
    (MINIMAL + "tools: [get_weather, 7]\n", "$.tools[1]", "expected a name"),
    (MINIMAL + "settings: {temperature: hot}\n", "$.settings.temperature", "expected a number"),
    (MINIMAL + "limits: {max_requests: 2, max_requests: 3}\n", "$.limits.max_requests", "duplicate key"),
    ("version: 1\nmodel: {provider: test, name: a}\nmodel: {provider: test, name: b}\n", "$.model", "duplicate key"),
    (MINIMAL + "mcp_servers: [{name: a, command: [x]}, {name: a, command: [y]}]\n", "$.mcp_servers[1]", "listed twice"),
    (MINIMAL + "limits: {max_requests: 0}\n", "$.limits.max_requests", "between 1 and 100000"),
    (MINIMAL + "capabilities: [{name: c, loading: lazy}]\n", "$.capabilities[0].loading", "one of eager"),
    ("model: {provider: test, name: a}\n", "$.version", "is required"),
    ("version: 2\nmodel: {provider: test, name: a}\n", "$.version", "unsupported version 2"),
    ("version: 1\n", "$.model", "is required"),
    ("version: 1\nmodel: {provider: test}\n", "$.model.name", "is required"),
    ("version: 1\nmodel: {provider: openai, name: m, api_key: sk-1}\n", "$.model.api_key", "credentials are never"),
    ("version: 1\nmodel: {provider: openai, name: m, api_key_env: sk-1}\n", "$.model.api_key_env", "variable NAME"),
    (MINIMAL + "password: hunter2\n", "$.password", "credentials are never"),
    (MINIMAL + "instructions: 'for ${REGION}'\n", "$.instructions", "not in the document's 'env' allowlist"),
    (MINIMAL + "env: [OPENAI_API_KEY]\ninstructions: '${OPENAI_API_KEY}'\n", "$.instructions", "looks like a credential"),
    (MINIMAL + "env: [REGION]\ninstructions: '${region}'\n", "$.instructions", "upper-case variable"),
    (MINIMAL + "env: [REGION]\n", "$.env", "never referenced"),
    (MINIMAL + "env: [REGION, REGION]\ninstructions: '${REGION}'\n", "$.env[1]", "listed twice"),
    (MINIMAL + "description: 'uses ${REGION}'\n", "$.description", "only allowed in"),
    (MINIMAL + "output: {mode: tool}\n", "$.output.schema", "is required"),
    (MINIMAL + "output: {schema: {type: objekt}}\n", "$.output.schema", "not a usable JSON Schema"),
    (MINIMAL + "retry: {retry_on: [teapot]}\n", "$.retry.retry_on[0]", "one of rate_limit"),
    (MINIMAL + "when: 2024-01-01\n", "$.when", "YAML tag"),
    ("version: 1\nmodel: &m {provider: test, name: a}\n", "$", "anchors are refused"),
    ("- 1\n", "$", "is an object"),
    ("", "$", "empty"),
    ("version: 1\nmodel: {provider: test, name: a\n", "$", "not valid YAML"),
    (MINIMAL + "? [a]\n: 1\n", "$", "keys must be strings"),
    (MINIMAL + "settings: {temperature: .nan}\n", "$.settings.temperature", "finite"),
])
def test_each_strictness_rule_names_the_exact_path(text: str, path: str, words: str) -> None:
    error = error_for(text)
    assert error.path == path
    assert words in str(error)


@pytest.mark.parametrize(("text", "path", "words"), [
    ('{"version": 1, "model": {"provider": "test", "name": "a"}, "colour": 1}', "$.colour", "unknown key"),
    ('{"version": 1, "model": {"provider": "test", "name": "a", "name": "b"}}', "$.model.name", "duplicate key"),
    ('{"version": 1, "model": {"provider": "test", "name": "a"}, "tools": [{"x": 1, "x": 2}]}',
     "$.tools[0].x", "duplicate key"),
    ('{"version": 1, "model": {"provider": "test", "name": 5}}', "$.model.name", "expected a string"),
    ('{"version": 1, "model": {"provider": "test", "name": "a"},}', "$", "not valid JSON"),
    ('{"version": 1, "model": {"provider": "test", "name": "a"}, "limits": {"run_timeout_ms": 1e3}}',
     "$.limits.run_timeout_ms", "expected a whole number"),
])
def test_json_documents_fail_with_the_same_exact_paths(text: str, path: str, words: str) -> None:
    error = error_for(text, "json")
    assert error.path == path and words in str(error)


def test_a_key_that_is_not_an_identifier_is_quoted_in_the_path() -> None:
    assert error_for(MINIMAL + "limits: {'max requests': 1}\n").path == "$.limits['max requests']"


@pytest.mark.parametrize("format", ["json", "yaml"])
def test_the_document_bound_is_the_cli_manifest_profile(format: Any) -> None:
    head = '{"version": 1, "model": {"provider": "test", "name": "a"}, "description": "x"}'
    at_limit = head + " " * (LIMITS.max_document_bytes - len(head))
    assert parse(at_limit, format=format).spec.description == "x"
    error = error_for(at_limit + " ", format)
    assert error.path == "$" and str(LIMITS.max_document_bytes) in str(error)


@pytest.mark.parametrize("format", ["json", "yaml"])
def test_string_and_collection_bounds_hold_in_both_syntaxes(format: Any) -> None:
    long = "a" * (LIMITS.max_value_bytes + 1)
    error = error_for('{"version": 1, "model": {"provider": "test", "name": "a"}, '
                      f'"description": "{long}"}}', format)
    assert "limit" in str(error) or "longer" in str(error)
    deep = "[" * (LIMITS.max_depth + 1) + "]" * (LIMITS.max_depth + 1)
    assert error_for(f'{{"version": 1, "x": {deep}}}', format).path == "$"


def test_literal_dollar_brace_and_non_utf8_and_bad_format() -> None:
    with parse(MINIMAL + "instructions: 'cost $${x}'\n") as owned:
        assert owned.spec.instructions == ("cost $${x}",)
    assert error_for(b"version: 1\n\xff").path == "$"
    with pytest.raises(ValueError):
        parse(MINIMAL, format="toml")  # type: ignore[arg-type]
    with pytest.raises(InvalidAgentSpec, match="cannot read"):
        load("/nonexistent/agent.yaml")


# -- the dry run ---------------------------------------------------------------------------------


def test_a_dry_run_without_environment_names_every_missing_variable(monkeypatch: pytest.MonkeyPatch) -> None:
    def no_network(*args: Any, **kwargs: Any) -> Any:
        raise AssertionError("the dry run touched the network")

    monkeypatch.setattr(socket, "create_connection", no_network)
    monkeypatch.setattr(socket.socket, "connect", no_network)
    text = """
version: 1
env: [REGION, DESK]
model: {provider: bedrock, name: "anthropic.claude-${REGION}"}
instructions: ["desk ${DESK}"]
"""
    with parse(text) as spec, pytest.raises(MissingEnvironment) as info:
        validate_resolution(spec, catalogs(), {})
    assert info.value.variables == ("AWS_BEARER_TOKEN_BEDROCK", "AWS_REGION or AWS_DEFAULT_REGION",
                                    "REGION", "DESK")
    for name in info.value.variables:
        assert name in str(info.value)


def test_the_dry_run_builds_no_model_and_never_shows_a_credential_to_validation() -> None:
    seen: list[Any] = []
    entry = ProviderEntry(credentials=("ACME_KEY",), optional_env=("ACME_URL",), validate=seen.append)
    spec = parse("version: 1\nmodel: {provider: acme, name: m1}\n")
    plan = validate_resolution(spec, Catalogs({"acme": entry}), {"ACME_KEY": "secret", "HOME": "/h"})
    assert [ref.name for ref in seen] == ["m1"]
    assert plan.environment == ("ACME_KEY", "ACME_URL") and "secret" not in repr(plan)


def test_a_loopback_base_url_makes_the_credential_optional() -> None:
    spec = parse("version: 1\nmodel: {provider: openai, name: m}\n")
    validate_resolution(spec, catalogs(), {"OPENAI_BASE_URL": "http://127.0.0.1:9/v1"})
    with pytest.raises(MissingEnvironment, match="OPENAI_API_KEY"):
        validate_resolution(spec, catalogs(), {"OPENAI_BASE_URL": "https://api.example.com/v1"})


def test_provider_validation_failure_is_named() -> None:
    def refuse(ref: Any) -> None:
        raise ValueError("no such model")

    spec = parse("version: 1\nmodel: {provider: acme, name: m1}\n")
    with pytest.raises(ProviderValidationFailed, match="no such model") as info:
        validate_resolution(spec, Catalogs({"acme": ProviderEntry(validate=refuse)}), {})
    assert info.value.path == "$.model"


@pytest.mark.parametrize(("extra", "path", "name"), [
    ("tools: [get_weather, missing_tool]", "$.tools[1]", "missing_tool"),
    ("toolsets: [calendar]", "$.toolsets[0]", "calendar"),
    ("capabilities: [nope]", "$.capabilities[0]", "nope"),
])
def test_unknown_names_are_reported_at_their_path(extra: str, path: str, name: str) -> None:
    with pytest.raises(UnresolvedReference) as info:
        validate_resolution(parse(MINIMAL + extra + "\n"), catalogs(), {})
    assert (info.value.path, info.value.name) == (path, name)


def test_an_unknown_provider_lists_the_known_ones() -> None:
    with pytest.raises(UnresolvedReference, match="known: .*openai") as info:
        validate_resolution(parse("version: 1\nmodel: {provider: acme, name: m}\n"), catalogs(), {})
    assert info.value.path == "$.model.provider"


def test_a_capability_dependency_cycle_is_found_in_the_dry_run() -> None:
    caps = {"a": Cap("a", "b"), "b": Cap("b", "c"), "c": Cap("c", "a")}
    with pytest.raises(CapabilityDependencyCycle) as info:
        validate_resolution(parse(MINIMAL + "capabilities: [a]\n"), catalogs(**caps), {})
    assert info.value.cycle == ("a", "b", "c", "a") and info.value.path == "$.capabilities[0]"
    assert "a -> b -> c -> a" in str(info.value)


def test_dependencies_resolve_transitively_dependency_first() -> None:
    caps = {"app": Cap("app", "db", "log"), "db": Cap("db", "log"), "log": Cap("log"), "x": Cap("x")}
    plan = validate_resolution(parse(MINIMAL + "capabilities: [{name: app, loading: on_demand}, log]\n"),
                               catalogs(**caps), {})
    assert [(c.name, c.loading, c.required_by) for c in plan.capabilities] == [
        ("log", "eager", None), ("db", "on_demand", "app"), ("app", "on_demand", None)]
    with pytest.raises(UnresolvedReference, match="a dependency of 'app'"):
        validate_resolution(parse(MINIMAL + "capabilities: [app]\n"), catalogs(app=Cap("app", "gone")), {})


def test_settings_the_library_refuses_fail_the_dry_run() -> None:
    with pytest.raises(InvalidAgentSpec):
        validate_resolution(parse(MINIMAL + "settings: {thinking: '   '}\n"), catalogs(), {})


# -- full resolution -----------------------------------------------------------------------------


def test_cleanups_run_on_close_newest_first_and_on_failure() -> None:
    order: list[str] = []
    text = MINIMAL + "mcp_servers: [{name: files, command: [srv, '--root']}]\n"

    def connector(server: Any) -> Any:
        assert server.command == ("srv", "--root")
        from zigai.toolset import Toolset

        return Toolset([]), lambda: order.append("mcp")

    factory = lambda ref, env: BuiltModel(TestModel(), lambda: order.append("model"))  # noqa: E731
    resolved = resolve(parse(text), catalogs(), factory, {}, mcp_connector=connector)
    assert len(resolved.agent.toolsets) == 1
    resolved.close()
    assert order == ["mcp", "model"]
    order.clear()  # without a connector the default one starts the command, which does not exist here
    with pytest.raises(McpConnectionFailed, match="mcp server 'files': could not start"):
        resolve(parse(text), catalogs(), factory, {})
    assert order == ["model"]

    def broken(server: Any) -> Any:
        raise RuntimeError("server did not start")

    order.clear()
    with pytest.raises(RuntimeError):
        resolve(parse(text), catalogs(), factory, {}, mcp_connector=broken)
    assert order == ["model"]


def test_a_failing_cleanup_does_not_stop_the_others() -> None:
    order: list[str] = []

    def boom() -> None:
        raise OSError("close failed")

    text = MINIMAL + "mcp_servers: [{name: a, command: [x]}]\n"
    from zigai.toolset import Toolset

    resolved = resolve(parse(text), catalogs(), lambda r, e: BuiltModel(TestModel(), lambda: order.append("m")),
                       {}, mcp_connector=lambda s: (Toolset([]), boom))
    with pytest.raises(OSError):
        resolved.close()
    assert order == ["m"] and resolved.closed


def test_output_modes_and_the_model_string_factory() -> None:
    for mode in ("native", "prompted", "tool"):
        spec = parse(MINIMAL + f"output: {{mode: {mode}, schema: {{type: object}}}}\n")
        with resolve(spec, catalogs(), model_string_factory, {}) as resolved:
            assert resolved.agent.output.mode.value == mode
    spec = parse("version: 1\nmodel: {provider: openai, name: gpt-5-mini}\n")
    with resolve(spec, catalogs(), model_string_factory, {"OPENAI_API_KEY": "sk-x"}) as resolved:
        assert resolved.agent.model.model_name == "gpt-5-mini"
        assert resolved.plan.provider == "openai"


def test_a_model_name_the_catalog_refuses() -> None:
    with pytest.raises(ProviderValidationFailed):
        validate_resolution(parse("version: 1\nmodel: {provider: openai, name: 'a b'}\n"),
                            catalogs(), {"OPENAI_API_KEY": "k"})


@pytest.mark.parametrize(("text", "path", "words"), [
    ("version: 1\nmodel: {provider: test, name: a}\nz: *x\n", "$", "aliases are refused"),
    (MINIMAL + "tools: !!set {a: null}\n", "$.tools", "YAML tag"),
    (MINIMAL + "tools: !!omap [a: 1]\n", "$.tools", "YAML tag"),
    (MINIMAL + "name: null\n", "$.name", "got null"),
    (MINIMAL + "settings: [1]\n", "$.settings", "expected an object, got a list"),
    (MINIMAL + "output: {schema: [1]}\n", "$.output.schema", "expected a JSON Schema object"),
    (MINIMAL + "description: {a: 1}\n", "$.description", "expected a string, got an object"),
    (MINIMAL + f"description: {'x' * 4097}\n", "$.description", "longer than 4096"),
    (MINIMAL + "name: 9lives\n", "$.name", "is not a name"),
    (MINIMAL + "settings: {temperature: 3}\n", "$.settings.temperature", "between 0.0 and 2.0"),
    (MINIMAL + "settings: {parallel_tool_calls: 1}\n", "$.settings.parallel_tool_calls", "true or false"),
    (MINIMAL + "mcp_servers: [{name: a, command: []}]\n", "$.mcp_servers[0].command", "1 to 64 items"),
    (MINIMAL + "instructions: '  '\n", "$.instructions", "must not be empty"),
    (MINIMAL + "instructions: [7]\n", "$.instructions[0]", "expected a string"),
    ("version: 1\nmodel: {provider: test, name: '" + "m" * 257 + "'}\n", "$.model.name", "longer than 256"),
])
def test_more_strictness_rules_name_their_paths(text: str, path: str, words: str) -> None:
    error = error_for(text)
    assert error.path == path and words in str(error)


def test_the_format_comes_from_the_file_suffix(tmp_path: Path) -> None:
    for suffix in (".yml", ".yaml", ".json"):
        target = tmp_path / f"agent{suffix}"
        target.write_text('{"version": 1, "model": {"provider": "test", "name": "a"}}')
        assert load(target).source_format == ("json" if suffix == ".json" else "yaml")
    (tmp_path / "agent.txt").write_text(MINIMAL)
    assert load(tmp_path / "agent.txt").source_format == "yaml"


def test_yaml_nesting_beyond_the_interpreter_is_refused() -> None:
    deep = "[" * 5000 + "]" * 5000
    assert error_for(f"version: 1\nx: {deep}\n", "yaml").path == "$"


def test_a_duplicate_inside_a_list_of_objects_is_located() -> None:
    error = error_for('{"version": 1, "model": {"provider": "test", "name": "a"}, '
                      '"mcp_servers": [{"name": "a", "command": ["x"]}, {"name": "b", "name": "c"}]}', "json")
    assert error.path == "$.mcp_servers[1].name"


ARN = "arn:aws:bedrock:eu-central-1:123456789012:inference-profile/eu.anthropic.claude-sonnet-4-6"


@pytest.mark.parametrize(
    ("name", "env", "region"),
    [
        (ARN, {}, "eu-central-1"),  # signed: the ARN's region, no variable needed
        ("anthropic.claude-sonnet-4-6", {"AWS_PROFILE": "work"}, "eu-west-3"),  # the profile's region
        ("anthropic.claude-sonnet-4-6", {"AWS_PROFILE": "work", "AWS_DEFAULT_REGION": "us-east-2"}, "us-east-2"),
        (ARN, {"AWS_REGION": "us-west-2"}, "eu-central-1"),  # the ARN comes first
        ("anthropic.claude-sonnet-4-6", {}, None),  # nowhere: the named error
        ("anthropic.claude-sonnet-4-6", {"AWS_PROFILE": "bare"}, None),  # a profile without a region
        (ARN, {"AWS_BEARER_TOKEN_BEDROCK": "bedrock-key"}, None),  # an API key reads only the variables
        (ARN, {"AWS_BEARER_TOKEN_BEDROCK": "bedrock-key", "AWS_REGION": "us-west-2"}, "us-west-2"),
    ],
)
def test_a_bedrock_converse_spec_validates_exactly_when_infer_model_finds_a_region(
        name: str, env: dict[str, str], region: str | None, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Spec validation asks the model-string builder's own region rule (issue 36 follow-up):
    an ARN model id or the AWS profile's region count without AWS_REGION, as in infer_model."""
    monkeypatch.setenv("HOME", str(tmp_path))  # no ~/.aws of the machine running the test
    config = tmp_path / "config"
    config.write_text("[profile work]\nregion = eu-west-3\n[profile bare]\noutput = json\n", encoding="utf-8")
    env = {"AWS_CONFIG_FILE": str(config), **env}
    spec = parse(f"version: 1\nmodel: {{provider: bedrock_converse, name: '{name}'}}\n")
    if region is None:
        with pytest.raises(MissingEnvironment) as info:
            validate_resolution(spec, catalogs(), env)
        assert info.value.variables == ("AWS_REGION or AWS_DEFAULT_REGION",)
        with pytest.raises(MissingCredentials, match="AWS_REGION or AWS_DEFAULT_REGION"):
            model_string_factory(ModelRef("bedrock_converse", name), env)
        return
    plan = validate_resolution(spec, catalogs(), env)
    assert {"AWS_REGION", "AWS_DEFAULT_REGION", "AWS_PROFILE", "AWS_CONFIG_FILE"} <= set(plan.environment)
    built = model_string_factory(plan.model, {k: v for k, v in env.items() if k in plan.environment})
    assert built.provider.region == region


def test_a_bad_bedrock_converse_region_is_a_provider_validation_failure() -> None:
    spec = parse("version: 1\nmodel: {provider: bedrock_converse, name: m}\n")
    with pytest.raises(ProviderValidationFailed, match="cannot serve model 'm'") as info:
        validate_resolution(spec, catalogs(), {"AWS_REGION": "not a region!"})
    assert info.value.path == "$.model"
