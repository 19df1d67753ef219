"""Model strings: ``infer_model("openai:gpt-5-mini")`` builds a provider/client pair from a name.

A model string is ``"<provider>:<model name>"`` (split at the first colon, so Ollama tags such
as ``"ollama:llama3.2:latest"`` keep theirs) or the bare word ``"test"`` for the deterministic
:class:`zigai.testing.TestModel`.  :data:`PROVIDERS` lists every accepted prefix with the
conventional environment variables it reads.  The credential comes from the first variable
that is set and non-empty; when none is, :class:`MissingCredentials` names the variable to set.
An application may point one provider at a differently named variable with ``api_key_env``.

Layering (tests/test_layers.py): this module belongs to layer 3, yet it builds provider
adapters (layer 5) and the testing model (layer 4).  It never imports them at module level:
each builder calls :func:`importlib.import_module` for exactly the adapter it needs, inside the
function.  So ``import zigai.models`` imports no adapter and no third-party package, and no
static import points up the layer list; the dependency is a run-time choice made by the
caller's string, like a plugin lookup.

Invariants:

* the returned value implements :class:`zigai.model.Model` and owns its provider (keep it
  alive while runs use it); constructing it performs no network I/O;
* no error message contains a credential value — only variable names;
* unknown prefixes fail with :class:`UnknownModelProvider` listing the known ones;
* a base-URL variable (``OPENAI_BASE_URL``, ``ANTHROPIC_BASE_URL``,
  ``OPENAI_COMPATIBLE_BASE_URL``) that points at a loopback host (``localhost``, ``127.0.0.0/8``,
  ``::1``) gets the loopback-only local policy (plain HTTP to exactly that host), like Ollama,
  and then needs no credential; any other base URL keeps the default public-HTTPS policy.
"""

from __future__ import annotations

import importlib
import os
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from zigai.errors import ModelError
from zigai.security import local_policy_for
from zigai.security import loopback_host as _loopback_host

__all__ = [
    "PROVIDERS",
    "ProviderSpec",
    "ModelString",
    "InvalidModelString",
    "UnknownModelProvider",
    "MissingCredentials",
    "parse_model_string",
    "infer_model",
    "credential_variables",
]


class InvalidModelString(ModelError):
    """A model string is not ``"<provider>:<model>"`` or ``"test"``."""


class UnknownModelProvider(InvalidModelString):
    """The provider prefix of a model string is not one zigai implements.

    ``provider`` is the prefix that was given.
    """

    def __init__(self, message: str, *, provider: str = "") -> None:
        super().__init__(message)
        self.provider = provider


class MissingCredentials(ModelError):
    """A provider needs a credential (or setting) from the environment and none is set.

    ``provider`` is the provider prefix and ``variables`` the environment variable names
    that were looked up, in order; the message names them, never a value.
    """

    def __init__(self, message: str, *, provider: str = "", variables: tuple[str, ...] = ()) -> None:
        super().__init__(message)
        self.provider = provider
        self.variables = tuple(variables)


@dataclass(frozen=True, slots=True)
class ModelString:
    """A parsed model string: the canonical provider prefix and the provider's model name."""

    provider: str
    model_name: str


@dataclass(frozen=True, slots=True)
class ProviderSpec:
    """One model-string prefix: the credential variables it reads and how it is built.

    ``credentials`` are tried in order (empty for providers without a credential);
    ``settings`` documents the further variables the builder reads (required ones raise
    :class:`MissingCredentials` when absent); ``module`` is the ``zigai.providers`` submodule
    the builder imports (the prefix itself unless one module serves several routes).
    """

    name: str
    credentials: tuple[str, ...]
    build: Callable[[str, str | None, Mapping[str, str], Any], Any]
    settings: tuple[str, ...] = ()
    module: str = ""
    #: The base-URL variable whose loopback value makes the credential optional.
    local_base_url: str = ""

    def __post_init__(self) -> None:
        if not self.module:
            object.__setattr__(self, "module", self.name)


#: Placeholder credential for a local server that ignores authentication.
LOCAL_CREDENTIAL = "local-server-no-key"


def _endpoint(env: Mapping[str, str], variable: str) -> dict[str, Any]:
    """``base_url`` (and the local policy for a loopback URL) from ``variable`` when set."""
    url = env.get(variable)
    if not url:
        return {}
    options: dict[str, Any] = {"base_url": url}
    policy = local_policy_for(url)
    if policy is not None:
        options["url_policy"] = policy
    return options


