"""Every parse and validation rule of a rubric file, and the message it gives."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest
from conftest import VALID_RUBRIC
from hypothesis import given
from hypothesis import strategies as st

from rubriclib import RubricError, load_rubric
from rubriclib.rubrics.rubric import judged_digest


def problems_of(path: Path) -> list[str]:
    with pytest.raises(RubricError) as caught:
        load_rubric(str(path))
    assert isinstance(caught.value, ValueError)
    return [str(problem) for problem in caught.value.problems]


def with_header(header: str, body: str = "# Body\n\nJudge it.\n") -> str:
    return f"---\n{header.strip()}\n---\n{body}"


BODY_EMPTY = "must not be empty: it is what the judge is told"
BASE = "name: tiny\nversion: 1.0.0\nscale: pass-fail\ndescription: Tiny.\n"


def test_valid_file_loads_every_field(write_file: Callable[..., Path]) -> None:
    path = write_file("tiny.md", VALID_RUBRIC)
    rubric = load_rubric(str(path))
    assert (rubric.name, rubric.version, rubric.scale) == ("tiny", "1.2.3", "pass-fail")
    assert rubric.description == "A tiny rubric for tests."
    assert [g.name for g in rubric.goldens] == ["good", "bad"]
    assert rubric.goldens[1].expected == "fail"
    assert rubric.body.startswith("# Tiny")
    assert rubric.source == f"file:{path}"
    assert rubric.digest == judged_digest("pass-fail", None, [], rubric.body)


@pytest.mark.parametrize(
    ("version", "expected"),
    [
        ("1.0", "as a number; write a full, quoted semver"),
        ("1.10", "as a number; write a full, quoted semver"),
        ("2", "as a number; write a full, quoted semver"),
        ("'1.0'", "'1.0' is not valid semver"),
        ("banana", "'banana' is not valid semver"),
        ("[1, 0]", "version: input should be a valid string, not list"),
    ],
)
def test_version_must_be_quoted_semver(
    write_file: Callable[..., Path], version: str, expected: str
) -> None:
    header = BASE.replace("version: 1.0.0", f"version: {version}")
    [problem] = problems_of(write_file("v.md", with_header(header)))
    assert "version" in problem and expected in problem


def test_prerelease_semver_is_accepted(write_file: Callable[..., Path]) -> None:
    header = BASE.replace("1.0.0", "'2.0.0-rc.1'")
    assert load_rubric(str(write_file("v.md", with_header(header)))).version == "2.0.0-rc.1"


@pytest.mark.parametrize("name", ["Tiny", "tiny_rubric", "-tiny", "tiny-", "ti--ny", "tiny rubric"])
def test_name_must_be_kebab_case(write_file: Callable[..., Path], name: str) -> None:
    [problem] = problems_of(
        write_file("n.md", with_header(BASE.replace("name: tiny", f"name: '{name}'")))
    )
    assert "name:" in problem and "kebab-case" in problem


def test_scale_must_be_known(write_file: Callable[..., Path]) -> None:
    [problem] = problems_of(write_file("s.md", with_header(BASE.replace("pass-fail", "1-10"))))
    assert (
        "scale: '1-10' is not allowed" in problem
        and "'pass-fail', '1-5', 'pairwise' or 'labels'" in problem
    )


def test_description_must_be_one_line(write_file: Callable[..., Path]) -> None:
    header = BASE.replace("description: Tiny.", "description: |\n  line one\n  line two")
    [problem] = problems_of(write_file("d.md", with_header(header)))
    assert "description: must be one line" in problem


def test_missing_fields_are_all_reported_together(write_file: Callable[..., Path]) -> None:
    path = write_file("m.md", with_header("name: tiny", body=""))
    problems = problems_of(path)
    assert any("version: is required" in p for p in problems)
    assert any("scale: is required" in p for p in problems)
    assert any("description: is required" in p for p in problems)
    assert any("body: must not be empty" in p for p in problems)
    assert all(p.startswith(f"{path}") for p in problems)
    assert [p for p in problems if "body:" in p] == [f"{path}:4: body: {BODY_EMPTY}"]


def test_unknown_key_suggests_the_close_match(write_file: Callable[..., Path]) -> None:
    [problem] = problems_of(write_file("u.md", with_header(BASE + "goldns: []\n")))
    assert "goldns: unknown key; did you mean 'goldens'?" in problem


def test_an_unknown_key_with_a_block_value_is_reported_on_the_keys_line(
    write_file: Callable[..., Path],
) -> None:
    text = "---\nname: tiny\ngoldns:\n  - output: x\n---\nBody {{output}}\n"
    path = write_file("b.md", text)
    problem = next(p for p in problems_of(path) if "goldns" in p)
    assert problem.startswith(f"{path}:3: goldns: unknown key")  # not line 4, where the list is


def test_unknown_key_far_from_any_lists_the_known_keys(write_file: Callable[..., Path]) -> None:
    [problem] = problems_of(write_file("u.md", with_header(BASE + "zzz: 1\n")))
    assert "zzz: unknown key; known keys: name, version" in problem


def test_reserved_result_fields_are_not_frontmatter_keys(write_file: Callable[..., Path]) -> None:
    [problem] = problems_of(write_file("u.md", with_header(BASE + "digest: abc\n")))
    assert "digest: unknown key" in problem


def test_golden_rules(write_file: Callable[..., Path]) -> None:
    goldens = """goldens:
  - name: one
    output: x
    expected: maybe
  - name: one
    output: y
    expected: pass
  - name: two
    expected: fail
  - name: three
    output: z
    expected: pass
    expectd: pass
  - name: four
    output: 5
    expected: pass
