"""files.py: a user-visible file is written whole, and write_new never overwrites."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from rubriclib.files import holds_anything, write_atomically, write_new


def test_write_atomically_replaces_the_file_and_leaves_no_temporary(tmp_path: Path) -> None:
    target = tmp_path / "report.json"
    target.write_text("old", encoding="utf-8")
    write_atomically(target, "névé\n")
    assert target.read_bytes() == "névé\n".encode()
    write_atomically(target, b"\x00bytes")
    assert target.read_bytes() == b"\x00bytes"
    assert [path.name for path in tmp_path.iterdir()] == ["report.json"]


def test_a_failed_write_keeps_the_old_file_whole(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    target = tmp_path / "rubriclib.lock"
    target.write_text("what the user had", encoding="utf-8")

    def no_room(descriptor: int) -> None:
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(os, "fsync", no_room)
    with pytest.raises(OSError, match="No space"):
        write_atomically(target, "x" * 100_000)
    assert target.read_text(encoding="utf-8") == "what the user had"
    assert [path.name for path in tmp_path.iterdir()] == ["rubriclib.lock"]


def test_write_new_writes_a_file_that_did_not_exist(tmp_path: Path) -> None:
    target = tmp_path / "rubric.md"
    write_new(target, "---\nname: x\n---\n")
    assert target.read_text(encoding="utf-8") == "---\nname: x\n---\n"
    assert [path.name for path in tmp_path.iterdir()] == ["rubric.md"]


def test_write_new_never_overwrites(tmp_path: Path) -> None:
    target = tmp_path / "rubric.md"
    target.write_text("the user's own rubric", encoding="utf-8")
    with pytest.raises(FileExistsError):
        write_new(target, "a skeleton")
    assert target.read_text(encoding="utf-8") == "the user's own rubric"
    assert [path.name for path in tmp_path.iterdir()] == ["rubric.md"]


def test_a_written_file_gets_the_usual_permissions(tmp_path: Path) -> None:
    umask = os.umask(0o022)
    try:
        write_atomically(tmp_path / "a", "x")
        write_new(tmp_path / "b", "x")
    finally:
        os.umask(umask)
    assert (tmp_path / "a").stat().st_mode & 0o777 == 0o644
    assert (tmp_path / "b").stat().st_mode & 0o777 == 0o644


def test_a_file_holds_anything_but_whitespace(tmp_path: Path) -> None:
    assert not holds_anything(tmp_path / "missing.jsonl")
    blank = tmp_path / "blank.jsonl"
    blank.write_bytes(b"")
    assert not holds_anything(blank)
    blank.write_bytes(b" \n\t\n" * 50_000)  # past the first chunk read
    assert not holds_anything(blank)
    blank.write_bytes(b"\n" * 100_000 + b"x")
    assert holds_anything(blank)
