"""Reading a file a user wrote, on its own: the size limit, UTF-8 only (a bad byte named by its
line and column), line endings, and YAML without duplicate keys or alias bombs."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from rubriclib.errors import EvalError, InputError, Problem, RubricError
from rubriclib.evals.datasets import Dataset
from rubriclib.evals.formats import load_eval
from rubriclib.evals.formats.waza_rubric import load_waza_rubric
from rubriclib.rubrics.goldens_file import parse_goldens_file
from rubriclib.rubrics.lockfile import read_lock
from rubriclib.rubrics.reading import (
    MAX_FILE_BYTES,
    decode_text,
    load_yaml,
    read_limited,
    read_text,
)
from rubriclib.rubrics.registry import load_rubric


def problem(raised: pytest.ExceptionInfo[InputError]) -> str:
    [found] = raised.value.problems
    return str(found)


def test_a_file_at_the_limit_is_read_and_one_byte_more_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "big.md"
    path.write_bytes(b"x" * MAX_FILE_BYTES)
    assert len(read_limited(path, "big.md")) == MAX_FILE_BYTES
    path.write_bytes(b"x" * (MAX_FILE_BYTES + 1))
    with pytest.raises(RubricError) as raised:
        read_limited(path, "big.md")
    assert problem(raised) == (
        f"big.md: file: is {MAX_FILE_BYTES + 1} bytes; the limit is {MAX_FILE_BYTES} bytes (1 MiB)"
    )


def test_what_is_not_a_readable_file_is_named(tmp_path: Path) -> None:
    with pytest.raises(RubricError, match="a.md: file: is a directory, not a file"):
        read_limited(tmp_path, "a.md")
    with pytest.raises(RubricError, match="gone.md: file: does not exist"):
        read_limited(tmp_path / "gone.md", "gone.md")


def test_text_drops_a_bom_and_ends_every_line_with_lf(tmp_path: Path) -> None:
    path = tmp_path / "crlf.md"
    path.write_bytes(b"\xef\xbb\xbfone\r\ntwo\rthree\n")
    assert read_text(path, "crlf.md") == "one\ntwo\nthree\n"


def test_a_bad_byte_is_named_by_its_line_and_column() -> None:
    with pytest.raises(RubricError) as raised:
        decode_text(b"first line\ns\xc3\xa9\xff\n", "f.md")  # s, é, then 0xff
    assert "f.md:2: file: is not UTF-8 (byte 0xff at column 3)" in problem(raised)
    with pytest.raises(RubricError, match="f.md: file: is binary, not a UTF-8 text file"):
        decode_text(b"text\x00more", "f.md")


def test_yaml_refuses_a_duplicate_key_naming_its_line() -> None:
    with pytest.raises(RubricError) as raised:
        load_yaml("name: a\nversion: 1\nname: b\n", "r.md", "frontmatter")
    assert problem(raised) == "r.md:3: frontmatter: invalid YAML (column 1): duplicate key 'name'"
    assert load_yaml("a: {name: 1}\nb: {name: 2}\n", "r.md", "frontmatter") == {
        "a": {"name": 1},
        "b": {"name": 2},
    }  # the same key in two mappings is no duplicate


def test_yaml_refuses_an_alias_bomb_and_raises_the_error_asked_for() -> None:
    bomb = "a: &a [x, x, x, x, x, x, x, x, x, x]\nb: &b [*a, *a, *a, *a, *a, *a, *a, *a, *a, *a]\n"
    bomb += "c: [*b, *b, *b, *b, *b, *b, *b, *b, *b, *b]\n"
    assert load_yaml(bomb, "e.yaml", "eval", EvalError, max_nodes=2_000)["c"][0][0][0] == "x"
    with pytest.raises(EvalError) as raised:
        load_yaml(bomb, "e.yaml", "eval", EvalError, max_nodes=1_000)
    assert problem(raised) == "e.yaml: eval: YAML expands to more than 1000 values (alias bomb?)"


UNCLOSED = 'description: "Is the reply polite?\n'
"""A quote opened and never closed: PyYAML finds out only where the text ends."""


def _problems_of(read: Callable[[Path], object], path: Path) -> list[Problem]:
    with pytest.raises(InputError) as raised:
        read(path)
    return raised.value.problems


def _waza_rubric(path: Path) -> None:
    problems: list[Problem] = []
    load_waza_rubric(path, problems)
    raise EvalError(problems)


@pytest.mark.parametrize(
    ("name", "before", "after", "field", "read"),
    [
        (
            "house.md",
            "---\nname: house\nversion: 1.0.0\nscale: pass-fail\n",
            "tags: [tone]\n---\n# House\n\nPass when polite.\n",
            "frontmatter",
            lambda path: load_rubric(str(path)),
        ),
        (
            "eval.yaml",
            "name: demo\nrows: [{output: o}]\n",
            "graders:\n  - {name: g, rubric: helpfulness}\n",
            "eval file",
            load_eval,
        ),
        (
            "goldens.yaml",
            "- name: one\n  output: o\n  expected: pass\n- name: two\n",
            "  output: p\n  expected: fail\n",
            "goldens",
            lambda path: parse_goldens_file(path, str(path)),
        ),
        (
            "rows.yaml",
            "- id: one\n  output: o\n- id: two\n",
            "  output: p\n",
            "dataset",
            lambda path: Dataset(path=path).check(),
        ),
        (
            "waza.yaml",
            "name: tone\nversion: '1.0'\n",
            "score_type: binary\n",
            "rubric",
            _waza_rubric,
        ),
        (
            "rubriclib.lock",
            "lock_version: 1\n",
            "rubrics: []\n",
            "lock",
            lambda p: read_lock(p.parent),
        ),
    ],
)
def test_a_yaml_error_names_the_line_it_starts_on_and_the_line_it_was_found_on(
    tmp_path: Path,
    name: str,
    before: str,
    after: str,
    field: str,
    read: Callable[[Path], object],
) -> None:
    """Every file a user writes in YAML: an unclosed quote is reported on its own line (the
    file's, past a rubric's '---'), not only where the text ends."""
    path = tmp_path / name
    unclosed = ("  " if before.startswith("- ") else "") + UNCLOSED  # in a list's last item
    path.write_text(before + unclosed + after)
    opened = before.count("\n") + 1
    ended = (before + unclosed + after).count("\n") + 1 - (name == "house.md") * 4
    column = unclosed.index('"') + 1
    [found] = _problems_of(read, path)
    assert str(found) == (
        f"{path}:{opened}: {field}: invalid YAML: a quoted scalar starts here (column {column}) and "
        f"is never closed: found unexpected end of stream at line {ended}, column 1"
    )


def test_a_yaml_error_on_one_line_names_that_line_and_its_column() -> None:
    with pytest.raises(RubricError) as raised:
        load_yaml("name: a\nversion: [1\n", "r.md", "frontmatter")
    assert problem(raised) == (
        "r.md:2: frontmatter: invalid YAML: a flow sequence starts here (column 10): did not "
        "find expected ',' or ']' at line 3, column 1"
    )
    with pytest.raises(RubricError) as raised:
        load_yaml("name: a: b\n", "r.md", "frontmatter")
    assert problem(raised) == (
        "r.md:1: frontmatter: invalid YAML (column 8): mapping values are not allowed in this "
        "context"
    )
