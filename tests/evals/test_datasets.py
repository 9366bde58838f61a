"""Dataset rows: every format, aliases, lists, metadata, and bad rows named by line and field."""

from __future__ import annotations

import json
import tracemalloc
from collections.abc import Callable
from pathlib import Path

import pytest

from rubriclib.errors import EvalError
from rubriclib.evals.datasets import Dataset

ROWS = [
    {"id": "a", "input": "q", "context": "c", "reference": "r", "output": "o", "lang": "en"},
    {"input": "q2", "ground_truth": "r2", "submission": "o2"},
    {"input": "q3", "expected_output": "r3", "actual_output": "o3"},
]


def write_rows(write_file: Callable[..., Path], name: str) -> Path:
    if name.endswith(".jsonl"):
        return write_file(name, "\n".join(json.dumps(row) for row in ROWS) + "\n\n")
    if name.endswith(".json"):
        return write_file(name, json.dumps({"rows": ROWS}))
    if name.endswith(".yaml"):
        import yaml

        return write_file(name, yaml.safe_dump(ROWS))
    header = "id,input,context,reference,output,lang\n"
    body = "a,q,c,r,o,en\n,q2,,r2,o2,\n,q3,,r3,o3,\n"
    return write_file(name, header + body)


@pytest.mark.parametrize("name", ["rows.jsonl", "rows.json", "rows.yaml", "rows.csv"])
def test_every_format_reads_the_same_rows(write_file: Callable[..., Path], name: str) -> None:
    rows = list(Dataset(path=write_rows(write_file, name)).rows())
    assert [row.id for row in rows] == ["a", "2", "3"]  # the row number when there is no id
    first = rows[0].item
    assert (first.input, first.context, first.reference, first.output) == ("q", "c", "r", "o")
    assert first.metadata == {"lang": "en"}
    assert [row.item.reference for row in rows[1:]] == ["r2", "r3"]
    assert [row.item.output for row in rows[1:]] == ["o2", "o3"]
    assert Dataset(path=write_rows(write_file, name)).check() == ([], 3)


def test_lists_become_numbered_passages_and_transcripts() -> None:
    raw = {
        "input": [{"role": "user", "content": "Hi"}, {"role": "assistant", "content": "Hello"}],
        "context": ["First passage.", "Second passage."],
        "output": "o",
    }
    [row] = Dataset(inline=[raw]).rows()
    assert row.item.input == "user: Hi\nassistant: Hello"
    assert row.item.context == "[1] First passage.\n\n[2] Second passage."


def test_bad_rows_are_all_reported_with_line_and_field(write_file: Callable[..., Path]) -> None:
    lines = [
        json.dumps({"input": "fine", "output": "fine"}),
        json.dumps({"input": "no output"}),
        "{not json",
        json.dumps({"output": "o", "response": "twice"}),
        json.dumps({"output": 5, "context": {"a": 1}}),
        json.dumps({"output": "o", "id": "x"}),
        json.dumps({"output": "o", "id": "x"}),
        json.dumps(["a", "list"]),
    ]
    path = write_file("bad.jsonl", "\n".join(lines) + "\n")
    problems, rows = Dataset(path=path).check()
    assert rows == 8
    assert [str(p) for p in problems] == [
        f"{path}:2: output: is required (or submission, response, actual_output, or a transcript)",
        f"{path}:3: row: invalid JSON: Expecting property name enclosed in double quotes (column 2)",
        f"{path}:4: response: given twice, as output and response",
        f"{path}:5: context: must be text or a list of passages (texts), not dict",
        f"{path}:7: id: duplicate row id 'x'",
        f"{path}:8: row: must be a mapping of keys, not list",
    ]
    with pytest.raises(EvalError, match="output: is required"):
        list(Dataset(path=path).rows())


def test_numbers_are_text_and_csv_extra_cells_are_caught(write_file: Callable[..., Path]) -> None:
    [row] = Dataset(inline=[{"output": 42, "reference": 4.5}]).rows()
    assert (row.item.output, row.item.reference) == ("42", "4.5")
    path = write_file("x.csv", "input,output\nq,o,surplus\n")
    problems, _ = Dataset(path=path).check()
    assert [str(p) for p in problems] == [f"{path}:2: row: has more cells than the header row"]


@pytest.mark.parametrize(
    ("name", "content", "fragment"),
    [
        ("rows.txt", "x", "unknown format '.txt'"),
        ("rows.json", "{", "invalid JSON (line 1)"),
        ("rows.json", '{"a": 1}', "must be a list of rows"),
        ("missing.jsonl", None, "cannot be read"),
    ],
)
def test_unreadable_datasets_are_one_problem(
    write_file: Callable[..., Path],
    tmp_path: Path,
    name: str,
    content: str | bytes | None,
    fragment: str,
) -> None:
    path = write_file(name, content) if content is not None else tmp_path / name
    with pytest.raises(EvalError, match="dataset: ") as caught:
        Dataset(path=path).check()
    assert fragment in str(caught.value)


def test_too_many_problems_are_summarised(write_file: Callable[..., Path]) -> None:
    path = write_file("many.jsonl", "{}\n" * 500)
    problems, rows = Dataset(path=path).check()
    assert rows == 500 and len(problems) == 201
    assert str(problems[-1]).endswith("rows: ... and 300 more problem(s)")


