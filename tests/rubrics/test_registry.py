"""Every rule for resolving a reference: names, paths, the search path, pins, goldens lookup."""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path

import pytest
from conftest import VALID_RUBRIC

from rubriclib import RubricError, list_rubrics, load_goldens, load_rubric
from rubriclib.rubrics.registry import builtin_names, is_path_reference

BUILTINS = {  # the first pass-fail built-ins, at their versions
    "groundedness": "1.4.0",
    "helpfulness": "1.4.0",
    "instruction-following": "1.4.0",
    "refusal-correctness": "1.3.0",
    "tool-use-appropriateness": "2.3.1",
}


def rubric_text(name: str, version: str = "1.0.0") -> str:
    return VALID_RUBRIC.replace("name: tiny", f"name: {name}").replace("1.2.3", version)


def error_text(ref: str, **kwargs: object) -> str:
    with pytest.raises(RubricError) as caught:
        load_rubric(ref, **kwargs)  # type: ignore[arg-type]
    return str(caught.value)


@pytest.mark.parametrize(("name", "version"), BUILTINS.items())
def test_every_builtin_loads_by_name(name: str, version: str) -> None:
    rubric = load_rubric(name)
    assert rubric.name == name and rubric.source == f"builtin:{name}"
    assert rubric.version == version and rubric.scale == "pass-fail"
    expected = {golden.expected for golden in rubric.goldens}
    assert expected == {"pass", "fail"}


def test_builtin_names_cover_the_library() -> None:
    assert set(BUILTINS) <= set(builtin_names())


@pytest.mark.parametrize(
    ("ref", "is_path"),
    [
        ("groundedness", False),
        ("groundedness@^1", False),
        ("house-style.md", True),
        ("./house-style", True),
        ("../x", True),
        ("/abs/x", True),
        ("~/x", True),
        ("rubrics/x", True),
    ],
)
def test_path_or_name(ref: str, is_path: bool) -> None:
    assert is_path_reference(ref) is is_path


