"""Every zigai error derives from ZigAIError, pickles losslessly and is drawn in the tree."""

from __future__ import annotations

import importlib
import pickle
import pkgutil

import zigai
from zigai import errors


def _all_error_classes() -> set[type[BaseException]]:
    for info in pkgutil.walk_packages(zigai.__path__, "zigai."):
        if info.name.endswith("__main__"):
            continue
        importlib.import_module(info.name)
    seen: set[type[BaseException]] = set()
    stack: list[type[BaseException]] = [errors.ZigAIError]
    while stack:
        cls = stack.pop()
        if cls in seen:
            continue
        seen.add(cls)
        stack.extend(cls.__subclasses__())
    return {c for c in seen if c.__module__.startswith("zigai")}


def test_every_base_is_a_zigai_error() -> None:
    for name in errors.__all__:
        assert issubclass(getattr(errors, name), errors.ZigAIError)


def test_every_error_pickles_with_its_attributes() -> None:
    for cls in _all_error_classes():
        try:
            instance = cls("boom")
        except TypeError:
            continue  # errors with required keyword data are checked by their own module tests
        instance.extra_detail = 7
        clone = pickle.loads(pickle.dumps(instance))
        assert type(clone) is cls
        assert str(clone) == str(instance)
        assert clone.extra_detail == 7


def test_the_docstring_draws_every_named_error() -> None:
    tree = errors.__doc__ or ""
    missing = sorted(c.__name__ for c in _all_error_classes() if c.__name__ not in tree)
    assert not missing, f"add these to the tree in zigai/errors.py: {missing}"


def test_docs_errors_lists_every_error_of_the_tree() -> None:
    import re
    from pathlib import Path

    doc = errors.__doc__ or ""
    tree = doc[doc.index("    ZigAIError"):]
    names = set(re.findall(r"\b[A-Z][A-Za-z0-9]+\b", tree))
    page = (Path(__file__).resolve().parent.parent / "docs" / "errors.md").read_text("utf-8")
    missing = sorted(name for name in names if f"`{name}`" not in page)
    assert len(names) > 300  # the whole tree was read
    assert not missing, f"add these to docs/errors.md ('Every named error'): {missing}"
