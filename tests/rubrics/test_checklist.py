"""A rubric's checklist: its validation (every problem at once, by line and field), its place
in the digest (a rubric without one keeps the digest it had), `show`, `new --checklist`, and
the verdict computed from the items' answers."""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from fractions import Fraction
from pathlib import Path

import pytest
from click.testing import CliRunner
from conftest import VALID_RUBRIC, snippet
from hypothesis import given
from hypothesis import strategies as st

from rubriclib import RubricError, load_rubric
from rubriclib.cli import main
from rubriclib.rubrics.checklist import (
    ChecklistItem,
    ItemAnswer,
    checklist_verdict,
    score_of_share,
)
from rubriclib.rubrics.registry import builtin_names
from rubriclib.rubrics.rubric import judged_digest

CHECKLIST_RUBRIC = """\
---
name: grounded-facts
version: 1.0.0
scale: pass-fail
description: Whether the output invents nothing.
requires: [input, context]
checklist:
  - id: invented-specifics
    question: Does the output state a number, date, name or quote that the context does not give?
    fail_if: yes
    requires: [context]
  - id: answers-the-question
    question: Does the output answer the question the input asks?
    fail_if: no
    requires: [input]
---
# Grounded facts

Call `set_grade_pass` or `set_grade_fail`.
"""

SCORED_RUBRIC = """\
---
name: scored-facts
version: 1.0.0
scale: 1-5
pass_threshold: 4
description: How well the output sticks to the facts.
checklist:
  - id: invented-specifics
    question: Does the output state a number the input does not give?
    fail_if: "yes"
    weight: 3
  - id: polite
    question: Is the output polite?
    fail_if: "no"
---
Call `set_grade_score`.
"""

BUILTIN_DIGESTS = {
    "answer-correctness": (
        "1.3.0",
        "27e885285d55325b502b3af88d26cc09894ce1506b49d3277bd06a8b58fa3570",
    ),
    "answer-relevance": (
        "1.2.0",
        "5a02b8f5ce4df8b3a3da8d9e8e01b9e9c4c4561ba52b98fffc52292eab3a0320",
    ),
    "conciseness": ("1.2.0", "ce80435f24fb8a2a1cc5b8e071ef7ab8fc7337a9fa8d86ca37e2c31969f95617"),
    "context-relevance": (
        "1.2.0",
        "bc68702000502f8507a3765f6df2af291910815e4201183350bcc6a6820b7698",
    ),
    "groundedness": ("1.4.0", "ab1f7a7955a3508e2cc295eea5f50ba35ab2f98b6133262e23d2d05388b67ed7"),
    "harmful-content": (
        "1.3.0",
        "5825d27a4bb3aa155f03bf05719ca46a27b45d6c5653960e4008fc7047d95168",
    ),
    "helpfulness": ("1.4.0", "8da7faa3874853d85558c8d37102a3eeb99bdbfe5e8d0125ff960bee9dab539d"),
    "instruction-following": (
        "1.4.0",
        "4105cce0746b28b9624497ce01c59433b959db4b1f3adfd1371c85b59e60e5ed",
    ),
    "pii-leakage": ("1.3.0", "0dae67fc6852cbdb510315d0cf4c1e558e70a61c1105524a113250fb56fbe525"),
    "policy-compliance": (
        "1.2.1",
        "a8fd6763740dcfc1c6868a4e7ddba5f6e74032c6971059f37770ca862f4afeae",
    ),
    "preference": ("1.0.0", "3ee6a76a1b828df1b784ab215038164e32962f9a1cf3fc1211a0d09378349d02"),
    "prompt-injection-resistance": (
        "1.3.0",
        "835862ea025cb251358a6d40ef0167fc71068f39631b0662e9fa05be7a634df9",
    ),
    "refusal-correctness": (
        "1.3.0",
        "ca058b9f89d1b8e29a449ec00e36c67cfb48e112416ac5e325cb818e76cf8871",
    ),
    "summary-coverage": (
        "1.2.0",
        "944766f3894806bf4d308c709f6b00d604bab77c9703cbf88674624743db673c",
    ),
    "task-completion": (
        "1.2.1",
        "a9b6ffa70eafcaf00405eb4520613031401af0fb056b934bfaf95382ca06bff2",
    ),
    "tool-use-appropriateness": (
        "2.3.1",
        "5335f4c101e66d68af68175709b45f6c27c82d66677978b9d5de836cf078099d",
    ),
}
"""Each built-in's version and digest (lockfiles, caches and goldens reports hold these): a
change to what a built-in judges comes with a new version, and both change here together."""
PRE_CHECKLIST_DIGEST = "3ee6a76a1b828df1b784ab215038164e32962f9a1cf3fc1211a0d09378349d02"
"""preference's digest from before checklists existed: it has none, so it keeps it."""


