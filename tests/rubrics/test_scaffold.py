"""scaffold.py: `new` writes a valid rubric whole and never over a file; `validate --strict`
names what a scaffold still lacks."""

from __future__ import annotations

from pathlib import Path

import pytest

from rubriclib.errors import RubricError
from rubriclib.rubrics.registry import load_goldens, load_rubric
from rubriclib.rubrics.scaffold import foreign_tools, new_pack, new_rubric, strict_problems


@pytest.mark.parametrize("scale", ["pass-fail", "1-5"])
def test_a_new_rubric_loads_and_strict_validation_names_its_placeholders(
    tmp_path: Path, scale: str
) -> None:
    path = new_rubric("tone-check", tmp_path / "rubrics", scale)
    assert path == tmp_path / "rubrics" / "tone-check.md"
    rubric = load_rubric(str(path))
    assert (rubric.name, rubric.version, rubric.scale) == ("tone-check", "0.1.0", scale)
    problems = strict_problems(rubric, load_goldens(rubric))
    fields = {problem.field for problem in problems}
    assert {"description", "goldens[0].input", "goldens[1].output"} <= fields
    assert not any("no golden expects" in problem.message for problem in problems)
    assert [path.name for path in (tmp_path / "rubrics").iterdir()] == ["tone-check.md"]


def test_a_copy_of_a_builtin_that_judges_runs_keeps_every_run(tmp_path: Path) -> None:
    """A golden's run is written as the Transcript dumps itself, and read back the same."""
    source = load_rubric("task-completion")
    copy = load_rubric(str(new_rubric("my-runs", tmp_path, from_ref="task-completion")))
    assert copy.requires == ["transcript"] and copy.checklist == source.checklist
    originals, copied = load_goldens(source), load_goldens(copy)
    assert [g.transcript for g in copied] == [g.transcript for g in originals]
    assert [g.output for g in copied] == [g.output for g in originals]


def test_a_canonical_run_with_a_wrong_field_is_named_where(tmp_path: Path) -> None:
    from rubriclib.item.transcript import TranscriptError, read_transcript

    with pytest.raises(TranscriptError) as caught:
        read_transcript({"messages": [{"role": "robot"}], "shape": "openai-chat"})
    [(where, _)] = caught.value.problems
    assert where == "transcript.messages[0].role"


def test_a_new_rubric_never_overwrites(tmp_path: Path) -> None:
    path = tmp_path / "tone.md"
    path.write_text("the user's own rubric", encoding="utf-8")
    with pytest.raises(RubricError, match="already exists; not overwritten"):
        new_rubric("tone", tmp_path)
    assert path.read_text(encoding="utf-8") == "the user's own rubric"


def test_a_bad_name_writes_nothing(tmp_path: Path) -> None:
    with pytest.raises(RubricError, match="kebab-case"):
        new_rubric("Tone_Check", tmp_path)
    assert list(tmp_path.iterdir()) == []


def test_a_finished_rubric_has_no_strict_problems_and_missing_verdicts_are_named(
    tmp_path: Path,
) -> None:
    rubric = load_rubric(str(new_rubric("tone", tmp_path)))
    goldens = [
        golden.model_copy(update={"input": "a task", "output": "an answer", "why": "because"})
        for golden in load_goldens(rubric)
    ]
    body = "Pass a polite answer; fail any other."
    finished = rubric.model_copy(update={"description": "Whether it is polite.", "body": body})
    assert strict_problems(finished, goldens) == []
    unfinished = load_goldens(rubric)[0]  # a scaffold's golden, copied in as a worked example
    shown = finished.model_copy(update={"examples": [unfinished]})
    assert {problem.field for problem in strict_problems(shown, goldens)} == {
        "examples[0].input",
        "examples[0].output",
        "examples[0].why",
    }
    only_pass = [golden for golden in goldens if golden.expected == "pass"]
    assert [problem.message for problem in strict_problems(finished, only_pass)] == [
        "no golden expects fail"
    ]


def test_a_new_pack_holds_a_project_and_an_example_rubric(tmp_path: Path) -> None:
    root = new_pack("house-rubrics", tmp_path)
    assert 'house-rubrics = "house_rubrics"' in (root / "pyproject.toml").read_text()
    example = root / "house_rubrics" / "rubrics" / "house-rubrics-example.md"
    assert load_rubric(str(example)).name == "house-rubrics-example"
    with pytest.raises(RubricError, match="already exists"):
        new_pack("house-rubrics", tmp_path)


@pytest.mark.parametrize(
    ("scale", "body", "foreign"),
    [
        ("pass-fail", "Pass or fail.", []),
        (
            "pass-fail",
            "Call `set_grade_pass` or `set_grade_fail`.",
            ["set_grade_pass", "set_grade_fail"],
        ),
        (
            "pass-fail",
            "Call set_grade with pass; never set_grade_score.",
            ["set_grade", "set_grade_score"],
        ),
        ("pass-fail", "Call `set_waza_grade_pass` or `set_waza_grade_fail`.", []),
        ("pass-fail", "`set_waza_grade_pass`, else `set_grade_fail`.", ["set_grade_fail"]),
        ("1-5", "Call `set_grade_score`.", []),
        ("1-5", "Call `set_grade_pass`.", ["set_grade_pass"]),
        ("pairwise", "Call `set_pairwise_winner`, not set_grade.", ["set_grade"]),
        ("pass-fail", "set_grade_passing is not a tool name.", []),
    ],
)
def test_a_body_may_name_only_the_tools_every_mode_offers_it(
    tmp_path: Path, scale: str, body: str, foreign: list[str]
) -> None:
    """`named` mode offers a pass-fail rubric `set_grade`, the other modes its two tools: so
    its body names none (a waza body names its own pair, as waza does); a 1-5 or pairwise
    rubric has its one tool in every mode."""
    rubric = load_rubric(
        str(new_rubric("tone", tmp_path, scale if scale != "pairwise" else "pass-fail"))
    )
    rubric = rubric.model_copy(update={"scale": scale, "body": body})
    assert foreign_tools(rubric) == foreign
    problems = [
        problem.message for problem in strict_problems(rubric, []) if problem.field == "body"
    ]
    assert len(problems) == len(foreign)


def test_a_copy_keeps_goldens_that_are_runs(tmp_path: Path) -> None:
    """`new --from` writes each golden as the model dumps it; a run reads back unchanged."""
    source = tmp_path / "rubrics" / "runs.md"
    source.parent.mkdir()
    source.write_text(
        "---\nname: runs\nversion: 1.0.0\nscale: pass-fail\ndescription: Runs.\n"
        "requires: [transcript]\ngoldens:\n  - name: ok\n    transcript:\n"
        "      - {role: user, content: hi}\n      - {role: assistant, content: hello}\n"
        "    expected: pass\n---\n# Runs\n",
        encoding="utf-8",
    )
    copy = load_rubric(str(new_rubric("copy", tmp_path / "out", from_ref=str(source))))
    [golden] = load_goldens(copy)
    assert golden.transcript == load_rubric(str(source)).goldens[0].transcript
    assert golden.output == "hello"
