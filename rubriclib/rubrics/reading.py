"""Reading a file a user wrote, safely: within a size limit, as UTF-8 only (a bad byte named
by its line and column), and YAML without duplicate keys or alias bombs. Problems are InputErrors
naming the file (RubricError unless told)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import yaml

from rubriclib.errors import InputError, Problem, RubricError

MAX_FILE_BYTES = 1024 * 1024
"""Rubric and goldens files larger than this are refused unread (1 MiB)."""

MAX_YAML_NODES = 100_000
"""A YAML document expanding to more nodes than this is refused (stops alias bombs)."""


class _StrictLoader(getattr(yaml, "CSafeLoader", yaml.SafeLoader)):  # type: ignore[misc]
    """PyYAML's safe loader (libyaml when present), refusing duplicate keys instead of
    silently keeping the last one."""

    def construct_mapping(self, node: yaml.MappingNode, deep: bool = False) -> dict[Any, Any]:
        seen = set()
        for key_node, _ in node.value:
            key = self.construct_object(key_node, deep=deep)
            if not isinstance(key, str | int | float | bool):
                continue  # unhashable keys are refused by PyYAML itself below
            if key in seen:
                raise yaml.constructor.ConstructorError(
                    None, None, f"duplicate key {key!r}", key_node.start_mark
                )
            seen.add(key)
        return super().construct_mapping(node, deep)  # type: ignore[no-any-return]


def read_limited(path: Path, label: str) -> bytes:
    """The bytes of a regular file no larger than MAX_FILE_BYTES, or a RubricError."""
    try:
        if path.is_dir():
            raise RubricError.single(label, "file", "is a directory, not a file")
        size = path.stat().st_size
        if size > MAX_FILE_BYTES:
            raise RubricError.single(
                label, "file", f"is {size} bytes; the limit is {MAX_FILE_BYTES} bytes (1 MiB)"
            )
        with path.open("rb") as handle:
            return handle.read(MAX_FILE_BYTES + 1)[:MAX_FILE_BYTES]
    except FileNotFoundError:
        raise RubricError.single(label, "file", "does not exist") from None
    except OSError as error:
        raise RubricError.single(label, "file", f"cannot be read: {error.strerror}") from None


def read_text(path: Path, label: str) -> str:
    """The UTF-8 text of a file within MAX_FILE_BYTES (`read_limited`, then `decode_text`)."""
    return decode_text(read_limited(path, label), label)


def decode_text(raw: bytes, label: str) -> str:
    """UTF-8 text (a BOM is dropped, CRLF becomes LF); binary or other encodings are errors."""
    if b"\x00" in raw:
        raise RubricError.single(label, "file", "is binary, not a UTF-8 text file")
    try:
        text = raw.decode("utf-8-sig")
    except UnicodeDecodeError as error:
        line = raw[: error.start].count(b"\n") + 1
        start = raw.rfind(b"\n", 0, error.start) + 1
        message = f"is {not_utf8(raw[start:], error.start - start)}"
        raise RubricError.single(f"{label}:{line}", "file", message) from None
    return text.replace("\r\n", "\n").replace("\r", "\n")


def not_utf8(line: bytes, start: int) -> str:
    """What is wrong with a line whose byte at `start` is not UTF-8: the byte and its column."""
    column = len(line[:start].decode("utf-8-sig", "replace")) + 1
    return f"not UTF-8 (byte 0x{line[start]:02x} at column {column})"


def load_yaml(
    text: str,
    label: str,
    field: str,
    error: type[InputError] = RubricError,
    max_nodes: int = MAX_YAML_NODES,
) -> Any:
    """Safe-load YAML, refusing syntax errors (`yaml_problem`), duplicate keys and documents
    that expand past `max_nodes` values; problems are raised as `error` (RubricError unless
    told). `text` is a whole file, or its start (a rubric's frontmatter), so lines are the
    file's."""
    try:
        data = yaml.load(text, Loader=_StrictLoader)  # noqa: S506 - a safe loader
    except yaml.YAMLError as problem:
        raise error([yaml_problem(problem, label, field)]) from None
    if _exceeds_node_budget(data, max_nodes):
        raise error.single(
            label, field, f"YAML expands to more than {max_nodes} values (alias bomb?)"
        )
    return data


def yaml_problem(problem: yaml.YAMLError, label: str, field: str) -> Problem:
    """A YAML error at the line where what was being read starts (PyYAML's `context_mark`:
    where an unclosed quote or bracket opens), then what went wrong and where it was found
    (`problem_mark`, often the end of the text): the one way a YAML error is told."""
    found = getattr(problem, "problem_mark", None)
    started = getattr(problem, "context_mark", None)
    context = getattr(problem, "context", None)
    reason = getattr(problem, "problem", None) or str(problem)
    if found is None:
        return Problem(label, field, f"invalid YAML: {reason}")
    if started is None or context is None or started.line == found.line:
        column = found.column + 1
        return Problem(
            f"{label}:{found.line + 1}", field, f"invalid YAML (column {column}): {reason}"
        )
    thing = context.removeprefix("while ").partition(" ")[2] or context  # "a quoted scalar"
    unclosed = " and is never closed" if "end of stream" in reason else ""  # the text ended
    return Problem(
        f"{label}:{started.line + 1}",
        field,
        f"invalid YAML: {thing} starts here (column {started.column + 1}){unclosed}: {reason} "
        f"at line {found.line + 1}, column {found.column + 1}",
    )


def _exceeds_node_budget(data: Any, budget: int) -> bool:
    """Whether walking `data` (aliases expanded, cycles included) visits more than `budget`
    values."""
    stack = [data]
    while stack:
        budget -= 1
        if budget < 0:
            return True
        node = stack.pop()
        if isinstance(node, dict):
            stack.extend(node.keys())
            stack.extend(node.values())
        elif isinstance(node, list):
            stack.extend(node)
    return False
