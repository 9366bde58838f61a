"""Docent rubrics read in (`rubriclib new NAME --from-docent FILE`): the JSON of a Docent rubric
(`docent.judges.types.Rubric`, as its `model_dump_json()` writes it) as a labels rubric: its
`rubric_text` the body, its `output_schema`'s `label` enum the labels, its other properties
`output:` fields, and a line for everything else it holds that a rubric file cannot say. Pure:
reads one file, no network, no Docent import."""

from __future__ import annotations

import json
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from rubriclib.errors import Problem, RubricError
from rubriclib.rubrics.output_fields import output_problems
from rubriclib.rubrics.reading import read_text
from rubriclib.rubrics.scaffold import write_rubric

DOCENT_VERSION = "0.1.88"
"""The Docent release whose Rubric this reads (tests/docent_rubrics.py writes its JSON)."""
DOCENT_FIELDS = (
    "id",
    "version",
    "n_rollouts_per_input",
    "judge_variant",
    "rollout_type",
    "prompt_templates",
    "rubric_text",
    "output_schema",
    "judge_model",
    "output_parsing_mode",
    "response_xml_key",
    "output_format",
)
"""The fields of that Rubric, in its order."""
PASSING_NAMES = frozenset({"pass", "passed", "yes", "match", "true", "correct", "success"})
FAILING_NAMES = frozenset({"fail", "failed", "no", "no-match", "false", "incorrect", "failure"})
"""Label names whose verdict goes without saying; any other name needs `--passing`."""
DROPPED_KEYS = {
    "title": "a schema's title is not sent to rubriclib's judge",
    "additionalProperties": "rubriclib refuses fields a schema does not name in any case",
}
"""Keys Docent's schemas may hold that only document or repeat what rubriclib does: left out,
and listed."""


@dataclass(frozen=True)
class DocentRubric:
    """A Docent rubric as a rubric file's parts."""

    header: dict[str, Any]
    """The frontmatter after name and version: scale, description, requires, labels, output."""
    body: str
    comment: str
    """Where it came from (id, version) and Docent's judge model: a YAML comment line."""
    model: str
    """Docent's judge model as `provider/model_name`, with its reasoning effort if set."""
    renamed: dict[str, str] = field(default_factory=dict)
    """Docent label -> rubric label, for the names made kebab-case."""
    inferred: bool = False
    """Whether which labels pass was read from their names (no `--passing`)."""
    not_carried: list[str] = field(default_factory=list)
    """One line per field (or schema key) a rubric file has no place for: `FIELD: why`."""


def read_docent(path: Path, passing: Sequence[str] | None = None) -> DocentRubric:
    """The Docent rubric JSON file at `path` as a rubric's parts; `passing` names the labels
    that pass (Docent's names or their kebab-case forms), else they are read from the names."""
    label = str(path)
    text = read_text(path, label)
    try:
        data = json.loads(text)
    except json.JSONDecodeError as error:
        raise RubricError.single(
            f"{label}:{error.lineno}", "file", f"is not JSON: {error.msg}"
        ) from None
    return docent_rubric(data, label, passing)


def docent_rubric(data: Any, label: str, passing: Sequence[str] | None = None) -> DocentRubric:
    """A Docent rubric (its JSON, read) as a rubric's parts; a RubricError naming `label` and
    the field when it cannot become one."""
    if not isinstance(data, dict):
        raise RubricError.single(label, "file", "must hold a Docent rubric: a JSON object")
    body = data.get("rubric_text")
    if not isinstance(body, str) or not body.strip():
        raise RubricError.single(label, "rubric_text", "must be the rubric's text (the body)")
    schema = data.get("output_schema")
    if not isinstance(schema, dict) or not isinstance(schema.get("properties"), dict):
        raise RubricError.single(label, "output_schema", "must be an object schema")
    renamed = kebab_labels(_label_names(schema, label), label)
    labels, inferred = label_verdicts(renamed, passing, label)
    output, notes = output_fields(schema, label)
    model = _one_line(_model(data.get("judge_model")))
    identity = _one_line(f"Docent rubric {data.get('id', '?')}, version {data.get('version', '?')}")
    header: dict[str, Any] = {
        "scale": "labels",
        "description": f"{identity}, judged there by {model}.",
        "requires": ["transcript"],  # Docent judges agent runs
        "labels": labels,
    }
    if output:
        header["output"] = output
    return DocentRubric(
        header=header,
        body=body,
        comment=f"# Read from {identity} (Docent's judge: {model}).",
        model=model,
        renamed={name: new for name, new in renamed.items() if name != new},
        inferred=inferred,
        not_carried=_other_fields(data) + notes,
    )


