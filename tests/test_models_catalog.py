"""zigai.models.catalog: validation, exact resolution, the discovery merge and the built-in snapshot."""

from __future__ import annotations

import copy
import json
import pickle
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from support.loopback import LoopbackServer, Reply

from zigai.messages.json_value import FrozenDict
from zigai.model import ModelProfile
from zigai.models import (
    DiscoveredCatalogClosed,
    DuplicateCanonicalModel,
    InvalidCatalogEntry,
    InvalidCatalogReplacement,
    InvalidCatalogSource,
    InvalidCatalogSourceLink,
    ModelCatalog,
    ModelCatalogCollision,
    ModelCatalogEntry,
    ModelCatalogLimits,
    ModelDeprecation,
    UnsortedCatalogSource,
    builtin_model_catalog,
    merge_model_discovery,
)
from zigai.models import _catalog_data as data
from zigai.models._catalog_source import render_module, rows_from_source
from zigai.provider import OwnedProviderModels, ProviderModelDescriptor
from zigai.providers import anthropic
from zigai.security import UrlPolicy
from zigai.transport import HttpTransport

ROOT = Path(__file__).resolve().parent.parent
SOURCE = ROOT / "data" / "model_catalog.json"
GENERATED = ROOT / "zigai" / "models" / "_catalog_data.py"
GENERATOR = ROOT / "scripts" / "gen_model_catalog.py"
LINK = "https://example.com/models"


def entry(model_id: str, *aliases: str, provider: str = "openai", **options: Any) -> ModelCatalogEntry:
    return ModelCatalogEntry(provider, model_id, aliases, source_url=LINK, **options)


def source() -> dict[str, Any]:
    loaded: dict[str, Any] = json.loads(SOURCE.read_text(encoding="utf-8"))
    return loaded


# ------------------------------------------------------------------ the generated snapshot


def test_generated_module_matches_the_source_byte_for_byte() -> None:
    assert render_module(source()).encode("utf-8") == GENERATED.read_bytes(), (
        "zigai/models/_catalog_data.py is out of date: run scripts/gen_model_catalog.py")


def test_generator_check_mode_and_failures(tmp_path: Path) -> None:
    assert subprocess.run([sys.executable, str(GENERATOR), "--check"]).returncode == 0
    changed = source()
    changed["version"] = "2099.1.0"
    edited = tmp_path / "catalog.json"
    edited.write_text(json.dumps(changed), encoding="utf-8")
    stale = subprocess.run([sys.executable, str(GENERATOR), "--check", "--source", str(edited)],
                           capture_output=True, text=True)
    assert stale.returncode == 1 and "out of date" in stale.stderr
    output = tmp_path / "out.py"
    written = subprocess.run([sys.executable, str(GENERATOR), "--source", str(edited),
                              "--output", str(output)], capture_output=True)
    assert written.returncode == 0 and "'2099.1.0'" in output.read_text(encoding="utf-8")
    changed["entries"].reverse()
    edited.write_text(json.dumps(changed), encoding="utf-8")
    broken = subprocess.run([sys.executable, str(GENERATOR), "--source", str(edited),
                             "--output", str(output)], capture_output=True, text=True)
    assert broken.returncode == 2 and "UnsortedCatalogSource" in broken.stderr
    assert "'2099.1.0'" in output.read_text(encoding="utf-8")  # an invalid source writes nothing


def test_builtin_snapshot_is_versioned_sorted_and_linked() -> None:
    import zigai.models as models

    assert models.builtin_model_catalog_version == data.VERSION == source()["version"]
    assert models.builtin_model_catalog_updated_at == data.UPDATED_AT == source()["updated_at"]
    keys = [(row[0], row[1]) for row in data.ENTRIES]
    assert keys == sorted(keys)
    catalog = builtin_model_catalog()
    assert catalog is builtin_model_catalog()
    assert len(catalog) == len(data.ENTRIES)
    assert all(e.source_url is not None and e.source_url.startswith("https://") for e in catalog)
    with pytest.raises(AttributeError):
        models.no_such_name  # noqa: B018
    from zigai.models import catalog as module

    with pytest.raises(AttributeError):
        module.no_such_name  # noqa: B018


def test_importing_zigai_models_does_not_load_the_snapshot() -> None:
    code = ("import sys, zigai.models; "
            "print('zigai.models._catalog_data' in sys.modules)")
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert result.stdout.strip() == "False"


