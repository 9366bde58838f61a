"""inspect_ai scorers that judge each sample's output by a rubriclib rubric, and the reader of
inspect's chat messages (`state.messages`) into rubriclib's canonical agent run.

A judge error is raised (`JudgeError`), so inspect records a sample error: it stops the eval
(inspect's default `fail_on_error`) or, when errors are tolerated, leaves the sample unscored
and out of every metric. It is never a CORRECT score.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from rubriclib.integrations import chosen_judge
from rubriclib.item import field_text
from rubriclib.item.transcript import Message, ToolCall, Transcript, TranscriptError
from rubriclib.judging.judge import Judge
from rubriclib.judging.result import GradeResult, not_judged
from rubriclib.rubrics.registry import load_rubric
from rubriclib.rubrics.rubric import Rubric

if TYPE_CHECKING:
    from inspect_ai.scorer import Scorer, Target
    from inspect_ai.solver import TaskState


class JudgeError(RuntimeError):
    """The judge gave no verdict for a sample (verdict `error`); the message says why."""

    def __init__(self, result: GradeResult) -> None:
        self.result = result
        rubric = result.details["rubric"]
        super().__init__(f"rubriclib {rubric['name']}@{rubric['version']}: {result.reason}")


def rubric_scorer(
    rubric: str | Rubric,
    *,
    judge: Judge | None = None,
    model: str | None = None,
    base_url: str | None = None,
    context_key: str | None = "context",
) -> Scorer:
    """An inspect scorer judging each sample's output by `rubric` (a reference or a Rubric).
    A rubric that requires a transcript is also given the sample's whole run, `state.messages`
    (`inspect_transcript`); a run that cannot be read is a judge error, never a score.

    Args:
        rubric: A Rubric, or a reference: a name, a pin or a path.
        judge: The Judge to ask; None builds one from `model`, `base_url` and rubriclib's
            settings.
        model: The judge model, when no `judge` is given.
        base_url: The judge endpoint, when no `judge` is given.
        context_key: The sample metadata key holding the source context (None: no context).
    """
    resolved = rubric if isinstance(rubric, Rubric) else load_rubric(rubric)
    grader = chosen_judge(judge, model, base_url, "rubric_scorer")
    try:
        from inspect_ai.scorer import CORRECT, INCORRECT, Score, accuracy, mean, scorer, stderr
    except ImportError as error:
        raise ImportError(
            "rubric_scorer needs inspect_ai: pip install 'rubriclib[inspect]'"
        ) from error
    one_to_five = resolved.scale == "1-5"
    metrics = [mean(), stderr()] if one_to_five else [accuracy(), stderr()]

    # Decorated here, not at module level: the metrics follow the rubric's scale. The arguments
    # are what inspect records in the log (the endpoint carries no credentials).
    @scorer(metrics=metrics, name="rubric_scorer")  # type: ignore[untyped-decorator]
    def make(rubric: str, model: str, endpoint: str, context_key: str | None) -> Scorer:
        async def score(state: TaskState, target: Target) -> Score:
            context = state.metadata.get(context_key) if context_key else None
            try:
                context = field_text("context", context)
            except ValueError as error:
                raise ValueError(f"sample metadata[{context_key!r}]: {error}") from None
            output = state.output.completion
            run = None
            if "transcript" in resolved.requires:
                try:
                    run = inspect_transcript(state.messages)
                except TranscriptError as error:
                    cause = f"the sample's run cannot be read: {error}"
                    raise JudgeError(not_judged(resolved, grader.model, cause)) from None
            result = await grader.agrade(
                resolved,
                output,
                input=_input_text(state.input),
                context=context,
                reference="\n".join(text for text in target if text) or None,
                transcript=run,
            )
            if result.verdict == "error":
                raise JudgeError(result)
            raw = result.details.get("raw_score")
            return Score(
                value=raw if one_to_five else CORRECT if result.passed else INCORRECT,
                answer=output,
                explanation=result.reason,
                metadata={"verdict": result.verdict, "score": result.score, **result.details},
            )

        return score

    reference = rubric if isinstance(rubric, str) else f"{rubric.name}@{rubric.version}"
    return make(reference, grader.model, grader.endpoint, context_key)


def _input_text(value: str | list[Any]) -> str:
    """A sample's input as text: chat messages shown as a `role: text` transcript."""
    if isinstance(value, str):
        return value
    return "\n".join(f"{message.role}: {message.text}" for message in value)


ROLES = ("system", "user", "assistant", "tool")


