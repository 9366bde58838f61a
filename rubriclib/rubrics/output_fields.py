"""A rubric's `output:` fields: what the judge fills in beside its verdict, each a schema in a
small JSON-schema subset (Docent's rules). The schema is checked when the rubric is read, and a
judge's values are checked against it when its reply is read."""

from __future__ import annotations

import math
import re
from collections.abc import Mapping, Sequence
from typing import Any

from rubriclib.errors import Problem

KEYS: dict[str, frozenset[str]] = {
    "string": frozenset({"type", "description", "enum", "maxLength", "citations"}),
    "integer": frozenset({"type", "description", "minimum", "maximum"}),
    "number": frozenset({"type", "description", "minimum", "maximum"}),
    "boolean": frozenset({"type", "description"}),
    "array": frozenset({"type", "description", "items", "maxItems"}),
    "object": frozenset({"type", "description", "properties", "required"}),
}
"""The keys each type may have; a top-level field may also say `optional: true`."""
COMBINERS = ("anyOf", "oneOf", "allOf", "not", "$ref")
RESERVED = frozenset({"reason", "citations", "verdict", "score", "winner", "label", "answer"})
"""The verdict tools' own arguments: no output field may take their names."""
FIELD_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
MAX_DEPTH = 4
"""How deeply arrays and objects may nest below a top-level field."""


def output_problems(output: Any, label: str) -> list[Problem]:
    """What is wrong with a rubric's `output:` map, one problem per field and key, each named
    by its path (`output.issues.items.properties.kind.enum`)."""
    if not isinstance(output, Mapping) or not output:
        return [Problem(label, "output", "must be a mapping of field names to their schemas")]
    problems = []
    for name, schema in output.items():
        where = f"output.{name}"
        if not isinstance(name, str) or not FIELD_NAME.fullmatch(name):
            problems.append(Problem(label, where, "a field name is letters, digits and _"))
        elif name in RESERVED:
            problems.append(Problem(label, where, f"{name!r} is the verdict tool's own argument"))
        if isinstance(schema, Mapping) and "optional" in schema:
            if not isinstance(schema["optional"], bool):
                problems.append(Problem(label, f"{where}.optional", "must be true or false"))
            schema = {key: value for key, value in schema.items() if key != "optional"}
        problems.extend(_schema_problems(schema, where, label, 0))
    return problems


def _schema_problems(schema: Any, where: str, label: str, depth: int) -> list[Problem]:
    if not isinstance(schema, Mapping):
        return [Problem(label, where, "must be a schema: a mapping with a `type`")]
    for combiner in COMBINERS:
        if combiner in schema:
            return [Problem(label, f"{where}.{combiner}", "is not in the subset rubriclib reads")]
    kind = schema.get("type")
    if kind not in KEYS:
        return [Problem(label, f"{where}.type", f"must be one of {', '.join(KEYS)}")]
    problems = [
        Problem(label, f"{where}.{key}", f"is not a key of {_an(kind)} field")
        for key in schema
        if key not in KEYS[kind]
    ]
    if not isinstance(schema.get("description", ""), str):
        problems.append(Problem(label, f"{where}.description", "must be text"))
    checks = {"string": _string_problems, "array": _array_problems, "object": _object_problems}
    if kind in ("integer", "number"):
        problems.extend(_bounds_problems(schema, where, label, kind))
    elif kind in checks:
        problems.extend(checks[kind](schema, where, label, depth))
    return problems


def _string_problems(schema: Mapping[str, Any], where: str, label: str, _: int) -> list[Problem]:
    problems = []
    enum = schema.get("enum")
    if enum is not None and (
        not isinstance(enum, list)
        or not enum
        or not all(isinstance(value, str) for value in enum)
        or len(set(enum)) != len(enum)
    ):
        problems.append(Problem(label, f"{where}.enum", "must be a list of distinct strings"))
    if "maxLength" in schema and not _positive_int(schema["maxLength"]):
        problems.append(Problem(label, f"{where}.maxLength", "must be a whole number above 0"))
    if not isinstance(schema.get("citations", False), bool):
        problems.append(Problem(label, f"{where}.citations", "must be true or false"))
    return problems


