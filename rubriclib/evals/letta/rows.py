"""letta-evals dataset rows as letta-evals reads them (`datasets/loader.py`, `models/sample.py`),
with what the agent did: its recorded submission, or its recorded messages (a run, which each
grader's extractor reads as letta's does: `runs`), and the prompt letta builds from them
(`graders/prompt_utils.build_judge_prompt`, checked by `prompts`): the rubric is a
`str.format` template with `{input}`, `{ground_truth}`, `{submission}` and every key of the row's
`rubric_vars`.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from rubriclib.errors import InputError, Problem
from rubriclib.evals.letta.extractors import EMPTY_SUBMISSION, EMPTY_TRAJECTORY, Extractor
from rubriclib.evals.letta.runs import LettaRun, read_run
from rubriclib.item import Item, TranscriptError, field_text
from rubriclib.rubrics import read_text

SUBMISSION_KEYS = ("submission", "output", "response", "actual_output")
"""Where a recorded row holds what the agent answered (letta's runs produce it)."""
USED_KEYS = {"id", "sample_id", "input", "prompt", "ground_truth", "rubric_vars", "rubric"}
USED_KEYS |= {"rubric_path", "context", "messages", *SUBMISSION_KEYS}


@dataclass(frozen=True)
class LettaSample:
    """One letta row: the fields letta's Sample holds that grading reads, the rubric the row
    brings (its text, and where it came from), and the recorded submission."""

    input: str | list[str]
    ground_truth: str | list[str] | None
    rubric_vars: dict[str, Any] | None
    submission: str | list[str] | None
    rubric: str | None = None
    rubric_source: str | None = None
    """`prompt:FILE:LINE` for an inline `rubric`, `file:PATH` for a `rubric_path`."""
    context: str | None = None
    """rubriclib's own: a top-level `context`, else `rubric_vars.context` (for rubrics)."""
    run: LettaRun | None = None
    """The agent's recorded messages (`messages`), when the row records them instead of a
    submission: each grader's extractor takes its submission from them (`extracted`)."""

    @property
    def per_turn(self) -> bool:
        """letta grades each turn against its own ground truth when both are lists."""
        return isinstance(self.input, list) and isinstance(self.ground_truth, list)

    def turns(self) -> list[LettaSample]:
        """What letta grades: each turn as a sample of its own, or the whole row (a turn of a
        row that records messages has no submission until `extracted`)."""
        if not self.per_turn:
            return [self]
        assert isinstance(self.input, list) and isinstance(self.ground_truth, list)
        answers = self.submission if isinstance(self.submission, list) else [None] * len(self.input)
        return [
            replace(self, input=turn, ground_truth=truth, submission=answer)
            for turn, truth, answer in zip(self.input, self.ground_truth, answers, strict=True)
        ]

    def substitutions(self) -> dict[str, str]:
        """What letta's `build_judge_prompt` fills a template with (a rubric_vars key that
        collides with a reserved name is reported by `prompts.template_problems`)."""
        extra = {key: str(value) for key, value in (self.rubric_vars or {}).items()}
        return {
            **extra,
            "input": str(self.input),
            "ground_truth": str(self.ground_truth) if self.ground_truth is not None else "",
            "submission": self.submission if isinstance(self.submission, str) else "",
        }

    def extracted(self, extractor: Extractor) -> LettaSample | str:
        """The sample with the submission letta's grader would be given: `extractor` run on
        the recorded messages (on a per-turn row, turn N's on the Nth turn of the run, as
        letta grades it), or why letta would score it 0 without asking the grader. An
        ExtractorError where letta's extractor raises."""
        assert self.run is not None
        turns = self.run.turns
        if not self.per_turn:
            submission, why = extractor.extract(turns)
            if submission is None:
                return _unextracted(str(why), extractor)
            return replace(self, submission=submission)
        submissions: list[str] = []
        for index in range(len(self.input)):
            submission, why = extractor.extract([turns[index]] if index < len(turns) else [])
            if submission is None:
                return f"turn {index}: {_unextracted(str(why), extractor, index)}"
            submissions.append(submission)
        return replace(self, submission=submissions)

    def item(self, row_id: str, metadata: dict[str, Any]) -> Item:
        """The row as a rubric sees it: input (turns as a `user:` transcript), ground_truth
        as the reference, the context, the submission as the output (or, with recorded
        messages and no submission extracted, the whole run and its final answer), letta's
        substitutions as the variables a letta template places."""
        output = self.submission
        if isinstance(output, list):  # as letta-evals records a per-turn submission
            output = " | ".join(f"[Turn {n}] {answer}" for n, answer in enumerate(output))
        transcript = None
        if output is None and self.run is not None:
            transcript = self.run.transcript
            output = transcript.final_answer
        fields = rubric_fields(self.input, self.ground_truth, self.context)
        return Item(
            output=output or "",
            transcript=transcript,
            input=fields["input"],
            context=fields["context"],
            reference=fields["reference"],
            id=row_id,
            metadata=metadata,
            variables=self.substitutions(),
        )


def _unextracted(why: str, extractor: Extractor, turn: int | None = None) -> str:
    """Why a run gives a grader nothing to judge, with letta-evals' own words for it."""
    if why == EMPTY_TRAJECTORY and turn is not None:
        return (
            f"the recorded messages have no turn {turn} (letta-evals: {why!r}); record "
            "messages as one list per turn"
        )
    if why == EMPTY_SUBMISSION:
        return f"extractor {extractor.name} finds nothing in the recorded messages ({why!r})"
    return f"{why} (letta-evals)"


def rubric_fields(
    turns: str | list[str], truth: str | list[str] | None, context: str | None
) -> dict[str, str | None]:
    """A letta sample's fields as a rubric's: input (several turns as a `user:` transcript),
    ground_truth as the reference (several, one a line), and the context."""
    if isinstance(turns, list):
        turns = "\n".join(f"user: {turn}" for turn in turns)
    return {
        "input": turns or None,
        "context": context,
        "reference": "\n".join(truth) if isinstance(truth, list) else truth,
    }


def read_sample(
    raw: Mapping[str, Any], where: str, base_dir: Path, csv: bool
) -> LettaSample | list[Problem]:
    """A raw letta row (a JSON object, or a CSV record whose cells are text) as a sample, or
    every problem with it; letta-evals refuses the same rows."""
    problems: list[Problem] = []

    def value(key: str, parse: bool = False) -> Any:
        found = raw.get(key)
        if csv and parse and isinstance(found, str):
            try:
                return _csv_cell(found, key)
            except ValueError as error:
                problems.append(Problem(where, key, str(error)))
                return None
        return found

    turns = value("input", parse=True)
    if turns is None:
        turns = value("prompt", parse=True)  # letta's fallback
    truth = value("ground_truth", parse=True)
    rubric_vars = _json_object(raw.get("rubric_vars"), csv, where, problems)
    present = [key for key in SUBMISSION_KEYS if raw.get(key) is not None]
    if len(present) > 1:
        problems.append(Problem(where, present[1], f"given twice, as {' and '.join(present)}"))
    submission = value(present[0], parse=True) if present else None
    run = _run(raw.get("messages"), where, problems)
    if run is not None and present:
        message = (
            "given with messages: each grader's extractor takes the submission from the "
            "messages, as letta-evals does; give one of them"
        )
        problems.append(Problem(where, present[0], message))
    if not _text_or_texts(turns):
        if not any(problem.field in ("input", "prompt") for problem in problems):  # else named
            problems.append(Problem(where, "input", _not_text(turns, "is required")))
    elif turns == []:
        problems.append(Problem(where, "input", "is an empty list: a row has at least one turn"))
    if truth is not None and not _text_or_texts(truth):
        problems.append(Problem(where, "ground_truth", _not_text(truth)))
    if submission is not None and not _text_or_texts(submission):
        problems.append(Problem(where, present[0], _not_text(submission)))
    if problems:
        return problems
    field = present[0] if present else "submission"
    if (problem := _turns_problem(turns, truth, submission, run, where, field)) is not None:
        return [problem]
    rubric = _own_rubric(raw, where, base_dir, problems)
    context = _context(raw.get("context"), rubric_vars, where, problems)
    if problems:
        return problems
    return LettaSample(turns, truth, rubric_vars, submission, *rubric, context=context, run=run)


def _turns_problem(
    turns: str | list[str],
    truth: str | list[str] | None,
    submission: str | list[str] | None,
    run: LettaRun | None,
    where: str,
    field: str,
) -> Problem | None:
    """What letta refuses in how a row's input, ground truth and submission (`field`) line up:
    a per-turn row needs one of each per turn (its submissions may come from recorded
    messages); a list is per-turn only when input and ground_truth both are."""
    if isinstance(truth, list) and not isinstance(turns, list):
        return Problem(where, "ground_truth", "cannot be a list when input is text (letta)")
    if isinstance(turns, list) and isinstance(truth, list):
        if len(turns) != len(truth):
            message = (
                f"has {len(truth)} item(s) but input has {len(turns)}: per-turn grading needs "
                "one ground truth per turn"
            )
            return Problem(where, "ground_truth", message)
        if run is None and (not isinstance(submission, list) or len(submission) != len(turns)):
            got = "none" if submission is None else _count(submission)
            message = (
                f"a per-turn row ({len(turns)} turns in input and ground_truth) needs a list of "
                f"{len(turns)} recorded submissions, one per turn; it has {got}"
            )
            return Problem(where, field, message)
    elif isinstance(submission, list):
        message = "is a list, which only a per-turn row takes (input and ground_truth as lists)"
        return Problem(where, field, message)
    return None


def _csv_cell(text: str, key: str) -> str | list[Any]:
    """A CSV cell of a text-or-list column, as letta's `_parse_string_or_list` reads it."""
    stripped = text.strip()
    if stripped.startswith("[") and stripped.endswith("]"):
        try:
            parsed = json.loads(stripped)
        except json.JSONDecodeError as error:
            raise ValueError(f"looks like a JSON list but is not valid JSON: {error.msg}") from None
        if not isinstance(parsed, list):
            raise ValueError("must be a JSON list")
        return parsed
    return stripped


def _run(raw: Any, where: str, problems: list[Problem]) -> LettaRun | None:
    """The row's recorded messages (in CSV, a cell holding them as JSON), read; each problem
    names the message (`messages[N]`)."""
    if raw is None:
        return None
    if isinstance(raw, str):
        try:
            raw = json.loads(raw)
        except json.JSONDecodeError as error:
            problems.append(
                Problem(where, "messages", f"is not a JSON list of letta messages ({error.msg})")
            )
            return None
    try:
        return read_run(raw)
    except TranscriptError as error:
        problems.extend(Problem(where, place, why) for place, why in error.problems)
        return None


def _json_object(raw: Any, csv: bool, where: str, problems: list[Problem]) -> dict[str, Any] | None:
    """rubric_vars: an object, or in a CSV cell a JSON object's text."""
    if raw is None:
        return None
    if csv and isinstance(raw, str):
        try:
            raw = json.loads(raw.strip())
        except json.JSONDecodeError as error:
            problems.append(Problem(where, "rubric_vars", f"is not valid JSON: {error.msg}"))
            return None
    if not isinstance(raw, dict):
        problems.append(
            Problem(where, "rubric_vars", f"must be an object of names, not {type(raw).__name__}")
        )
        return None
    return raw


def _own_rubric(
    raw: Mapping[str, Any], where: str, base_dir: Path, problems: list[Problem]
) -> tuple[str | None, str | None]:
    """The row's own rubric text and its source, from `rubric` or `rubric_path` (relative to
    the suite's folder, as letta resolves it)."""
    inline, path = raw.get("rubric"), raw.get("rubric_path")
    if inline is not None and path is not None:
        problems.append(Problem(where, "rubric_path", "give rubric or rubric_path, not both"))
        return None, None
    if inline is not None:
        if not isinstance(inline, str):
            problems.append(Problem(where, "rubric", _not_text(inline)))
            return None, None
        return inline, f"prompt:{where}"
    if path is None:
        return None, None
    if not isinstance(path, str) or not path.strip():
        problems.append(Problem(where, "rubric_path", "must be a file path"))
        return None, None
    file = (base_dir / path.strip()).resolve()
    if not file.is_relative_to(base_dir.resolve()):
        message = "leaves the suite's folder; rubriclib reads a row's rubric file only inside it"
        problems.append(Problem(where, "rubric_path", message))
        return None, None
    try:
        text = read_text(file, str(file))
    except InputError as error:
        problems += [
            Problem(where, "rubric_path", f"{p.source}: {p.message}") for p in error.problems
        ]
        return None, None
    return text, f"file:{file}"


def _context(
    top: Any, rubric_vars: dict[str, Any] | None, where: str, problems: list[Problem]
) -> str | None:
    """The context a rubric sees: `context`, else `rubric_vars.context` (passages numbered)."""
    field, value = ("context", top) if top is not None else ("rubric_vars.context", None)
    if top is None:
        value = (rubric_vars or {}).get("context")
    try:
        return field_text("context", value)
    except ValueError as error:
        problems.append(Problem(where, field, str(error)))
        return None


def _text_or_texts(value: Any) -> bool:
    return isinstance(value, str) or (
        isinstance(value, list) and all(isinstance(part, str) for part in value)
    )


def _not_text(value: Any, absent: str = "") -> str:
    if value is None:
        return absent
    if isinstance(value, list):
        kinds = sorted({type(part).__name__ for part in value if not isinstance(part, str)})
        return f"must be text or a list of texts; this list holds {', '.join(kinds)}"
    return f"must be text or a list of texts, not {type(value).__name__}"


def _count(value: str | list[str]) -> str:
    return f"{len(value)}" if isinstance(value, list) else "one text"
