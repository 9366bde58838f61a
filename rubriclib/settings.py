"""JudgeSettings: how one judge is reached and sampled, the one schema an eval file's `judge:`,
a promptfoo assertion's `config` and the command line's flags all fill."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator

from rubriclib.config import base_url_problem


def usable_base_url(url: str | None) -> str | None:
    """A pydantic validator: `url` if it can be an endpoint, else why not (never quoting it)."""
    if url is not None and (problem := base_url_problem(url)):
        raise ValueError(problem)
    return url


AnswerMode = Literal["tool", "probability", "one-call"]
ANSWER_MODES: tuple[AnswerMode, ...] = ("tool", "probability", "one-call")
"""How checklist items are answered: each by a tool call with a reason (the default), each as
one word read as a probability, or all of them in one tool call."""


def checklist_flag(answers: AnswerMode) -> str:
    """The command-line flag that asks for checklist mode with items answered as `answers`, as
    the user typed it (a refusal names it): `--checklist`, or `--checklist-answers one-call`."""
    return "--checklist" if answers == "tool" else f"--checklist-answers {answers}"


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
    checklist: bool | None = None
    """Checklist mode (`Judge(mode="checklist")`): ask each of the rubric's checklist items
    on its own and compute the verdict from the answers."""
    checklist_answers: AnswerMode | None = None
    """How checklist items are answered (`Judge(answers=...)`): `tool` (a call with a reason),
    `probability` (one word, p(yes) read from logprobs) or `one-call` (every item in one
    call); the last two imply checklist mode."""

    _base_url = field_validator("base_url")(usable_base_url)

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

    @property
    def asks_checklist(self) -> bool:
        """Whether a judge made from these settings asks the rubric's checklist."""
        return bool(self.checklist) or self.checklist_answers in ("probability", "one-call")

    def judge_settings(self) -> JudgeSettings:
        """Only the judge's own fields (a subclass, such as an eval file's `judge:`, adds run
        settings or an assertion's rubric)."""
        if type(self) is JudgeSettings:
            return self
        return JudgeSettings(**{name: getattr(self, name) for name in JudgeSettings.model_fields})