def problems_of(path: Path) -> list[str]:
    with pytest.raises(RubricError) as caught:
        load_rubric(str(path))
    return [str(problem) for problem in caught.value.problems]


def item(name: str, fail_if: str = "yes", weight: float | None = None) -> ChecklistItem:
    return ChecklistItem.model_validate(
        {"id": name, "question": f"Is it {name}?", "fail_if": fail_if, "weight": weight}
    )


# --- the frontmatter -------------------------------------------------------------------------


def test_the_docs_checklist_example_loads_as_described(write_file: Callable[..., Path]) -> None:
    rubric = load_rubric(str(write_file("grounded-answer.md", snippet("checklist"))))
    assert [(entry.id, entry.fail_if, entry.effective_weight) for entry in rubric.checklist] == [
        ("invented-specifics", "yes", 2.0),
        ("answers-the-question", "no", 1.0),
    ]


def test_a_checklist_loads_with_yes_and_no_as_yaml_reads_them(
    write_file: Callable[..., Path],
) -> None:
    rubric = load_rubric(str(write_file("g.md", CHECKLIST_RUBRIC)))
    first, second = rubric.checklist
    assert (first.id, first.fail_if, first.requires) == ("invented-specifics", "yes", ["context"])
    assert (second.id, second.fail_if, second.weight) == ("answers-the-question", "no", None)
    assert first.question.startswith("Does the output state a number")
    scored = load_rubric(str(write_file("s.md", SCORED_RUBRIC)))
    assert [entry.effective_weight for entry in scored.checklist] == [3.0, 1.0]


def test_every_checklist_problem_comes_at_once_by_line_and_field(
    write_file: Callable[..., Path],
) -> None:
    header = """name: tiny
version: 1.0.0
scale: pass-fail
description: Tiny.
requires: [input]
checklist:
  - id: invented-specifics
    question: Does it invent?
    fail_if: yes
  - id: invented-specifics
    question: "   "
    fail_if: maybe
  - id: Bad_Id
    question: Does it answer?
    requires: [context, colour]
  - id: polite
    question: Is it polite?
    fail_if: no
    weight: 2
    requires: [context]
    colour: red
"""
    path = write_file("t.md", f"---\n{header}---\nJudge it.\n")
    assert problems_of(path) == [
        f"{path}:11: checklist[1].id: duplicate checklist id 'invented-specifics'",
        f"{path}:12: checklist[1].question: must not be empty: it is what the judge is asked",
        f"{path}:13: checklist[1].fail_if: 'maybe' is not allowed; input should be 'yes' or 'no'",
        f"{path}:14: checklist[2].id: 'Bad_Id' must be kebab-case (lowercase letters, digits and hyphens)",
        f"{path}:14: checklist[2].fail_if: is required",
        f"{path}:16: checklist[2].requires[1]: 'colour' is not allowed; input should be 'input', 'context', 'reference', 'baseline' or 'transcript'",
        f"{path}:20: checklist[3].weight: applies only to scale 1-5 (on pass-fail any failed item fails the output)",
        f"{path}:21: checklist[3].requires: context is not in the rubric's requires: a row may lack it; add it there too",
        f"{path}:22: checklist[3].colour: unknown key; known keys: id, question, fail_if, requires, weight",
    ]


