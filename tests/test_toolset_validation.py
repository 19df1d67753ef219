"""zigai.toolset and ProviderDetails: malformed toolsets and preparers fail with named errors."""

from __future__ import annotations

import pickle
from typing import Any

import pytest

from zigai.messages import InvalidProviderDetails, Metadata, ProviderDetails
from zigai.tool import Tool, ToolDefinitionError
from zigai.toolset import PreparedTool, ToolPrepareContext, Toolset, resolve_tools


def make(name: str) -> Tool:
    return Tool.manual(name, f"{name} tool", {"type": "object"}, lambda args: name)


@pytest.mark.parametrize(("kwargs", "message"), [
    ({"tools": ["search"]}, "Toolset tools must be Tool values, got str"),
    ({"namespace": "has space"}, "toolset namespace 'has space' must match"),
    ({"namespace": 3}, "toolset namespace 3 must match"),
    ({"prepare": "nope"}, "toolset prepare must be callable"),
    ({"metadata": ["a"]}, "toolset metadata must be a mapping"),
])
def test_toolset_constructor_validation(kwargs: dict[str, Any], message: str) -> None:
    with pytest.raises(ToolDefinitionError, match=message):
        Toolset(**kwargs)


def test_namespaced_name_must_stay_within_the_tool_name_limit() -> None:
    long = make("t" * 60)
    Toolset([long], namespace="n" * 2)  # 64 characters with the separator: still valid
    with pytest.raises(ToolDefinitionError, match="namespaced tool name 'nnn__t+' must match"):
        Toolset([long], namespace="n" * 3)  # 65 characters


def test_toolset_is_immutable_and_exposes_its_parts() -> None:
    def prepare(ctx: ToolPrepareContext) -> None:
        return None

    toolset = Toolset([make("a")], namespace="db", prepare=prepare, metadata={"k": 1})
    assert (toolset.namespace, toolset.prepare, dict(toolset.metadata or {})) == ("db", prepare, {"k": 1})
    assert repr(toolset) == "Toolset(namespace='db', tools=['a'])"
    with pytest.raises(AttributeError, match="Toolset is immutable"):
        toolset.x = 1
    # a preparer returning None keeps the static tools, namespaced and with merged metadata
    (prepared,) = toolset.prepared_tools(ToolPrepareContext())
    assert (prepared.name, dict(prepared.metadata or {})) == ("db__a", {"k": 1})


@pytest.mark.parametrize(("returned", "message"), [
    ("abc", "toolset prepare must return a sequence of tools or None"),
    ({"a"}, "toolset prepare must return a sequence of tools or None"),
    ([object()], "toolset prepare returned object; expected Tool or PreparedTool"),
])
def test_preparer_results_are_checked(returned: Any, message: str) -> None:
    toolset = Toolset([make("a")], prepare=lambda ctx: returned)
    with pytest.raises(ToolDefinitionError, match=message):
        toolset.prepared_tools(ToolPrepareContext())


def test_prepared_tool_and_resolve_tools_type_checks() -> None:
    with pytest.raises(ToolDefinitionError, match="PreparedTool.tool must be a Tool, got str"):
        PreparedTool("a")  # type: ignore[arg-type]
    with pytest.raises(ToolDefinitionError, match="agent tools must be Tool values, got dict"):
        resolve_tools([{}], [], ToolPrepareContext())  # type: ignore[list-item]
    with pytest.raises(ToolDefinitionError, match="toolsets must be Toolset values, got list"):
        resolve_tools([], [[make("a")]], ToolPrepareContext())  # type: ignore[list-item]


def test_provider_details_json_object_rules() -> None:
    with pytest.raises(InvalidProviderDetails, match="ProviderDetails must be a JSON object, got list"):
        ProviderDetails([1])  # type: ignore[arg-type]
    with pytest.raises(InvalidProviderDetails, match="Metadata must be a JSON object, got str"):
        Metadata.from_value("x")  # type: ignore[arg-type]
    details = ProviderDetails({"b": [1, {"c": None}], "a": 1.5})
    assert details.to_json() == '{"a":1.5,"b":[1,{"c":null}]}'
    assert (len(details), sorted(details), details["a"]) == (2, ["a", "b"], 1.5)
    copy = details.to_value()
    copy["b"].append(2)
    assert details.to_value() == {"b": [1, {"c": None}], "a": 1.5}  # the copy is independent
    assert details == {"a": 1.5, "b": [1, {"c": None}]}
    assert details != Metadata({"a": 1.5, "b": [1, {"c": None}]})  # same JSON, different kind
    assert details.__eq__(3) is NotImplemented
    assert hash(details) == hash(ProviderDetails({"a": 1.5, "b": [1, {"c": None}]}))
    assert repr(ProviderDetails()) == "ProviderDetails({})"
    assert pickle.loads(pickle.dumps(details)) == details
    with pytest.raises(AttributeError, match="ProviderDetails is immutable"):
        details.x = 1