"""
    problems = problems_of(write_file("g.md", with_header(BASE + goldens)))
    text = "\n".join(problems)
    assert "goldens[0].expected: 'maybe' must be pass or fail (a label needs scale labels)" in text
    assert "goldens[2].output: is required" in text
    assert "goldens[3].expectd: unknown key; did you mean 'expected'?" in text
    assert "goldens[4].output: input should be a valid string, not int" in text
    # Duplicate names come in the same pass, though golden 0 is itself invalid.
    assert "goldens[1].name: duplicate golden name 'one'" in text


def test_a_golden_run_is_read_and_a_broken_one_named_by_line_and_message(
    write_file: Callable[..., Path],
) -> None:
    goldens = """requires: [transcript]
goldens:
  - name: run
    expected: pass
    transcript:
      - {role: user, content: hi}
      - {role: assistant, content: hello}
  - name: broken
    expected: fail
    transcript:
      - {role: user, content: hi}
      - {role: tool, tool_call_id: nowhere, content: x}
  - name: none
    expected: fail
"""
    problems = problems_of(write_file("g.md", with_header(BASE + goldens)))
    assert [problem.split(": ", 1)[1] for problem in problems] == [
        "goldens[1].transcript[1]: answers call 'nowhere', which is not earlier in the run",
        "goldens[2].output: is required",
        "goldens[2].transcript: is required by the rubric (requires)",
    ]
    assert problems[0].split(": ", 1)[0].endswith("g.md:17")
    fixed = goldens.split("  - name: broken")[0]
    rubric = load_rubric(str(write_file("ok.md", with_header(BASE + fixed))))
    [golden] = rubric.goldens
    assert golden.output == "hello" and golden.transcript is not None


def test_how_runs_are_rendered_counts_in_the_digest_of_a_rubric_that_judges_them(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    before = [judged_digest("pass-fail", None, needs, "Judge.") for needs in (["transcript"], [])]
    monkeypatch.setattr("rubriclib.rubrics.rubric.RUN_RENDERING", 4)
    after = [judged_digest("pass-fail", None, needs, "Judge.") for needs in (["transcript"], [])]
    assert before[0] != after[0] and before[1] == after[1]


def test_golden_optional_fields_load(write_file: Callable[..., Path]) -> None:
    golden = """goldens:
  - name: full
    input: question
    context: source
    reference: answer
    output: reply
    expected: fail
    tags: [adversarial, edge]
    why: Tests every field.
"""
    rubric = load_rubric(str(write_file("f.md", with_header(BASE + golden))))
    [loaded] = rubric.goldens
    assert (loaded.input, loaded.context, loaded.reference) == ("question", "source", "answer")
    assert loaded.tags == ["adversarial", "edge"] and loaded.why == "Tests every field."


RUN_GOLDENS = """requires: [transcript]
goldens:
  - name: answered
    transcript:
      - {role: system, content: Confirm before cancelling.}
      - {role: user, content: cancel order 5}
      - role: assistant
        content: null
        tool_calls:
          - {id: c1, type: function, function: {name: cancel_order, arguments: '{"id": "5"}'}}
      - {role: tool, tool_call_id: c1, content: cancelled}
      - {role: assistant, content: Done.}
    expected: fail
  - name: unanswered
    transcript:
      - {role: user, content: cancel order 5}
      - role: assistant
        content: null
        tool_calls:
          - {id: c1, type: function, function: {name: cancel_order, arguments: '{"id": "5"}'}}
      - {role: tool, tool_call_id: c1, content: cancelled}
    expected: fail