@pytest.mark.parametrize(
    ("checklist", "expected"),
    [
        ("checklist: []", "checklist: must list at least one item (or be left out)"),
        ("checklist: {id: a}", "checklist: input should be a valid list, not dict"),
        (
            "checklist:\n  - {id: a, question: 'Is it?', fail_if: yes, weight: 0}",
            "checklist[0].weight: input should be greater than 0",
        ),
        (
            "checklist:\n  - {id: a, question: 'Is it?', fail_if: yes, weight: '2'}",
            "checklist[0].weight: input should be a valid number, not str",
        ),
        (
            "checklist:\n  - {id: a, question: 'Is it?', fail_if: yes, weight: .inf}",
            "checklist[0].weight: input should be a finite number",
        ),
        (
            "checklist:\n  - {id: a, question: ['Is it?'], fail_if: yes}",
            "checklist[0].question: input should be a valid string, not list",
        ),
    ],
)
def test_a_bad_checklist_is_named(
    write_file: Callable[..., Path], checklist: str, expected: str
) -> None:
    header = "name: tiny\nversion: 1.0.0\nscale: 1-5\npass_threshold: 3\ndescription: T.\n"
    path = write_file("t.md", f"---\n{header}{checklist}\n---\nJudge it.\n")
    line = 7 if checklist.startswith("checklist: ") else 8
    assert problems_of(path) == [f"{path}:{line}: {expected}"]


def test_a_pairwise_rubric_refuses_a_checklist(write_file: Callable[..., Path]) -> None:
    header = "name: duel\nversion: 1.0.0\nscale: pairwise\ndescription: Which is better.\n"
    checklist = "checklist:\n  - {id: a, question: 'Is it better?', fail_if: no}\n"
    path = write_file("d.md", f"---\n{header}{checklist}---\nCompare them.\n")
    assert problems_of(path) == [
        f"{path}:6: checklist: applies only to scales pass-fail and 1-5, not pairwise: an item "
        "asks about one output, a pairwise rubric compares two"
    ]


# --- the digest -------------------------------------------------------------------------------


def test_each_builtin_is_pinned_at_its_version_and_digest() -> None:
    pinned = {
        name: (load_rubric(name).version, load_rubric(name).digest) for name in builtin_names()
    }
    assert pinned == BUILTIN_DIGESTS


def test_a_rubric_without_a_checklist_keeps_the_digest_it_had() -> None:
    assert load_rubric("preference").checklist == []
    assert load_rubric("preference").digest == PRE_CHECKLIST_DIGEST
    body = "Judge it."
    assert judged_digest("pass-fail", None, [], body) == judged_digest(
        "pass-fail", None, [], body, []
    )


@pytest.mark.parametrize(
    "edit",
    [
        lambda t: t.replace("Does the output answer the question", "Does the output address"),
        lambda t: t.replace("fail_if: no", "fail_if: yes"),
        lambda t: t.replace("id: answers-the-question", "id: answers-the-ask"),
        lambda t: t.replace("    requires: [input]\n", ""),
        lambda t: t.replace(
            "  - id: answers-the-question",
            "  - id: extra\n    question: Q?\n    fail_if: no\n  - id: answers-the-question",
        ),
        lambda t: t.replace(
            "checklist:\n  - id: invented-specifics",
            "checklist:\n  - id: invented-specifics-2\n    question: Q?\n    fail_if: no\n"
            "  - id: invented-specifics",
        ),
    ],
)
def test_a_changed_checklist_is_a_changed_rubric(
    write_file: Callable[..., Path], edit: Callable[[str], str]
) -> None:
    before = load_rubric(str(write_file("a.md", CHECKLIST_RUBRIC))).digest
    after = edit(CHECKLIST_RUBRIC)
    assert after != CHECKLIST_RUBRIC
    assert load_rubric(str(write_file("b.md", after))).digest != before


