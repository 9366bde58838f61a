"""JudgeSettings: how one judge is reached and sampled, the one schema an eval file's `judge:`,
a promptfoo assertion's `config` and the command line's flags all fill."""

from __future__ import annotations

import warnings
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Literal

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    TypeAdapter,
    ValidationError,
    field_validator,
    model_validator,
)

from rubriclib.config import CHOICES, base_url_problem, resolve
from rubriclib.errors import JudgeConfigError, Problem


def usable_base_url(url: str | None) -> str | None:
    """A pydantic validator: `url` if it can be an endpoint, else why not (never quoting it)."""
    if url is not None and (problem := base_url_problem(url)):
        raise ValueError(problem)
    return url


Mode = Literal["holistic", "checklist"]
"""How a judge asks for a verdict: one request for the whole rubric (`holistic`), or each of
the rubric's checklist items on its own, the verdict computed from the answers (`checklist`)."""

Protocol = Literal["tools", "json", "auto"]
"""How a judge is asked for its verdict (`config.PROTOCOLS`): a tool call (`tools`, the
default), one JSON object in the same schema (`json`, for endpoints that constrain output to a
schema but call tools badly), or tools until an endpoint refuses them, then JSON (`auto`)."""
Evidence = Literal["whole", "explore", "auto"]
"""How a judge is shown an agent run (`config.EVIDENCE_MODES`): whole, cut in the middle to fit
the prompt (`whole`), through tools that list, read and search its blocks (`explore`), or
whole when it fits uncut and explored otherwise (`auto`, the default)."""
AnswerMode = Literal["tool", "probability", "one-call"]
ANSWER_MODES: tuple[AnswerMode, ...] = ("tool", "probability", "one-call")
"""How checklist items are answered: each by a tool call with a reason (the default), each as
one word read as a probability, or all of them in one tool call."""


def checked_modes(votes: Any, mode: Any, answers: Any) -> None:
    """A JudgeConfigError for votes, a mode or an answers setting a Judge cannot take."""
    if isinstance(votes, bool) or not isinstance(votes, int) or votes < 1:
        raise JudgeConfigError(f"votes must be a whole number of at least 1, not {votes!r}")
    if mode not in ("holistic", "checklist"):
        raise JudgeConfigError(f"mode must be 'holistic' or 'checklist', not {mode!r}")
    if answers not in ANSWER_MODES:
        named = ", ".join(f"'{name}'" for name in ANSWER_MODES)
        raise JudgeConfigError(f"answers must be one of {named}, not {answers!r}")
    if answers != "tool" and mode != "checklist":
        raise JudgeConfigError(
            f"answers={answers!r} reads checklist items' answers: use it with mode='checklist'"
        )


def checked_choice(name: str, value: Any) -> Any:
    """`value` when it is one of the words setting `name` takes (`config.CHOICES`), else a
    JudgeConfigError naming them."""
    words = CHOICES[name]
    if value not in words:
        named = ", ".join(f"'{word}'" for word in words[:-1])
        raise JudgeConfigError(f"{name} must be {named} or '{words[-1]}', not {value!r}")
    return value


def checked_seed(seed: Any) -> int | None:
    """`seed` when a judge can send it (None: none), else a JudgeConfigError."""
    if seed is not None and (isinstance(seed, bool) or not isinstance(seed, int) or seed < 0):
        raise JudgeConfigError(f"seed must be a whole number of at least 0, not {seed!r}")
    return seed


def whole_number(value: Any, least: int = 0) -> bool:
    """Whether `value` is an int (not a bool) of at least `least`."""
    return isinstance(value, int) and not isinstance(value, bool) and value >= least


def checked_exploring(judge: Any, turns: Any, characters: Any) -> tuple[int, int | None]:
    """An explored judgment's budget (turns, characters), or a JudgeConfigError for one out of
    range or for exploring that `judge` (its evidence, protocol and mode) cannot do."""
    if not whole_number(turns, 1):
        raise JudgeConfigError(
            f"exploring_turns must be a whole number of at least 1, not {turns!r}"
        )
    if characters is not None and not whole_number(characters, 1):
        why = f"exploring_characters must be a whole number of at least 1, not {characters!r}"
        raise JudgeConfigError(why)
    if judge.evidence == "explore" and judge.protocol == "json":
        raise JudgeConfigError("evidence='explore' needs tools: the json protocol offers none")
    if judge.evidence == "explore" and judge.mode == "checklist":
        raise JudgeConfigError("evidence='explore' does not apply to checklist mode (yet)")
    return turns, characters


def checklist_flag(answers: AnswerMode) -> str:
    """The command-line flag that asks for checklist mode with items answered as `answers`, as
    the user typed it (a refusal names it): `--checklist`, or `--checklist-answers one-call`."""
    return "--checklist" if answers == "tool" else f"--checklist-answers {answers}"