def _bounds_problems(schema: Mapping[str, Any], where: str, label: str, kind: str) -> list[Problem]:
    problems = []
    for key in ("minimum", "maximum"):
        value = schema.get(key)
        if value is not None and not _number_of(kind, value):
            problems.append(Problem(label, f"{where}.{key}", f"must be {_a(kind)}"))
    low, high = schema.get("minimum"), schema.get("maximum")
    if not problems and low is not None and high is not None and low > high:
        problems.append(Problem(label, f"{where}.maximum", f"is below the minimum {low}"))
    return problems


def _array_problems(schema: Mapping[str, Any], where: str, label: str, depth: int) -> list[Problem]:
    problems = []
    if "maxItems" in schema and not _positive_int(schema["maxItems"]):
        problems.append(Problem(label, f"{where}.maxItems", "must be a whole number above 0"))
    if "items" not in schema:
        return [*problems, Problem(label, f"{where}.items", "is required: the items' schema")]
    return problems + _nested_problems(schema["items"], f"{where}.items", label, depth)


def _object_problems(
    schema: Mapping[str, Any], where: str, label: str, depth: int
) -> list[Problem]:
    properties = schema.get("properties")
    if not isinstance(properties, Mapping) or not properties:
        return [Problem(label, f"{where}.properties", "must map property names to schemas")]
    problems = []
    for name, child in properties.items():
        path = f"{where}.properties.{name}"
        if not isinstance(name, str) or not FIELD_NAME.fullmatch(name):
            problems.append(Problem(label, path, "a property name is letters, digits and _"))
        problems.extend(_nested_problems(child, path, label, depth))
    required = schema.get("required", [])
    if not isinstance(required, list) or not all(name in properties for name in required):
        problems.append(
            Problem(label, f"{where}.required", "must list names among the object's properties")
        )
    cited = [name for name, child in properties.items() if _cited(child)]
    if cited and "citations" in properties:
        problems.append(
            Problem(
                label,
                f"{where}.properties.citations",
                f"is the citations that {cited[0]}'s `citations: true` adds: rename it",
            )
        )
    return problems


def _nested_problems(schema: Any, where: str, label: str, depth: int) -> list[Problem]:
    if depth + 1 >= MAX_DEPTH:
        return [Problem(label, where, f"nests too deeply (at most {MAX_DEPTH} levels)")]
    return _schema_problems(schema, where, label, depth + 1)


def _cited(schema: Any) -> bool:
    return isinstance(schema, Mapping) and schema.get("citations") is True


