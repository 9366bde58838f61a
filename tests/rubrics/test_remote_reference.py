"""The rule telling a remote reference from a path, and each remote form parsed or refused."""

from __future__ import annotations

from pathlib import Path

import pytest

from rubriclib import RubricError, load_rubric
from rubriclib.rubrics.registry import is_path_reference
from rubriclib.rubrics.remote.reference import (
    RemoteReference,
    is_remote_reference,
    parse_reference,
)


@pytest.mark.parametrize(
    ("ref", "remote"),
    [
        ("github.com/org/repo@v1.0.0#rubrics/x.md", True),
        ("gitlab.com/group/sub/repo@main#x.md", True),
        ("git+https://example.com/r.git@v1#x.md", True),
        ("git+file:///tmp/repo#x.md", True),
        ("https://example.com/rubrics/x.md", True),
        ("http://127.0.0.1:8000/x.md", True),
        ("./github.com/org/repo@v1.0.0#rubrics/x.md", False),  # ./ forces a path
        ("github.com/org/repo#x.md", False),  # no @REV: a path, as before
        ("github.com/org/repo@v1.0.0", False),  # no #FILE: a path
        ("rubrics/x.md", False),
        ("groundedness@^1", False),
        ("groundedness", False),
        ("my-folder/x@1.0.0.md", False),  # no dot in the first part: not a host
    ],
)
def test_remote_or_not(ref: str, remote: bool) -> None:
    assert is_remote_reference(ref) is remote
    if remote:
        assert is_path_reference(ref) is False


@pytest.mark.parametrize(
    ("ref", "expected"),
    [
        (
            "github.com/org/repo@v1.0.0#rubrics/x.md",
            ("git", "https://github.com/org/repo", "v1.0.0", "rubrics/x.md"),
        ),
        (
            "gitlab.com/group/sub/repo@feature/x#a/b.md",
            ("git", "https://gitlab.com/group/sub/repo", "feature/x", "a/b.md"),
        ),
        (
            "git+ssh://git@example.com/org/repo.git@v2#x.md",
            ("git", "ssh://git@example.com/org/repo.git", "v2", "x.md"),
        ),
        ("git+file:///tmp/my@repo#x.md", ("git", "file:///tmp/my", "repo", "x.md")),
        ("git+file:///tmp/repo#./rubrics/x.md", ("git", "file:///tmp/repo", None, "rubrics/x.md")),
        ("https://example.com/r/x.md", ("file", "https://example.com/r/x.md", None, "")),
        ("http://localhost:8080/x.md", ("file", "http://localhost:8080/x.md", None, "")),
        ("http://[::1]:8080/x.md", ("file", "http://[::1]:8080/x.md", None, "")),
    ],
)
def test_forms_parse(ref: str, expected: tuple[str, str, str | None, str]) -> None:
    parsed = parse_reference(ref)
    assert (parsed.kind, parsed.url, parsed.rev, parsed.subpath) == expected
    assert parsed.text == ref


def test_a_commit_revision_is_known_as_one() -> None:
    commit = "a" * 40
    assert parse_reference(f"github.com/o/r@{commit}#x.md").names_commit
    assert not parse_reference("github.com/o/r@v1.0.0#x.md").names_commit
    assert RemoteReference("x", "git", "u").names_commit is False


@pytest.mark.parametrize(
    ("ref", "message"),
    [
        ("http://example.com/x.md", "plain http:// is refused except to a loopback address"),
        ("git+http://10.0.0.1/r@v1#x.md", "plain http:// is refused"),
        ("github.com/org/repo@v1#../secrets.md", "'../secrets.md' leaves the repository"),
        ("git+file:///r@v1#a/../../x.md", "leaves the repository"),
        ("git+file:///r@v1#/etc/passwd", "must be a relative path inside the repository"),
        ("git+file:///r@v1", "names no file"),
        ("git+file:///r@#x.md", "names no revision"),
        ("git+nonsense@v1#x.md", "is not a URL git can fetch"),
        ("https://example.com/r@v1#x.md", "for a file in a git repository write git+https://"),
        ("https://example.com/r/x.txt", "ending in .md"),
    ],
)
def test_refusals_say_the_reference_was_taken_as_remote(ref: str, message: str) -> None:
    with pytest.raises(RubricError) as caught:
        load_rubric(ref)
    text = str(caught.value)
    assert message in text and "(taken as a remote reference)" in text


@pytest.mark.parametrize(
    "ref",
    [
        "git+https://alice:s3cr3t-token@example.com/org/repo@v1#x.md",
        "https://s3cr3t-token@example.com/r/x.md",
        "git+https://alice:s3cr3t-token@example.com/org/repo#x.md",
    ],
)
def test_credentials_are_refused_and_never_repeated(ref: str) -> None:
    with pytest.raises(RubricError) as caught:
        load_rubric(ref)
    text = str(caught.value)
    assert "holds credentials" in text and "s3cr3t-token" not in text
    assert "***@example.com" in text


def test_ssh_user_without_a_secret_is_accepted() -> None:
    assert parse_reference("git+ssh://git@example.com/o/r@v1#x.md").url.startswith("ssh://git@")


def test_a_missing_file_says_it_was_taken_as_a_path(tmp_path: Path) -> None:
    with pytest.raises(RubricError) as caught:
        load_rubric("github.com/org/repo#x.md", base_dir=tmp_path)
    text = str(caught.value)
    assert "does not exist (taken as a path;" in text and "HOST/PATH@REV#FILE" in text
    with pytest.raises(RubricError, match=r"does not exist \(taken as a path\)$"):
        load_rubric("./rubrics/x.md", base_dir=tmp_path)