def _corpus_models(corpus: Path) -> set[tuple[str, str]]:
    sys.path.insert(0, str(ROOT / "scripts"))
    import conformance
    from support.cassettes import load_cassette

    providers = {"openai-responses": "openai", "anthropic-messages": "anthropic",
                 "gemini": "gcp.gen_ai", "azure-responses": "azure_openai",
                 "bedrock-converse": "bedrock", "mistral-conversations": "mistral",
                 "cohere-v2": "cohere"}
    found: set[tuple[str, str]] = set()
    for path in sorted((corpus / "zigai-cassettes").rglob("*.yaml")):
        first = load_cassette(path)[0]
        route = conformance.detect_route(path, first)
        if route.kind == "provider-files" or route.api_root.split("/")[2].endswith(".test"):
            continue  # file recordings name no model; *.test hosts are fixtures, not providers
        body = first.request_body.content if first.request_body is not None else {}
        model = route.model_id or (body.get("model") if isinstance(body, dict) else None)
        if route.kind == "bedrock-converse":
            model = first.uri.split("/model/", 1)[1].split("/", 1)[0]
        provider = route.named if route.kind == "chat-completions" else providers[route.kind]
        found.add((provider, model))
    return found


@pytest.mark.conformance("it checks that the built-in catalog knows every model the corpus recorded")
def test_builtin_catalog_covers_every_model_of_the_conformance_corpus(conformance_root: Path) -> None:
    catalog = builtin_model_catalog()
    models = _corpus_models(conformance_root)
    assert len(models) >= 35  # a floor: the walk must really have found the corpus
    missing = sorted(m for m in models if catalog.resolve(*m) is None)
    assert not missing, f"add these to data/model_catalog.json: {missing}"


# ------------------------------------------------------------------ source invariants


def _with(mutate: Any) -> dict[str, Any]:
    document = copy.deepcopy(source())
    mutate(document)
    return document


def _entries(document: dict[str, Any]) -> list[dict[str, Any]]:
    entries: list[dict[str, Any]] = document["entries"]
    return entries


def test_unsorted_entries_and_aliases_fail_with_their_own_error() -> None:
    with pytest.raises(UnsortedCatalogSource, match="order"):
        rows_from_source(_with(lambda d: _entries(d).reverse()))
    def aliases(d: dict[str, Any]) -> None:
        _entries(d)[0]["aliases"] = ["b", "a"]
    with pytest.raises(UnsortedCatalogSource, match="aliases"):
        rows_from_source(_with(aliases))
    def repeated(d: dict[str, Any]) -> None:
        _entries(d)[0]["aliases"] = ["a", "a"]
    with pytest.raises(UnsortedCatalogSource):
        rows_from_source(_with(repeated))


@pytest.mark.parametrize(
    "link",
    ["http://docs.example.com/models", "docs.example.com/models", "https://", "https:///x",
     "https://user:pw@example.com/", "https://exa mple.com/", 42, None, "ftp://example.com/"],
)
def test_a_bad_primary_source_link_fails_with_its_own_error(link: Any) -> None:
    def set_link(d: dict[str, Any]) -> None:
        _entries(d)[0]["source"] = link
    with pytest.raises(InvalidCatalogSourceLink):
        rows_from_source(_with(set_link))


def test_an_alias_collision_in_the_source_fails_with_its_own_error() -> None:
    def collide(d: dict[str, Any]) -> None:
        first, second = _entries(d)[0], _entries(d)[1]
        second["aliases"] = [first["id"]]
    with pytest.raises(ModelCatalogCollision) as caught:
        rows_from_source(_with(collide))
    assert caught.value.provider_name == "anthropic"


@pytest.mark.parametrize(
    "mutate",
    [
        lambda d: d.update(schema=2),
        lambda d: d.update(schema=True),
        lambda d: d.update(version="has space"),
        lambda d: d.update(updated_at="2026-13-01"),
        lambda d: d.update(updated_at="2026-1-1"),
        lambda d: d.update(updated_at="20261202"),
        lambda d: d.update(updated_at=5),
        lambda d: d.update(entries=[]),
        lambda d: d.update(extra=1),
        lambda d: d.pop("version"),
        lambda d: d["entries"][0].update(surprise=True),
        lambda d: d["entries"][0].pop("source"),
        lambda d: d["entries"][0].update(provider=7),
        lambda d: d["entries"][0].update(aliases="one"),
        lambda d: d["entries"][0].update(limits={"tokens": 5}),
        lambda d: d["entries"][0].update(deprecation={"when": "soon"}),
        lambda d: d["entries"][0].update(profile={"supports_tools": True}),
        lambda d: d.update(entries="none"),
    ],
)
def test_malformed_sources_fail_with_invalid_catalog_source(mutate: Any) -> None:
    with pytest.raises(InvalidCatalogSource):
        rows_from_source(_with(mutate))
    with pytest.raises(InvalidCatalogSource):
        rows_from_source([])