"""


def test_frontmatter_goldens_may_hold_runs(write_file: Callable[..., Path]) -> None:
    """The Rubric is built from its validated frontmatter's dump: a golden's run, dumped as a
    Transcript, reads back as the same run."""
    rubric = load_rubric(str(write_file("runs.md", with_header(BASE + RUN_GOLDENS))))
    answered, unanswered = rubric.goldens
    assert answered.output == "Done." and unanswered.output == ""
    assert answered.transcript is not None and answered.transcript.shape == "openai-chat"
    assert [m.role for m in answered.transcript.messages][2:4] == ["assistant", "tool"]
    assert answered.transcript.messages[2].tool_calls[0].arguments == {"id": "5"}


def test_scale_1_to_5_needs_a_pass_threshold(write_file: Callable[..., Path]) -> None:
    [problem] = problems_of(write_file("s.md", with_header(BASE.replace("pass-fail", "1-5"))))
    assert "pass_threshold: is required for scale 1-5" in problem
    ok = BASE.replace("pass-fail", "1-5") + "pass_threshold: 4\n"
    assert load_rubric(str(write_file("ok.md", with_header(ok)))).pass_threshold == 4


@pytest.mark.parametrize(
    ("threshold", "fragment"),
    [
        ("0", "greater than or equal to 1"),
        ("6", "less than or equal to 5"),
        ("'3'", "valid integer"),
    ],
)
def test_pass_threshold_range(
    write_file: Callable[..., Path], threshold: str, fragment: str
) -> None:
    header = BASE.replace("pass-fail", "1-5") + f"pass_threshold: {threshold}\n"
    [problem] = problems_of(write_file("t.md", with_header(header)))
    assert "pass_threshold" in problem and fragment in problem


def test_pass_threshold_is_refused_on_pass_fail(write_file: Callable[..., Path]) -> None:
    [problem] = problems_of(write_file("t.md", with_header(BASE + "pass_threshold: 3\n")))
    assert "pass_threshold: applies only to scale 1-5" in problem


def test_expected_score_must_agree_with_expected(write_file: Callable[..., Path]) -> None:
    header = BASE.replace("pass-fail", "1-5") + (
        "pass_threshold: 4\ngoldens:\n  - {name: a, output: x, expected: pass, expected_score: 2}\n"
        "  - {name: b, output: y, expected: fail, expected_score: 2}\n"
    )
    [problem] = problems_of(write_file("e.md", with_header(header)))
    assert "goldens[0].expected_score: 2 contradicts expected: pass at pass_threshold 4" in problem


def test_expected_score_is_refused_on_pass_fail(write_file: Callable[..., Path]) -> None:
    header = BASE + "goldens:\n  - {name: a, output: x, expected: pass, expected_score: 5}\n"
    [problem] = problems_of(write_file("e.md", with_header(header)))
    assert "goldens[0].expected_score: applies only to scale 1-5" in problem


def test_body_must_not_be_empty(write_file: Callable[..., Path]) -> None:
    [problem] = problems_of(write_file("b.md", with_header(BASE, body="\n   \n")))
    assert "body: must not be empty" in problem


def test_waza_rubric_offers_waza_tool_names(write_file: Callable[..., Path]) -> None:
    body = "# Check\n\nIf it is right call `set_waza_grade_pass`, else `set_waza_grade_fail`.\n"
    rubric = load_rubric(str(write_file("w.md", with_header(BASE, body=body))))
    assert rubric.tool_names == ("set_waza_grade_pass", "set_waza_grade_fail")
    plain = load_rubric(str(write_file("p.md", with_header(BASE))))
    assert plain.tool_names == ("set_grade_pass", "set_grade_fail")


def test_identity_is_what_results_carry(write_file: Callable[..., Path]) -> None:
    path = write_file("tiny.md", VALID_RUBRIC)
    rubric = load_rubric(str(path))
    assert rubric.identity == {
        "name": "tiny",
        "version": "1.2.3",
        "scale": "pass-fail",
        "source": f"file:{path}",
        "digest": rubric.digest,
    }
    assert len(rubric.digest) == 64


@given(st.from_regex(r"\A[v0-9a-z.+-]{0,3}\d{1,2}\.\d{1,2}(\.\d{1,2})?([-+][0-9A-Za-z.-]{0,6})?\Z"))
def test_our_semver_pattern_agrees_with_the_semver_package(version: str) -> None:
    import semver

    from rubriclib.rubrics.rubric import SEMVER

    assert bool(SEMVER.fullmatch(version)) == semver.Version.is_valid(version)


def test_requires_names_fields_every_golden_must_have(write_file: Callable[..., Path]) -> None:
    text = VALID_RUBRIC.replace("goldens:\n", "requires: [context]\ngoldens:\n", 1)
    with pytest.raises(RubricError) as caught:
        load_rubric(str(write_file("needs.md", text)))
    fields = [problem.field for problem in caught.value.problems]
    assert fields == ["goldens[0].context", "goldens[1].context"]
    assert "is required by the rubric (requires)" in str(caught.value)
    bad = VALID_RUBRIC.replace("goldens:\n", "requires: [contxt]\ngoldens:\n", 1)
    with pytest.raises(RubricError, match=r"requires\[0\]: 'contxt' is not allowed"):
        load_rubric(str(write_file("bad.md", bad)))


def test_an_inline_golden_may_be_an_agent_run(write_file: Callable[..., Path]) -> None:
    """A run in the frontmatter loads as it does in a goldens file, its final answer the
    output (the validated run is passed on to the Rubric as it is, never dumped and read
    again as if it were a recorded shape)."""
    run = """goldens:
  - name: run
    transcript:
      - {role: user, content: Cancel order 5.}
      - role: assistant
        content: null
        tool_calls:
          - {id: c1, type: function, function: {name: cancel_order, arguments: '{"id": "5"}'}}
      - {role: tool, tool_call_id: c1, content: '{"status": "cancelled"}'}
      - {role: assistant, content: Done.}
    expected: pass