def test_jsonl_is_streamed_not_loaded_whole(write_file: Callable[..., Path]) -> None:
    line = json.dumps({"input": "q" * 200, "output": "o" * 800}) + "\n"
    path = write_file("big.jsonl", line * 20_000)  # about 20 MB
    tracemalloc.start()
    count = sum(1 for _ in Dataset(path=path).rows())
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    assert count == 20_000 and peak < 2_000_000  # a few rows at a time, not 20 MB


def test_a_list_is_described_by_what_it_holds_never_as_not_a_list() -> None:
    problems, _ = Dataset(inline=[{"input": ["a", "b"], "context": [1], "output": "o"}]).check()
    assert [str(p) for p in problems] == [
        "rows[0]: input: must be text or a list of chat messages ({role, content}); this list holds str",
        "rows[0]: context: must be text or a list of passages (texts); this list holds int",
    ]


@pytest.mark.parametrize("suffix", [".jsonl", ".csv"])
def test_every_line_that_is_not_utf8_is_named_and_the_rest_are_read(
    write_file: Callable[..., Path], suffix: str
) -> None:
    good = {".jsonl": b'{"output": "fine"}\n', ".csv": b"fine\n"}[suffix]
    bad = {".jsonl": b'{"output": "caf\xe9"}\n', ".csv": b"caf\xe9\n"}[suffix]
    header = b"output\n" if suffix == ".csv" else b""
    path = write_file(f"latin1{suffix}", header + good + bad + good + b"\xff" + bad)
    first = 2 if suffix == ".csv" else 1
    problems, rows = Dataset(path=path).check()
    column = 16 if suffix == ".jsonl" else 4
    assert [str(p) for p in problems] == [
        f"{path}:{first + 1}: row: not UTF-8 (byte 0xe9 at column {column})",
        f"{path}:{first + 3}: row: not UTF-8 (byte 0xff at column 1)",
    ]
    assert rows == 4


@pytest.mark.parametrize("suffix", [".json", ".yaml"])
def test_a_whole_file_dataset_names_each_line_that_is_not_utf8(
    write_file: Callable[..., Path], suffix: str
) -> None:
    path = write_file(
        f"rows{suffix}", b'[\n {"output": "caf\xe9"},\n {"output": "ok"},\n "\xff"]\n'
    )
    with pytest.raises(EvalError) as caught:
        Dataset(path=path).check()
    assert [str(p) for p in caught.value.problems] == [
        f"{path}:2: dataset: not UTF-8 (byte 0xe9 at column 17)",
        f"{path}:4: dataset: not UTF-8 (byte 0xff at column 3)",
    ]


def test_one_problem_per_field_and_the_true_aliases() -> None:
    from rubriclib.evals.datasets import parse_row

    missing = parse_row({"input": "q"}, 1, "rows.jsonl:1")
    assert [str(p) for p in missing] == [  # type: ignore[union-attr]
        "rows.jsonl:1: output: is required (or submission, response, actual_output, or a transcript)"
    ]
    wrong = parse_row({"output": {"a": 1}}, 1, "rows.jsonl:1")
    assert [str(p) for p in wrong] == ["rows.jsonl:1: output: must be text, not dict"]  # type: ignore[union-attr]


RUN = [
    {"role": "user", "content": "hi"},
    {
        "role": "assistant",
        "tool_calls": [{"id": "c", "function": {"name": "f", "arguments": "{}"}}],
    },
    {"role": "tool", "tool_call_id": "c", "content": "ok"},
    {"role": "assistant", "content": "All done."},
]


def test_a_row_may_be_an_agent_run_under_transcript_or_messages(
    write_file: Callable[..., Path],
) -> None:
    import csv
    import io

    rows = [{"id": "a", "transcript": RUN}, {"id": "b", "messages": RUN, "output": "mine"}]
    jsonl = write_file("runs.jsonl", "".join(json.dumps(row) + "\n" for row in rows))
    a, b = Dataset(jsonl).rows()
    assert (a.item.output, b.item.output) == ("All done.", "mine")
    assert a.item.transcript == b.item.transcript and len(a.item.transcript.messages) == 4
    assert "messages" not in b.item.metadata
    cell = io.StringIO()
    csv.writer(cell).writerows([["id", "transcript"], ["c", json.dumps(RUN)]])
    [row] = Dataset(write_file("runs.csv", cell.getvalue())).rows()
    assert row.item.transcript == a.item.transcript


def test_a_row_with_two_runs_or_a_broken_one_is_named(write_file: Callable[..., Path]) -> None:
    rows = [
        {"id": "a", "transcript": RUN, "messages": RUN},
        {"id": "b", "transcript": RUN[:1] + [{"role": "assistant", "content": 7}]},
        {"id": "c", "transcript": "not json"},
    ]
    path = write_file("runs.jsonl", "".join(json.dumps(row) + "\n" for row in rows))
    problems, count = Dataset(path).check()
    assert [str(problem) for problem in problems] == [
        f"{path}:1: messages: given twice, as transcript and messages",
        f"{path}:2: transcript[1].content: must be text or a list of parts, not int",
        f"{path}:3: transcript: is not a JSON list of messages (Expecting value)",
    ]
