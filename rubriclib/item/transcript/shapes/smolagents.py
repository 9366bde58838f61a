"""smolagents' memory as a user saves it, in either of its forms: the messages
`agent.write_memory_to_messages()` gives (each message's `.dict()`: system, user and assistant
text parts, `tool-call` with its calls written as a Python list, `tool-response` with a step's
observation or error), or the steps `agent.memory.get_full_steps()` gives (task, action and
planning steps). Both are read into the agent's steps, and the steps into messages: a step's
text and calls, its observation as the result of its call, its error as a tool error, and the
answer that ended a task as the assistant's answer."""

from __future__ import annotations

import ast
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from rubriclib.item.transcript.model import Message, Problems, ToolCall
from rubriclib.item.transcript.parts import part_text, role_of

ROLES = ("system", "user", "assistant", "tool-call", "tool-response")
STEPS = {
    "TaskStep": {"task", "task_images"},
    "ActionStep": {"step_number", "model_output_message"},
    "PlanningStep": {"plan", "model_output_message"},
}
"""A step of `get_full_steps()` by the keys that tell it apart."""
FINAL_ANSWER = "final_answer"
CODE_TOOL = "python_interpreter"
"""The call a CodeAgent's step makes: its code, which ends the run when it calls final_answer."""
NEW_TASK, CALLING, OBSERVED, CALL_ID, ERROR = (
    "New task:\n",
    "Calling tools:\n",
    "Observation:\n",
    "Call id: ",
    "Error:\n",
)
"""How smolagents frames a task, a step's calls, its observation and its error (memory.py)."""
RETRY = (
    "\nNow let's retry: take care not to repeat previous errors! If you have retried several "
    "times, try a completely different approach.\n"
)
"""What smolagents adds to every error it shows the model."""
PROCEED = "Now proceed and carry out this plan."
"""What smolagents tells the model after each plan, as the user (a planning step holds no
message of it)."""
LAST_OUTPUT = "Last output from code snippet:\n"
"""Where a CodeAgent's observation gives its code's output: the answer, in the step that ends."""


@dataclass
class Step:
    """One step of the agent, where it is recorded: the model's text and calls, and what came
    back (`(where, text)`); `final` when its answer ended its task."""

    place: str
    text: str = ""
    calls: list[ToolCall] = field(default_factory=list)
    result: tuple[str, str] | None = None
    error: tuple[str, str] | None = None
    final: bool = False


Read = list[tuple[str, Message] | Step]
"""A run read into the messages outside steps (system, user) and the steps."""


def smolagents_sign(entry: Mapping[str, Any]) -> str | None:
    """What marks `entry` as smolagents' (a tool-call or tool-response role, a ChatMessage's
    `token_usage` beside its role, a memory step's keys), or None."""
    role = entry.get("role")
    if role in ("tool-call", "tool-response"):
        return f"role {role!r}"
    if "role" in entry and "token_usage" in entry:
        return "a smolagents ChatMessage (role with token_usage)"
    if kind := _step_kind(entry):
        return f"a smolagents {kind} ({', '.join(sorted(STEPS[kind]))})"
    return None


def smolagents_run(
    entries: list[tuple[str, Any]], problems: Problems
) -> tuple[list[Message], list[str]]:
    """The run's messages and where each is recorded, from one form of its memory."""
    forms = ("a message of write_memory_to_messages()", "a step of get_full_steps()")
    steps_form = _step_kind(entries[0][1]) is not None
    for place, entry in entries[1:]:
        sign = smolagents_sign(entry)
        if sign and (_step_kind(entry) is not None) != steps_form:
            problems.append(
                (
                    place,
                    f"{sign} is {forms[not steps_form]}, but {entries[0][0]} is "
                    f"{forms[steps_form]}: a run is saved in one form",
                )
            )
            return [], []
    read = _from_steps(entries, problems) if steps_form else _from_messages(entries, problems)
    messages: list[Message] = []
    places: list[str] = []
    for item in read:
        for place, message in _step_messages(item) if isinstance(item, Step) else [item]:
            messages.append(message)
            places.append(place)
    return messages, places