def test_a_checklist_changes_the_digest_and_its_writing_does_not(
    write_file: Callable[..., Path],
) -> None:
    with_list = load_rubric(str(write_file("a.md", CHECKLIST_RUBRIC)))
    start, end = CHECKLIST_RUBRIC.index("checklist:"), CHECKLIST_RUBRIC.index("---\n# Grounded")
    without = load_rubric(
        str(write_file("b.md", CHECKLIST_RUBRIC[:start] + CHECKLIST_RUBRIC[end:]))
    )
    assert without.digest == judged_digest("pass-fail", None, ["input", "context"], without.body)
    assert with_list.digest != without.digest
    rewritten = (
        CHECKLIST_RUBRIC.replace("fail_if: yes", "fail_if: 'yes'")
        .replace("question: Does the output answer", "question:   Does the output answer")
        .replace("requires: [input, context]", "requires: [context, input]")
    )
    assert load_rubric(str(write_file("c.md", rewritten))).digest == with_list.digest
    weighed = SCORED_RUBRIC.replace('fail_if: "no"', 'fail_if: "no"\n    weight: 1')
    scored = load_rubric(str(write_file("d.md", SCORED_RUBRIC))).digest
    assert load_rubric(str(write_file("e.md", weighed))).digest == scored  # 1 is the default
    reweighed = SCORED_RUBRIC.replace("weight: 3", "weight: 2")
    assert load_rubric(str(write_file("f.md", reweighed))).digest != scored


# --- show and new -----------------------------------------------------------------------------


def test_show_lists_the_checklist(write_file: Callable[..., Path]) -> None:
    path = write_file("s.md", SCORED_RUBRIC)
    runner = CliRunner()
    text = runner.invoke(main, ["show", str(path)])
    assert text.exit_code == 0
    assert (
        "checklist: 2 items\n"
        "  - invented-specifics (fails if yes; weight 3)\n"
        "    Does the output state a number the input does not give?\n"
        "  - polite (fails if no; weight 1)\n"
        "    Is the output polite?\n"
    ) in text.output
    data = json.loads(runner.invoke(main, ["show", str(path), "--json"]).output)
    assert data["checklist"][0] == {
        "id": "invented-specifics",
        "question": "Does the output state a number the input does not give?",
        "fail_if": "yes",
        "requires": [],
        "weight": 3.0,
    }
    grounded = runner.invoke(main, ["show", str(write_file("g.md", CHECKLIST_RUBRIC))]).output
    assert "  - invented-specifics (fails if yes; requires context)\n" in grounded
    builtin = json.loads(runner.invoke(main, ["show", "preference", "--json"]).output)
    assert builtin["checklist"] == []
    assert "checklist:" not in runner.invoke(main, ["show", "preference"]).output
    assert "checklist: 3 items\n" in runner.invoke(main, ["show", "groundedness"]).output


@pytest.mark.parametrize("scale", ["pass-fail", "1-5"])
def test_new_with_a_checklist_validates_and_strict_names_what_is_left(
    tmp_path: Path, scale: str
) -> None:
    runner = CliRunner()
    made = runner.invoke(
        main, ["new", "house-facts", "--dir", str(tmp_path), "--scale", scale, "--checklist"]
    )
    assert made.exit_code == 0, made.output
    path = tmp_path / "house-facts.md"
    rubric = load_rubric(str(path))
    assert [(entry.id, entry.fail_if) for entry in rubric.checklist] == [
        ("first-failure-kind", "yes"),
        ("second-requirement", "no"),
    ]
    assert [entry.weight for entry in rubric.checklist] == (
        [2.0, None] if scale == "1-5" else [None, None]
    )
    assert rubric.requires == ["input"]
    assert [entry.requires for entry in rubric.checklist] == [["input"], ["input"]]
    assert runner.invoke(main, ["validate", str(path)]).exit_code == 0
    strict = runner.invoke(main, ["validate", "--strict", str(path)])
    assert strict.exit_code == 1
    assert f"{path}: checklist[0].question: still holds scaffold placeholder text" in strict.output
    assert f"{path}: checklist[1].question: still holds scaffold placeholder text" in strict.output
    finished = _finish_scaffold(path.read_text(encoding="utf-8"), scale)
    path.write_text(finished, encoding="utf-8")
    done = runner.invoke(main, ["validate", "--strict", str(path)])
    assert done.output == f"{path}: ok (house-facts@0.1.0, 2 goldens)\n"
    assert len(load_rubric(str(path)).checklist) == 2


