"""Capability profiles for Chat Completions endpoints and the four-layer profile resolution.

Job
    Know what each upstream model family can do when it is served through an
    OpenAI-compatible Chat Completions API, and resolve one :class:`ModelProfile` for a
    named provider's model in the specification's four layers (:func:`resolve`):

    1. the application's ``profile_lookup`` when it recognizes the model;
    2. the provider's built-in upstream-family lookup (the functions below);
    3. the client's fallback profile when neither recognized it (named providers use the
       fail-closed :data:`UNKNOWN`);
    4. the application's ``profile_override``, applied to whatever was resolved.

Invariants
    * This module holds capability knowledge only: no wire encoding, no HTTP.
    * Every lookup is pure and returns ``None`` for a family it does not recognize; it never
      guesses.  :data:`UNKNOWN` declares no tools, no structured output, no thinking and only
      ``max_tokens``, so unsupported settings, tools and content fail before I/O.
    * Family matching is case-insensitive on prefixes; tags (``:free``, ``:20b``) and
      OpenRouter's ``~`` alias marker never change the family.
"""

from __future__ import annotations

from collections.abc import Callable

from zigai.model.profile import COMMON_SETTINGS, ModelProfile

__all__ = [
    "CHAT_SETTINGS",
    "COMPATIBLE_FULL",
    "COMPATIBLE_BASIC",
    "COMPATIBLE_MINIMAL",
    "UNKNOWN",
    "PRESETS",
    "ProfileLookup",
    "ProfileOverride",
    "resolve",
    "family_profile",
    "azure_openai",
    "bedrock_mantle",
    "cerebras",
    "cohere",
    "crusoe",
    "deepseek",
    "doubleword",
    "groq",
    "huggingface",
    "mistral",
    "ollama",
    "openrouter",
    "ovhcloud",
    "snowflake",
    "together",
    "zai",
]

ProfileLookup = Callable[[str], "ModelProfile | None"]
ProfileOverride = Callable[[str, ModelProfile], "ModelProfile | None"]

#: Portable settings a full Chat Completions endpoint honours.
CHAT_SETTINGS = COMMON_SETTINGS | {"logprobs", "top_logprobs"}
_SERVICE_TIERS = frozenset({"auto", "default", "flex", "priority", "scale"})
_REASONING = frozenset({"low", "medium", "high"})
_TEXT = frozenset({"text", "tagged-text"})
_VISION = _TEXT | {"image"}

COMPATIBLE_FULL = ModelProfile(
    supports_tools=True,
    supports_parallel_tool_calls=True,
    json_object_output=True,
    json_schema_output=True,
    supports_thinking=True,
    reasoning_efforts=frozenset({"minimal", "low", "medium", "high", "xhigh"}),
    service_tiers=_SERVICE_TIERS,
    content_kinds=_VISION | {"audio", "document", "cache-point"},
    settings=CHAT_SETTINGS,
)
COMPATIBLE_BASIC = ModelProfile(
    supports_tools=True,
    supports_parallel_tool_calls=False,
    settings=COMMON_SETTINGS,
)
COMPATIBLE_MINIMAL = ModelProfile(
    supports_tools=False,
    supports_parallel_tool_calls=False,
    settings=COMMON_SETTINGS - {"parallel_tool_calls", "tool_choice", "allowed_tools"},
)
#: Fail-closed fallback for a model family a named provider does not recognize.
UNKNOWN = ModelProfile(
    supports_tools=False,
    supports_parallel_tool_calls=False,
    settings=frozenset({"max_tokens"}),
)
#: The generic client's compatibility presets, by name.
PRESETS: dict[str, ModelProfile] = {
    "full": COMPATIBLE_FULL,
    "basic": COMPATIBLE_BASIC,
    "minimal": COMPATIBLE_MINIMAL,
    "unknown": UNKNOWN,
}


def resolve(
    model_name: str,
    *,
    fallback: ModelProfile,
    lookup: ProfileLookup | None = None,
    builtin: ProfileLookup | None = None,
    override: ProfileOverride | None = None,
) -> ModelProfile:
    """The four-layer resolution: application lookup, built-in family, fallback, override."""
    profile = lookup(model_name) if lookup is not None else None
    if profile is None and builtin is not None:
        profile = builtin(model_name)
    if profile is None:
        profile = fallback
    if override is not None:
        replaced = override(model_name, profile)
        if replaced is not None:
            profile = replaced
    if not isinstance(profile, ModelProfile):
        raise TypeError("profile lookups and overrides must return a ModelProfile or None")
    return profile


# ------------------------------------------------------------------------------ families

def _starts(value: str, *prefixes: str) -> bool:
    lowered = value.lower()
    return any(lowered.startswith(p) for p in prefixes)


