"""Item: one output to judge, with the fields a rubric may use; an agent run is a Transcript
(`rubriclib.item.transcript`)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator, model_validator

from rubriclib._faces import lazy_face
from rubriclib.item.transcript import Transcript as Transcript
from rubriclib.item.transcript import TranscriptError as TranscriptError
from rubriclib.item.transcript import read_transcript as read_transcript
from rubriclib.item.transcript import with_final_answer as with_final_answer


class Item(BaseModel):
    """One candidate output and its optional task input, source context, reference answer and
    baseline (the second output a pairwise rubric compares it with; other rubrics ignore it).
    A candidate may be an agent run (`transcript`): its output is then the run's last
    assistant text unless given. `id` and `metadata` are carried for the caller and never sent
    to the judge."""

    model_config = ConfigDict(extra="forbid", frozen=True, strict=True)

    output: str
    """The candidate output (required; a number is text, as in a dataset row)."""
    transcript: Transcript | None = None
    """An agent run, in OpenAI chat, Anthropic, Responses or LangChain shape, judged whole."""
    input: str | None = None
    """The task input (text, or chat messages shown as a `role: content` transcript)."""
    context: str | None = None
    """The source context (text, or passages shown numbered `[1] ...`)."""
    reference: str | None = None
    """A reference answer."""
    baseline: str | None = None
    """The second output a pairwise rubric compares `output` with."""
    id: str | int | None = None
    """The caller's name for the item; never sent to the judge."""
    metadata: dict[str, Any] = Field(default_factory=dict)
    """Anything the caller keeps with the item; never sent to the judge."""
    variables: dict[str, str] | None = None
    """The values a letta-evals prompt places by name (`{input}`, `{ground_truth}`,
    `{submission}`, the row's rubric_vars); read only by a letta template rubric."""

    @field_validator("output", "input", "context", "reference", "baseline", mode="before")
    @classmethod
    def _as_text(cls, value: Any, info: Any) -> Any:
        """The same rule as a dataset row: numbers, chat messages and passages are text."""
        return field_text(info.field_name, value)

    @field_validator("transcript", mode="before")
    @classmethod
    def _as_transcript(cls, value: Any) -> Any:
        return None if value is None else read_transcript(value)

    _output_from_run = model_validator(mode="before")(with_final_answer)


class ItemError(TypeError):
    """A bad item among many, named by its index; `results` are those of the items before it,
    in order: they were judged before it was reached, and are kept."""

    def __init__(self, message: str, results: list[Any]) -> None:
        super().__init__(message)
        self.results = results


def as_item(value: Item | Mapping[str, Any], where: str = "item") -> Item:
    """`value` as an Item; when it cannot be one, a TypeError naming `where` and the field, or,
    when only its run cannot be read, a TranscriptError naming each message
    (`grade.transcript[1]`)."""
    if isinstance(value, Item):
        return value
    if not isinstance(value, Mapping):
        raise TypeError(f"{where}: must be a rubriclib.Item or a dict, not {type(value).__name__}")
    try:
        return Item.model_validate(dict(value))
    except ValidationError as error:
        problems: list[str] = []
        run_problems: list[tuple[str, str]] = []
        for problem in error.errors():
            field = ".".join(str(part) for part in problem["loc"]) or "item"
            if problem["type"] == "extra_forbidden":
                message = (
                    "unknown key; items have output, transcript, input, context, reference, "
                    "baseline, id, metadata, variables"
                )
            elif problem["type"] == "missing":
                message = "is required"
            elif problem["type"] == "value_error":
                error = problem["ctx"]["error"]
                if isinstance(error, TranscriptError):
                    run_problems.extend((f"{where}.{place}", why) for place, why in error.problems)
                    continue
                message = str(error)
            else:
                message = f"must be {_expected(field)}, not {type(problem['input']).__name__}"
            problems.append(f"{where}.{field}: {message}")
        if not problems:
            raise TranscriptError(run_problems) from None
        problems += [f"{place}: {why}" for place, why in run_problems]
        raise TypeError("; ".join(problems)) from None


def _expected(field: str) -> str:
    kinds = {
        "output": "a string",
        "metadata": "a dict",
        "id": "a string, an integer or None",
        "variables": "a dict of strings or None",
        "transcript": "a list of messages (an agent run) or None",
    }
    return kinds.get(field, "a string or None")


def missing_fields(requires: Sequence[str], item: Item) -> list[str]:
    """The fields in `requires` that `item` lacks (None or only whitespace; a baseline only
    when None, since an empty response is still one to compare with). A run with a user
    message gives the input: the request is in it, shown to the judge."""
    return [name for name in requires if _lacks(item, name)]


def _lacks(item: Item, name: str) -> bool:
    value = getattr(item, name)
    if name == "input" and item.transcript is not None and (value is None or not value.strip()):
        return not any(message.role == "user" for message in item.transcript.messages)
    if name in ("baseline", "transcript"):
        return value is None
    return value is None or not value.strip()


class NoOutput(Exception):
    """An item's output could not be produced (a target model failed); the message says why."""


def field_text(field: str, value: Any) -> str | None:
    """A row value as the text the judge sees: lists of passages numbered, chat messages shown
    as a transcript; a ValueError saying why when it cannot be text."""
    if value is None or isinstance(value, str):
        return value
    if isinstance(value, int | float) and not isinstance(value, bool):
        return str(value)
    is_list = isinstance(value, list) and bool(value)
    if is_list and field == "input" and all(isinstance(m, Mapping) for m in value):
        lines = []
        for message in value:
            role, content = message.get("role"), message.get("content")
            if not isinstance(role, str) or not isinstance(content, str):
                raise ValueError(
                    "chat messages need a 'role' and a text 'content' (an agent run, with tool "
                    "calls, is a `transcript`)"
                )
            lines.append(f"{role}: {content}")
        return "\n".join(lines)
    if is_list and field == "context" and all(isinstance(passage, str) for passage in value):
        return "\n\n".join(f"[{n}] {passage}" for n, passage in enumerate(value, start=1))
    kinds = {
        "input": "text or a list of chat messages ({role, content})",
        "context": "text or a list of passages (texts)",
    }
    expected = kinds.get(field, "text")
    if isinstance(value, list) and value:  # say what the list holds, not that it is a list
        held = sorted({type(part).__name__ for part in value})
        raise ValueError(f"must be {expected}; this list holds {', '.join(held)}")
    raise ValueError(f"must be {expected}, not {type(value).__name__}")


# The face: other rooms import these names only from here.
if TYPE_CHECKING:
    from rubriclib.item.transcript import Message as Message
    from rubriclib.item.transcript import Problems as Problems
    from rubriclib.item.transcript import ToolCall as ToolCall
    from rubriclib.item.transcript import unanswered as unanswered
    from rubriclib.item.transcript.inspect import inspect_message as inspect_message
    from rubriclib.item.transcript.inspect import read_inspect as read_inspect
    from rubriclib.item.transcript.opentelemetry import read_traces as read_traces
    from rubriclib.item.transcript.opentelemetry import traces as traces
    from rubriclib.item.transcript.otlp import is_export as is_export

_HOMES = {
    "Message": ".transcript",
    "Problems": ".transcript",
    "ToolCall": ".transcript",
    "inspect_message": ".transcript.inspect",
    "is_export": ".transcript.otlp",
    "read_inspect": ".transcript.inspect",
    "read_traces": ".transcript.opentelemetry",
    "traces": ".transcript.opentelemetry",
    "unanswered": ".transcript",
}
__getattr__, __dir__ = lazy_face(__name__, _HOMES)
