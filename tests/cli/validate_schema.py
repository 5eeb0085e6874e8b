"""Validates tbd's JSON documents against docs/schema (JSON Schema 2020-12).

    python validate_schema.py FILE_OR_FOLDER...

Every *.json file with a "schema" field naming a tbd document (tbd.result/1,
tbd.sweep/1, tbd.suite/1, tbd.scale/1, tbd.compare/2, tbd.shapes/1) is checked; other JSON
(traces, execution traces) is skipped. Exit 1 naming each violation.
Used by tests/cli/lib.sh's finish() on every document a CLI test wrote.
"""
import json
import os
import sys

from jsonschema import Draft202012Validator
from referencing import Registry, Resource

SCHEMA_DIR = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "docs", "schema")


def load_schemas():
    schemas = {}
    for name in sorted(os.listdir(SCHEMA_DIR)):
        if name.endswith(".schema.json"):
            with open(os.path.join(SCHEMA_DIR, name)) as f:
                schema = json.load(f)
            Draft202012Validator.check_schema(schema)
            schemas[schema["$id"].removeprefix("urn:tbd:schema:")] = schema
    registry = Registry().with_resources((s["$id"], Resource.from_contents(s)) for s in schemas.values())
    return {kind: Draft202012Validator(s, registry=registry) for kind, s in schemas.items()}


def documents(paths):
    for path in paths:
        if os.path.isdir(path):
            for root, _, files in os.walk(path):
                yield from (os.path.join(root, f) for f in sorted(files) if f.endswith(".json"))
        else:
            yield path


def main():
    validators = load_schemas()
    checked, problems = 0, []
    for path in documents(sys.argv[1:]):
        try:
            with open(path) as f:
                doc = json.load(f)
        except (OSError, ValueError):
            continue  # not JSON (or a half-written file some test made on purpose)
        kind = doc.get("schema") if isinstance(doc, dict) else None
        if not isinstance(kind, str) or not kind.startswith("tbd."):
            continue
        if kind not in validators:
            problems.append(f"{path}: no schema for {kind} in docs/schema")
            continue
        checked += 1
        for error in validators[kind].iter_errors(doc):
            where = "/".join(str(p) for p in error.absolute_path) or "(top)"
            problems.append(f"{path}: {kind} at {where}: {error.message[:300]}")
    for p in problems:
        print(p, file=sys.stderr)
    print(f"schema: {checked} documents checked, {len(problems)} problems")
    sys.exit(1 if problems else 0)


if __name__ == "__main__":
    main()