def _positive_int(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and value > 0


def _number_of(kind: str, value: Any) -> bool:
    if isinstance(value, bool):
        return False
    if kind == "integer":
        return isinstance(value, int)
    return isinstance(value, (int, float)) and math.isfinite(value)


def _a(kind: str) -> str:
    return "an integer" if kind == "integer" else "a number"


def expected_output_problems(
    expected: Sequence[Mapping[str, Any] | None],
    output: Mapping[str, Any] | None,
    label: str,
    field: str = "goldens",
) -> list[Problem]:
    """A problem for every golden's `expected_output` (in order, None where a golden has none)
    that does not fit the rubric's fields: only enum strings, integers and booleans can be
    expected, each with a value its schema takes."""
    problems = []
    for index, values in enumerate(expected):
        where = f"{field}[{index}].expected_output"
        if values is None:
            continue
        if not output:
            problems.append(Problem(label, where, "the rubric has no output fields"))
            continue
        for name, value in values.items():
            schema = output.get(name)
            if schema is None:
                problems.append(Problem(label, f"{where}.{name}", "is not an output field"))
            elif not _comparable(schema):
                why = "only enum, integer and boolean fields can be expected"
                problems.append(Problem(label, f"{where}.{name}", why))
            else:
                for problem in value_problems({name: schema}, {name: value}):
                    problems.append(Problem(label, f"{where}.{name}", problem.split(": ", 1)[1]))
    return problems


def _comparable(schema: Mapping[str, Any]) -> bool:
    return schema["type"] in ("integer", "boolean") or "enum" in schema


def required_fields(output: Mapping[str, Any]) -> list[str]:
    """The top-level fields a reply must give: all but those marked `optional: true`."""
    return [name for name, schema in output.items() if not schema.get("optional", False)]


def value_problems(output: Mapping[str, Any], values: Any) -> list[str]:
    """What is wrong with a judge's output values, one line per field (`issues[1].kind: 'x'
    is not one of policy, accuracy, tone`); empty when they fit the schema."""
    fields = {
        name: {k: v for k, v in schema.items() if k != "optional"}
        for name, schema in output.items()
    }
    whole = {"type": "object", "properties": fields, "required": required_fields(output)}
    return _value_problems(whole, values, "")


def _value_problems(schema: Mapping[str, Any], value: Any, where: str) -> list[str]:
    kind = schema["type"]
    at = where or "output"
    if not _is(kind, value):
        return [f"{at}: must be {_described(kind)}, not {_shown(value)}"]
    if kind == "string":
        return _string_value_problems(schema, value, at)
    if kind in ("integer", "number"):
        low, high = schema.get("minimum"), schema.get("maximum")
        if (low is not None and value < low) or (high is not None and value > high):
            return [
                f"{at}: {value} is outside {low if low is not None else '-inf'} to "
                f"{high if high is not None else 'inf'}"
            ]
        return []
    if kind == "array":
        problems = []
        if "maxItems" in schema and len(value) > schema["maxItems"]:
            problems.append(f"{at}: has {len(value)} items, at most {schema['maxItems']}")
        for index, item in enumerate(value):
            problems.extend(_value_problems(schema["items"], item, f"{where}[{index}]"))
        return problems
    if kind == "object":
        return _object_value_problems(schema, value, where)
    return []


def _string_value_problems(schema: Mapping[str, Any], value: str, at: str) -> list[str]:
    enum = schema.get("enum")
    if enum is not None and value not in enum:
        return [f"{at}: {value!r} is not one of {', '.join(enum)}"]
    if "maxLength" in schema and len(value) > schema["maxLength"]:
        return [f"{at}: is {len(value)} characters, at most {schema['maxLength']}"]
    return []


def _object_value_problems(
    schema: Mapping[str, Any], value: dict[str, Any], where: str
) -> list[str]:
    properties = schema["properties"]
    prefix = f"{where}." if where else ""
    cited = any(_cited(child) for child in properties.values())
    problems = [
        f"{prefix}{name}: is missing" for name in schema.get("required", []) if name not in value
    ]
    for name, item in value.items():
        if name in properties:
            problems.extend(_value_problems(properties[name], item, f"{prefix}{name}"))
        elif not (cited and name == "citations"):
            problems.append(f"{prefix}{name}: is not a field of this rubric's output")
    return problems


def _is(kind: str, value: Any) -> bool:
    if isinstance(value, bool):
        return kind == "boolean"
    types: dict[str, type | tuple[type, ...]] = {
        "string": str,
        "integer": int,
        "number": (int, float),
        "array": list,
        "object": dict,
        "boolean": bool,
    }
    return isinstance(value, types[kind])


def _described(kind: str) -> str:
    return {"array": "a list", "object": "a mapping", "boolean": "true or false"}.get(
        kind, _a(kind) if kind in ("integer", "number") else "text"
    )


def _shown(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 40 else f"{text[:37]}..."


def _an(kind: str) -> str:
    return f"an {kind}" if kind[0] in "aeiou" else f"a {kind}"