def _step_kind(entry: Mapping[str, Any]) -> str | None:
    return next((kind for kind, keys in STEPS.items() if keys <= entry.keys()), None)


def _from_messages(entries: list[tuple[str, Any]], problems: Problems) -> Read:
    """`write_memory_to_messages()`'s messages read into steps: an assistant's text, the calls
    after it and the responses to them are one step."""
    read: Read = []
    for place, entry in entries:
        role = role_of(entry, place, ROLES, problems)
        text = _text(entry.get("content"), f"{place}.content", problems)
        step = read[-1] if read and isinstance(read[-1], Step) else None
        if role == "tool-call":
            if step is None or step.calls or step.result or step.error:
                step = Step(place)
                read.append(step)
            step.calls = _written_calls(text, f"{place}.content", problems)
        elif role == "tool-response":
            if step is None or (step.error or (step.result and text.startswith(OBSERVED))):
                step = Step(place)
                read.append(step)
            _response(step, text, place, problems)
        elif role == "assistant":
            read.append(Step(place, text=text))
        elif role is not None:
            shown = text.removeprefix(NEW_TASK) if role == "user" else text
            read.append((place, Message(role=role, text=shown)))
    for index, item in enumerate(read):
        after = read[index + 1] if index + 1 < len(read) else None
        if isinstance(item, Step):  # a task ends where the run does, or the next task begins
            item.final = _answered(item, last=after is None or not isinstance(after, Step))
    return read


def _written_calls(text: str, at: str, problems: Problems) -> list[ToolCall]:
    """A tool-call message's calls: `Calling tools:` and a Python list of `{id, type,
    function: {name, arguments}}`, as smolagents writes it."""
    try:
        written = ast.literal_eval(text.removeprefix(CALLING)) if text.startswith(CALLING) else None
    except (ValueError, SyntaxError, MemoryError, RecursionError) as error:
        problems.append((at, f"its calls are not readable after {CALLING!r} ({error})"))
        return []
    if not isinstance(written, list):
        problems.append(
            (at, f"must be {CALLING!r} and a list of calls, as smolagents writes a tool-call")
        )
        return []
    return _calls(written, lambda index: f"{at} (call {index + 1})", problems)


def _response(step: Step, text: str, place: str, problems: Problems) -> None:
    """A tool-response: the step's observation, or its error (its `Call id:` line, `Error:`
    and the retry smolagents asks for left out)."""
    if text.startswith(OBSERVED):
        step.result = (place, text.removeprefix(OBSERVED))
        return
    if text.startswith(CALL_ID):
        text = text.partition("\n")[2]
    if not text.startswith(ERROR):
        problems.append(
            (
                f"{place}.content",
                f"must be an {OBSERVED!r} or an {ERROR!r}, as smolagents writes a tool-response",
            )
        )
        return
    step.error = (place, text.removeprefix(ERROR).removesuffix(RETRY))


def _answered(step: Step, last: bool) -> bool:
    """Whether the step's answer ended its task: a final_answer call that was not refused, or
    a CodeAgent's last code of a task calling final_answer."""
    if step.result is None or step.error is not None or len(step.calls) != 1:
        return False
    call = step.calls[0]
    if call.name == FINAL_ANSWER:
        return True
    code = call.arguments if isinstance(call.arguments, str) else ""
    return last and call.name == CODE_TOOL and "final_answer(" in code


def _from_steps(entries: list[tuple[str, Any]], problems: Problems) -> Read:
    """`get_full_steps()`'s steps; the system prompt, which no step holds, from the first
    action step's input, which begins with it."""
    read: Read = []
    system: tuple[str, Message] | None = None
    for place, entry in entries:
        kind = _step_kind(entry)
        if kind == "TaskStep":
            images = len(entry["task_images"] or ())
            task = _text(entry["task"], f"{place}.task", problems)
            read.append((place, Message(role="user", text=task + "\n(image not shown)" * images)))
        elif kind == "PlanningStep":
            read.append(Step(place, text=_text(entry["plan"], f"{place}.plan", problems).strip()))
            read.append((place, Message(role="user", text=PROCEED)))
        elif kind == "ActionStep":
            system = system or _system(entry, place, problems)
            read.append(_action(entry, place, problems))
        else:
            keys = "; ".join(f"{kind} ({', '.join(sorted(keys))})" for kind, keys in STEPS.items())
            problems.append((place, f"must be a smolagents memory step: {keys}"))
    return [system, *read] if system else read


