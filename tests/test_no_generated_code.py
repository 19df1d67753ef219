"""Auditable over clever (issue 31, #13): zigai generates no code at run time, and the history
fast paths hold no copy of a message class's rules."""

from __future__ import annotations

import ast
import inspect
from pathlib import Path

from zigai.history import decode, encode

PACKAGE = Path(__file__).resolve().parent.parent / "zigai"
GENERATORS = {"exec", "eval", "compile"}


def _generator_calls(path: Path) -> list[str]:
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Call):
            target = node.func
            name = target.id if isinstance(target, ast.Name) else None
            if isinstance(target, ast.Attribute) and isinstance(target.value, ast.Name) \
                    and target.value.id == "builtins":
                name = target.attr
            if name in GENERATORS:
                found.append(f"{path.relative_to(PACKAGE.parent)}:{node.lineno}: {name}()")
    return found


def test_no_module_calls_exec_eval_or_compile() -> None:
    found = [hit for path in sorted(PACKAGE.rglob("*.py")) for hit in _generator_calls(path)]
    assert found == []


def test_the_history_fast_paths_restate_no_message_rule() -> None:
    # the decoder's fast records call each class's own __post_init__; no skip table remains
    assert not hasattr(decode, "_EXACT_SHAPES")
    source = inspect.getsource(decode._fast_record)
    assert "post_init(made)" in source and "exec" not in source
    assert "exec" not in inspect.getsource(encode._dataclass_emitter)


def test_the_closure_emitters_match_the_json_encoder_for_any_field_count() -> None:
    import json
    from dataclasses import dataclass

    @dataclass
    class Empty:
        pass

    @dataclass
    class One:
        text: str | None

    @dataclass
    class Three:
        z: int
        a: str
        m: tuple[int, ...]

    for value in (Empty(), One("é\n"), One(None), Three(1, "x", (1, 2))):
        plain = {name: getattr(value, name) for name in value.__dataclass_fields__}
        expected = json.dumps(plain, sort_keys=True, ensure_ascii=False, separators=(",", ":"))
        assert encode._dataclass_emitter(type(value))(value) == expected
        assert encode._fields_getter(tuple(plain))(value) == plain
