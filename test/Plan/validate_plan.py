"""Validates JSON documents against docs/plan.schema.json.

A small JSON Schema subset in the standard library (python3-jsonschema is not
a dependency): type, const, enum, required, properties, additionalProperties,
items, minItems, oneOf and local $ref. Usage: validate_plan.py SCHEMA FILE...
"""
import json
import sys

TYPES = {
    "object": lambda v: isinstance(v, dict),
    "array": lambda v: isinstance(v, list),
    "string": lambda v: isinstance(v, str),
    "integer": lambda v: isinstance(v, int) and not isinstance(v, bool),
    "number": lambda v: isinstance(v, (int, float)) and not isinstance(v, bool),
    "boolean": lambda v: isinstance(v, bool),
    "null": lambda v: v is None,
}


def errors(schema, value, root, path):
    if "$ref" in schema:
        node = root
        for part in schema["$ref"].lstrip("#/").split("/"):
            node = node[part]
        yield from errors(node, value, root, path)
        return
    if "type" in schema:
        kinds = schema["type"] if isinstance(schema["type"], list) else [schema["type"]]
        if not any(TYPES[k](value) for k in kinds):
            yield f"{path}: expected {'/'.join(kinds)}, found {json.dumps(value)[:60]}"
            return
    if "const" in schema and value != schema["const"]:
        yield f"{path}: expected {schema['const']!r}, found {value!r}"
    if "enum" in schema and value not in schema["enum"]:
        yield f"{path}: expected one of {schema['enum']}, found {value!r}"
    if "oneOf" in schema:
        matches = [s for s in schema["oneOf"] if not list(errors(s, value, root, path))]
        if len(matches) != 1:
            yield f"{path}: matches {len(matches)} of the oneOf alternatives: {json.dumps(value)[:80]}"
    if isinstance(value, dict):
        for key in schema.get("required", []):
            if key not in value:
                yield f"{path}: missing '{key}'"
        props = schema.get("properties", {})
        extra = schema.get("additionalProperties", True)
        for key, v in value.items():
            if key in props:
                yield from errors(props[key], v, root, f"{path}.{key}")
            elif extra is False:
                yield f"{path}: unexpected key '{key}'"
            elif isinstance(extra, dict):
                yield from errors(extra, v, root, f"{path}.{key}")
    if isinstance(value, list):
        if len(value) < schema.get("minItems", 0):
            yield f"{path}: fewer than {schema['minItems']} items"
        if "items" in schema:
            for i, v in enumerate(value):
                yield from errors(schema["items"], v, root, f"{path}[{i}]")


def main():
    schema = json.load(open(sys.argv[1]))
    bad = 0
    for name in sys.argv[2:]:
        doc = json.load(open(name))
        errs = list(errors(schema, doc, schema, "$"))
        for e in errs[:20]:
            print(f"{name}: {e}")
        bad += bool(errs)
        if not errs:
            print(f"{name}: valid")
    sys.exit(1 if bad else 0)


if __name__ == "__main__":
    main()
