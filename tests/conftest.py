"""Shared fixtures: a clean environment, the scripted judge server, and rubric-file helpers."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from judge_server import JudgeServer

from rubriclib.judge import Judge

SECRET_KEY = "sk-test-SECRET-0123456789abcdef"

VALID_RUBRIC = """\
---
name: tiny
version: 1.2.3
scale: pass-fail
description: A tiny rubric for tests.
goldens:
  - name: good
    output: "fine"
    expected: pass
  - name: bad
    output: "broken"
    expected: fail
---
# Tiny

Pass when the output is fine. Call `set_grade_pass` or `set_grade_fail`.
"""


@pytest.fixture(autouse=True)
def clean_environment(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """No test sees the developer's keys, endpoint, model, rubric path or verdict cache: each
    test gets a cache folder of its own."""
    for name in ("OPENAI_API_KEY", "OPENAI_BASE_URL", "RUBRICLIB_MODEL", "RUBRICLIB_PATH"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("RUBRICLIB_CACHE_DIR", str(tmp_path / "verdict-cache"))


@pytest.fixture
def judge_server() -> Iterator[JudgeServer]:
    with JudgeServer() as server:
        yield server


@pytest.fixture
def judge(judge_server: JudgeServer) -> Judge:
    """A Judge pointed at the scripted server, with a secret key and near-zero backoff."""
    return Judge(
        model="judge-model",
        base_url=judge_server.url,
        api_key=SECRET_KEY,
        timeout=5.0,
        backoff_base=0.001,
        backoff_max=0.01,
    )


@pytest.fixture
def write_file(tmp_path: Path) -> Callable[..., Path]:
    """Write text (or bytes) to a file under tmp_path and return its path."""

    def write(name: str, content: str | bytes) -> Path:
        path = tmp_path / name
        path.parent.mkdir(parents=True, exist_ok=True)
        if isinstance(content, bytes):
            path.write_bytes(content)
        else:
            path.write_text(content, encoding="utf-8")
        return path

    return write