def _profile_source(**changes: Any) -> dict[str, Any]:
    profile: dict[str, Any] = {
        "supports_tools": True, "supports_parallel_tool_calls": True,
        "supports_system_messages": True, "json_object_output": False,
        "json_schema_output": True, "supports_thinking": False,
        "provider_managed_tools": ["web_search"], "content_kinds": ["image", "text"],
        "reasoning_efforts": ["high", "low"], "service_tiers": [],
        "settings": ["max_tokens", "temperature"],
    }
    profile.update(changes)
    return profile


def test_profiles_in_the_source_are_checked_against_their_enum_sets() -> None:
    def with_profile(**changes: Any) -> dict[str, Any]:
        return _with(lambda d: _entries(d)[0].update(profile=_profile_source(**changes)))

    _, _, rows = rows_from_source(with_profile(idempotency_header="Idempotency-Key"))
    text = render_module(with_profile())
    assert "('content_kinds', ('image', 'text'))" in text
    from zigai.models.catalog import entries_from_rows

    trusted = entries_from_rows(rows[:1])[0].profile
    assert trusted == ModelProfile(
        json_schema_output=True, provider_managed_tools=frozenset({"web_search"}),
        content_kinds=frozenset({"image", "text"}), reasoning_efforts=frozenset({"low", "high"}),
        settings=frozenset({"max_tokens", "temperature"}), idempotency_header="Idempotency-Key",
    )
    for bad in ({"content_kinds": ["hologram"]}, {"provider_managed_tools": ["teleport"]},
                {"settings": ["warp_speed"]}, {"reasoning_efforts": ["Very High"]},
                {"supports_tools": "yes"}, {"idempotency_header": ""},
                {"settings": "max_tokens"}):
        with pytest.raises(InvalidCatalogSource):
            rows_from_source(with_profile(**bad))
    with pytest.raises(UnsortedCatalogSource):
        rows_from_source(with_profile(content_kinds=["text", "image"]))


def test_source_limits_and_deprecations_use_the_catalog_checks() -> None:
    def deprecate(d: dict[str, Any]) -> None:
        _entries(d)[0]["deprecation"] = {"deprecated_on": "2026-01-01", "shutdown_on": "2026-06-01",
                                         "replacement": _entries(d)[1]["id"]}
    _, _, rows = rows_from_source(_with(deprecate))
    assert rows[0][5:8] == ("2026-01-01", "2026-06-01", source()["entries"][1]["id"])
    def huge_output(d: dict[str, Any]) -> None:
        _entries(d)[0]["limits"] = {"context_window_tokens": 10, "max_output_tokens": 11}
    with pytest.raises(InvalidCatalogEntry):
        rows_from_source(_with(huge_output))
    def dangling(d: dict[str, Any]) -> None:
        _entries(d)[0]["deprecation"] = {"replacement": "no-such-model"}
    with pytest.raises(InvalidCatalogReplacement):
        rows_from_source(_with(dangling))


# ------------------------------------------------------------------ ModelCatalog


def test_resolution_is_exact_case_sensitive_and_provider_scoped() -> None:
    catalog = ModelCatalog([entry("gpt-5-mini-2025-08-07", "gpt-5-mini"), entry("gpt-4o")])
    resolved = catalog.resolve("openai", "gpt-5-mini")
    assert resolved is not None
    assert (resolved.canonical_id, resolved.was_alias, resolved.replacement()) == (
        "gpt-5-mini-2025-08-07", True, None)
    direct = catalog.resolve("openai", "gpt-4o")
    assert direct is not None and not direct.was_alias
    for provider, name in (("openai", "GPT-4O"), ("openai", "gpt-4o "), ("openai", "gpt-4"),
                           ("openai", "gpt-4o-2024"), ("azure_openai", "gpt-4o")):
        assert catalog.resolve(provider, name) is None
    assert catalog.providers() == ("openai",) and len(list(catalog)) == 2
    assert "2 entries" in repr(catalog)


