"""The built-in catalog: :func:`builtin_capabilities` and the :class:`BuiltinCatalog` it returns.

Invariants:

* only a capability whose backend is given is in the catalog; an absent one is absent (an
  agent spec naming it fails its dry run with :class:`~zigai.agent_spec.UnresolvedReference`),
  and :meth:`BuiltinCatalog.absence` says which backend it needs;
* a backend that lacks a method its interface requires is refused here, at composition
  (:class:`~zigai.capability.InvalidCapability`), not when the model first calls a tool;
* names are stable: ``browser``, ``image``, ``skill``, ``repository`` (:data:`BUILTIN_NAMES`).
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping

from zigai.capabilities_builtin.backends import BrowserBackend, ImageBackend, SkillBackend
from zigai.capabilities_builtin.bounds import BuiltinLimits
from zigai.capabilities_builtin.browser import browser_capability
from zigai.capabilities_builtin.image import image_capability
from zigai.capabilities_builtin.repository import repository_capability
from zigai.capabilities_builtin.skills import skill_capability
from zigai.capability import Capability, InvalidCapability
from zigai.environments import RootedDirectory
from zigai.security import UrlPolicy

__all__ = ["BUILTIN_NAMES", "BuiltinCatalog", "builtin_capabilities"]

BUILTIN_NAMES: tuple[str, ...] = ("browser", "image", "skill", "repository")

_NEEDS = {
    "browser": "a browser backend (builtin_capabilities(browser=HttpBrowser(policy)) or any object "
               "with fetch(url, *, max_bytes, deadline, cancellation))",
    "image": "an image backend (builtin_capabilities(image=...): an object with generate(prompt, *, size) "
             "and describe(url, *, question))",
    "skill": "a skill store (builtin_capabilities(skills=DirectorySkills(RootedDirectory.open(path))))",
    "repository": "a repository root (builtin_capabilities(repository=RootedDirectory.open(path)))",
}


class BuiltinCatalog(Mapping[str, Capability]):
    """A read-only ``{name: Capability}`` mapping of the built-ins that have a backend."""

    __slots__ = ("_capabilities",)

    def __init__(self, capabilities: Mapping[str, Capability]) -> None:
        self._capabilities = dict(capabilities)

    def __getitem__(self, name: str) -> Capability:
        return self._capabilities[name]

    def __iter__(self) -> Iterator[str]:
        return iter(self._capabilities)

    def __len__(self) -> int:
        return len(self._capabilities)

    def absence(self, name: str) -> str | None:
        """Why a built-in ``name`` is not here (the backend it needs); None when present or unknown."""
        if name in self._capabilities or name not in _NEEDS:
            return None
        return f"the built-in capability {name!r} needs {_NEEDS[name]}"

    def __repr__(self) -> str:
        return f"BuiltinCatalog({sorted(self._capabilities)})"


def _require(backend: object, what: str, methods: tuple[str, ...]) -> None:
    missing = [name for name in methods if not callable(getattr(backend, name, None))]
    if missing:
        raise InvalidCapability(f"the {what} backend {type(backend).__name__} has no "
                                f"{', '.join(missing)} method")


def builtin_capabilities(
    *,
    browser: BrowserBackend | None = None,
    image: ImageBackend | None = None,
    skills: SkillBackend | None = None,
    repository: RootedDirectory | None = None,
    url_policy: UrlPolicy | None = None,
    limits: BuiltinLimits | None = None,
) -> BuiltinCatalog:
    """The built-in capabilities whose backends are given, each bounded by ``limits``.

    ``url_policy`` (default: :class:`~zigai.security.UrlPolicy`, public HTTPS only) checks the
    URLs of ``browser`` and ``image``.  Backends and the root are borrowed: close them after
    the agents using the catalog are done.
    """
    bounds = limits if limits is not None else BuiltinLimits()
    if not isinstance(bounds, BuiltinLimits):
        raise InvalidCapability("builtin_capabilities limits must be a BuiltinLimits")
    policy = url_policy if url_policy is not None else UrlPolicy()
    if not isinstance(policy, UrlPolicy):
        raise InvalidCapability("builtin_capabilities url_policy must be a zigai.security.UrlPolicy")
    found: dict[str, Capability] = {}
    if browser is not None:
        _require(browser, "browser", ("fetch",))
        found["browser"] = browser_capability(browser, policy, bounds)
    if image is not None:
        _require(image, "image", ("generate", "describe"))
        found["image"] = image_capability(image, policy, bounds)
    if skills is not None:
        _require(skills, "skill", ("list_skills", "load_skill", "read_skill_file"))
        found["skill"] = skill_capability(skills, bounds)
    if repository is not None:
        if not isinstance(repository, RootedDirectory):
            raise InvalidCapability("the repository backend must be a zigai.environments.RootedDirectory")
        found["repository"] = repository_capability(repository, bounds)
    return BuiltinCatalog(found)
