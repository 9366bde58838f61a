"""A labels rubric's file: its labels checked with file, line and field, the digest they join,
and goldens that expect a label."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from rubriclib import RubricError, load_goldens, load_rubric

LABELS = """\
labels:
  resolved: pass
  partly-resolved: fail
  not-resolved: fail
"""
HEADER = "name: support\nversion: 1.0.0\nscale: labels\ndescription: Support replies.\n"
GOLDENS = """\
goldens:
  - {name: fixed, output: Your refund is on its way., expected: resolved}
  - {name: half, output: I have started your refund., expected: partly-resolved}
  - {name: none, output: We cannot help., expected: not-resolved}
"""
BODY = "# Support\n\nLabel the reply: resolved, partly-resolved or not-resolved.\n"


def rubric_file(write_file: Callable[..., Path], header: str, name: str = "support.md") -> Path:
    return write_file(name, f"---\n{header}---\n{BODY}")


def problems_of(path: Path) -> list[str]:
    with pytest.raises(RubricError) as caught:
        load_rubric(str(path))
    return [str(problem) for problem in caught.value.problems]


def test_a_labels_rubric_loads_its_labels_in_order(write_file: Callable[..., Path]) -> None:
    rubric = load_rubric(str(rubric_file(write_file, HEADER + LABELS + GOLDENS)))
    assert rubric.scale == "labels"
    assert list((rubric.labels or {}).items()) == [
        ("resolved", "pass"),
        ("partly-resolved", "fail"),
        ("not-resolved", "fail"),
    ]
    assert rubric.tool_names == ("set_grade_label", "set_grade_label")
    goldens = load_goldens(rubric)
    assert [(g.expected_label, g.expected) for g in goldens] == [
        ("resolved", "pass"),
        ("partly-resolved", "fail"),
        ("not-resolved", "fail"),
    ]


def test_the_labels_and_their_order_are_in_the_digest(write_file: Callable[..., Path]) -> None:
    digest = load_rubric(str(rubric_file(write_file, HEADER + LABELS))).digest
    mapped = LABELS.replace("partly-resolved: fail", "partly-resolved: pass")
    reordered = "labels:\n  not-resolved: fail\n  resolved: pass\n  partly-resolved: fail\n"
    for other in (mapped, reordered):
        changed = load_rubric(str(rubric_file(write_file, HEADER + other, "other.md")))
        assert changed.digest != digest


@pytest.mark.parametrize(
    ("header", "field", "message"),
    [
        (HEADER, "labels", "is required for scale labels"),
        (HEADER + "labels: {resolved: pass}\n", "labels", "at least two labels"),
        (HEADER + "labels: {a: pass, b: pass}\n", "labels", "one label that passes and one"),
        (HEADER + "labels: {Resolved: pass, other: fail}\n", "labels.Resolved", "kebab-case"),
        (HEADER + "labels: {a: pass, b: maybe}\n", "labels.b", "'pass' or 'fail'"),
        (
            HEADER.replace("labels", "pass-fail") + "labels: {a: pass, b: fail}\n",
            "labels",
            "applies only to scale labels",
        ),
        (
            HEADER + "labels: {a: pass, b: fail}\npass_threshold: 3\n",
            "pass_threshold",
            "applies only to scale 1-5",
        ),
    ],
)
def test_each_labels_problem_names_its_line_and_field(
    write_file: Callable[..., Path], header: str, field: str, message: str
) -> None:
    path = rubric_file(write_file, header)
    problems = problems_of(path)
    assert len(problems) == 1, problems
    assert f": {field}: " in problems[0] and message in problems[0]
    assert problems[0].startswith(f"{path}")


def test_goldens_must_expect_one_of_the_labels(write_file: Callable[..., Path]) -> None:
    goldens = (
        "goldens:\n  - {name: a, output: x, expected: pass}\n"
        "  - {name: b, output: y, expected: fixed}\n"
    )
    path = rubric_file(write_file, HEADER + LABELS + goldens)
    assert problems_of(path) == [
        f"{path}:11: goldens[0].expected: a verdict is not a label: one of resolved, "
        "partly-resolved, not-resolved",
        f"{path}:12: goldens[1].expected: 'fixed' is not a label: one of resolved, "
        "partly-resolved, not-resolved",
    ]


def test_a_goldens_file_expects_labels_too(write_file: Callable[..., Path]) -> None:
    rubric_path = write_file("rubrics/support.md", f"---\n{HEADER}{LABELS}---\n{BODY}")
    write_file("goldens/support.yaml", "- {name: a, output: x, expected: fixed}\n")
    rubric = load_rubric(str(rubric_path))
    with pytest.raises(RubricError) as caught:
        load_goldens(rubric)
    [problem] = caught.value.problems
    assert problem.field == "goldens[0].expected" and "'fixed' is not a label" in problem.message


def test_a_checklist_is_refused_on_a_labels_rubric(write_file: Callable[..., Path]) -> None:
    checklist = "checklist:\n  - {id: polite, question: Is it polite?, fail_if: 'no'}\n"
    [problem] = problems_of(rubric_file(write_file, HEADER + LABELS + checklist))
    assert "checklist: applies only to scales pass-fail and 1-5, not labels" in problem
