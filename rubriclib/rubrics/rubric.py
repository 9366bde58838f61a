"""Parse and validate one rubric file into pydantic models (its goldens: `golden`)."""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Annotated, Any, Literal

import frontmatter
from pydantic import (
    BaseModel,
    BeforeValidator,
    ConfigDict,
    Field,
    ValidationError,
    field_validator,
)

from rubriclib.errors import Problem, RubricError
from rubriclib.rubrics.checklist import ChecklistItem, FieldName, checklist_problems
from rubriclib.rubrics.golden import Golden, checked_goldens, example_problems, shown_example
from rubriclib.rubrics.output_fields import expected_output_problems, output_problems
from rubriclib.rubrics.reading import load_yaml, read_text
from rubriclib.validation import NAME_PATTERN, LineFinder, problems_from_validation, valid_parts

SEMVER = re.compile(
    r"(0|[1-9]\d*)\.(0|[1-9]\d*)\.(0|[1-9]\d*)"
    r"(?:-((?:0|[1-9]\d*|\d*[a-zA-Z-][0-9a-zA-Z-]*)(?:\.(?:0|[1-9]\d*|\d*[a-zA-Z-][0-9a-zA-Z-]*))*))?"
    r"(?:\+([0-9a-zA-Z-]+(?:\.[0-9a-zA-Z-]+)*))?",
    re.ASCII,
)
"""SemVer 2.0.0's own pattern (semver.org), so reading a rubric needs no semver import."""
SCALES = ("pass-fail", "1-5", "pairwise", "labels")
PASS_FAIL_TOOLS = ("set_grade_pass", "set_grade_fail")
WAZA_TOOLS = ("set_waza_grade_pass", "set_waza_grade_fail")
VERDICT_TOOL = "set_grade"
"""The one pass-fail verdict tool (`reason`, `verdict`), for endpoints that refuse "required"."""
SCORE_TOOL = "set_grade_score"
"""The one tool of a 1-5 rubric (`reason`, `score`)."""
PAIRWISE_TOOL = "set_pairwise_winner"
"""The one tool of a pairwise rubric (`reason`, `winner`: A, B or tie); waza's name for it."""
LABEL_TOOL = "set_grade_label"
"""The one tool of a labels rubric (`reason`, then `label`: one of the rubric's labels)."""
RUN_RENDERING = 3
"""How `judging.prompt.agent_run` shows an agent run (blocks with ids, cut to fit): counted in the
digest of a rubric that requires a transcript; raise it whenever that rendering changes."""

_FRONTMATTER = frontmatter.default_handlers.YAMLHandler()


def _off_is_not_a_boolean(value: Any) -> Any:
    """YAML reads a bare `off` as false; a citations policy means the word. (In the type's
    metadata, so `valid_parts` applies it too when another field has a problem.)"""
    return "off" if value is False else value