def _module(name: str) -> Any:
    return importlib.import_module(f"zigai.providers.{name}")


def _transport_kwargs(transport: Any) -> dict[str, Any]:
    return {} if transport is None else {"transport": transport}


def _require(env: Mapping[str, str], provider: str, *names: str) -> str:
    for name in names:
        value = env.get(name)
        if value:
            return value
    raise MissingCredentials(
        f"model provider {provider!r} needs the environment variable {' or '.join(names)}",
        provider=provider, variables=names,
    )


# -- builders (each imports only its own adapter) -----------------------------------------------


def _openai(model: str, key: str | None, env: Mapping[str, str], transport: Any) -> Any:
    mod = _module("openai")
    options = {**_transport_kwargs(transport), **_endpoint(env, "OPENAI_BASE_URL")}
    return mod.Client(model, mod.Provider(key or LOCAL_CREDENTIAL, **options))


def _anthropic(model: str, key: str | None, env: Mapping[str, str], transport: Any) -> Any:
    mod = _module("anthropic")
    options = _endpoint(env, "ANTHROPIC_BASE_URL")
    return mod.Client(model, mod.Provider(key or LOCAL_CREDENTIAL, transport, **options))


def _openai_compatible(model: str, key: str | None, env: Mapping[str, str], transport: Any) -> Any:
    mod = _module("openai_compatible")
    options = _endpoint(env, "OPENAI_COMPATIBLE_BASE_URL")
    if not options:
        _require(env, "openai_compatible", "OPENAI_COMPATIBLE_BASE_URL")
    key = key or env.get("OPENAI_COMPATIBLE_API_KEY") or None
    if key is None:
        options["auth"] = _module("http").AuthStyle("none")
    return mod.Client(model, mod.Provider(key, transport, **options))


def _google(model: str, key: str | None, env: Mapping[str, str], transport: Any) -> Any:
    mod = _module("google")
    return mod.Client(model, mod.Provider(key, **_transport_kwargs(transport)))


def _vertex_ai(model: str, key: str | None, env: Mapping[str, str], transport: Any) -> Any:
    mod = _module("vertex_ai")
    project = _require(env, "vertex_ai", "GOOGLE_CLOUD_PROJECT")
    options = _transport_kwargs(transport)
    location = env.get("GOOGLE_CLOUD_LOCATION")
    if location and location != "global":
        options["location"] = location
        options["base_url"] = mod.regional_api_base(location)
    return mod.Client(model, mod.Provider(key, project=project, **options))


def _named(module_name: str) -> Callable[[str, str | None, Mapping[str, str], Any], Any]:
    def build(model: str, key: str | None, env: Mapping[str, str], transport: Any) -> Any:
        mod = _module(module_name)
        return mod.Client(model, mod.Provider(key, transport))

    return build


def _ollama(model: str, key: str | None, env: Mapping[str, str], transport: Any) -> Any:
    mod = _module("ollama")
    options: dict[str, Any] = {"url_policy": mod.local_request_policy}
    if env.get("OLLAMA_BASE_URL"):
        options["base_url"] = env["OLLAMA_BASE_URL"]
    return mod.Client(model, mod.Provider(transport, **options))


def _azure_openai(model: str, key: str | None, env: Mapping[str, str], transport: Any) -> Any:
    mod = _module("azure_openai")
    if env.get("AZURE_OPENAI_ENDPOINT"):
        where = {"base_url": env["AZURE_OPENAI_ENDPOINT"]}
    else:
        where = {"resource": _require(env, "azure_openai", "AZURE_OPENAI_RESOURCE",
                                      "AZURE_OPENAI_ENDPOINT")}
    return mod.Client(model, mod.Provider(key, transport, **where))


def _bedrock(model: str, key: str | None, env: Mapping[str, str], transport: Any) -> Any:
    mod = _module("bedrock")
    region = _require(env, "bedrock", "AWS_REGION", "AWS_DEFAULT_REGION")
    return mod.MantleClient(model, mod.MantleProvider(key, transport, region=region))