def _without(profile: ModelProfile, *names: str) -> ModelProfile:
    return profile.with_changes(settings=profile.settings - set(names))


_SAMPLING = ("temperature", "stop_sequences", "seed", "top_p", "presence_penalty",
             "frequency_penalty", "logprobs", "top_logprobs")


def family_profile(family: str, model_name: str) -> ModelProfile:
    """The Chat Completions profile of one upstream family (``model_name`` without vendor)."""
    base = COMPATIBLE_FULL.with_changes(
        supports_thinking=False, reasoning_efforts=frozenset(), service_tiers=frozenset(),
        content_kinds=_TEXT,
    )
    if family == "openai":
        profile = base.with_changes(content_kinds=_VISION)
        if _starts(model_name, "o1", "o3", "o4", "gpt-5"):
            profile = _without(profile, *_SAMPLING).with_changes(
                supports_thinking=True, reasoning_efforts=_REASONING
            )
        return profile
    if family == "harmony":  # gpt-oss served by third parties
        return _without(base, *_SAMPLING).with_changes(
            supports_thinking=True, reasoning_efforts=_REASONING
        )
    if family == "anthropic":
        return _without(base, "seed", "presence_penalty", "frequency_penalty", "logprobs",
                        "top_logprobs").with_changes(content_kinds=_VISION)
    if family == "cohere":
        return _without(base, "seed", "logprobs", "top_logprobs")
    if family == "deepseek":
        profile = _without(base, "seed", "logprobs", "top_logprobs").with_changes(
            json_schema_output=False
        )
        if _starts(model_name, "deepseek-r1", "deepseek-v4-") or model_name.lower() == "deepseek-reasoner":
            profile = _without(profile, "temperature", "stop_sequences", "top_p",
                               "presence_penalty", "frequency_penalty", "tool_choice")
        return profile
    if family == "google":
        return _without(base, "presence_penalty", "frequency_penalty", "logprobs",
                        "top_logprobs").with_changes(content_kinds=_VISION)
    if family in ("meta", "qwen", "zai"):
        return _without(base, "seed", "logprobs", "top_logprobs").with_changes(
            json_schema_output=False
        )
    if family == "mistral":
        return _without(base, "logprobs", "top_logprobs")
    if family in ("amazon", "grok", "moonshot"):
        return _without(base, "seed", "presence_penalty", "frequency_penalty", "logprobs",
                        "top_logprobs")
    raise ValueError(f"unknown model family {family!r}")


_VENDORS: dict[str, str] = {
    "amazon": "amazon", "anthropic": "anthropic", "cohere": "cohere", "coherelabs": "cohere",
    "deepseek": "deepseek", "deepseek-ai": "deepseek", "google": "google",
    "meta-llama": "meta", "mistralai": "mistral", "moonshotai": "moonshot", "openai": "openai",
    "qwen": "qwen", "x-ai": "grok", "zai-org": "zai", "z-ai": "zai",
}


def _routed(model_name: str, vendors: dict[str, str] = _VENDORS) -> ModelProfile | None:
    """``vendor/model[:tag]`` routing shared by gateways; gpt-oss under openai is harmony."""
    vendor, sep, rest = model_name.partition("/")
    if not sep or not rest:
        return None
    vendor = vendor.lower().removeprefix("~")
    family = vendors.get(vendor)
    if family is None:
        return None
    rest = rest.partition(":")[0]
    if family == "openai" and _starts(rest, "gpt-oss"):
        family = "harmony"
    return family_profile(family, rest)


def azure_openai(model_name: str) -> ModelProfile | None:
    if _starts(model_name, "llama", "meta-"):
        return family_profile("meta", model_name)
    if _starts(model_name, "deepseek"):
        return family_profile("deepseek", model_name)
    if _starts(model_name, "mistral", "ministral", "magistral"):
        return family_profile("mistral", model_name)
    if _starts(model_name, "cohere-"):
        return family_profile("cohere", model_name)
    if _starts(model_name, "grok"):
        return family_profile("grok", model_name)
    if _starts(model_name, "gpt-oss"):
        return family_profile("harmony", model_name)
    if _starts(model_name, "gpt-", "chatgpt-", "o1", "o3", "o4"):
        return family_profile("openai", model_name)
    return None


def bedrock_mantle(model_name: str) -> ModelProfile | None:
    if not _starts(model_name, "openai."):
        return None
    family_name = model_name[len("openai."):]
    family = "harmony" if _starts(family_name, "gpt-oss") else "openai"
    return family_profile(family, family_name)


def cerebras(model_name: str) -> ModelProfile | None:
    for prefix, family in (("llama", "meta"), ("qwen", "qwen"), ("gpt-oss", "harmony"),
                           ("zai", "zai")):
        if _starts(model_name, prefix):
            profile = family_profile(family, model_name)
            return _without(profile, "parallel_tool_calls", "presence_penalty",
                            "frequency_penalty").with_changes(supports_parallel_tool_calls=False)
    return None