class _Frontmatter(BaseModel):
    """The YAML header of a rubric file."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    name: str = Field(pattern=NAME_PATTERN)
    version: str
    scale: Literal["pass-fail", "1-5", "pairwise", "labels"]
    description: str
    pass_threshold: int | None = Field(default=None, ge=1, le=5, strict=True)
    labels: dict[str, Literal["pass", "fail"]] | None = None
    """A labels rubric's labels, in order, each with the verdict it means: the judge answers
    with one of them (`details.label`), and the verdict follows from this map."""
    requires: list[FieldName] = Field(default_factory=list)
    """Fields a judgment cannot go without: a row lacking one is an error, never judged. A
    pairwise rubric always requires `baseline` (added when the file does not list it)."""
    checklist: list[ChecklistItem] = Field(default_factory=list)
    """Independent yes/no questions about the candidate (none: the rubric is judged whole)."""
    citations: Annotated[
        Literal["optional", "required", "off"], BeforeValidator(_off_is_not_a_boolean)
    ] = "optional"
    """Whether the verdict tools take `citations` (quotes from the blocks shown, checked by
    rubriclib): `optional` (the default), `required` (a failing verdict must carry a verified
    one: one corrective turn, then `error`) or `off` (the argument is left out)."""
    output: dict[str, dict[str, Any]] | None = None
    """Fields the judge fills in beside its verdict, each a schema in the subset
    `output_fields` reads (required unless it says `optional: true`); None: the verdict alone."""
    goldens: list[Golden] = Field(default_factory=list)
    examples: list[Golden] = Field(default_factory=list)
    """Worked examples: outputs with the verdict the rubric gives them and why, shown to the
    judge before the candidate (never judged as goldens are)."""
    tags: list[Annotated[str, Field(pattern=NAME_PATTERN)]] = Field(default_factory=list)
    """Kebab-case words to find the rubric by (`rubriclib search`, through the index
    `rubriclib index` writes); never shown to the judge, not in the digest."""

    @field_validator("version", mode="before")
    @classmethod
    def _version_is_semver(cls, value: Any) -> Any:
        if isinstance(value, bool) or not isinstance(value, (str, int, float)):
            return value  # the str type check reports it
        if not isinstance(value, str):
            raise ValueError(
                f"YAML read {value!r} as a number; write a full, quoted semver such as '1.0.0'"
            )
        if not SEMVER.fullmatch(value):
            raise ValueError(f"{value!r} is not valid semver; write it like '1.0.0'")
        return value

    @field_validator("description")
    @classmethod
    def _description_is_one_line(cls, value: str) -> str:
        if not value.strip():
            raise ValueError("must not be empty")
        if "\n" in value.strip():
            raise ValueError("must be one line")
        return value.strip()


class RemoteOrigin(BaseModel):
    """Where a remote rubric came from: the reference as written, the commit it resolved to (the
    URL, for one https file) and the sha256 of the file's bytes (what the lock pins)."""

    model_config = ConfigDict(extra="forbid", frozen=True)
    reference: str
    commit: str
    kind: str
    """What the reference's REV was (`remote.pins.RemotePin.kind`); branch and head float."""
    sha256: str


class Rubric(_Frontmatter):
    """A validated rubric: its frontmatter, body, and where it came from."""

    body: str
    source: str
    """`builtin:NAME`, `file:ABSOLUTE_PATH`, or `remote:REFERENCE (commit COMMIT)`."""
    path: Path
    """The file the rubric was read from."""
    digest: str
    """sha256 over what decides a verdict (see `judged_digest`)."""
    template: Literal["rubriclib", "letta"] = "rubriclib"
    """`letta`: the body is a letta-evals prompt, filled by `str.format` from the item's
    variables and sent as the whole user message, as letta-evals sends it."""
    system_prompt: str | None = None
    """Text the eval file puts before rubriclib's own system message (letta's system_prompt)."""
    text: str | None = Field(default=None, repr=False, exclude=True)
    """The whole file as it was read (frontmatter and body), so nothing reads the file again
    after resolution (`revise` edits this text); None for a rubric an eval file's prompt made."""
    remote: RemoteOrigin | None = Field(default=None, repr=False, exclude=True)
    """A remote rubric's reference, commit and sha256; None for every other rubric."""

    @property
    def tool_names(self) -> tuple[str, str]:
        """The pass and fail tool names the judge is offered (waza's when the body names them);
        on a pairwise or labels rubric, its one tool twice."""
        scale = self.scale if self.scale in ("pairwise", "labels") else "pass-fail"
        names = verdict_tool_names(scale, self.body)
        return names[0], names[-1]

    @property
    def identity(self) -> dict[str, str]:
        """What every result carries to trace its verdict to this exact rubric."""
        return {
            "name": self.name,
            "version": self.version,
            "scale": self.scale,
            "source": self.source,
            "digest": self.digest,
        }


def parse_rubric(path: Path, source: str, label: str) -> Rubric:
    """Read and validate the rubric file at `path`; `label` names it in every problem."""
    return parse_rubric_text(read_text(path, label), path, source, label)


