"""The ``skill`` capability and :class:`DirectorySkills`, its default backend over a rooted directory.

A skill directory holds one subdirectory per skill; each has a ``SKILL.md`` whose YAML front
matter (between ``---`` lines) gives ``name`` and ``description``, followed by the skill's
instructions in Markdown.  Other files of the subdirectory (references, templates) are read
on request.

Invariants:

* the model first sees only names and descriptions (``skill_list``); instructions enter the
  conversation when it loads one (``skill_load``), files when it reads one (``skill_read_file``);
* every read goes through the borrowed :class:`~zigai.environments.RootedDirectory`; a skill
  name is one directory entry (no ``/``), so a name cannot reach outside the skill directory;
* at most ``max_skills`` skills are listed, descriptions are cut at ``max_description_chars``,
  instructions at ``max_skill_chars``, files at ``max_file_bytes`` (in parts through ``offset``);
* a malformed ``SKILL.md`` is listed with the reason instead of being dropped silently.
"""

from __future__ import annotations

import re
from typing import Any

from zigai._strict_yaml import bounded_loader
from zigai.capabilities_builtin._files import PATH_ERRORS, read_slice, slice_text
from zigai.capabilities_builtin.backends import FileSlice, SkillBackend, SkillInfo
from zigai.capabilities_builtin.bounds import BuiltinLimits, bounded_list, bounded_text
from zigai.capability import Capability
from zigai.environments import RootedDirectory
from zigai.reflect import tool
from zigai.tool import ModelRetry

__all__ = ["DirectorySkills", "UnknownSkill", "skill_capability"]

SKILL_FILE = "SKILL.md"
_READ_ERRORS: tuple[type[BaseException], ...] = (LookupError, *PATH_ERRORS)
_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.-]{0,63}")


class UnknownSkill(LookupError):
    """A backend has no skill of that name (the capability turns it into a model retry)."""


class DirectorySkills:
    """Skills stored as ``<name>/SKILL.md`` beneath ``root`` (borrowed: the caller closes it)."""

    def __init__(self, root: RootedDirectory, *, max_file_bytes: int = 256 * 1024,
                 max_skills: int = 256) -> None:
        if not isinstance(root, RootedDirectory):
            raise TypeError("DirectorySkills needs a zigai.environments.RootedDirectory")
        self.root = root
        self.max_file_bytes = max_file_bytes
        self.max_skills = max_skills

    def list_skills(self) -> list[SkillInfo]:
        """Every skill, sorted by name; past ``max_skills`` the SKILL.md files are not read."""
        skills: list[SkillInfo] = []
        for name, kind in self.root.list_dir():
            if kind != "directory" or not _NAME.fullmatch(name) or not self.root.exists(f"{name}/{SKILL_FILE}"):
                continue
            if len(skills) >= self.max_skills:
                skills.append(SkillInfo(name, ""))
                continue
            try:
                meta, _ = self._parse(name)
            except ValueError as exc:
                skills.append(SkillInfo(name, f"[invalid {SKILL_FILE}: {exc}]"))
                continue
            skills.append(SkillInfo(name, str(meta.get("description", ""))))
        return skills

    def load_skill(self, name: str) -> str:
        try:
            _, body = self._parse(name)
        except ValueError as exc:
            raise ModelRetry(f"skill {name!r} has an invalid {SKILL_FILE}: {exc}") from None
        return body

    def read_skill_file(self, name: str, path: str, *, offset: int, max_bytes: int) -> FileSlice:
        self._directory(name)
        return read_slice(self.root, f"{name}/{path}", offset=offset, max_bytes=max_bytes)

    def _directory(self, name: str) -> None:
        if not _NAME.fullmatch(name) or not self.root.exists(f"{name}/{SKILL_FILE}"):
            raise UnknownSkill(name)

    def _parse(self, name: str) -> tuple[dict[str, Any], str]:
        import yaml

        self._directory(name)
        part = read_slice(self.root, f"{name}/{SKILL_FILE}", offset=0, max_bytes=self.max_file_bytes)
        if part.size > self.max_file_bytes:
            raise ValueError(f"it is larger than {self.max_file_bytes} bytes")
        try:
            text = part.data.decode("utf-8")
        except UnicodeDecodeError:
            raise ValueError("it is not UTF-8 text") from None
        lines = text.splitlines(keepends=True)
        if not lines or lines[0].strip() != "---":
            return {}, text
        for index in range(1, len(lines)):
            if lines[index].strip() == "---":
                try:
                    meta = yaml.load("".join(lines[1:index]), Loader=bounded_loader()) or {}  # noqa: S506
                except yaml.YAMLError as exc:
                    raise ValueError(f"its front matter is not YAML ({exc.__class__.__name__})") from None
                if not isinstance(meta, dict):
                    raise ValueError("its front matter is not a mapping")
                return meta, "".join(lines[index + 1:]).lstrip("\n")
        raise ValueError("its front matter has no closing '---' line")


def skill_capability(backend: SkillBackend, limits: BuiltinLimits) -> Capability:
    """The ``skill`` bundle over ``backend`` (borrowed)."""

    def known(name: str) -> None:
        if name not in {skill.name for skill in backend.list_skills()}:
            raise ModelRetry(f"no skill named {name!r}; call skill_list to see the skills")

    def skill_list() -> list[str]:
        """The skills you can load, one 'name: when to use it' line each."""
        lines = [f"{skill.name}: {bounded_text(skill.description, limits.max_description_chars)}"
                 for skill in backend.list_skills()]
        return bounded_list(lines, limits.max_skills, "skills")

    def skill_load(name: str) -> str:
        """Load one skill's instructions by name; follow them for the task at hand."""
        known(name)
        return bounded_text(backend.load_skill(name), limits.max_skill_chars)

    def skill_read_file(name: str, path: str, offset: int = 0) -> str:
        """Read a file a skill's instructions refer to (a path relative to the skill's directory)."""
        known(name)
        if offset < 0:
            raise ModelRetry("offset must be >= 0")
        try:
            part = backend.read_skill_file(name, path, offset=offset, max_bytes=limits.max_file_bytes)
        except _READ_ERRORS as exc:
            raise ModelRetry(f"cannot read {path!r} of skill {name!r}: {exc}") from None
        return slice_text(path, part)

    return Capability(
        id="skill",
        description="Reusable skills: instructions for particular tasks, loaded when needed.",
        tools=(tool("skill_list", None, skill_list), tool("skill_load", None, skill_load),
               tool("skill_read_file", None, skill_read_file)),
        instructions="Before a task a skill may cover, call skill_list; load a fitting skill with "
                     "skill_load and follow it.",
    )
