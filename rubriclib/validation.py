"""Every problem of a YAML document at once: pydantic's errors as Problems in plain words, the
parts of a model that are valid on their own (so checks across fields still run), and the line
of the field each problem names."""

from __future__ import annotations

import difflib
from collections.abc import Mapping
from typing import Annotated, Any, TypeVar, get_origin

import yaml
from pydantic import BaseModel, TypeAdapter, ValidationError

from rubriclib.errors import Problem
from rubriclib.item import TranscriptError

Model = TypeVar("Model", bound=BaseModel)
NAME_PATTERN = r"^[a-z0-9]+(-[a-z0-9]+)*$"
"""Kebab-case: the names of rubrics, goldens and checklist items (a mismatch reads as such)."""


def problems_from_validation(
    error: ValidationError, label: str, model: type[BaseModel], prefix: str = ""
) -> list[Problem]:
    """Turn pydantic's errors into Problems with dotted field paths and plain messages."""
    problems = []
    for item in error.errors():
        location = list(item["loc"])
        cause = item.get("ctx", {}).get("error")
        if isinstance(cause, TranscriptError):  # an agent run: one problem per message
            within = _dotted(prefix, location[:-1])
            for place, why in cause.problems:
                problems.append(Problem(label, f"{within}.{place}" if within else place, why))
            continue
        field = _dotted(prefix, location)
        problems.append(Problem(label, field or "frontmatter", _message(item, location, model)))
    return problems


def _dotted(prefix: str, location: list[Any]) -> str:
    field = prefix
    for part in location:
        field += f"[{part}]" if isinstance(part, int) else (f".{part}" if field else str(part))
    return field


def _message(item: Any, location: list[Any], model: type[BaseModel]) -> str:
    kind = item["type"]
    if kind == "missing":
        return "is required"
    if kind == "extra_forbidden":
        known = list(_model_at(model, location[:-1]).model_fields)
        close = _likeliest(str(location[-1]), known)
        hint = f"; did you mean {close[0]!r}?" if close else f"; known keys: {', '.join(known)}"
        return f"unknown key{hint}"
    if kind == "string_pattern_mismatch":
        return f"{item['input']!r} must be kebab-case (lowercase letters, digits and hyphens)"
    if kind == "literal_error":
        return f"{item['input']!r} is not allowed; {item['msg'][0].lower()}{item['msg'][1:]}"
    if kind == "value_error":
        return str(item["ctx"]["error"])
    if kind.endswith("_type"):
        return f"{item['msg'].lower()}, not {type(item['input']).__name__}"
    message = str(item["msg"])
    return message[0].lower() + message[1:]


def _likeliest(typed: str, known: list[str]) -> list[str]:
    """The known key `typed` is most likely a typo of, if any is close: one with the same
    letters in another order (`modle`: `model`, not `mode`) before the closest by difflib."""
    close = difflib.get_close_matches(typed, known, n=3)
    return [key for key in close if sorted(key) == sorted(typed)] or close[:1]


def _model_at(model: type[BaseModel], location: list[Any]) -> type[BaseModel]:
    """The pydantic model that holds the field at `location` inside `model` (walking through
    lists, dicts and optionals), so an unknown key gets suggestions from the right keys."""
    for part in location:
        if isinstance(part, int) or part not in model.model_fields:
            continue  # a list index or a dict key: the model stays the one inside
        annotation = model.model_fields[part].annotation
        nested = _nested_model(annotation)
        if nested is None:
            break
        model = nested
    return model


def _nested_model(annotation: Any) -> type[BaseModel] | None:
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        return annotation
    for argument in getattr(annotation, "__args__", ()):
        if (found := _nested_model(argument)) is not None:
            return found
    return None


def valid_parts(model: type[Model], data: Any) -> Model:
    """`data` as `model` without validating the whole: each field valid on its own is kept, a
    list of models is taken element by element, any other field is its default (else None).
    For checks across fields after a failed validation; never for use."""
    try:
        return model.model_validate(data)
    except ValidationError as error:
        bad = {str(problem["loc"][0]) for problem in error.errors() if problem["loc"]}
    raw = data if isinstance(data, Mapping) else {}
    values: dict[str, Any] = {}
    for name, field in model.model_fields.items():
        value = raw.get(name)
        annotation: Any = field.annotation
        inner = _nested_model(annotation)
        if name in raw and name not in bad:  # its metadata too: a BeforeValidator, a pattern
            typed: Any = Annotated[annotation, *field.metadata] if field.metadata else annotation
            values[name] = TypeAdapter[Any](typed).validate_python(value)
        elif inner is not None and isinstance(value, list):
            values[name] = [valid_parts(inner, element) for element in value]
        elif inner is not None and isinstance(value, Mapping) and get_origin(annotation) is dict:
            values[name] = {key: valid_parts(inner, entry) for key, entry in value.items()}
        elif field.is_required():
            values[name] = None
        else:
            values[name] = field.get_default(call_default_factory=True)
    return model.model_construct(**values)


class LineFinder:
    """Adds the line of the field a problem names (`graders[1].rubric`) to its source; `first`
    is the file line the YAML text starts on, `root` the field the document itself stands for."""

    def __init__(self, text: str, label: str, first: int = 1, root: str = "") -> None:
        self.label = label
        self.first = first
        self.root = root
        try:
            self.node: yaml.Node | None = yaml.compose(text, Loader=yaml.SafeLoader)
        except yaml.YAMLError:
            self.node = None

    def locate(self, problem: Problem) -> Problem:
        line = self.line(problem.field) if problem.source == self.label else None
        if line is None:
            return problem
        return Problem(f"{problem.source}:{line}", problem.field, problem.message)

    def in_file_order(self, problems: list[Problem]) -> list[Problem]:
        """Each problem located, this file's by line (those with no line, such as a missing
        key, first), then the other files' as they came."""
        lines = [self.line(p.field) if p.source == self.label else None for p in problems]
        order = sorted(
            range(len(problems)),
            key=lambda at: (problems[at].source != self.label, lines[at] or 0),
        )
        return [self.locate(problems[at]) for at in order]

    def line(self, dotted: str) -> int | None:
        """The file line of the field `dotted` names (its closest named parent's), if any."""
        node, line = self.node, None
        dotted = dotted.removeprefix(self.root) if self.root else dotted
        for part in dotted.replace("[", ".[").split("."):
            if node is None or not part:
                continue
            child: yaml.Node | None = None
            where: yaml.Node | None = None  # a key's line, not its value's (a block starts below)
            if part.startswith("[") and isinstance(node, yaml.SequenceNode):
                index = int(part.strip("[]"))
                child = where = node.value[index] if index < len(node.value) else None
            elif isinstance(node, yaml.MappingNode):
                where, child = next(
                    ((k, v) for k, v in node.value if k.value == part), (None, None)
                )
            if child is None or where is None:
                break
            node, line = child, where.start_mark.line + self.first
        return line