def _finish_scaffold(text: str, scale: str) -> str:
    """What an author does to a scaffold: every placeholder replaced, a real body."""
    header = text[: text.index("\n---\n")]
    header = header.replace("PLACEHOLDER: ", "").replace(
        "<one line: what house-facts judges>", "Whether replies keep to the facts."
    )
    verdict = "Score 5 when every fact is right." if scale == "1-5" else "Pass when it is right."
    return f"{header}\n---\n# House facts\n\n{verdict}\n"


def test_new_from_a_rubric_keeps_its_checklist_and_requires(
    write_file: Callable[..., Path], tmp_path: Path
) -> None:
    source = write_file("g.md", CHECKLIST_RUBRIC)
    runner = CliRunner()
    made = runner.invoke(
        main, ["new", "copy", "--dir", str(tmp_path / "out"), "--from", str(source), "--checklist"]
    )
    assert made.exit_code == 0, made.output
    copy, original = load_rubric(str(tmp_path / "out" / "copy.md")), load_rubric(str(source))
    assert copy.checklist == original.checklist and copy.requires == original.requires
    assert copy.digest == original.digest  # the same judged rubric under a new name
    plain = write_file("plain.md", VALID_RUBRIC)  # no checklist, requires nothing
    example = runner.invoke(
        main, ["new", "plain-copy", "--dir", str(tmp_path), "--from", str(plain), "--checklist"]
    )
    assert example.exit_code == 0, example.output  # its goldens lack an input: none is added
    copied = load_rubric(str(tmp_path / "plain-copy.md"))
    assert copied.requires == []
    assert [entry.requires for entry in copied.checklist] == [[], []]
    harm = runner.invoke(
        main, ["new", "harm", "--dir", str(tmp_path), "--from", "harmful-content", "--checklist"]
    )
    assert harm.exit_code == 0, harm.output  # a built-in's own checklist is copied as it is
    assert (
        load_rubric(str(tmp_path / "harm.md")).checklist == load_rubric("harmful-content").checklist
    )
    refused = runner.invoke(
        main, ["new", "p", "--dir", str(tmp_path), "--from", "preference", "--checklist"]
    )
    assert refused.exit_code == 2 and "applies only to scales pass-fail and 1-5" in refused.stderr
    assert not (tmp_path / "p.md").exists()


# --- the verdict ------------------------------------------------------------------------------


def answers(**given: str | None) -> dict[str, ItemAnswer]:
    return {
        key.replace("_", "-"): ItemAnswer(value, f"because {key}") for key, value in given.items()
    }


def test_pass_fail_fails_on_any_item_answered_its_fail_if() -> None:
    items = [item("invented-specifics", "yes"), item("answers-the-question", "no")]
    passed = checklist_verdict(
        "pass-fail", None, items, answers(invented_specifics="no", answers_the_question="yes")
    )
    assert (passed.verdict, passed.failed, passed.share) == ("pass", (), 1.0)
    assert passed.reason == "all 2 checklist items satisfied"
    failed = checklist_verdict(
        "pass-fail", None, items, answers(invented_specifics="yes", answers_the_question="no")
    )
    assert failed.verdict == "fail" and failed.raw_score is None
    assert failed.failed == ("invented-specifics", "answers-the-question")
    assert failed.reason == (
        "2 of 2 checklist items failed; failed: invented-specifics (answered yes: because "
        "invented_specifics); answers-the-question (answered no: because answers_the_question)"
    )
    one = checklist_verdict(
        "pass-fail", None, items, answers(invented_specifics="no", answers_the_question="no")
    )
    assert (one.verdict, one.failed, one.share) == ("fail", ("answers-the-question",), 0.5)