def cohere(model_name: str) -> ModelProfile | None:
    if _starts(model_name, "command", "c4ai-command"):
        return family_profile("cohere", model_name)
    return None


def crusoe(model_name: str) -> ModelProfile | None:
    """Crusoe's vendor-qualified ids; guided decoding enables both structured-output modes."""
    vendors = {"meta-llama": "meta", "deepseek-ai": "deepseek", "qwen": "qwen",
               "google": "google", "openai": "openai", "moonshotai": "moonshot",
               "zai-org": "zai"}
    profile = _routed(model_name, vendors)
    if profile is None:
        return None
    return profile.with_changes(json_object_output=True, json_schema_output=True)


def deepseek(model_name: str) -> ModelProfile | None:
    return family_profile("deepseek", model_name) if _starts(model_name, "deepseek-") else None


def doubleword(model_name: str) -> ModelProfile | None:
    return _routed(model_name)


def groq(model_name: str) -> ModelProfile | None:
    profile = _routed(model_name)
    if profile is None:
        for prefixes, family in ((("llama", "meta-llama"), "meta"), (("gemma",), "google"),
                                 (("qwen",), "qwen"), (("deepseek",), "deepseek"),
                                 (("mistral",), "mistral")):
            if _starts(model_name, *prefixes):
                profile = family_profile(family, model_name)
                break
    if profile is None and _starts(model_name, "compound-", "groq/compound"):
        profile = COMPATIBLE_BASIC
    if profile is None:
        return None
    return _without(profile, "presence_penalty", "frequency_penalty", "logprobs", "top_logprobs")


def huggingface(model_name: str) -> ModelProfile | None:
    return _routed(model_name)


def mistral(model_name: str) -> ModelProfile | None:
    if _starts(model_name, "mistral", "ministral", "magistral", "codestral", "devstral",
               "pixtral"):
        return family_profile("mistral", model_name)
    return None


def ollama(model_name: str) -> ModelProfile | None:
    """Ollama library names: namespaces and tags select artifacts, not families."""
    family_name = model_name.rpartition("/")[2].partition(":")[0]
    for prefixes, family in ((("gpt-oss",), "harmony"), (("llama", "meta-llama"), "meta"),
                             (("gemma",), "google"), (("qwen",), "qwen"),
                             (("deepseek",), "deepseek"), (("mistral", "ministral"), "mistral"),
                             (("command", "c4ai-command"), "cohere")):
        if _starts(family_name, *prefixes):
            profile = family_profile(family, family_name)
            return _without(profile, "parallel_tool_calls").with_changes(
                json_object_output=True, json_schema_output=True,
                supports_parallel_tool_calls=False,
            )
    return None


def openrouter(model_name: str) -> ModelProfile | None:
    return _routed(model_name)


def ovhcloud(model_name: str) -> ModelProfile | None:
    for prefixes, family in ((("llama", "meta-"), "meta"), (("deepseek",), "deepseek"),
                             (("mistral",), "mistral"), (("gpt-oss",), "harmony"),
                             (("qwen",), "qwen")):
        if _starts(model_name, *prefixes):
            return family_profile(family, model_name)
    return None


def snowflake(model_name: str) -> ModelProfile | None:
    """Cortex: OpenAI models get tools and structured output, Claude models tools only,
    the remaining hosted families are text-only (Cortex ignores or rejects the rest)."""
    if _starts(model_name, "openai-"):
        profile = family_profile("openai", model_name[len("openai-"):])
        return _without(profile, "seed", "logprobs", "top_logprobs").with_changes(
            content_kinds=_TEXT
        )
    if _starts(model_name, "claude-"):
        return _without(family_profile("anthropic", model_name), "stop_sequences").with_changes(
            json_object_output=False, json_schema_output=False, content_kinds=_TEXT,
        )
    if _starts(model_name, "llama", "mistral", "deepseek", "snowflake-", "reka-", "jamba-",
               "gemma"):
        return ModelProfile(
            supports_tools=False, supports_parallel_tool_calls=False,
            settings=frozenset({"max_tokens", "temperature", "top_p"}),
        )
    return None


def together(model_name: str) -> ModelProfile | None:
    return _routed(model_name)


_ZAI_FAMILIES = ("glm-5", "glm-4.7", "glm-4.6", "glm-4.5")


def zai(model_name: str) -> ModelProfile | None:
    """Native ``glm-*`` ids of the GLM families with Chat Completions tool support."""
    if not _starts(model_name, *_ZAI_FAMILIES):
        return None
    return family_profile("zai", model_name).with_changes(json_object_output=True)