def parse_rubric_text(text: str, path: Path, source: str, label: str) -> Rubric:
    """Validate a rubric's text as if it were read from `path`."""
    header, body = _split_frontmatter(text, label)
    data = load_yaml(header, label, "frontmatter")
    if not isinstance(data, dict):
        raise RubricError.single(
            label, "frontmatter", f"must be a mapping of keys, not {_describe_yaml(data)}"
        )
    problems: list[Problem] = []
    try:
        fields = _Frontmatter.model_validate(data)
    except ValidationError as error:  # what is valid is still checked, so all come at once
        problems.extend(problems_from_validation(error, label, _Frontmatter))
        fields = valid_parts(_Frontmatter, data)
    found = {problem.field for problem in problems}
    fields, checks = _checked_fields(fields, label, "checklist" in data)
    problems.extend(check for check in checks if not _reported(check.field, found))
    problems.extend(_body_problems(fields, body, label))
    if problems:
        raise RubricError(_placed(problems, header, label))
    judged_body = body.strip("\n")
    return Rubric(
        # goldens as read: a dumped Transcript ({messages, shape}) is no run read_transcript takes
        **fields.model_dump(exclude={"goldens", "examples"}),
        goldens=fields.goldens,
        examples=fields.examples,
        body=judged_body,
        source=source,
        path=path,
        text=text,
        digest=judged_digest(
            fields.scale,
            fields.pass_threshold,
            fields.requires,
            judged_body,
            fields.checklist,
            fields.citations,
            fields.output,
            fields.labels,
            fields.examples,
        ),
    )


def _checked_fields(
    fields: _Frontmatter, label: str, has_checklist: bool
) -> tuple[_Frontmatter, list[Problem]]:
    """The fields (a pairwise rubric requiring its baseline), and what is wrong across them
    (each valid on its own): the scale's needs, goldens' names, the checklist, the fields
    goldens must give, their cites."""
    checks = _scale_problems(fields, label) if fields.scale is not None else []
    checks.extend(
        checklist_problems(fields.checklist, fields.scale, fields.requires, label, has_checklist)
    )
    if fields.scale == "pairwise" and "baseline" not in fields.requires:
        fields = fields.model_copy(update={"requires": [*fields.requires, "baseline"]})
    goldens, golden_checks = checked_goldens(fields.goldens, fields, label, "goldens")
    examples, example_checks = checked_goldens(fields.examples, fields, label, "examples")
    fields = fields.model_copy(update={"goldens": goldens, "examples": examples})
    checks += golden_checks + example_checks + example_problems(examples, label)
    if fields.output is not None and fields.scale == "pairwise":
        why = "applies to pass-fail, 1-5 and labels rubrics, not pairwise (judged in both orders)"
        checks.append(Problem(label, "output", why))
    elif fields.output is not None:
        checks.extend(output_problems(fields.output, label))
    if not any(check.field.startswith("output") for check in checks):  # else nothing to fit
        for key, listed in (("goldens", goldens), ("examples", examples)):
            expected = [golden.expected_output for golden in listed]
            checks.extend(expected_output_problems(expected, fields.output, label, key))
    return fields, checks


def _reported(field: str, found: set[str]) -> bool:
    """Whether pydantic already reported `field` or a part of it (`labels.b` for `labels`),
    so a check across the fields need not say more of it."""
    return any(seen == field or seen.startswith((f"{field}.", f"{field}[")) for seen in found)


def _body_problems(fields: _Frontmatter, body: str, label: str) -> list[Problem]:
    """What is wrong with the body: empty, or a pairwise rubric placing one response."""
    problems = []
    if not body.strip():
        problems.append(Problem(label, "body", "must not be empty: it is what the judge is told"))
    if fields.scale == "pairwise" and "{submission}" in body:
        problems.append(
            Problem(
                label,
                "body",
                "a pairwise rubric cannot place {submission}: both responses are shown "
                "as Response A and Response B",
            )
        )
    return problems


def _placed(problems: list[Problem], header: str, label: str) -> list[Problem]:
    """`problems` at their lines: the frontmatter's in file order, then the body's."""
    lines = LineFinder(header, label)  # the header starts on the '---' line
    body_line = header.count("\n") + 2  # the line after the closing ---
    header_problems = lines.in_file_order([p for p in problems if p.field != "body"])
    body_problems = [
        Problem(f"{label}:{body_line}", p.field, p.message) for p in problems if p.field == "body"
    ]
    return header_problems + body_problems


def verdict_tool_names(scale: str, body: str) -> tuple[str, ...]:
    """The tools a verdict can be given through: waza's pair when the body names them."""
    one = {"1-5": SCORE_TOOL, "pairwise": PAIRWISE_TOOL, "labels": LABEL_TOOL}
    if scale in one:
        return (one[scale],)
    return WAZA_TOOLS if WAZA_TOOLS[0] in body else PASS_FAIL_TOOLS