def checklist_mode(answers: AnswerMode | None) -> dict[str, Any]:
    """The settings --checklist and --checklist-answers give, `answers` being how they ask the
    items answered: checklist mode, so answered; none when `answers` is None (neither flag:
    the mode is left to the next layer)."""
    return {} if answers is None else {"mode": "checklist", "answers": answers}


RENAMED_KEYS: dict[str, str] = {"checklist": "mode", "checklist_answers": "answers"}
"""Judge settings spelt another way before 0.2.0 (the old key: the new). An old key still
gives the same judge until then, with a deprecation warning; both spellings of one setting at
once are refused."""

_OLD_CHECKLIST: TypeAdapter[bool | None] = TypeAdapter(bool | None)


@dataclass(frozen=True)
class OldSpelling:
    """One renamed key a mapping spelt the old way: the setting it is now (`new`, `value`),
    or why it is refused (`refused`: both spellings given, or a value it never took)."""

    key: str
    new: str
    value: Any = None
    refused: str | None = None

    @property
    def deprecation(self) -> str:
        """What a file's warning says after the key's place (`judge.checklist: ...`)."""
        use = self.new if self.value is None else f"{self.new}: {self.value}"
        return f"deprecated, use {use} ({self.key} is read until rubriclib 0.2.0)"


def new_spelling(data: Mapping[str, Any]) -> tuple[dict[str, Any], list[OldSpelling]]:
    """`data` with each renamed key (`RENAMED_KEYS`) spelt the new way, its value as the new
    key takes it (`checklist: true` is `mode: checklist`, `false` is `mode: holistic`), and
    each old key found; one refused is left out of the mapping."""
    renamed = {key: value for key, value in data.items() if key not in RENAMED_KEYS}
    found = []
    for key, new in RENAMED_KEYS.items():
        if key in data:
            found.append(old := _read_old(key, new, data[key], data.get(new)))
            if old.refused is None and old.value is not None:
                renamed[new] = old.value
    return renamed, found


def _read_old(key: str, new: str, value: Any, new_value: Any) -> OldSpelling:
    """The old key `key` given `value`, the new one `new_value` (None: unset)."""
    if key == "checklist":
        try:
            asked = _OLD_CHECKLIST.validate_python(value)
        except ValidationError:
            return OldSpelling(key, new, value, f"must be true or false (deprecated: use {new})")
        value = None if asked is None else ("checklist" if asked else "holistic")
    if value is not None and new_value is not None:
        return OldSpelling(key, new, value, f"give {new} or {key} (its old name), not both")
    return OldSpelling(key, new, value)


@dataclass
class Respelling:
    """The judge settings of one file (`label`, an eval file or a promptfoo config), each
    mapping respelt the new way (`settings`): what each old key found says, as problems at
    its place (`deprecations` to warn of, `refusals`), and where each came from (`moved`: the
    new key's place, `judge.mode`, by the old one's, `judge.checklist`)."""

    label: str
    deprecations: list[Problem] = field(default_factory=list)
    refusals: list[Problem] = field(default_factory=list)
    moved: dict[str, str] = field(default_factory=dict)

    def settings(self, value: Any, at: str) -> Any:
        """One mapping of judge settings at the place `at`, its old keys spelt the new way
        (anything else as it is: validation names it)."""
        if not isinstance(value, Mapping):
            return value
        renamed, found = new_spelling(value)
        for old in found:
            place = f"{at}.{old.key}"
            if old.refused is not None:
                self.refusals.append(Problem(self.label, place, old.refused))
                continue
            self.deprecations.append(Problem(self.label, place, old.deprecation))
            if old.value is not None:
                self.moved[f"{at}.{old.new}"] = place
        return renamed

    def as_written(self, problem: Problem) -> Problem:
        """`problem`, naming the key the file has where it names one respelt (a value out of
        range, a rubric checklist mode cannot judge)."""
        for new, old in self.moved.items():
            if problem.field == new or problem.field.startswith((f"{new}.", f"{new}[")):
                return Problem(problem.source, old + problem.field[len(new) :], problem.message)
        return problem


def checklist_argument(answers: AnswerMode) -> str:
    """The Judge argument that asks for checklist mode with items answered as `answers`, as a
    Python caller wrote it (a refusal names it): `mode='checklist'`, or `answers='one-call'`."""
    return "mode='checklist'" if answers == "tool" else f"answers={answers!r}"


