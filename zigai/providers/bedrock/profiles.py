"""Built-in Converse profiles of the model families Bedrock serves, and family detection.

:func:`model_family` strips a cross-region inference-profile prefix (``us.``, ``eu.``,
``apac.``, ``global.`` ...) and reads the vendor of ``vendor.model`` ids (and of
``foundation-model/`` / ``inference-profile/`` ARNs).  :func:`converse_profile` states what
Converse documents for each family:

=================  =====  ==========  =========================  ======================
family             tools  tool_choice thinking                   structured output
=================  =====  ==========  =========================  ======================
anthropic.claude   yes    yes         budget (3.7, 4+)           JSON schema (4.5+)
amazon.nova        yes    yes         low/medium/high (Nova 2)   —
meta.llama3.1+/4   yes    —           —                          —
mistral            yes    —           —                          —
cohere.command-r   yes    —           —                          —
deepseek           v3     —           R1 always reasons          —
openai.gpt-oss     yes    —           low/medium/high            —
qwen.qwen3         yes    —           —                          —
=================  =====  ==========  =========================  ======================

Every recognized family takes ``max_tokens``, ``temperature``, ``top_p`` and
``stop_sequences`` (Converse's ``inferenceConfig``) and the ``default`` / ``priority`` /
``flex`` / ``reserved`` service tiers.  Unknown families (and ARNs that name no family) get
:data:`UNKNOWN_PROFILE`: no tools, no structured output, only ``max_tokens``.
"""

from __future__ import annotations

import re

from zigai.model import ModelProfile
from zigai.providers import profiles

__all__ = ["INFERENCE_SETTINGS", "SERVICE_TIERS", "UNKNOWN_PROFILE", "converse_profile",
           "model_family"]

INFERENCE_SETTINGS = frozenset({"max_tokens", "temperature", "top_p", "stop_sequences"})
SERVICE_TIERS = frozenset({"default", "priority", "flex", "reserved"})
UNKNOWN_PROFILE = profiles.UNKNOWN
_REGION_PREFIX = re.compile(r"^(?:us|eu|apac|global|jp|au|ca|us-gov)\.")
# claude-3-5-sonnet-..., claude-3-haiku-... / claude-sonnet-4-5-..., claude-opus-4-20250514-...
_CLAUDE_OLD = re.compile(r"^claude-(\d+)(?:-(\d)(?!\d))?-")
_CLAUDE_NEW = re.compile(r"^claude-[a-z]+-(\d+)(?:-(\d)(?!\d))?")
_TEXT = frozenset({"text", "tagged-text", "cache-point"})
_RICH = _TEXT | {"image", "document"}
_EFFORTS = frozenset({"low", "medium", "high"})


def model_family(model_id: str) -> tuple[str, str] | None:
    """``(vendor, model)`` of a Bedrock model id, region prefix removed; None if unknowable."""
    name = model_id
    if name.startswith("arn:"):
        resource = name.rpartition(":")[2]
        kind, _, rest = resource.partition("/")
        if kind not in ("foundation-model", "inference-profile") or not rest:
            return None
        name = rest
    name = _REGION_PREFIX.sub("", name.lower())
    vendor, sep, rest = name.partition(".")
    if not sep or not rest:
        return None
    return vendor, rest


def _claude_version(name: str) -> tuple[int, int]:
    """(major, minor) of ``claude-3-5-sonnet-...`` and ``claude-sonnet-4-5-...`` names."""
    match = _CLAUDE_OLD.match(name) or _CLAUDE_NEW.match(name)
    if match is None:
        return (0, 0)
    return int(match.group(1)), int(match.group(2) or 0)


def _profile(*, tools: bool = True, tool_choice: bool = False, content: frozenset[str] = _TEXT,
             thinking: bool = False, efforts: frozenset[str] = frozenset(),
             schema: bool = False) -> ModelProfile:
    settings = INFERENCE_SETTINGS | ({"tool_choice"} if tool_choice and tools else set())
    return ModelProfile(
        supports_tools=tools,
        supports_parallel_tool_calls=tools,
        json_object_output=False,
        json_schema_output=schema,
        supports_thinking=thinking,
        reasoning_efforts=efforts,
        content_kinds=content,
        service_tiers=SERVICE_TIERS,
        settings=settings,
    )


def converse_profile(model_name: str) -> ModelProfile | None:
    """The built-in Converse profile of ``model_name``'s family (None: unknown family)."""
    family = model_family(model_name)
    if family is None:
        return None
    vendor, name = family
    if vendor == "anthropic" and name.startswith("claude"):
        version = _claude_version(name)
        return _profile(tool_choice=True, content=_RICH, thinking=version >= (3, 7),
                        schema=version >= (4, 5))
    if vendor == "amazon" and name.startswith("nova"):
        reasoning = name.startswith("nova-2")
        content = _TEXT if name.startswith("nova-micro") else _RICH
        return _profile(tool_choice=True, content=content, thinking=reasoning,
                        efforts=_EFFORTS if reasoning else frozenset())
    if vendor == "meta" and name.startswith(("llama3-1", "llama3-2", "llama3-3", "llama4")):
        vision = name.startswith(("llama3-2-11b", "llama3-2-90b", "llama4"))
        return _profile(content=_TEXT | {"image"} if vision else _TEXT)
    if vendor == "mistral":
        return _profile(content=_TEXT | {"image"} if "pixtral" in name else _TEXT)
    if vendor == "cohere" and name.startswith("command-r"):
        return _profile()
    if vendor == "deepseek":
        if name.startswith("r1"):
            return _profile(tools=False)
        return _profile()
    if vendor == "openai" and name.startswith("gpt-oss"):
        return _profile(thinking=True, efforts=_EFFORTS)
    if vendor == "qwen":
        return _profile()
    return None