#: The variables the AWS credential chain reads when ``bedrock_converse`` signs with SigV4
#: (listed so allowlisted environments, such as agent specs', pass them to the builder).
AWS_CHAIN_VARIABLES = (
    "AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY", "AWS_SESSION_TOKEN", "AWS_PROFILE",
    "AWS_DEFAULT_PROFILE", "AWS_CONFIG_FILE", "AWS_SHARED_CREDENTIALS_FILE",
    "AWS_CONTAINER_CREDENTIALS_RELATIVE_URI", "AWS_CONTAINER_CREDENTIALS_FULL_URI",
    "AWS_CONTAINER_AUTHORIZATION_TOKEN", "AWS_CONTAINER_AUTHORIZATION_TOKEN_FILE",
    "AWS_EC2_METADATA_DISABLED", "AWS_EC2_METADATA_SERVICE_ENDPOINT",
    "AWS_EC2_METADATA_SERVICE_ENDPOINT_MODE", "AWS_ROLE_ARN", "AWS_WEB_IDENTITY_TOKEN_FILE",
)


def bedrock_converse_region(model: str, env: Mapping[str, str], *, api_key: bool) -> str:
    """The region a ``bedrock_converse`` model is served from: the one rule of :func:`infer_model`
    and of agent-spec validation (:mod:`zigai.agent_spec.model_strings`).

    With a Bedrock API key it is ``AWS_REGION`` or ``AWS_DEFAULT_REGION``; without one (SigV4)
    also the region of an ARN model id (first) or the active AWS profile's ``region`` (last).
    None found is :class:`MissingCredentials` naming the two variables.
    """
    if not api_key:
        mod = _module("bedrock")
        try:
            return str(mod.resolve_region(model, env=env))
        except mod.MissingAwsRegion:
            pass
    return _require(env, "bedrock_converse", "AWS_REGION", "AWS_DEFAULT_REGION")


def _bedrock_converse(model: str, key: str | None, env: Mapping[str, str], transport: Any) -> Any:
    mod = _module("bedrock")
    key = key or env.get("AWS_BEARER_TOKEN_BEDROCK") or None
    region = bedrock_converse_region(model, env, api_key=key is not None)
    if key is not None:
        return mod.Client(model, mod.Provider(key, region, transport))
    # no Bedrock API key: every request is SigV4-signed from the AWS SDK credential chain
    return mod.Client(model, mod.Provider(region=region, transport=transport, env=env))


def _azure_openai_responses(model: str, key: str | None, env: Mapping[str, str],
                            transport: Any) -> Any:
    mod = _module("azure_openai")
    if env.get("AZURE_OPENAI_ENDPOINT"):
        where = {"base_url": env["AZURE_OPENAI_ENDPOINT"]}
    else:
        where = {"resource": _require(env, "azure_openai_responses", "AZURE_OPENAI_RESOURCE",
                                      "AZURE_OPENAI_ENDPOINT")}
    return mod.ResponsesClient(model, mod.Provider(key, transport, **where))


def _native(module_name: str, provider: str, client: str
            ) -> Callable[[str, str | None, Mapping[str, str], Any], Any]:
    def build(model: str, key: str | None, env: Mapping[str, str], transport: Any) -> Any:
        mod = _module(module_name)
        return getattr(mod, client)(model, getattr(mod, provider)(key, transport))

    return build


def _xai(model: str, key: str | None, env: Mapping[str, str], transport: Any) -> Any:
    mod = _module("xai")
    return mod.Client(model, mod.Provider(key, **_transport_kwargs(transport)))


def _snowflake(model: str, key: str | None, env: Mapping[str, str], transport: Any) -> Any:
    mod = _module("snowflake")
    account = _require(env, "snowflake", "SNOWFLAKE_ACCOUNT")
    return mod.Client(model, mod.Provider(key, transport, account=account))


def _spec(name: str, credentials: tuple[str, ...], build: Any, settings: tuple[str, ...] = (),
          module: str = "", local_base_url: str = "") -> ProviderSpec:
    return ProviderSpec(name, credentials, build, settings, module, local_base_url)