class JudgeSettings(BaseModel):
    """A judge's settings; None leaves a field to the next layer down. Layers merge by one rule,
    flag > eval file > config > default: `merge` lays one layer over another, and
    `Judge.from_settings` fills what is still None from the environment or rubriclib.toml (model,
    base_url) or the Judge's own defaults."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    model: str | None = None
    base_url: str | None = None
    api_key_env: str | None = None
    """The environment variable holding the key; it must be set (never OPENAI_API_KEY instead:
    that key belongs to another endpoint)."""
    temperature: float | None = Field(default=None, ge=0)
    max_tokens: int | None = Field(default=None, ge=1)
    timeout: float | None = Field(default=None, gt=0)
    max_retries: int | None = Field(default=None, ge=0)
    votes: int | None = Field(default=None, ge=1, strict=True)
    """Independent judgments per row, combined by majority (on 1-5, the median score)."""
    mode: Mode | None = None
    """`holistic` (one request asks for the verdict) or `checklist` (each of the rubric's
    checklist items asked on its own, the verdict computed from the answers), as
    `Judge(mode=...)`. Before 0.2.0 also read as `checklist` (true or false), deprecated."""
    answers: AnswerMode | None = None
    """How checklist items are answered, as `Judge(answers=...)`: `tool` (a call with a
    reason), `probability` (one word, p(yes) read from logprobs) or `one-call` (every item in
    one call); the last two imply `mode="checklist"`. Before 0.2.0 also read as
    `checklist_answers`, deprecated."""

    protocol: Protocol | None = None
    """How verdicts are asked for, as `Judge(protocol=...)`: `tools` (a tool call), `json`
    (one JSON object in the verdict tool's schema) or `auto` (tools, then JSON where they are
    refused)."""
    seed: int | None = Field(default=None, ge=0, strict=True)
    """The seed sent with every request, as `Judge(seed=...)`: vote and trial K are sent the
    seed plus their offset, so votes stay independent samples."""
    evidence: Evidence | None = None
    """How an agent run is shown, as `Judge(evidence=...)`: `whole` (cut to fit), `explore`
    (through the judge's tools) or `auto` (whole when it fits uncut, else explored)."""
    exploring_turns: int | None = Field(default=None, ge=1, strict=True)
    exploring_characters: int | None = Field(default=None, ge=1, strict=True)
    """An explored judgment's budget: requests, and characters its tools show."""

    _base_url = field_validator("base_url")(usable_base_url)

    @model_validator(mode="before")
    @classmethod
    def _old_spelling(cls, data: Any) -> Any:
        """`checklist=` and `checklist_answers=` read as `mode=` and `answers=`, each with a
        DeprecationWarning at the caller's line; both spellings of one setting refused."""
        if not isinstance(data, Mapping) or not RENAMED_KEYS.keys() & data.keys():
            return data
        renamed, found = new_spelling(data)
        if refused := [f"{old.key}: {old.refused}" for old in found if old.refused]:
            raise ValueError("; ".join(refused))
        for old in found:
            warnings.warn(
                f"the judge setting {old.key} is deprecated, use {old.new}={old.value!r} "
                f"({old.key} is read until rubriclib 0.2.0)",
                DeprecationWarning,
                stacklevel=3,  # past pydantic's __init__ (or model_validate): the caller
            )
        return renamed

    def merge(self, over: JudgeSettings | None = None, **flags: Any) -> JudgeSettings:
        """These settings with every field `over` (then `flags`) sets replacing this one's: a
        None (an option not given) changes nothing. Extra fields of a subclass are dropped."""
        layers = [self.judge_settings()]
        if over is not None:
            layers.append(over.judge_settings())
        layers.append(JudgeSettings(**flags))
        merged: dict[str, Any] = {}
        for layer in layers:
            merged |= layer.model_dump(exclude_none=True)
        return JudgeSettings(**merged)

    def run_evidence(self) -> str:
        """How a judge made from these settings shows an agent run (`render` and the dry run
        show it so): its evidence mode (else the environment's or config's), or `whole` where
        exploring does not apply (checklist mode, the json protocol)."""
        protocol = self.protocol or resolve("protocol").value
        if self.asks_checklist or protocol == "json":
            return "whole"
        return str(self.evidence or resolve("evidence").value)

    @property
    def asks_checklist(self) -> bool:
        """Whether a judge made from these settings asks the rubric's checklist."""
        return self.mode == "checklist" or self.answers in ("probability", "one-call")

    @property
    def checklist(self) -> bool | None:
        """Deprecated (read until 0.2.0): whether `mode` is `checklist`, None when unset."""
        warnings.warn(
            "JudgeSettings.checklist is deprecated, use mode", DeprecationWarning, stacklevel=2
        )
        return None if self.mode is None else self.mode == "checklist"

    @property
    def checklist_answers(self) -> AnswerMode | None:
        """Deprecated (read until 0.2.0): `answers`."""
        warnings.warn(
            "JudgeSettings.checklist_answers is deprecated, use answers",
            DeprecationWarning,
            stacklevel=2,
        )
        return self.answers

    def judge_settings(self) -> JudgeSettings:
        """Only the judge's own fields (a subclass, such as an eval file's `judge:`, adds run
        settings or an assertion's rubric)."""
        if type(self) is JudgeSettings:
            return self
        return JudgeSettings(**{name: getattr(self, name) for name in JudgeSettings.model_fields})