def test_relative_path_resolves_against_base_dir(
    tmp_path: Path, write_file: Callable[..., Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    path = write_file("evals/rubrics/house.md", rubric_text("house"))
    rubric = load_rubric("./rubrics/house.md", base_dir=tmp_path / "evals")
    assert rubric.source == f"file:{path}"
    monkeypatch.chdir(tmp_path / "evals")
    assert load_rubric("rubrics/house.md").path == path
    write_file("evals/house", rubric_text("house"))  # no suffix, no separator: a Path still is one
    assert load_rubric(Path("house")).source == f"file:{tmp_path / 'evals' / 'house'}"


def test_home_is_expanded(
    tmp_path: Path, write_file: Callable[..., Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    write_file("home/r/house.md", rubric_text("house"))
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    assert load_rubric("~/r/house.md").name == "house"


def test_missing_path_names_the_file(tmp_path: Path) -> None:
    message = error_text(str(tmp_path / "nope.md"))
    assert f"{tmp_path / 'nope.md'}: file: does not exist" in message


def test_search_path_comes_before_builtins_and_in_order(
    tmp_path: Path, write_file: Callable[..., Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    first = write_file("first/groundedness.md", rubric_text("groundedness", "2.0.0"))
    write_file("second/groundedness.md", rubric_text("groundedness", "3.0.0"))
    write_file("second/house.md", rubric_text("house"))
    monkeypatch.setenv(
        "RUBRICLIB_PATH", os.pathsep.join([str(tmp_path / "first"), "", str(tmp_path / "second")])
    )
    shadow = load_rubric("groundedness")
    assert shadow.version == "2.0.0" and shadow.source == f"file:{first}"
    assert load_rubric("house").version == "1.0.0"
    assert load_rubric("helpfulness").source == "builtin:helpfulness"


def test_name_must_match_its_file(
    tmp_path: Path, write_file: Callable[..., Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    write_file("dir/house.md", rubric_text("other"))
    monkeypatch.setenv("RUBRICLIB_PATH", str(tmp_path / "dir"))
    assert "name: 'other' does not match the file name 'house.md'" in error_text("house")


def test_a_name_cannot_read_outside_the_search_folders(
    tmp_path: Path, write_file: Callable[..., Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    outside = write_file("outside/secret.md", rubric_text("secret"))
    (tmp_path / "dir").mkdir()
    (tmp_path / "dir" / "secret.md").symlink_to(outside)
    monkeypatch.setenv("RUBRICLIB_PATH", str(tmp_path / "dir"))
    assert "resolves outside its folder" in error_text("secret")
    assert "is not a rubric name" in error_text("dir\\..\\secret")
    assert "is not a rubric name" in error_text("secret\x00")


def test_unknown_name_lists_the_available_and_the_closest() -> None:
    message = error_text("groundednes")
    assert "no rubric named 'groundednes'. Did you mean 'groundedness'?" in message
    assert (
        "Available: answer-correctness, answer-relevance, conciseness, context-relevance" in message
    )


@pytest.mark.parametrize(
    ("ref", "ok"),
    [
        ("groundedness@1.4.0", True),
        ("groundedness@1.3.0", False),
        ("groundedness@^1", True),
        ("groundedness@^1.0", True),
        ("groundedness@~1.4", True),
        ("groundedness@1", True),
        ("groundedness@>=1.0.0,<2", True),
        ("groundedness@>0.9", True),
        ("groundedness@!=1.4.0", False),
        ("groundedness@^2", False),
        ("groundedness@2.0.0", False),
        ("groundedness@<1", False),
        ("groundedness@~1.3", False),
        ("groundedness@>=1.0.0, <1.4.0", False),
    ],
)
def test_version_pins(ref: str, ok: bool) -> None:
    if ok:
        assert load_rubric(ref).name == "groundedness"
    else:
        assert "groundedness is at version 1.4.0, which is not" in error_text(ref)


@pytest.mark.parametrize(
    ("version", "spec", "ok"),
    [
        ("0.2.5", "^0.2", True),
        ("0.3.0", "^0.2", False),
        ("0.0.3", "^0.0.3", True),
        ("0.0.4", "^0.0.3", False),
        ("1.9.0", "^1.2", True),
        ("1.2.9", "~1.2.3", True),
        ("1.3.0", "~1.2.3", False),
        ("2.0.0-rc.1", "<2.0.0", True),
    ],
)
def test_caret_and_tilde_semantics(
    tmp_path: Path,
    write_file: Callable[..., Path],
    monkeypatch: pytest.MonkeyPatch,
    version: str,
    spec: str,
    ok: bool,
) -> None:
    write_file("dir/house.md", rubric_text("house", f"'{version}'"))
    monkeypatch.setenv("RUBRICLIB_PATH", str(tmp_path / "dir"))
    if ok:
        assert load_rubric(f"house@{spec}").version == version
    else:
        assert "which is not" in error_text(f"house@{spec}")


@pytest.mark.parametrize("spec", ["banana", "^", ">=1.0.0,,", "1.0.0.0"])
def test_invalid_pin_is_a_rubric_error(spec: str) -> None:
    assert "is not a version pin" in error_text(f"groundedness@{spec}")


@pytest.mark.parametrize("ref", ["", "   ", "Groundedness", "ground edness"])
def test_malformed_references(ref: str) -> None:
    assert "reference" in error_text(ref)


def test_list_rubrics_has_one_per_name(
    tmp_path: Path, write_file: Callable[..., Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    write_file("dir/helpfulness.md", rubric_text("helpfulness", "9.0.0"))
    write_file("dir/house.md", rubric_text("house"))
    write_file("dir/README.md", "# About this folder\n")  # not a rubric name: not listed
    monkeypatch.setenv("RUBRICLIB_PATH", str(tmp_path / "dir"))
    rubrics = {rubric.name: rubric for rubric in list_rubrics()}
    assert set(BUILTINS) | {"house"} <= set(rubrics)
    assert rubrics["helpfulness"].version == "9.0.0"
    assert rubrics["groundedness"].source == "builtin:groundedness"


def test_list_rubrics_reports_a_broken_file(
    tmp_path: Path, write_file: Callable[..., Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    write_file("dir/broken.md", "no frontmatter here")
    monkeypatch.setenv("RUBRICLIB_PATH", str(tmp_path / "dir"))
    with pytest.raises(RubricError, match="broken.md: frontmatter: missing"):
        list_rubrics()


def test_load_goldens_adds_the_goldens_file(write_file: Callable[..., Path]) -> None:
    path = write_file("lib/rubrics/house.md", rubric_text("house"))
    write_file(
        "lib/goldens/house.yaml",
        "- name: extra\n  output: more\n  expected: fail\n  why: An extra case.\n",
    )
    goldens = load_goldens(load_rubric(str(path)))
    assert [golden.name for golden in goldens] == ["good", "bad", "extra"]


def test_load_goldens_without_a_file_is_the_frontmatter() -> None:
    rubric = load_rubric("groundedness")
    assert load_goldens(rubric)[: len(rubric.goldens)] == rubric.goldens


def test_goldens_file_accepts_a_goldens_mapping(write_file: Callable[..., Path]) -> None:
    path = write_file("lib/rubrics/house.md", rubric_text("house"))
    write_file("lib/goldens/house.yaml", "goldens:\n  - {name: extra, output: x, expected: pass}\n")
    assert len(load_goldens(load_rubric(str(path)))) == 3


@pytest.mark.parametrize(
    ("content", "fragment"),
    [
        (
            "- {name: good, output: x, expected: pass}\n",
            "goldens[0].name: duplicate golden name 'good' (the rubric's own goldens have it)",
        ),
        ("- {name: extra, expected: pass}\n", "goldens[0].output: is required"),
        ("name: x\n", "goldens: must be a list of goldens"),
        ("- [unclosed\n", ":1: goldens: invalid YAML: a flow sequence starts here (column 3)"),
    ],
)
def test_bad_goldens_file_names_file_and_field(
    write_file: Callable[..., Path], content: str, fragment: str
) -> None:
    path = write_file("lib/rubrics/house.md", rubric_text("house"))
    goldens_path = write_file("lib/goldens/house.yaml", content)
    with pytest.raises(RubricError) as caught:
        load_goldens(load_rubric(str(path)))
    assert str(caught.value).startswith(f"{goldens_path}")
    assert fragment in str(caught.value)


def test_a_goldens_file_may_not_ask_cites_of_a_rubric_that_never_cites(
    write_file: Callable[..., Path],
) -> None:
    text = rubric_text("house").replace("scale: pass-fail", "scale: pass-fail\ncitations: off")
    path = write_file("lib/rubrics/house.md", text)
    write_file("lib/goldens/house.yaml", "- {name: extra, output: x, expected: fail, cites: [x]}\n")
    with pytest.raises(RubricError, match=r"goldens\[0\]\.cites: the rubric has citations: off"):
        load_goldens(load_rubric(str(path)))