#: Every accepted provider prefix (canonical names), in documentation order.
PROVIDERS: Mapping[str, ProviderSpec] = {
    spec.name: spec
    for spec in (
        _spec("openai", ("OPENAI_API_KEY",), _openai, ("OPENAI_BASE_URL",),
              local_base_url="OPENAI_BASE_URL"),
        _spec("anthropic", ("ANTHROPIC_API_KEY",), _anthropic, ("ANTHROPIC_BASE_URL",),
              local_base_url="ANTHROPIC_BASE_URL"),
        _spec("google", ("GEMINI_API_KEY", "GOOGLE_API_KEY"), _google),
        _spec("vertex_ai", ("GOOGLE_CLOUD_ACCESS_TOKEN",), _vertex_ai,
              ("GOOGLE_CLOUD_PROJECT", "GOOGLE_CLOUD_LOCATION")),
        _spec("groq", ("GROQ_API_KEY",), _named("groq")),
        _spec("together", ("TOGETHER_API_KEY",), _named("together")),
        _spec("deepseek", ("DEEPSEEK_API_KEY",), _named("deepseek")),
        _spec("mistral", ("MISTRAL_API_KEY",), _named("mistral")),
        _spec("cerebras", ("CEREBRAS_API_KEY",), _named("cerebras")),
        _spec("cohere", ("CO_API_KEY", "COHERE_API_KEY"), _named("cohere")),
        _spec("huggingface", ("HF_TOKEN",), _named("huggingface")),
        _spec("openrouter", ("OPENROUTER_API_KEY",), _named("openrouter")),
        _spec("ovhcloud", ("OVHCLOUD_API_KEY",), _named("ovhcloud")),
        _spec("crusoe", ("CRUSOE_API_KEY",), _named("crusoe")),
        _spec("doubleword", ("DOUBLEWORD_API_KEY",), _named("doubleword")),
        _spec("zai", ("ZAI_API_KEY",), _named("zai")),
        _spec("azure_openai", ("AZURE_OPENAI_API_KEY",), _azure_openai,
              ("AZURE_OPENAI_ENDPOINT", "AZURE_OPENAI_RESOURCE")),
        _spec("azure_openai_responses", ("AZURE_OPENAI_API_KEY",), _azure_openai_responses,
              ("AZURE_OPENAI_ENDPOINT", "AZURE_OPENAI_RESOURCE"), module="azure_openai"),
        _spec("bedrock", ("AWS_BEARER_TOKEN_BEDROCK",), _bedrock, ("AWS_REGION",)),
        _spec("bedrock_converse", (), _bedrock_converse,
              ("AWS_BEARER_TOKEN_BEDROCK", "AWS_REGION", "AWS_DEFAULT_REGION",
               *AWS_CHAIN_VARIABLES), module="bedrock"),
        _spec("cohere_v2", ("CO_API_KEY", "COHERE_API_KEY"),
              _native("cohere", "ChatProvider", "ChatClient"), module="cohere"),
        _spec("mistral_conversations", ("MISTRAL_API_KEY",),
              _native("mistral", "ConversationsProvider", "ConversationsClient"),
              module="mistral"),
        _spec("snowflake", ("SNOWFLAKE_PAT",), _snowflake, ("SNOWFLAKE_ACCOUNT",)),
        _spec("xai", ("XAI_API_KEY",), _xai),
        _spec("xai_chat", ("XAI_API_KEY",), _native("xai", "ChatProvider", "ChatClient"),
              module="xai"),
        _spec("ollama", (), _ollama, ("OLLAMA_BASE_URL",)),
        _spec("openai_compatible", (), _openai_compatible,
              ("OPENAI_COMPATIBLE_BASE_URL", "OPENAI_COMPATIBLE_API_KEY")),
    )
}

# Other spellings people port from (PydanticAI's prefixes); they map to canonical names.
_ALIASES: Mapping[str, str] = {
    "google-gla": "google", "gemini": "google", "google-vertex": "vertex_ai",
    "vertex-ai": "vertex_ai", "azure": "azure_openai", "zhipu": "zai", "grok": "xai",
}

MAX_MODEL_STRING = 512
"""The longest accepted model string (characters)."""


# Model-name prefixes that say which provider a bare name (no "provider:") belongs to.
_BARE_NAME_PROVIDERS = (("gpt-", "openai"), ("o1", "openai"), ("o3", "openai"), ("o4", "openai"),
                        ("claude-", "anthropic"), ("gemini-", "google"))