def _label_names(schema: Mapping[str, Any], label: str) -> list[str]:
    """The `label` property's enum: the labels, in order."""
    where = "output_schema.properties.label"
    prop = schema["properties"].get("label")
    if not isinstance(prop, Mapping) or prop.get("type") != "string" or "enum" not in prop:
        why = "must be a string with an enum of labels (rubriclib reads a labels scale)"
        raise RubricError.single(label, where, why)
    names = prop["enum"]
    if not isinstance(names, list) or not all(isinstance(name, str) for name in names):
        raise RubricError.single(label, f"{where}.enum", "must be a list of label names (text)")
    return names


def kebab_labels(names: Sequence[str], label: str) -> dict[str, str]:
    """Each Docent label name -> its kebab-case form (`not helpful` -> `not-helpful`); two
    names that become one, or a name with no letter or digit, are an error."""
    converted: dict[str, str] = {}
    problems = []
    for name in names:
        new = "-".join(re.findall(r"[a-z0-9]+", name.lower()))
        clash = [old for old, seen in converted.items() if seen == new]
        if not new:
            problems.append(f"{name!r} has no letter or digit to name a label by")
        elif clash:
            problems.append(f"{clash[0]!r} and {name!r} both become the label {new!r}")
        converted[name] = new
    if problems:
        where = "output_schema.properties.label.enum"
        raise RubricError([Problem(label, where, problem) for problem in problems])
    return converted


def label_verdicts(
    renamed: Mapping[str, str], passing: Sequence[str] | None, label: str
) -> tuple[dict[str, str], bool]:
    """The labels map (rubric label -> pass or fail, in order), and whether it was read from
    the names: given `passing`, those pass and the rest fail; else every name must say."""
    labels = list(renamed.values())
    if passing is not None:
        chosen = {renamed.get(name, name) for name in passing}
        if unknown := sorted(chosen - set(labels)):
            why = f"{', '.join(unknown)}: not among the labels ({', '.join(renamed)})"
            raise RubricError.single(label, "--passing", why)
        if chosen == set(labels):
            raise RubricError.single(label, "--passing", "names every label: one must fail")
        return {name: "pass" if name in chosen else "fail" for name in labels}, False
    verdicts = {
        name: "pass" if name in PASSING_NAMES else "fail" if name in FAILING_NAMES else None
        for name in labels
    }
    if None in verdicts.values() or set(verdicts.values()) != {"pass", "fail"}:
        names = ", ".join(repr(name) for name in renamed)
        why = f"cannot tell which of the labels {names} pass: name those with --passing (a,b)"
        raise RubricError.single(label, "output_schema.properties.label.enum", why)
    return {name: str(verdict) for name, verdict in verdicts.items()}, True


def output_fields(schema: Mapping[str, Any], label: str) -> tuple[dict[str, Any], list[str]]:
    """Every property but `label` as an output field (`optional: true` unless the schema
    requires it), and a line per key left out; a property outside rubriclib's subset is an
    error naming it."""
    notes = [f"output_schema.{key}: {why}" for key, why in _dropped(schema, DROPPED_KEYS)]
    for key in schema:
        if key not in ("type", "properties", "required", *DROPPED_KEYS):
            notes.append(f"output_schema.{key}: a rubric file has no place for it")
    required = schema.get("required", [])
    if "label" not in required:
        notes.append("output_schema.required: label is optional there; a verdict always has one")
    output: dict[str, Any] = {}
    for name, prop in schema["properties"].items():
        if name == "label":
            notes += _label_notes(prop)
            continue
        where = f"output_schema.properties.{name}"
        kept, dropped = _without_dropped(prop, where)
        notes += dropped
        output[name] = kept if name in required else {**kept, "optional": True}
    problems = output_problems(output, label) if output else []
    if problems:
        raise RubricError([_in_docent(problem) for problem in problems])
    return output, notes