def test_the_same_name_may_exist_under_two_providers() -> None:
    catalog = ModelCatalog([entry("gpt-4o"), entry("gpt-4o", provider="azure_openai")])
    assert {e.provider_name for e in catalog.entries} == {"openai", "azure_openai"}


def test_application_entries_need_no_source_link() -> None:
    resolved = ModelCatalog([ModelCatalogEntry("custom", "in-house-7b")]).resolve("custom", "in-house-7b")
    assert resolved is not None and resolved.entry.source_url is None


@pytest.mark.parametrize(
    "entries",
    [
        [entry("a"), entry("a")],
        [entry("a", "b"), entry("b")],
        [entry("a", "x"), entry("b", "x")],
        [entry("a", "a")],
    ],
)
def test_ambiguous_catalogs_fail_at_construction(entries: list[ModelCatalogEntry]) -> None:
    with pytest.raises(ModelCatalogCollision):
        ModelCatalog(entries)


def test_replacements_are_followed_and_validated() -> None:
    old = entry("gpt-4o", deprecation=ModelDeprecation("2026-01-01", "2026-07-01", "gpt-5"))
    new = entry("gpt-5", "gpt-5-latest")
    resolved = ModelCatalog([old, new]).resolve("openai", "gpt-4o")
    assert resolved is not None and resolved.replacement() == new
    assert resolved.entry.deprecation is not None
    for bad in (
        [entry("a", deprecation=ModelDeprecation(replacement="missing"))],
        [entry("a", deprecation=ModelDeprecation(replacement="a"))],
        [entry("a", deprecation=ModelDeprecation(replacement="b-alias")), entry("b", "b-alias")],
        [entry("a", deprecation=ModelDeprecation(replacement="b")), entry("b", provider="azure_openai")],
        [entry("a", deprecation=ModelDeprecation(replacement="b")),
         entry("b", deprecation=ModelDeprecation(replacement="c")),
         entry("c", deprecation=ModelDeprecation(replacement="a"))],
    ):
        with pytest.raises(InvalidCatalogReplacement):
            ModelCatalog(bad)


@pytest.mark.parametrize(
    "build",
    [
        lambda: ModelCatalogEntry("OpenAI", "m"),
        lambda: ModelCatalogEntry("openai", "has space"),
        lambda: ModelCatalogEntry("openai", ""),
        lambda: ModelCatalogEntry("openai", "m", "alias"),  # type: ignore[arg-type]
        lambda: ModelCatalogEntry("openai", "m", ("ok", "not ok")),
        lambda: ModelCatalogEntry("openai", "m", limits={"context_window_tokens": 1}),  # type: ignore[arg-type]
        lambda: ModelCatalogLimits(context_window_tokens=0),
        lambda: ModelCatalogLimits(max_output_tokens=True),
        lambda: ModelCatalogLimits(10, 11),
        lambda: ModelDeprecation(deprecated_on="2026-02-30"),
        lambda: ModelDeprecation(deprecated_on="March 2026"),
        lambda: ModelDeprecation("2026-06-01", "2026-01-01"),
        lambda: ModelDeprecation(replacement="with space"),
        lambda: ModelCatalog("openai"),  # type: ignore[arg-type]
        lambda: ModelCatalog([object()]),  # type: ignore[list-item]
    ],
)
def test_invalid_entries_fail_with_invalid_catalog_entry(build: Any) -> None:
    with pytest.raises(InvalidCatalogEntry):
        build()


def test_an_entry_with_an_insecure_link_fails_at_construction() -> None:
    with pytest.raises(InvalidCatalogSourceLink):
        ModelCatalogEntry("openai", "m", source_url="http://platform.openai.com/docs/models")


def test_catalog_errors_pickle_with_their_fields() -> None:
    collision = pickle.loads(pickle.dumps(ModelCatalogCollision("x", provider_name="p", model_id="m")))
    assert (collision.provider_name, collision.model_id) == ("p", "m")
    duplicate = pickle.loads(pickle.dumps(DuplicateCanonicalModel("x", canonical_id="c")))
    assert duplicate.canonical_id == "c"


# ------------------------------------------------------------------ discovery merge


TRUSTED = ModelProfile(supports_tools=True, json_schema_output=True)


def descriptor(model_id: str, provider: str = "openai", **metadata: Any) -> ProviderModelDescriptor:
    return ProviderModelDescriptor(provider, model_id, model_id, None,
                                   FrozenDict({"id": model_id, **metadata}))