def _system(entry: Mapping[str, Any], place: str, problems: Problems) -> tuple[str, Message] | None:
    given = entry.get("model_input_messages")
    first = given[0] if isinstance(given, list) and given else None
    if not isinstance(first, Mapping) or first.get("role") != "system":
        return None
    at = f"{place}.model_input_messages[0]"
    return at, Message(role="system", text=_text(first.get("content"), f"{at}.content", problems))


def _action(entry: Mapping[str, Any], place: str, problems: Problems) -> Step:
    """An action step: the calls it ran, or, when none ran, those its model asked for."""
    step = Step(place, text=_text(entry.get("model_output"), f"{place}.model_output", problems))
    step.text = step.text.strip()  # as write_memory_to_messages() shows it
    calls, at = entry.get("tool_calls"), f"{place}.tool_calls"
    if not calls and isinstance(entry["model_output_message"], Mapping):
        calls = entry["model_output_message"].get("tool_calls")
        at = f"{place}.model_output_message.tool_calls"
    if calls is not None and not isinstance(calls, list):
        problems.append((at, f"must be a list of calls, not {type(calls).__name__}"))
    elif calls:
        step.calls = _calls(calls, lambda index: f"{at}[{index}].function", problems)
    observed = entry.get("observations")
    if observed is not None:
        step.result = (f"{place}.observations", _text(observed, f"{place}.observations", problems))
    error = entry.get("error")
    if isinstance(error, Mapping) and isinstance(error.get("message"), str):
        step.error = (f"{place}.error", error["message"])
    elif error is not None:
        problems.append(
            (f"{place}.error", "must be an error as smolagents writes it: {type, message}")
        )
    step.final = entry.get("is_final_answer") is True
    return step


def _calls(written: list[Any], where: Callable[[int], str], problems: Problems) -> list[ToolCall]:
    """Calls as smolagents writes them, `{id, type, function: {name, arguments}}`: arguments
    as given (a tool's dict, a CodeAgent's code)."""
    calls = []
    for index, call in enumerate(written):
        function = call.get("function") if isinstance(call, Mapping) else None
        if not isinstance(function, Mapping) or not isinstance(function.get("name"), str):
            problems.append((where(index), "a tool call needs a function with a name"))
            continue
        call_id = call.get("id")
        calls.append(
            ToolCall(
                id=str(call_id) if call_id else "",
                name=function["name"],
                arguments=function.get("arguments"),
            )
        )
    return calls


def _step_messages(step: Step) -> list[tuple[str, Message]]:
    """A step as messages: the assistant's text and calls, the observation as the result of
    its call (of none when it made several: smolagents records one observation a step), its
    error (of its call when the call gave no result), and the answer that ended its task."""
    answer_call = step.final and [call.name for call in step.calls] == [FINAL_ANSWER]
    calls = () if answer_call else tuple(step.calls)
    read = []
    if step.text or calls:
        read.append((step.place, Message(role="assistant", text=step.text, tool_calls=calls)))
    single = step.calls[0].id if len(step.calls) == 1 else None
    if step.result is not None and not answer_call:
        place, text = step.result
        read.append((place, Message(role="tool", text=text, answers=single)))
    if step.error is not None:
        place, text = step.error
        answers = None if step.result is not None else single
        read.append((place, Message(role="tool", text=text, answers=answers, is_error=True)))
    if step.final and step.result is not None:
        place, text = step.result
        answer = text if answer_call else text.rpartition(LAST_OUTPUT)[2]
        read.append((place, Message(role="assistant", text=answer)))
    return read


def _text(value: Any, at: str, problems: Problems) -> str:
    """Text, or text parts joined (an image named, never dropped)."""
    if value is None or isinstance(value, str):
        return value or ""
    if isinstance(value, list):
        return "\n".join(
            part_text(part, f"{at}[{index}]", problems) for index, part in enumerate(value)
        )
    problems.append((at, f"must be text or a list of parts, not {type(value).__name__}"))
    return ""
