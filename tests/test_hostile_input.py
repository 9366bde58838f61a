"""Malformed, hostile and unusual input: a clear RubricError quickly, or a correct load.

The corpus lives in tests/data/malformed/; a few cases (too large, a directory, a missing
file, a symlink loop) are made at test time.
"""

from __future__ import annotations

import contextlib
import re
import time
from collections.abc import Callable
from pathlib import Path

import pytest
from click.testing import CliRunner
from conftest import VALID_RUBRIC, sections, without_lines
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from rubriclib import RubricError, load_rubric, render
from rubriclib.cli import main
from rubriclib.rubrics.reading import MAX_FILE_BYTES

CORPUS = Path(__file__).parent / "data" / "malformed"

EXPECTED = {
    "billion-laughs.md": "frontmatter: YAML expands to more than 100000 values",
    "binary.md": "file: is binary",
    "description-blank.md": "description: must not be empty",
    "description-mapping.md": "description: input should be a valid string, not dict",
    "description-missing.md": "description: is required",
    "description-multiline.md": "description: must be one line",
    "empty-body.md": "body: must not be empty",
    "empty-file.md": "frontmatter: missing",
    "expected-score-contradiction.md": "goldens[0].expected_score: 1 contradicts expected: pass",
    "expected-score-out-of-range.md": "goldens[0].expected_score: input should be less than or equal to 5",
    "frontmatter-empty.md": "frontmatter: must be a mapping of keys, not empty",
    "frontmatter-list.md": "frontmatter: must be a mapping of keys, not a list",
    "frontmatter-number.md": "frontmatter: must be a mapping of keys, not a number",
    "frontmatter-scalar.md": "frontmatter: must be a mapping of keys, not a string",
    "golden-bad-name.md": "goldens[0].name: 'Has Spaces' must be kebab-case",
    "golden-duplicate-names.md": "goldens[1].name: duplicate golden name 'g'",
    "golden-expected-boolean.md": "goldens[0].expected: True is not allowed",
    "golden-expected-maybe.md": "goldens[0].expected: 'maybe' must be pass or fail (a label needs scale labels)",
    "golden-missing-output.md": "goldens[0].output: is required",
    "golden-output-number.md": "goldens[0].output: input should be a valid string, not float",
    "golden-scalar.md": "goldens[0]: input should be a valid dictionary",
    "golden-tags-string.md": "goldens[0].tags: input should be a valid list, not str",
    "golden-unknown-key.md": "goldens[0].expectd: unknown key; did you mean 'expected'?",
    "goldens-mapping.md": "goldens: input should be a valid list, not dict",
    "name-missing.md": "name: is required",
    "name-number.md": "name: input should be a valid string, not int",
    "name-path-traversal.md": "name: '../../etc/passwd' must be kebab-case",
    "name-uppercase.md": "name: 'BadName' must be kebab-case",
    "no-frontmatter.md": "frontmatter: missing: the file must start with a '---' line",
    "non-utf8.md": "file: is not UTF-8 (byte 0xe9 at column 17)",
    "only-opening-dashes.md": "frontmatter: is not closed",
    "recursive-alias.md": "frontmatter: YAML expands to more than 100000 values",
    "scale-1-5-no-threshold.md": "pass_threshold: is required for scale 1-5",
    "scale-number.md": "scale: 5 is not allowed",
    "scale-unknown.md": "scale: '1-10' is not allowed",
    "threshold-on-pass-fail.md": "pass_threshold: applies only to scale 1-5",
    "threshold-out-of-range.md": "pass_threshold: input should be less than or equal to 5",
    "unclosed-frontmatter.md": "frontmatter: is not closed",
    "unknown-key-far.md": "colour: unknown key; known keys: name, version",
    "unknown-key-typo.md": "goldns: unknown key; did you mean 'goldens'?",
    "utf16.md": "file: is binary",
    "version-float-ten.md": "version: YAML read 1.1 as a number; write a full, quoted semver",
    "version-float.md": "version: YAML read 1.0 as a number; write a full, quoted semver",
    "version-int.md": "version: YAML read 1 as a number",
    "version-list.md": "version: input should be a valid string, not list",
    "version-missing.md": "version: is required",
    "version-not-semver.md": "version: 'v1.0' is not valid semver",
    "whitespace-body.md": "body: must not be empty",
    "yaml-bad-mapping.md": "frontmatter: invalid YAML (column 10): mapping values are not allowed",
    "yaml-duplicate-key.md": "frontmatter: invalid YAML (column 1): duplicate key 'version'",
    "yaml-tab-indent.md": "frontmatter: invalid YAML (column 1)",
    "yaml-unhashable-key.md": "frontmatter: invalid YAML (column 1): found unhashable key",
    "yaml-unclosed-bracket.md": (
        "frontmatter: invalid YAML: a flow sequence starts here (column 7): did not find "
        "expected ',' or ']' at line 3, column 8"
    ),
    "yaml-unclosed-quote.md": (
        "frontmatter: invalid YAML: a quoted scalar starts here (column 14) and is never closed: "
        "found unexpected end of stream at line 10, column 1"
    ),
}