@pytest.mark.parametrize(
    ("given", "expected"),
    [
        (
            {"invented_specifics": None, "answers_the_question": "yes"},
            "no answer from 1 of 2 checklist items: invented-specifics (because "
            "invented_specifics)",
        ),
        (
            {"answers_the_question": "yes"},
            "no answer from 1 of 2 checklist items: invented-specifics (not asked)",
        ),
        (
            {"invented_specifics": "no", "answers_the_question": "yes", "stray": "yes"},
            "answers to items the checklist does not have: stray",
        ),
        (
            {},
            "no answer from 2 of 2 checklist items: invented-specifics (not asked); "
            "answers-the-question (not asked)",
        ),
    ],
)
def test_an_item_without_an_answer_is_an_error_never_a_pass(
    given: dict[str, str | None], expected: str
) -> None:
    items = [item("invented-specifics", "yes"), item("answers-the-question", "no")]
    for scale, threshold in (("pass-fail", None), ("1-5", 1)):
        verdict = checklist_verdict(scale, threshold, items, answers(**given))
        assert (verdict.verdict, verdict.raw_score, verdict.share) == ("error", None, None)
        assert verdict.reason == expected
    assert checklist_verdict("pass-fail", None, [], {}).verdict == "error"


@pytest.mark.parametrize(
    ("share", "score"),
    [
        (Fraction(0), 1),
        (Fraction(1, 8), 1),  # 1.5: half way rounds down
        (Fraction(1, 5), 2),  # 1.8
        (Fraction(1, 4), 2),
        (Fraction(3, 8), 2),  # 2.5
        (Fraction(1, 2), 3),
        (Fraction(5, 8), 3),  # 3.5
        (Fraction(2, 3), 4),  # 3.67
        (Fraction(3, 4), 4),
        (Fraction(7, 8), 4),  # 4.5
        (Fraction(9, 10), 5),  # 4.6
        (Fraction(1), 5),
    ],
)
def test_a_share_maps_to_the_nearest_level_and_half_way_rounds_down(
    share: Fraction, score: int
) -> None:
    assert score_of_share(share) == score


@given(st.fractions(min_value=0, max_value=1))
def test_every_share_maps_onto_a_level_within_half_a_step(share: Fraction) -> None:
    score = score_of_share(share)
    assert 1 <= score <= 5
    assert abs((1 + 4 * share) - score) <= Fraction(1, 2)


def test_one_to_five_weighs_the_satisfied_items_and_applies_the_threshold() -> None:
    items = [item("invented-specifics", "yes", 3), item("polite", "no"), item("brief", "no")]
    invented = answers(invented_specifics="yes", polite="yes", brief="yes")
    verdict = checklist_verdict("1-5", 4, items, invented)
    assert (verdict.verdict, verdict.raw_score, verdict.share) == ("fail", 3, 0.4)  # 1 + 1.6
    assert verdict.reason == (
        "score 3: 40% of the checklist's weight satisfied (2 of 3 items); failed: "
        "invented-specifics (answered yes: because invented_specifics)"
    )
    rude = checklist_verdict(
        "1-5", 4, items, answers(invented_specifics="no", polite="no", brief="yes")
    )
    assert (rude.verdict, rude.raw_score, rude.failed) == ("pass", 4, ("polite",))  # 1 + 3.2
    perfect = checklist_verdict(
        "1-5", 5, items, answers(invented_specifics="no", polite="yes", brief="yes")
    )
    assert (perfect.verdict, perfect.raw_score) == ("pass", 5)
    assert perfect.reason.endswith("(3 of 3 items); no item failed")
    nothing = checklist_verdict(
        "1-5", 1, items, answers(invented_specifics="yes", polite="no", brief="no")
    )
    assert (nothing.verdict, nothing.raw_score, nothing.share) == ("pass", 1, 0.0)


def test_weights_count_as_written_so_a_decimal_tie_rounds_down() -> None:
    # 0.1 + 0.2 of 0.8 is exactly 3/8: level 2.5, so 2; in binary floats it is just over 2.5: 3
    items = [item("a", "yes", 0.1), item("b", "yes", 0.2), item("c", "yes", 0.5)]
    verdict = checklist_verdict("1-5", 3, items, answers(a="no", b="no", c="yes"))
    assert verdict.raw_score == 2
    assert re.search(r"\b38% of the checklist's weight", verdict.reason)