def _label_notes(prop: Mapping[str, Any]) -> list[str]:
    why = "the labels scale takes names and verdicts only"
    return [
        f"output_schema.properties.label.{key}: {why}"
        for key in prop
        if key not in ("type", "enum")
    ]


def _dropped(schema: Mapping[str, Any], keys: Mapping[str, str]) -> list[tuple[str, str]]:
    return [(key, why) for key, why in keys.items() if key in schema]


def _without_dropped(schema: Any, where: str) -> tuple[Any, list[str]]:
    """`schema` without the keys `DROPPED_KEYS` names (`additionalProperties` only when
    false), at every level, and a line for each left out."""
    if not isinstance(schema, Mapping):
        return schema, []
    notes = []
    kept: dict[str, Any] = {}
    for key, value in schema.items():
        if key in DROPPED_KEYS and (key != "additionalProperties" or value is False):
            notes.append(f"{where}.{key}: {DROPPED_KEYS[key]}")
        elif key == "items":
            kept[key], more = _without_dropped(value, f"{where}.items")
            notes += more
        elif key == "properties" and isinstance(value, Mapping):
            kept[key] = {}
            for name, child in value.items():
                kept[key][name], more = _without_dropped(child, f"{where}.properties.{name}")
                notes += more
        else:
            kept[key] = value
    return kept, notes


def _in_docent(problem: Problem) -> Problem:
    """A problem with an output field, named where the Docent JSON has it."""
    where = re.sub(r"^output\.", "output_schema.properties.", problem.field)
    message = f"{problem.message} (rubriclib's output fields take a subset of Docent's schema)"
    return Problem(problem.source, where, message)


def _one_line(text: str) -> str:
    return " ".join(text.split())


def _model(model: Any) -> str:
    """Docent's judge model as `provider/model_name, reasoning effort E`."""
    if not isinstance(model, Mapping):
        return "Docent's default model"
    named = f"{model.get('provider', '?')}/{model.get('model_name', '?')}"
    effort = model.get("reasoning_effort")
    return f"{named}, reasoning effort {effort}" if effort else named


def _other_fields(data: Mapping[str, Any]) -> list[str]:
    """A line for each field of Docent's rubric a rubric file cannot say."""
    notes = []
    templates = data.get("prompt_templates")
    if isinstance(templates, list) and templates:
        roles = ", ".join(str(t.get("role")) for t in templates if isinstance(t, Mapping))
        notes.append(
            f"prompt_templates: {len(templates)} message(s) ({roles}); rubriclib writes its "
            "own prompt: its system message, then the body, then the agent run"
        )
    parsing = [
        f"{key} {data[key]}"
        for key in ("output_parsing_mode", "response_xml_key", "output_format")
        if key in data
    ]
    if parsing:
        notes.append(f"{', '.join(parsing)}: rubriclib's judge answers through a tool call")
    if "n_rollouts_per_input" in data or "judge_variant" in data:
        notes.append(
            f"n_rollouts_per_input {data.get('n_rollouts_per_input', 1)}, judge_variant "
            f"{data.get('judge_variant', 'majority')}: how many judgments is set when judging "
            "(--votes N takes the majority); rubriclib has no multi-reflect"
        )
    if "rollout_type" in data:
        notes.append(f"rollout_type {data['rollout_type']}: rubriclib judges in one call")
    notes += [
        f"{key}: not a field of Docent {DOCENT_VERSION}'s Rubric; not read"
        for key in data
        if key not in DOCENT_FIELDS
    ]
    return notes


def new_from_docent(
    name: str,
    directory: Path,
    source: Path,
    passing: Sequence[str] | None = None,
    description: str | None = None,
) -> tuple[Path, DocentRubric]:
    """Write `directory/NAME.md` at version 0.1.0 from the Docent rubric JSON at `source`;
    validated first, never overwrites."""
    docent = read_docent(source, passing)
    header = dict(docent.header)
    if description is not None:
        header["description"] = description
    return write_rubric(name, directory, header, docent.body, docent.comment), docent