def test_merge_keeps_trusted_and_untrusted_data_apart() -> None:
    catalog = ModelCatalog([
        entry("gpt-5-mini-2025-08-07", "gpt-5-mini", profile=TRUSTED,
              limits=ModelCatalogLimits(400_000, 128_000)),
        entry("gpt-4o", deprecation=ModelDeprecation("2026-01-01")),
    ])
    listed = OwnedProviderModels("openai", [
        descriptor("gpt-5-mini", supports_thinking=True, context_window=9_999_999),
        descriptor("gpt-4o"),
        descriptor("brand-new-model", supports_tools=True, json_schema_output=True),
    ], pages=1)
    with merge_model_discovery(catalog, listed) as merged:
        assert [i.canonical_id for i in merged] == ["gpt-5-mini-2025-08-07", "gpt-4o", "brand-new-model"]
        mini = merged.get("gpt-5-mini-2025-08-07")
        assert mini is not None and mini.was_alias and mini.known
        assert mini.trusted_profile() == TRUSTED
        assert mini.limits() == ModelCatalogLimits(400_000, 128_000)
        assert mini.descriptor.metadata["context_window"] == 9_999_999  # raw, never promoted
        unknown = merged.get("brand-new-model")
        assert unknown is not None and not unknown.known
        assert (unknown.trusted_profile(), unknown.limits(), unknown.deprecation()) == (None, None, None)
        assert unknown.descriptor.metadata["supports_tools"] is True
        gpt4o = merged.get("gpt-4o")
        assert gpt4o is not None and gpt4o.deprecation() == ModelDeprecation("2026-01-01")
        assert [i.canonical_id for i in merged.known()] == ["gpt-5-mini-2025-08-07", "gpt-4o"]
        assert [i.canonical_id for i in merged.unknown()] == ["brand-new-model"]
        assert len(merged) == 3 and merged.provider_name == "openai" and "3 models" in repr(merged)
    assert repr(merged) == "OwnedDiscoveredCatalog(closed)"
    for use in (lambda: merged.items, lambda: merged.get("gpt-4o"), lambda: len(merged),
                merged.known, merged.unknown, lambda: list(merged), lambda: merged.provider_name):
        with pytest.raises(DiscoveredCatalogClosed):
            use()


def test_an_alias_and_its_canonical_id_in_one_listing_fail_instead_of_collapsing() -> None:
    catalog = ModelCatalog([entry("gpt-5-mini-2025-08-07", "gpt-5-mini")])
    listed = OwnedProviderModels("openai", [descriptor("gpt-5-mini-2025-08-07"),
                                            descriptor("gpt-5-mini")], pages=1)
    with pytest.raises(DuplicateCanonicalModel) as caught:
        merge_model_discovery(catalog, listed)
    assert caught.value.canonical_id == "gpt-5-mini-2025-08-07"


def test_merge_is_scoped_to_the_discovering_provider() -> None:
    catalog = ModelCatalog([entry("gpt-4o", profile=TRUSTED)])
    listed = OwnedProviderModels("azure_openai", [descriptor("gpt-4o", provider="azure_openai")], 1)
    with merge_model_discovery(catalog, listed) as merged:
        assert merged.items[0].trusted_profile() is None
    with pytest.raises(TypeError):
        merge_model_discovery(catalog, [descriptor("gpt-4o")])  # type: ignore[arg-type]
    with pytest.raises(TypeError):
        merge_model_discovery([], listed)  # type: ignore[arg-type]


def test_live_anthropic_discovery_joins_the_builtin_catalog() -> None:
    page = {"data": [{"type": "model", "id": i, "display_name": i} for i in
                     ("claude-sonnet-4-5-20250929", "claude-haiku-4-5", "claude-next-9")],
            "has_more": False, "last_id": "claude-next-9"}
    policy = UrlPolicy.local_development()
    with LoopbackServer(lambda r: Reply.of_json(page)) as server, HttpTransport(url_policy=policy) as t:
        provider = anthropic.Provider("k", t, url_policy=policy, base_url=f"{server.url}/v1")
        with provider.list_models() as listed, merge_model_discovery(
            builtin_model_catalog(), listed
        ) as merged:
            assert [(i.canonical_id, i.known) for i in merged] == [
                ("claude-sonnet-4-5-20250929", True), ("claude-haiku-4-5-20251001", True),
                ("claude-next-9", False),
            ]
            haiku = merged.get("claude-haiku-4-5-20251001")
            assert haiku is not None and haiku.limits() == ModelCatalogLimits(200_000, 64_000)