"""
    text = VALID_RUBRIC.replace("goldens:\n", run, 1)
    rubric = load_rubric(str(write_file("runs.md", text)))
    golden = rubric.goldens[0]
    assert golden.output == "Done." and golden.transcript is not None
    roles = [message.role for message in golden.transcript.messages]
    assert roles == ["user", "assistant", "tool", "assistant"]
    assert [g.name for g in rubric.goldens] == ["run", "good", "bad"]


def test_the_builtins_declare_what_they_need() -> None:
    assert load_rubric("groundedness").requires == ["context"]
    assert load_rubric("answer-correctness").requires == ["reference"]
    assert load_rubric("helpfulness").requires == ["input"]


@pytest.mark.parametrize(
    "edit",
    [
        lambda t: t.replace('    output: "broken"', '    output: "shattered"'),  # a golden
        lambda t: t.replace("A tiny rubric for tests.", "Another description."),
        lambda t: t.replace("version: 1.2.3", "version: '1.2.3'").replace(
            "scale: pass-fail", "scale:   pass-fail  # comment"
        ),
        lambda t: t.replace("\n", "\r\n"),
    ],
)
def test_the_digest_ignores_what_the_judge_never_sees(
    write_file: Callable[..., Path], edit: Callable[[str], str]
) -> None:
    before = load_rubric(str(write_file("a.md", VALID_RUBRIC))).digest
    assert load_rubric(str(write_file("b.md", edit(VALID_RUBRIC)))).digest == before


@pytest.mark.parametrize(
    "edit",
    [
        lambda t: t.replace("Pass when the output is fine.", "Pass when the output is fine!"),
        lambda t: (
            t.replace(
                "description: A tiny rubric for tests.",
                "description: A tiny rubric for tests.\nrequires: [input]",
            )
            .replace('    output: "fine"', '    input: q\n    output: "fine"')
            .replace('    output: "broken"', '    input: q\n    output: "broken"')
        ),
        lambda t: t.replace(
            "`set_grade_pass` or `set_grade_fail`", "`set_waza_grade_pass` or `set_waza_grade_fail`"
        ),
    ],
)
def test_the_digest_changes_with_what_the_judge_is_told(
    write_file: Callable[..., Path], edit: Callable[[str], str]
) -> None:
    before = load_rubric(str(write_file("a.md", VALID_RUBRIC))).digest
    after = edit(VALID_RUBRIC)
    assert after != VALID_RUBRIC
    assert load_rubric(str(write_file("b.md", after))).digest != before


def test_the_digest_covers_scale_and_threshold() -> None:
    body = "Judge it."
    digests = {
        judged_digest("pass-fail", None, [], body),
        judged_digest("1-5", 4, [], body),
        judged_digest("1-5", 3, [], body),
    }
    assert len(digests) == 3


def test_every_problem_comes_at_once_with_its_line(write_file: Callable[..., Path]) -> None:
    header = """name: tiny
