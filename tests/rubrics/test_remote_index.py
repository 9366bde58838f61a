"""Indexes of rubrics: written for a folder of rubrics (references from a URL and a tag, else
paths relative to the index), read from a file or a URL (a bad one named by index, entry and
field), searched by case-insensitive words over name, description and tags, and named in the
settings (`indexes`, RUBRICLIB_INDEXES)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from remote_repos import remote_rubric

from rubriclib import RubricError, load_rubric
from rubriclib.config import resolve
from rubriclib.rubrics import (
    IndexEntry,
    configured_indexes,
    index_entries,
    search_indexes,
    write_index,
)


def tagged(name: str, tags: str, words: str = "A rubric kept in another repository.") -> str:
    return remote_rubric(name).replace(
        "description: A rubric kept in another repository.",
        (f"description: {words}\ntags: [{tags}]"),
    )


@pytest.fixture
def library(tmp_path: Path) -> Path:
    """A repository folder: two rubrics, a README, a hidden folder and a goldens file."""
    folder = tmp_path / "library"
    (folder / "rubrics" / "support").mkdir(parents=True)
    (folder / "rubrics" / "house-style.md").write_text(tagged("house-style", "style, tone"))
    (folder / "rubrics" / "support" / "refunds.md").write_text(
        tagged("refunds", "support", "Whether a reply states the refund policy.")
    )
    (folder / "README.md").write_text("# Our rubrics\n")
    (folder / "notes.md").write_text("Plain notes, no frontmatter.\n")
    (folder / ".github").mkdir()
    (folder / ".github" / "broken.md").write_text("---\nnot: a rubric\n---\nx\n")
    return folder


def test_an_index_without_a_url_holds_paths_relative_to_it(library: Path) -> None:
    out = library / "rubriclib-index.json"
    write_index(index_entries(library, out, None, None), out)
    data = json.loads(out.read_text())
    assert [row["ref"] for row in data["rubrics"]] == [
        "rubrics/house-style.md",
        "rubrics/support/refunds.md",
    ]
    assert data["rubrics"][0] == {
        "ref": "rubrics/house-style.md",
        "name": "house-style",
        "version": "1.0.0",
        "scale": "pass-fail",
        "description": "A rubric kept in another repository.",
        "tags": ["style", "tone"],
    }
    [entry] = search_indexes([str(out)], ["REFUND"])
    assert load_rubric(entry.ref).name == "refunds"  # a path from the working directory


def test_an_index_elsewhere_reaches_the_files_from_where_it_is(
    library: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    out = tmp_path / "published" / "index.json"
    out.parent.mkdir()
    write_index(index_entries(library, out, None, None), out)
    assert json.loads(out.read_text())["rubrics"][0]["ref"] == "../library/rubrics/house-style.md"
    monkeypatch.chdir(tmp_path / "published")
    [entry] = search_indexes(["index.json"], ["tone"])
    assert entry.ref == "../library/rubrics/house-style.md"
    assert load_rubric(entry.ref).name == "house-style"


@pytest.mark.parametrize(
    ("url", "expected"),
    [
        ("github.com/acme/rubrics", "github.com/acme/rubrics@v1.2.0#rubrics/house-style.md"),
        (
            "https://git.example.com/r.git",
            "git+https://git.example.com/r.git@v1.2.0#rubrics/house-style.md",
        ),
    ],
)
def test_an_index_with_a_url_holds_remote_references(
    library: Path, url: str, expected: str
) -> None:
    entries = index_entries(library, library / "i.json", url, "v1.2.0")
    assert entries[0].ref == expected


def test_a_url_holding_credentials_is_refused(library: Path) -> None:
    with pytest.raises(RubricError) as caught:
        index_entries(library, library / "i.json", "https://bob:tok3n@example.com/r", "v1")
    assert "holds credentials" in str(caught.value) and "tok3n" not in str(caught.value)


def test_every_broken_rubric_is_named(library: Path) -> None:
    (library / "rubrics" / "bad.md").write_text("---\nname: bad\n---\nx\n")
    with pytest.raises(RubricError) as caught:
        index_entries(library, library / "i.json", None, None)
    fields = {(Path(p.source).name, p.field) for p in caught.value.problems}
    assert ("bad.md", "version") in fields and ("bad.md", "scale") in fields


@pytest.mark.parametrize(
    ("words", "names"),
    [
        ([], ["house-style", "refunds"]),
        (["Tone"], ["house-style"]),  # a tag, in any case
        (["policy", "REFUND"], ["refunds"]),  # every word: description and name
        (["ground"], []),
        (["refund", "tone"], []),  # one entry must hold every word
    ],
)
def test_matching_is_every_word_in_name_description_or_tags(
    library: Path, words: list[str], names: list[str]
) -> None:
    out = library / "rubriclib-index.json"
    write_index(index_entries(library, out, None, None), out)
    assert [entry.name for entry in search_indexes([str(out)], words)] == names


ENTRY = {"ref": "x.md", "name": "x", "version": "1.0.0", "scale": "pass-fail", "description": "d"}


@pytest.mark.parametrize(
    ("data", "field", "message"),
    [
        ("[]", "rubrics", "must be a list of entries"),
        ('{"rubrics": 3}', "rubrics", "must be a list of entries"),
        ('{"rubrics": [3]}', "rubrics[0]", "must be an object"),
        ({**ENTRY, "version": "1.0"}, "rubrics[0].version", "'1.0' is not a semver version"),
        ({**ENTRY, "scale": "stars"}, "rubrics[0].scale", "must be one of pass-fail"),
        ({**ENTRY, "name": ""}, "rubrics[0].name", "must be a non-empty string"),
        ({**ENTRY, "tags": "style"}, "rubrics[0].tags", "must be a list of strings"),
        ({**ENTRY, "ref": "groundedness"}, "rubrics[0].ref", "must be a remote reference"),
        ({**ENTRY, "ref": "/etc/x.md"}, "rubrics[0].ref", "must be a remote reference"),
        (
            {**ENTRY, "ref": "http://example.com/x.md"},
            "rubrics[0].ref",
            "plain http:// is refused",
        ),
        ('{"rubrics": [', "line 1", "is not JSON"),
    ],
)
def test_a_bad_index_is_named_with_the_entry_and_field(
    tmp_path: Path, data: object, field: str, message: str
) -> None:
    path = tmp_path / "index.json"
    text = data if isinstance(data, str) else json.dumps({"rubrics": [ENTRY, data]})
    path.write_text(text)
    with pytest.raises(RubricError) as caught:
        search_indexes([str(path)], [])
    [problem] = caught.value.problems
    wanted = field if isinstance(data, str) else field.replace("rubrics[0]", "rubrics[1]")
    assert (problem.source, problem.field) == (str(path), wanted)
    assert message in problem.message


def test_an_index_url_must_be_https_or_loopback(tmp_path: Path) -> None:
    for url, message in [
        ("http://example.com/index.json", "plain http:// is refused"),
        ("ftp://example.com/index.json", "fetched over https"),
        ("https://u:p4ss@example.com/index.json", "holds credentials"),
    ]:
        with pytest.raises(RubricError) as caught:
            search_indexes([url], [])
        assert message in str(caught.value) and "p4ss" not in str(caught.value)


def test_indexes_come_from_the_settings(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "rubriclib.toml").write_text(
        'indexes = ["shared/index.json", "https://example.com/rubriclib-index.json"]\n'
    )
    (tmp_path / "deeper").mkdir()
    monkeypatch.chdir(tmp_path / "deeper")
    assert configured_indexes() == [
        str(tmp_path / "shared" / "index.json"),
        "https://example.com/rubriclib-index.json",
    ]
    monkeypatch.setenv("RUBRICLIB_INDEXES", "a.json https://example.com/b.json")
    assert configured_indexes() == ["a.json", "https://example.com/b.json"]
    assert resolve("indexes").origin == "env RUBRICLIB_INDEXES"
    (tmp_path / "rubriclib.toml").write_text("indexes = 'one.json'\n")
    monkeypatch.delenv("RUBRICLIB_INDEXES")
    with pytest.raises(RubricError, match="indexes: must be a list of index URLs or files"):
        configured_indexes()


def test_an_entry_is_a_value() -> None:
    entry = IndexEntry("x.md", "x", "1.0.0", "pass-fail", "d", ("a",))
    assert entry.data() == {**ENTRY, "tags": ["a"]}