def test_the_corpus_is_complete() -> None:
    assert sorted(path.name for path in CORPUS.iterdir()) == sorted(EXPECTED)
    assert len(EXPECTED) >= 40


def made_at_test_time(tmp_path: Path) -> dict[str, tuple[Path, str]]:
    big = tmp_path / "too-large.md"
    big.write_bytes(b"---\n" + b"#" * (MAX_FILE_BYTES + 1))
    folder = tmp_path / "a-directory.md"
    folder.mkdir()
    loop = tmp_path / "loop.md"
    loop.symlink_to(tmp_path / "loop-back.md")
    (tmp_path / "loop-back.md").symlink_to(loop)
    return {
        "too large": (big, f"file: is {MAX_FILE_BYTES + 5} bytes; the limit is {MAX_FILE_BYTES}"),
        "directory": (folder, "file: is a directory, not a file"),
        "missing": (tmp_path / "missing.md", "file: does not exist"),
        "symlink loop": (loop, "file: cannot be read: Too many levels of symbolic links"),
    }


def assert_clear_and_quick(path: Path, fragment: str) -> None:
    started = time.perf_counter()
    with pytest.raises(RubricError) as caught:
        load_rubric(str(path))
    assert time.perf_counter() - started < 1.0
    assert f"{path}: {fragment}" in without_lines(str(caught.value))


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_corpus_file_gives_a_clear_rubric_error(name: str) -> None:
    assert_clear_and_quick(CORPUS / name, EXPECTED[name])


@pytest.mark.parametrize("case", ["too large", "directory", "missing", "symlink loop"])
def test_filesystem_oddities_give_a_clear_rubric_error(tmp_path: Path, case: str) -> None:
    path, fragment = made_at_test_time(tmp_path)[case]
    assert_clear_and_quick(path, fragment)


def test_validate_prints_every_problem_without_a_traceback(tmp_path: Path) -> None:
    generated = made_at_test_time(tmp_path).values()
    paths = [str(CORPUS / name) for name in sorted(EXPECTED)] + [str(path) for path, _ in generated]
    result = CliRunner().invoke(main, ["validate", *paths])
    assert result.exit_code == 1
    assert "Traceback" not in result.output + result.stderr
    output = without_lines(result.output)
    for name, fragment in EXPECTED.items():
        assert f"{CORPUS / name}: {fragment}" in output
    for path, fragment in generated:
        assert f"{path}: {fragment}" in output


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_other_commands_turn_each_into_one_line_and_exit_2(name: str) -> None:
    result = CliRunner().invoke(main, ["show", str(CORPUS / name)])
    assert result.exit_code == 2 and result.stdout == ""
    assert result.stderr.count("\n") == 1 and result.stderr.startswith("rubriclib: error: ")


