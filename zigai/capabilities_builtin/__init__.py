"""zigai.capabilities_builtin: the reviewed catalog of built-in capabilities (layer 6).

Job
    Turn small, structural backends into ordinary :class:`~zigai.capability.Capability`
    bundles of local tools: ``browser`` (pages through a :class:`~zigai.security.UrlPolicy`),
    ``image`` (generate and describe), ``skill`` (``SKILL.md`` skills from a store, by default
    a rooted directory) and ``repository`` (list, read, search a
    :class:`~zigai.environments.RootedDirectory`).  Native web search/fetch stay provider tools.

Invariants
    * every tool is a plain :class:`~zigai.tool.Tool`, so argument validation, retries,
      deadlines, hooks, durable routing and usage accounting of the agent apply unchanged;
    * an absent backend means an absent capability (named at resolution, never at call time);
    * URLs are checked by the policy before any backend sees them; files are read only
      through the rooted handle; every result is bounded by :class:`BuiltinLimits` and says
      when it was cut;
    * no vendor client is imported; backends and roots are borrowed (the caller closes them).

Submodules
    ``catalog`` (:func:`builtin_capabilities`, :class:`BuiltinCatalog`), ``backends`` (the
    interfaces and their values), ``bounds`` (:class:`BuiltinLimits`), ``browser`` (with
    :class:`HttpBrowser`), ``image``, ``skills`` (with :class:`DirectorySkills`),
    ``repository``, ``_files`` (bounded rooted reads).
"""

from __future__ import annotations

from zigai.capabilities_builtin.backends import (
    BrowserBackend,
    FetchedPage,
    FileSlice,
    GeneratedImage,
    ImageBackend,
    SkillBackend,
    SkillInfo,
)
from zigai.capabilities_builtin.bounds import BuiltinLimits, bounded_list, bounded_text
from zigai.capabilities_builtin.browser import HttpBrowser, html_to_text
from zigai.capabilities_builtin.catalog import BUILTIN_NAMES, BuiltinCatalog, builtin_capabilities
from zigai.capabilities_builtin.skills import SKILL_FILE, DirectorySkills, UnknownSkill

__all__ = [
    "BUILTIN_NAMES", "BuiltinCatalog", "builtin_capabilities", "BuiltinLimits", "bounded_text",
    "bounded_list", "BrowserBackend", "FetchedPage", "FileSlice", "ImageBackend", "GeneratedImage",
    "SkillBackend", "SkillInfo", "HttpBrowser", "html_to_text", "DirectorySkills", "UnknownSkill",
    "SKILL_FILE",
]
