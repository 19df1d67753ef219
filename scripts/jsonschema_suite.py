#!/usr/bin/env python3
"""Run the official JSON-Schema-Test-Suite (draft2020-12, top-level files) against zigai.

Usage: ``scripts/jsonschema_suite.py [DIR]``.  DIR defaults to
``$ZIGAI_CONFORMANCE_DIR/json-schema-test-suite/draft2020-12`` (``ZIGAI_CONFORMANCE_DIR``
defaults to ``../shared/conformance`` next to the checkout).

Per test group: if ``validate_schema`` accepts the schema, every test's ``valid`` must equal
``Validator.is_valid``.  If preflight raises ``UnsupportedJsonSchema`` the group passes
(fail closed) -- but only when this script's own, independent reading of the spec finds
genuinely unsupported vocabulary in the schema AND the file is listed below.  A rejection of
a schema that uses only supported vocabulary is a failure, so the rejection path cannot hide
bugs.  ``InvalidJsonSchema`` on a suite schema is always a failure.

Files with groups expected to be rejected, and why (spec: api.txt "Local JSON Schema
dialect" -- anything not in its supported list is rejected rather than ignored):

* additionalProperties.json  -- some groups combine with patternProperties (regex)
* anchor.json                -- $anchor / anchor references and embedded $id
* content.json               -- contentMediaType/contentEncoding/contentSchema (not listed)
* defs.json                  -- $ref to the remote 2020-12 meta-schema
* dependentSchemas.json      -- dependentSchemas is not in the supported list
* dynamicRef.json            -- $dynamicRef / $dynamicAnchor (dynamic references)
* pattern.json               -- regex
* patternProperties.json     -- regex
* properties.json            -- some groups combine with patternProperties (regex)
* propertyNames.json         -- one group constrains names with pattern (regex)
* ref.json                   -- remote, relative-URI, anchor and general JSON Pointer
                                refs, embedded $id; its #, #/$defs/<name> groups must pass
* refRemote.json             -- remote references
* unevaluatedItems.json      -- unevaluated-value keywords
* unevaluatedProperties.json -- unevaluated-value keywords
* vocabulary.json            -- custom $vocabulary meta-schema via remote $schema
* not.json                   -- one group uses unevaluatedProperties inside not
* items.json, prefixItems.json, contains.json, maxContains.json, minContains.json,
  if-then-else.json, propertyNames.json, oneOf.json, anyOf.json, allOf.json, enum.json,
  const.json, required.json, boolean_schema.json, infinite-loop-detection.json ...
                             -- must be fully validated unless a group uses one of the above
"""

from __future__ import annotations

import json
import os
import re
import sys
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

REPO_ROOT = Path(__file__).resolve().parent.parent
if str(REPO_ROOT) not in sys.path:
    sys.path.insert(0, str(REPO_ROOT))

from zigai import json_schema  # noqa: E402

EXPECTED_REJECTIONS: dict[str, str] = {
    "additionalProperties.json": "patternProperties (regex)",
    "anchor.json": "$anchor, anchor refs, embedded $id",
    "content.json": "content vocabulary is not in the supported list",
    "defs.json": "remote $ref to the meta-schema",
    "dependentSchemas.json": "dependentSchemas is not in the supported list",
    "dynamicRef.json": "dynamic references",
    "not.json": "unevaluatedProperties inside not",
    "pattern.json": "regex",
    "patternProperties.json": "regex",
    "properties.json": "patternProperties (regex)",
    "propertyNames.json": "pattern (regex) inside propertyNames",
    "ref.json": "remote/relative/anchor/general-pointer refs, embedded $id",
    "refRemote.json": "remote references",
    "unevaluatedItems.json": "unevaluated-value keywords",
    "unevaluatedProperties.json": "unevaluated-value keywords",
    "vocabulary.json": "custom meta-schema / $vocabulary",
}

# The spec's supported list, transcribed independently of zigai/json_schema.
_SPEC_ASSERTIONS = {
    "type", "enum", "const", "allOf", "anyOf", "oneOf", "not", "if", "then", "else",
    "$defs", "$ref", "properties", "required", "additionalProperties", "propertyNames",
    "dependentRequired", "minProperties", "maxProperties", "items", "prefixItems",
    "contains", "minContains", "maxContains", "minItems", "maxItems", "uniqueItems",
    "minLength", "maxLength", "minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum",
    "multipleOf",
}
_SPEC_ANNOTATIONS = {
    "title", "description", "default", "examples", "format", "readOnly", "writeOnly",
    "deprecated", "$comment", "$schema", "$id",
}
_LOCAL_REF = re.compile(r"^#(/\$defs/[^/]*)?$")
_ONE = ("not", "if", "then", "else", "items", "contains", "additionalProperties",
        "propertyNames")