def judged_digest(
    scale: str,
    pass_threshold: int | None,
    requires: Sequence[str],
    body: str,
    checklist: Sequence[ChecklistItem] = (),
    citations: str = "optional",
    output: Mapping[str, Any] | None = None,
    labels: Mapping[str, str] | None = None,
    examples: Sequence[Golden] = (),
) -> str:
    """sha256 hex of what decides a verdict, as canonical JSON: the scale, the pass threshold,
    the required fields, the verdict tool names, the body and, when there is one, the
    checklist (each item's `ChecklistItem.judged`, in order; a rubric without one has no
    `checklist` key, so its digest is the one it had before checklists existed) and, when it
    requires a transcript, how runs are rendered (`RUN_RENDERING`), and the citation policy
    unless it is the default `optional`, the `output` fields' schemas and the labels with their
    verdicts and the worked examples as shown (`shown_example`) when there are any (so older
    digests stay valid). Goldens, the
    description and how the YAML is written do not count; any change to the judged text does."""
    judged: dict[str, Any] = {
        "scale": scale,
        "pass_threshold": pass_threshold,
        "requires": sorted(requires),
        "tools": list(verdict_tool_names(scale, body)),
        "body": body,
    }
    if checklist:
        judged["checklist"] = [item.judged() for item in checklist]
    if "transcript" in requires:
        judged["run_rendering"] = RUN_RENDERING
    if citations != "optional":
        judged["citations"] = citations
    if output:  # as written: the fields' order is the order a judge fills them in
        judged["output"] = json.dumps(output, ensure_ascii=False)
    if labels:  # in order, as the tool's enum offers them
        judged["labels"] = list(labels.items())
    if examples:
        judged["examples"] = [shown_example(example) for example in examples]
    text = json.dumps(judged, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def _describe_yaml(data: Any) -> str:
    if data is None:
        return "empty"
    kinds = {bool: "a boolean", int: "a number", float: "a number", str: "a string", list: "a list"}
    return kinds.get(type(data), f"a {type(data).__name__}")


def _split_frontmatter(text: str, label: str) -> tuple[str, str]:
    if not _FRONTMATTER.FM_BOUNDARY.match(text):
        raise RubricError.single(
            label, "frontmatter", "missing: the file must start with a '---' line"
        )
    try:
        return _FRONTMATTER.split(text)
    except ValueError:
        raise RubricError.single(
            label, "frontmatter", "is not closed: add a '---' line after the YAML header"
        ) from None


def _scale_problems(fields: _Frontmatter, label: str) -> list[Problem]:
    problems = _labels_problems(fields, label)
    if fields.scale == "1-5" and fields.pass_threshold is None:
        problems.append(
            Problem(label, "pass_threshold", "is required for scale 1-5 (an integer 1 to 5)")
        )
    if fields.scale != "1-5" and fields.pass_threshold is not None:
        problems.append(Problem(label, "pass_threshold", "applies only to scale 1-5"))
    if fields.scale != "pairwise" and "baseline" in fields.requires:
        problems.append(Problem(label, "requires", "baseline applies only to scale pairwise"))
    return problems


def _labels_problems(fields: _Frontmatter, label: str) -> list[Problem]:
    """A labels rubric's labels: at least two, kebab-case, at least one passing and one
    failing; no other scale has them."""
    if fields.scale != "labels":
        return [Problem(label, "labels", "applies only to scale labels")] if fields.labels else []
    if fields.labels is None:
        example = "{resolved: pass, not-resolved: fail}"
        return [Problem(label, "labels", f"is required for scale labels, e.g. {example}")]
    problems = [
        Problem(label, f"labels.{name}", "a label is kebab-case (lowercase, digits, hyphens)")
        for name in fields.labels
        if not re.fullmatch(NAME_PATTERN, name)
    ]
    if len(fields.labels) < 2:
        problems.append(Problem(label, "labels", "must name at least two labels"))
    elif set(fields.labels.values()) != {"pass", "fail"}:
        problems.append(
            Problem(label, "labels", "needs at least one label that passes and one that fails")
        )
    return problems