version: 1.0.0
scale: 1-5
description: Tiny.
colour: red
goldens:
  - {name: a, output: x, expected: pass}
  - {name: a, output: y, expected: maybe}
  - {name: a, output: z, expected: fail}
"""
    path = write_file("all.md", with_header(header))
    assert problems_of(path) == [  # in file order; a missing key (no line) first
        f"{path}: pass_threshold: is required for scale 1-5 (an integer 1 to 5)",
        f"{path}:6: colour: unknown key; known keys: name, version, scale, description, "
        "pass_threshold, labels, requires, checklist, citations, output, goldens, examples, tags",
        f"{path}:9: goldens[1].name: duplicate golden name 'a'",
        f"{path}:9: goldens[1].expected: 'maybe' must be pass or fail (a label needs scale labels)",
        f"{path}:10: goldens[2].name: duplicate golden name 'a'",
    ]


def test_a_golden_may_list_quotes_a_judgment_must_cite(write_file: Callable[..., Path]) -> None:
    golden = """goldens:
  - name: cited
    context: The meeting is on Monday.
    output: It is on Friday.
    expected: fail
    cites: ["on Friday", "on Monday"]
  - {name: plain, output: fine, expected: pass}
"""
    rubric = load_rubric(str(write_file("c.md", with_header(BASE + golden))))
    assert [loaded.cites for loaded in rubric.goldens] == [["on Friday", "on Monday"], []]
    without = load_rubric(str(write_file("d.md", with_header(BASE + golden.split("    cites")[0]))))
    assert without.digest == rubric.digest  # goldens are never in the digest


def test_a_golden_cites_is_a_list_of_quotes_each_named_by_line(
    write_file: Callable[..., Path],
) -> None:
    goldens = """goldens:
  - name: blank
    output: x
    expected: fail
    cites: ["fine", "  "]
  - name: text
    output: x
    expected: fail
    cites: on Friday
  - name: number
    output: x
    expected: fail
    cites: [3]
"""
    path = write_file("c.md", with_header(BASE + goldens))
    assert problems_of(path) == [
        f"{path}:10: goldens[0].cites[1]: must not be empty: a quote a judgment must cite",
        f"{path}:14: goldens[1].cites: input should be a valid list, not str",
        f"{path}:18: goldens[2].cites[0]: input should be a valid string, not int",
    ]


def test_cites_on_a_rubric_whose_citations_are_off_is_a_problem(
    write_file: Callable[..., Path],
) -> None:
    goldens = "citations: off\ngoldens:\n  - {name: a, output: x, expected: fail, cites: [x]}\n"
    path = write_file("c.md", with_header(BASE + goldens))
    assert problems_of(path) == [
        f"{path}:8: goldens[0].cites: the rubric has citations: off, so no judgment can cite "
        "these quotes"
    ]


def test_a_bare_off_citations_policy_survives_another_problem(
    write_file: Callable[..., Path],
) -> None:
    # YAML reads `off` as false: the policy must still read as `off` while the rest is checked.
    path = write_file("o.md", with_header(BASE + "citations: off\ncolour: red\n"))
    [problem] = problems_of(path)
    assert problem.startswith(f"{path}:7: colour: unknown key")
    assert (
        load_rubric(str(write_file("p.md", with_header(BASE + "citations: off\n")))).citations
        == "off"
    )


def test_tags_are_kebab_case_words_outside_the_digest(write_file: Callable[..., Path]) -> None:
    plain = load_rubric(write_file("plain.md", with_header(BASE)))
    tagged = load_rubric(write_file("tagged.md", with_header(BASE + "tags: [style, tone]\n")))
    assert (plain.tags, tagged.tags) == ([], ["style", "tone"])
    assert tagged.digest == plain.digest  # found by them, never judged by them
    bad = write_file("bad.md", with_header(BASE + "tags: [Style Guide]\n"))
    assert problems_of(bad) == [
        f"{bad}:6: tags[0]: 'Style Guide' must be kebab-case "
        "(lowercase letters, digits and hyphens)"
    ]