def inspect_transcript(messages: Sequence[Any], field: str = "state.messages") -> Transcript:
    """inspect_ai's chat messages (ChatMessageSystem / User / Assistant / Tool, as in
    `state.messages`) as a Transcript of shape `inspect`, nothing silently dropped: reasoning is
    the message's thinking (a redacted one said to be), an image, audio, video, document or
    provider payload is named, a tool error is a tool result marked as one with inspect's error
    type and message, and a tool the provider ran itself (web search, MCP) is a call followed by
    its result. A run that cannot be read (a tool message whose call is not earlier in the run,
    a role or content type inspect did not have) is a TranscriptError naming `field[N]`."""
    problems: list[tuple[str, str]] = []
    if not messages:
        raise TranscriptError([(field, "is empty: the sample has no messages (an agent run)")])
    read: list[tuple[Message, str, str | None]] = []
    for index, message in enumerate(messages):
        place = f"{field}[{index}]"
        read.extend((one, place, function) for one, function in _message(message, place, problems))
    calls: dict[str, ToolCall] = {}
    for message, place, function in read:
        call = calls.get(message.answers) if message.answers is not None else None
        if message.answers is not None and call is None:
            problems.append(
                (place, f"answers call {message.answers!r}, which is not earlier in the run")
            )
        elif call is not None and function is not None and function != call.name:
            problems.append(
                (
                    f"{place}.function",
                    f"is {function!r}, but call {call.id!r} it answers is to {call.name!r}",
                )
            )
        calls.update((made.id, made) for made in message.tool_calls)
    if problems:
        raise TranscriptError(problems)
    return Transcript(messages=tuple(message for message, _, _ in read), shape="inspect")


def _message(
    message: Any, place: str, problems: list[tuple[str, str]]
) -> list[tuple[Message, str | None]]:
    """One inspect message, and for a tool message the function it names; a server-side tool
    use in an assistant's content adds its result after the message."""
    role = getattr(message, "role", None)
    if role not in ROLES:
        problems.append((f"{place}.role", f"unknown role {role!r}; roles are {', '.join(ROLES)}"))
        return []
    texts, thinking, used = _content(getattr(message, "content", None), place, problems)
    if role == "tool":
        call_id = message.tool_call_id
        if not isinstance(call_id, str) or not call_id:
            problems.append((f"{place}.tool_call_id", "a tool message needs the id of its call"))
            return []
        if message.error is not None:  # inspect's type "unknown" is a plain ToolError
            kind = "" if message.error.type == "unknown" else f": {message.error.type}"
            texts.append(f"(error{kind}) {message.error.message}")
        shown = "\n".join(texts)
        result = Message(
            role="tool",
            text=shown,
            thinking=thinking,
            answers=call_id,
            is_error=message.error is not None,
        )
        return [(result, message.function)]
    if role == "user" and message.tool_call_id:
        texts.insert(0, f"(content for tool call {', '.join(message.tool_call_id)})")
    calls = []
    for call in (message.tool_calls or ()) if role == "assistant" else ():
        calls.append(ToolCall(id=call.id, name=call.function, arguments=call.arguments))
        if call.parse_error:
            texts.append(f"(arguments of tool call {call.id} not parsed) {call.parse_error}")
    calls.extend(call for call, _ in used)
    read = Message(role=role, text="\n".join(texts), thinking=thinking, tool_calls=tuple(calls))
    return [(read, None), *((result, None) for _, result in used)]


def _content(
    content: Any, place: str, problems: list[tuple[str, str]]
) -> tuple[list[str], str, list[tuple[ToolCall, Message]]]:
    """A message's content: its texts (other media named), its thinking, and the tools the
    provider ran itself, each a call and its result."""
    if isinstance(content, str):
        return ([content] if content else []), "", []
    if not isinstance(content, list):
        problems.append(
            (f"{place}.content", f"must be text or a list of content, not {type(content).__name__}")
        )
        return [], "", []
    texts: list[str] = []
    thinking: list[str] = []
    used: list[tuple[ToolCall, Message]] = []
    for index, part in enumerate(content):
        kind = getattr(part, "type", None)
        if kind == "text":
            text = f"(refusal) {part.text}" if part.refusal else part.text
            cited = [_citation(citation) for citation in part.citations or ()]
            texts.append("\n".join([text, f"(cited: {'; '.join(cited)})"]) if cited else text)
        elif kind == "reasoning":
            shown = "(reasoning redacted)" if part.redacted else part.reasoning
            if part.summary and part.summary != part.reasoning:
                shown = "\n".join(filter(None, [shown, f"(summary) {part.summary}"]))
            thinking.append(shown)
        elif kind in ("image", "audio", "video"):
            source = getattr(part, kind)
            named = "" if source.startswith("data:") else f": {source}"
            texts.append(f"({kind} not shown{named})")
        elif kind == "document":
            texts.append(f"(document {part.filename or part.mime_type} not shown)")
        elif kind == "data":
            texts.append("(provider data not shown)")
        elif kind == "tool_use":
            used.append(_server_tool(part))
        else:
            problems.append((f"{place}.content[{index}]", f"unknown content type {kind!r}"))
    return texts, "\n".join(thinking), used


def _server_tool(part: Any) -> tuple[ToolCall, Message]:
    """A tool the provider ran itself (ContentToolUse): the call, and its result."""
    try:
        arguments = json.loads(part.arguments)
    except (TypeError, ValueError):
        arguments = part.arguments  # kept as the provider recorded it
    ran = f"(run by the provider: {part.tool_type}{f' on {part.context}' if part.context else ''})"
    texts = [ran, part.result or ""]
    if part.error:
        texts.append(f"(error) {part.error}")
    result = Message(
        role="tool", text="\n".join(filter(None, texts)), answers=part.id, is_error=bool(part.error)
    )
    return ToolCall(id=part.id, name=part.name, arguments=arguments), result


def _citation(citation: Any) -> str:
    """What a citation points at: its URL, else its title, else the text it cites."""
    pointed = getattr(citation, "url", None) or citation.title or citation.cited_text
    return str(pointed)
