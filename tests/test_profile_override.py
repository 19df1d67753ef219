"""Model profiles (issue 31, #9): the gpt-5 family offers web search, and a model name zigai's
tables do not know can be given tools from the CLI (``--profile``, config ``profile``) and from
a spec file (``model.profile``), while the fail-closed default stays without one.

The CLI and spec runs are real child processes against a real HTTP server on 127.0.0.1
standing in for a local Ollama server.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from support.loopback import LoopbackServer, Received, Reply

from zigai.model import InvalidProfileOverride, ManagedTool, ModelProfile, apply_profile_overrides
from zigai.models import builtin_model_catalog, infer_model
from zigai.providers import openai
from zigai.providers.openai.profiles import profile_for_model

ROOT = Path(__file__).resolve().parent.parent
TOOLS = '''
def add(a: int, b: int) -> int:
    """Add two numbers."""
    return a + b
'''


def test_every_gpt5_catalog_model_offers_web_search() -> None:
    names = [e.canonical_id for e in builtin_model_catalog().entries
             if e.provider_name == "openai" and e.canonical_id.startswith("gpt-5")]
    assert "gpt-5-nano" in names
    for name in names:
        assert "web_search" in openai.Client(name, openai.Provider("k")).profile.provider_managed_tools, name
    assert "web_search" in profile_for_model("gpt-5-nano-2025-08-07").provider_managed_tools
    assert "web_search" not in profile_for_model("gpt-4.1-nano").provider_managed_tools  # documented: no web search


def test_gpt5_nano_encodes_a_web_search_request() -> None:
    from zigai.messages import RequestMessage, UserPromptPart
    from zigai.model import ModelRequest
    from zigai.providers.openai.encode import encode_request

    client = openai.Client("gpt-5-nano", openai.Provider("k"))
    request = client.checked_request(ModelRequest(
        (RequestMessage((UserPromptPart("news?"),)),), managed_tools=(ManagedTool("web_search"),)))
    assert {"type": "web_search"} in encode_request(request, "gpt-5-nano")["tools"]


def test_overrides_replace_only_the_named_fields_and_refuse_everything_else() -> None:
    base = ModelProfile(supports_tools=False, settings=frozenset({"max_tokens"}))
    changed = apply_profile_overrides(base, {"supports_tools": True, "settings": ["max_tokens", "temperature"],
                                   "content_kinds": ["text", "image"], "idempotency_header": None})
    assert changed.supports_tools and changed.settings == {"max_tokens", "temperature"}
    assert changed.content_kinds == {"text", "image"} and changed.json_schema_output is base.json_schema_output
    for overrides, words in [
        ({"tools": True}, "profile.tools: not a ModelProfile field"),
        ({"supports_tools": "yes"}, "profile.supports_tools takes true or false"),
        ({"settings": "temperature"}, "profile.settings takes a list of strings"),
        ({"settings": ["temprature"]}, "profile.settings: unknown values ['temprature']"),
        ({"content_kinds": ["hologram"]}, "unknown values ['hologram']"),
        ({"provider_managed_tools": ["teleport"]}, "unknown values ['teleport']"),
        ({"idempotency_header": ""}, "takes a header name or null"),
    ]:
        with pytest.raises(InvalidProfileOverride, match=words.replace("[", r"\[").replace("]", r"\]")):
            apply_profile_overrides(base, overrides)
    with pytest.raises(InvalidProfileOverride, match="must be a mapping"):
        apply_profile_overrides(base, ["supports_tools"])  # type: ignore[arg-type]


def test_infer_model_applies_an_override_and_keeps_the_fail_closed_default_without_one() -> None:
    env = {"GROQ_API_KEY": "k"}
    assert not infer_model("groq:brand-new-model", env=env).profile.supports_tools
    model = infer_model("groq:brand-new-model", env=env, profile={"supports_tools": True})
    assert model.profile.supports_tools and model.model_name == "brand-new-model"
    assert infer_model("test", profile={"supports_tools": False}).profile.supports_tools is False
    from zigai.testing import FunctionModel

    with pytest.raises(InvalidProfileOverride, match="FunctionModel value takes no profile override"):
        infer_model(FunctionModel(lambda messages, info: None), profile={"supports_tools": True})


# -- the CLI and spec files, end to end -----------------------------------------------------------


def _ollama_reply(request: Received) -> Reply:
    body = request.json()
    if any(message.get("role") == "tool" for message in body["messages"]):
        content = next(m["content"] for m in body["messages"] if m.get("role") == "tool")
        message: dict[str, Any] = {"role": "assistant", "content": f"the sum is {content}"}
    else:
        assert [t["function"]["name"] for t in body["tools"]] == ["add"]
        message = {"role": "assistant", "content": None, "tool_calls": [
            {"id": "call_1", "type": "function",
             "function": {"name": "add", "arguments": '{"a": 3, "b": 4}'}}]}
    return Reply.of_json({"id": "c1", "object": "chat.completion", "model": body["model"],
                          "choices": [{"index": 0, "message": message,
                                       "finish_reason": "stop" if message["content"] else "tool_calls"}],
                          "usage": {"prompt_tokens": 5, "completion_tokens": 3, "total_tokens": 8}})


def _zigai(server: LoopbackServer, cwd: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("ZIGAI_", "OLLAMA_"))}
    env.update(PYTHONPATH=str(ROOT), OLLAMA_BASE_URL=f"{server.url}/v1")
    return subprocess.run([sys.executable, "-m", "zigai", *args], capture_output=True, text=True,
                          cwd=cwd, env=env, timeout=120)


@pytest.fixture
def workdir(tmp_path: Path) -> Path:
    (tmp_path / "tools.py").write_text(TOOLS, encoding="utf-8")
    return tmp_path


def test_the_cli_uses_tools_with_an_unknown_model_given_a_profile(workdir: Path) -> None:
    with LoopbackServer(_ollama_reply) as server:
        refused = _zigai(server, workdir, "run", "Add 3 and 4.", "--model", "ollama:my-finetune",
                         "--tools", "tools.py", "--no-retries")
        assert refused.returncode == 1 and "UnsupportedModelFeature" in refused.stderr
        assert server.requests == []  # fail-closed: refused before any request
        done = _zigai(server, workdir, "run", "Add 3 and 4.", "--model", "ollama:my-finetune",
                      "--tools", "tools.py", "--profile", '{"supports_tools": true}')
        assert done.returncode == 0, done.stderr
        assert done.stdout.strip() == "the sum is 7"
        config = workdir / "zigai.json"
        config.write_text(json.dumps({"version": 1, "model": "ollama:my-finetune", "tools": "tools.py",
                                      "profile": {"supports_tools": True}}), encoding="utf-8")
        from_config = _zigai(server, workdir, "run", "Add 3 and 4.", "--config", str(config))
        assert from_config.returncode == 0 and from_config.stdout.strip() == "the sum is 7"
    assert len(server.requests) == 4


def test_the_cli_refuses_a_bad_profile_as_operator_input(workdir: Path) -> None:
    with LoopbackServer(_ollama_reply) as server:
        done = _zigai(server, workdir, "run", "hi", "--model", "ollama:m", "--profile", '{"tools": true}')
        assert done.returncode == 2 and "--profile.tools: not a ModelProfile field" in done.stderr
        done = _zigai(server, workdir, "run", "hi", "--model", "ollama:m", "--profile", "[1]")
        assert done.returncode == 2 and "expected a JSON object of profile fields, got array" in done.stderr
    assert server.requests == []


def test_a_spec_file_gives_an_unknown_model_its_profile(workdir: Path) -> None:
    spec = workdir / "agent.yaml"
    spec.write_text("version: 1\nmodel:\n  provider: ollama\n  name: my-finetune\n"
                    "  profile: {supports_tools: true}\ntools: [add]\n", encoding="utf-8")
    with LoopbackServer(_ollama_reply) as server:
        done = _zigai(server, workdir, "run", "Add 3 and 4.", "--spec", str(spec), "--tools", "tools.py")
        assert done.returncode == 0, done.stderr
        assert done.stdout.strip() == "the sum is 7"
        spec.write_text("version: 1\nmodel: {provider: ollama, name: m, profile: {supports_tools: 1}}\n",
                        encoding="utf-8")
        bad = _zigai(server, workdir, "check", str(spec))
        assert bad.returncode == 2 and "$.model.profile.supports_tools takes true or false" in bad.stderr
    assert len(server.requests) == 2


def test_with_profile_copies_the_client_and_takes_only_a_profile() -> None:
    client = openai.Client("gpt-5-nano", openai.Provider("k"))
    other = client.with_profile(ModelProfile(supports_tools=False))
    assert other is not client and not other.profile.supports_tools and client.profile.supports_tools
    with pytest.raises(TypeError, match="needs a ModelProfile"):
        client.with_profile({"supports_tools": False})  # type: ignore[arg-type]


def test_a_spec_or_config_profile_is_checked_when_read() -> None:
    from zigai import json as zjson
    from zigai.agent_spec import InvalidAgentSpec, parse
    from zigai.cli.config import settings_from_json
    from zigai.cli.errors import InvalidCliConfig

    with pytest.raises(InvalidAgentSpec, match=r"\$\.model\.profile: expected an object of ModelProfile fields"):
        parse("version: 1\nmodel: {provider: test, name: m, profile: [supports_tools]}\n")
    with parse("version: 1\nmodel: {provider: test, name: m, profile: {json_schema_output: true}}\n") as owned:
        assert owned.spec.model.profile == {"json_schema_output": True}
    with pytest.raises(InvalidCliConfig, match="'profile'.settings: unknown values"):
        settings_from_json({"profile": {"settings": ["warp"]}}, "config")
    assert settings_from_json({"profile": {"supports_tools": True}}, "config").profile == {"supports_tools": True}
    assert zjson.expected_kinds((list, tuple)) == "array"
