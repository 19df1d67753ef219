"""Built-in model profiles for OpenAI model families on the Responses API.

:func:`profile_for_model` maps a model name to a :class:`~zigai.model.ModelProfile` by
family prefix (dated snapshots such as ``gpt-4o-2024-08-06`` resolve like their family).
The tables state what the Responses API documents for each family:

==================  ==========  ======================================  ==============
family              reasoning   efforts (``ModelSettings.thinking``)    sampling
==================  ==========  ======================================  ==============
gpt-4o, gpt-4.1     no          —                                       temperature, top_p
gpt-5, -mini, -nano yes         minimal, low, medium, high              none
gpt-5.1             yes         off (sent as ``none``), low .. high     none
gpt-5.2 and later   yes         off, low, medium, high, xhigh           none
o1, o3, o4-mini     yes         low, medium, high                       none
``*-chat*`` models  no          —                                       temperature, top_p
==================  ==========  ======================================  ==============

Hosted web search (``web_search``) is offered where OpenAI serves it on Responses: every
gpt-5 model (nano included), gpt-4o and gpt-4.1 (not gpt-4.1-nano, not the ``-search``
models), o3 and o4-mini; o1 and o3-mini do not have it.

Reasoning models reject sampling controls and log probabilities, so their profiles omit
them and a request that sets them fails before I/O.  The Responses API has no ``seed``,
``stop``, ``top_k``, presence or frequency penalties: no OpenAI profile lists them.

Unknown models get :data:`UNKNOWN_PROFILE`: a deliberately conservative default that allows
function tools, structured output and text/image/document input (every current Responses
model accepts these), but no thinking, no provider-managed tools, no sampling controls and
only the ``auto``/``default`` service tiers.  Applications that know better pass a
``profile_lookup`` to the provider or a ``profile`` to the client.

``"off"`` in ``reasoning_efforts`` marks models that accept ``reasoning.effort = "none"``;
the encoder sends ``none`` for ``thinking="off"`` only then and omits ``reasoning`` otherwise.
"""

from __future__ import annotations

import re

from zigai.model import ModelProfile

__all__ = ["UNKNOWN_PROFILE", "profile_for_model", "BASE_SETTINGS", "SAMPLING_SETTINGS"]

#: Portable settings every Responses model accepts.
BASE_SETTINGS = frozenset(
    {"max_tokens", "parallel_tool_calls", "tool_choice", "allowed_tools", "truncation"}
)
#: Settings only non-reasoning models accept.
SAMPLING_SETTINGS = frozenset({"temperature", "top_p", "logprobs", "top_logprobs"})

_RICH_CONTENT = frozenset(
    {"text", "tagged-text", "image", "document", "binary", "uploaded-file", "cache-point"}
)
_TEXT_CONTENT = frozenset({"text", "tagged-text", "cache-point"})
_TIERS = frozenset({"auto", "default", "priority"})
_FLEX_TIERS = _TIERS | {"flex"}

UNKNOWN_PROFILE = ModelProfile(
    supports_tools=True,
    supports_parallel_tool_calls=True,
    supports_system_messages=True,
    json_object_output=True,
    json_schema_output=True,
    supports_thinking=False,
    provider_managed_tools=frozenset(),
    content_kinds=frozenset({"text", "tagged-text", "image", "document", "uploaded-file",
                             "cache-point"}),
    service_tiers=frozenset({"auto", "default"}),
    settings=BASE_SETTINGS,
)


#: The Responses API's hosted tools besides web search (code interpreter, image generation,
#: file search, remote MCP), offered by the tool-calling GPT-4o / GPT-4.1 / o3 / o4 / GPT-5
#: models.
_HOSTED = frozenset({"code_execution", "image_generation", "file_search", "mcp_server"})


def _managed(web_search: bool, hosted: bool) -> frozenset[str]:
    return (frozenset({"web_search"}) if web_search else frozenset()) | (
        _HOSTED if hosted else frozenset())


def _chat(*, web_search: bool = True, vision: bool = True, schema: bool = True,
          hosted: bool = True) -> ModelProfile:
    return ModelProfile(
        json_object_output=True,
        json_schema_output=schema,
        provider_managed_tools=_managed(web_search, hosted),
        content_kinds=_RICH_CONTENT if vision else _TEXT_CONTENT,
        service_tiers=_TIERS,
        settings=BASE_SETTINGS | SAMPLING_SETTINGS,
    )


def _reasoning(
    efforts: frozenset[str],
    *,
    web_search: bool = True,
    vision: bool = True,
    tools: bool = True,
    flex: bool = False,
    schema: bool = True,
    hosted: bool | None = None,
) -> ModelProfile:
    return ModelProfile(
        supports_tools=tools,
        supports_parallel_tool_calls=tools,
        json_object_output=schema,
        json_schema_output=schema,
        supports_thinking=True,
        reasoning_efforts=efforts,
        provider_managed_tools=_managed(web_search, tools if hosted is None else hosted),
        content_kinds=_RICH_CONTENT if vision else _TEXT_CONTENT,
        service_tiers=_FLEX_TIERS if flex else _TIERS,
        settings=BASE_SETTINGS if tools else BASE_SETTINGS - {
            "parallel_tool_calls", "tool_choice", "allowed_tools"},
    )


_LMH = frozenset({"low", "medium", "high"})
_GPT5 = frozenset({"minimal", "low", "medium", "high"})
_GPT51 = frozenset({"off", "low", "medium", "high"})
_GPT52 = _GPT51 | {"xhigh"}

_GPT5_VERSION = re.compile(r"^gpt-5(?:\.(\d+))?(?:-|$)")


def _gpt5(name: str) -> ModelProfile:
    match = _GPT5_VERSION.match(name)
    minor = int(match.group(1)) if match and match.group(1) else 0
    if "-chat" in name:
        return _chat()
    if minor == 0:
        # the whole gpt-5 family (nano included) serves hosted web search on Responses
        return _reasoning(_GPT5, flex=True)
    if minor == 1:
        return _reasoning(_GPT51, flex=True)
    return _reasoning(_GPT52, flex=True)


def profile_for_model(model_name: str) -> ModelProfile:
    """The built-in profile for ``model_name`` (``UNKNOWN_PROFILE`` when no family matches)."""
    name = model_name.lower()
    if name.startswith("gpt-5"):
        return _gpt5(name)
    if name.startswith("gpt-4.1"):
        return _chat(web_search="nano" not in name)
    if name.startswith("gpt-4o"):
        if name.startswith("gpt-4o-2024-05-13"):
            return _chat(schema=False, hosted=False)
        if "audio" in name or "realtime" in name:
            return UNKNOWN_PROFILE
        return _chat(web_search="search" not in name, hosted="search" not in name)
    if name.startswith("o1"):
        if name.startswith(("o1-mini", "o1-preview")):
            return _reasoning(_LMH, web_search=False, vision=False, tools=False, schema=False)
        return _reasoning(_LMH, web_search=False, hosted=False)
    if name.startswith("o3-mini"):
        return _reasoning(_LMH, web_search=False, vision=False, hosted=False)
    if name.startswith(("o3", "o4-mini")):
        return _reasoning(_LMH, flex=True)
    return UNKNOWN_PROFILE