_MANY = ("allOf", "anyOf", "oneOf", "prefixItems")
_MAP = ("properties", "$defs")


def unsupported_features(schema: Any, root: bool = True) -> list[str]:
    """Every reason the spec gives to reject this schema (empty: fully supported)."""
    if not isinstance(schema, dict):
        return []
    found: list[str] = []
    for keyword, value in schema.items():
        if keyword not in _SPEC_ASSERTIONS and keyword not in _SPEC_ANNOTATIONS:
            found.append(f"keyword {keyword}")
        elif keyword == "$ref" and not (isinstance(value, str) and _LOCAL_REF.match(value)):
            found.append(f"$ref {value}")
        elif keyword == "$id" and not root:
            found.append("embedded $id")
        elif keyword == "$schema" and (not root or value != json_schema.supported_dialect):
            found.append(f"$schema {value}")
        elif keyword in _ONE:
            found += unsupported_features(value, False)
        elif keyword in _MANY and isinstance(value, list):
            for item in value:
                found += unsupported_features(item, False)
        elif keyword in _MAP and isinstance(value, dict):
            for item in value.values():
                found += unsupported_features(item, False)
    return found


@dataclass
class SuiteResult:
    passed: int = 0
    failed: int = 0
    validated_tests: int = 0
    rejected_tests: int = 0
    failures: list[str] = field(default_factory=list)
    rejected_groups: Counter[str] = field(default_factory=Counter)
    files: int = 0


def _fail(result: SuiteResult, name: str, group: str, tests: list[Any], why: str) -> None:
    for test in tests:
        result.failures.append(f"FAIL {name}: {group} / {test['description']} ({why})")
    result.failed += len(tests)


def run_group(result: SuiteResult, name: str, group: dict[str, Any]) -> None:
    title = group["description"]
    tests = group["tests"]
    schema = group["schema"]
    try:
        validator = json_schema.Validator(schema)
    except json_schema.UnsupportedJsonSchema as exc:
        reasons = unsupported_features(schema)
        if not reasons:
            _fail(result, name, title, tests, f"rejected but uses supported vocabulary: {exc}")
        elif name not in EXPECTED_REJECTIONS:
            _fail(result, name, title, tests, f"rejection not expected for this file: {exc}")
        else:
            result.passed += len(tests)
            result.rejected_tests += len(tests)
            result.rejected_groups[name] += 1
        return
    except json_schema.InvalidJsonSchema as exc:
        _fail(result, name, title, tests, f"InvalidJsonSchema: {exc}")
        return
    result.validated_tests += len(tests)
    for test in tests:
        got = validator.is_valid(test["data"])
        if got is test["valid"]:
            result.passed += 1
        else:
            result.failed += 1
            result.failures.append(
                f"FAIL {name}: {title} / {test['description']} "
                f"(expected valid={test['valid']}, got {got})"
            )


def run_suite(directory: Path) -> SuiteResult:
    """Run every top-level ``*.json`` file of ``directory``; never raises for test outcomes."""
    result = SuiteResult()
    for path in sorted(directory.glob("*.json")):
        result.files += 1
        groups = json.loads(path.read_text(encoding="utf-8"))
        for group in groups:
            run_group(result, path.name, group)
    return result


def default_directory() -> Path:
    root = os.environ.get("ZIGAI_CONFORMANCE_DIR")
    base = Path(root) if root else REPO_ROOT.parent / "shared" / "conformance"
    return base / "json-schema-test-suite" / "draft2020-12"


def main(argv: list[str]) -> int:
    directory = Path(argv[1]) if len(argv) > 1 else default_directory()
    if not directory.is_dir():
        print(f"suite directory not found: {directory}", file=sys.stderr)
        return 2
    result = run_suite(directory)
    for line in result.failures:
        print(line)
    print(
        f"{result.files} files: {result.validated_tests} tests validated, "
        f"{result.rejected_tests} tests in {sum(result.rejected_groups.values())} groups "
        "rejected by preflight (fail closed)"
    )
    for name, count in sorted(result.rejected_groups.items()):
        print(f"  rejected {name}: {count} group(s) -- {EXPECTED_REJECTIONS[name]}")
    print(f"{result.passed} passed, {result.failed} failed")
    return 1 if result.failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