def _bare_name_hint(text: str, sep: str) -> str:
    """``; did you mean 'openai:gpt-5-mini'?`` for a bare name of a well-known family."""
    if sep or not text or any(c.isspace() or ord(c) < 32 for c in text):
        return ""
    for prefix, provider in _BARE_NAME_PROVIDERS:
        if text.lower().startswith(prefix):
            return f"; did you mean '{provider}:{text}'?"
    return "; put the provider first, as in 'openai_compatible:" + text + "'"


def parse_model_string(model: str) -> ModelString:
    """Split ``"<provider>:<model>"`` (or ``"test"``) and canonicalize the provider prefix."""
    if not isinstance(model, str):
        raise InvalidModelString(f"a model string must be a str, got {type(model).__name__}")
    if len(model) > MAX_MODEL_STRING:
        raise InvalidModelString(f"model strings are at most {MAX_MODEL_STRING} characters")
    text = model.strip()
    if text == "test" or text.startswith("test:"):
        return ModelString("test", text[5:])
    prefix, sep, name = text.partition(":")
    if not sep or not prefix or not name or any(c.isspace() or ord(c) < 32 for c in text):
        raise InvalidModelString(
            f"model strings look like 'openai:gpt-5-mini' or 'test', got {model!r}"
            + _bare_name_hint(text, sep)
        )
    canonical = _ALIASES.get(prefix.lower(), prefix.lower())
    if canonical not in PROVIDERS:
        known = ", ".join(["test", *PROVIDERS])
        raise UnknownModelProvider(
            f"unknown model provider {prefix!r}; known providers: {known}", provider=prefix
        )
    return ModelString(canonical, name)


def credential_variables(provider: str) -> tuple[str, ...]:
    """The environment variables ``provider`` reads its credential from, in order."""
    canonical = _ALIASES.get(provider, provider)
    if canonical == "test":
        return ()
    try:
        return PROVIDERS[canonical].credentials
    except KeyError:
        raise UnknownModelProvider(f"unknown model provider {provider!r}", provider=provider) from None


def infer_model(
    model: Any,
    *,
    env: Mapping[str, str] | None = None,
    api_key_env: str | None = None,
    transport: Any = None,
    profile: Mapping[str, Any] | None = None,
) -> Any:
    """The :class:`zigai.model.Model` a model string names; a Model value is returned unchanged.

    ``env`` defaults to ``os.environ``.  ``api_key_env`` replaces the conventional credential
    variable names with one application-chosen name.  ``transport`` replaces the provider's
    default HTTP transport (tests pass a mock).  ``profile`` overrides fields of the profile the
    client resolved (:func:`zigai.model.apply_profile_overrides`: the CLI's ``--profile``,
    a spec file's ``model.profile``), e.g. ``{"supports_tools": True}`` for a model name the
    provider's table does not know; without it the fail-closed default stays.  Raises
    :class:`InvalidModelString`, :class:`UnknownModelProvider`, :class:`MissingCredentials` or
    :class:`zigai.model.InvalidProfileOverride`.
    """
    built = _infer(model, env, api_key_env, transport)
    if profile is None:
        return built
    from zigai.model import apply_profile_overrides

    changed = apply_profile_overrides(built.profile, profile)
    if hasattr(built, "with_profile"):
        return built.with_profile(changed)
    testing = importlib.import_module("zigai.testing")
    if isinstance(built, testing.TestModel):  # "test" is the only model string without it
        return testing.TestModel(profile=changed)
    from zigai.model import InvalidProfileOverride

    raise InvalidProfileOverride(
        f"a {type(built).__name__} value takes no profile override; construct it with its profile")


def _infer(model: Any, env: Mapping[str, str] | None, api_key_env: str | None, transport: Any) -> Any:
    if not isinstance(model, str):
        if hasattr(model, "profile") and hasattr(model, "request"):
            return model
        raise InvalidModelString(f"expected a model string or a Model, got {type(model).__name__}")
    parsed = parse_model_string(model)
    environment = os.environ if env is None else env
    if parsed.provider == "test":
        testing = importlib.import_module("zigai.testing")
        return testing.TestModel()
    spec = PROVIDERS[parsed.provider]
    names = (api_key_env,) if api_key_env else spec.credentials
    key: str | None = None
    local = spec.local_base_url and _loopback_host(environment.get(spec.local_base_url, ""))
    if names and local:
        key = next((environment[n] for n in names if environment.get(n)), None)
    elif names:
        key = _require(environment, parsed.provider, *names)
    return spec.build(parsed.model_name, key, environment, transport)