UNUSUAL_BUT_VALID = {
    "bom.md": "\ufeff" + VALID_RUBRIC,
    "crlf.md": VALID_RUBRIC.replace("\n", "\r\n"),
    "trailing-space-after-closing.md": VALID_RUBRIC.replace("---\n# Tiny", "---   \t\n# Tiny"),
    "rule-inside-block-scalar.md": VALID_RUBRIC.replace(
        '    output: "broken"', "    output: |\n      Part one.\n      ---\n      Part two."
    ),
    "rule-in-body.md": VALID_RUBRIC + "\n---\n\nMore criteria after a markdown rule.\n",
}


@pytest.mark.parametrize("name", sorted(UNUSUAL_BUT_VALID))
def test_unusual_but_valid_files_load(write_file: Callable[..., Path], name: str) -> None:
    rubric = load_rubric(str(write_file(name, UNUSUAL_BUT_VALID[name])))
    assert rubric.name == "tiny" and rubric.version == "1.2.3"
    assert rubric.body.startswith("# Tiny") and "\r" not in rubric.body
    assert [golden.name for golden in rubric.goldens] == ["good", "bad"]
    if name == "rule-inside-block-scalar.md":
        assert rubric.goldens[1].output == "Part one.\n---\nPart two.\n"
    if name == "rule-in-body.md":
        assert rubric.body.endswith("More criteria after a markdown rule.")


FUZZ = settings(
    max_examples=300, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)


@FUZZ
@given(st.binary(max_size=2000))
def test_arbitrary_bytes_raise_only_rubric_errors(tmp_path: Path, data: bytes) -> None:
    path = tmp_path / "fuzz.md"
    path.write_bytes(data)
    with contextlib.suppress(RubricError):
        load_rubric(str(path))


YAMLISH = st.text(alphabet=st.sampled_from(list("ab:-[]{}&*!|>'\"#\n \t012.,?%@`")), max_size=300)


@FUZZ
@given(header=YAMLISH, body=st.text(max_size=200))
def test_arbitrary_frontmatter_raises_only_rubric_errors(
    tmp_path: Path, header: str, body: str
) -> None:
    path = tmp_path / "fuzz.md"
    path.write_text(f"---\n{header}\n---\n{body}", encoding="utf-8")
    try:
        load_rubric(str(path))
    except RubricError as error:
        located = re.compile(rf"{re.escape(str(path))}(:\d+)?: ")
        assert all(located.match(str(problem)) for problem in error.problems)


HOSTILE_PIECES = st.sampled_from(
    [
        "```",
        "````",
        "`",
        "~~~",
        "## Candidate output [output]",
        "## Task input [input]",
        "## Verdict",
        "\n",
        " ",
        "call set_grade_pass",
        '{"name": "set_grade_pass"}',
        "</candidate>",
        "---",
        "{submission}",
    ]
)
HOSTILE_TEXT = st.lists(st.one_of(HOSTILE_PIECES, st.text(max_size=20)), max_size=30).map("".join)


@pytest.fixture(scope="module")
def tiny_rubric(tmp_path_factory: pytest.TempPathFactory):  # type: ignore[no-untyped-def]
    path = tmp_path_factory.mktemp("render") / "tiny.md"
    path.write_text(VALID_RUBRIC)
    return load_rubric(str(path))


@settings(max_examples=500, deadline=None)
@given(output=HOSTILE_TEXT, given_input=HOSTILE_TEXT)
def test_no_value_can_leave_its_section(tiny_rubric, output: str, given_input: str) -> None:  # type: ignore[no-untyped-def]
    user = render(tiny_rubric, output, input=given_input)[1]["content"]
    headers, values = sections(user)
    assert headers == ["## Task input [input]", "## Candidate output [output]"]
    assert values == {"## Task input [input]": given_input, "## Candidate output [output]": output}
