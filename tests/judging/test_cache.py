"""The verdict cache: hits, misses, trials, what is kept apart, concurrent writers, bad files."""

from __future__ import annotations

import asyncio
import json
import logging
import threading
from collections.abc import Callable
from pathlib import Path

import pytest
from click.testing import CliRunner
from conftest import KEYWORD_RUBRIC, SECRET_KEY, VALID_RUBRIC, keyword_responder
from judge_server import JudgeServer, Reply, completion, error_reply, tool_reply

from rubriclib import Rubric
from rubriclib.cli import main
from rubriclib.item import Item
from rubriclib.judging.cache import FILE_NAME, VerdictCache, cache_key, default_cache_dir
from rubriclib.judging.engine import Job, judge_stream
from rubriclib.judging.judge import Judge

PASS = tool_reply("set_grade_pass", {"reason": "fine"})


@pytest.fixture
def cached_judge(judge_server: JudgeServer, tmp_path: Path) -> Judge:
    judge_server.responder = lambda body: PASS
    return Judge(
        model="judge-model",
        base_url=judge_server.url,
        api_key=SECRET_KEY,
        cache=tmp_path / "cache",
        backoff_base=0.001,
    )


def test_a_repeated_judgment_is_served_from_the_cache(
    cached_judge: Judge, judge_server: JudgeServer, rubric: Rubric
) -> None:
    first = cached_judge.grade(rubric, "fine", context="c")
    second = cached_judge.grade(rubric, "fine", context="c")
    assert len(judge_server.requests) == 1
    assert (second.verdict, second.reason) == (first.verdict, first.reason)
    assert first.details["judge"]["cached"] is False
    judge = second.details["judge"]
    assert judge["cached"] is True and judge["attempts"] == 0
    assert second.details["rubric"] == rubric.identity


@pytest.mark.parametrize(
    "change",
    [
        {"output": "other"},
        {"context": "other"},
        {"model": "other-model"},
        {"temperature": 0.7},
        {"max_tokens": 99},
    ],
)
def test_anything_that_decides_a_verdict_is_in_the_key(
    judge_server: JudgeServer, rubric: Rubric, tmp_path: Path, change: dict[str, object]
) -> None:
    judge_server.responder = lambda body: PASS
    settings = {"model": "m", "temperature": 0.0, "max_tokens": 1024}
    fields = {"output": "fine", "context": "c"}
    judge_settings = {k: change.get(k, v) for k, v in settings.items()}
    base = Judge(base_url=judge_server.url, api_key="k", cache=tmp_path, **settings)  # type: ignore[arg-type]
    base.grade(rubric, **fields)  # type: ignore[arg-type]
    changed = Judge(base_url=judge_server.url, api_key="k", cache=tmp_path, **judge_settings)  # type: ignore[arg-type]
    changed.grade(rubric, **{k: change.get(k, v) for k, v in fields.items()})  # type: ignore[arg-type]
    assert len(judge_server.requests) == 2


def test_the_endpoint_is_in_the_key_and_the_api_key_is_not(
    judge_server: JudgeServer, rubric: Rubric, tmp_path: Path
) -> None:
    judge_server.responder = lambda body: PASS
    Judge(base_url=judge_server.url, api_key=SECRET_KEY, cache=tmp_path).grade(rubric, "x")
    Judge(base_url=judge_server.url, api_key="sk-another-key", cache=tmp_path).grade(rubric, "x")
    assert len(judge_server.requests) == 1  # a new key does not change a verdict
    with JudgeServer() as other:
        other.responder = lambda body: PASS
        Judge(base_url=other.url, api_key=SECRET_KEY, cache=tmp_path).grade(rubric, "x")
        assert len(other.requests) == 1
    stored = b"".join(path.read_bytes() for path in tmp_path.iterdir())
    assert SECRET_KEY.encode() not in stored


def test_trials_are_independent_samples(
    cached_judge: Judge, judge_server: JudgeServer, rubric: Rubric
) -> None:
    def run(trials: int) -> None:
        jobs = [Job(rubric, Item(output="fine"), trial) for trial in range(1, trials + 1)]

        async def drain() -> None:
            async for _ in judge_stream(cached_judge, jobs, concurrency=2):
                pass

        asyncio.run(drain())

    run(3)
    assert len(judge_server.requests) == 3
    run(3)
    assert len(judge_server.requests) == 3
    run(4)
    assert len(judge_server.requests) == 4  # only the new fourth trial


def test_errors_are_never_cached(
    cached_judge: Judge, judge_server: JudgeServer, rubric: Rubric
) -> None:
    judge_server.responder = lambda body: error_reply(400, "bad request")
    assert cached_judge.grade(rubric, "x").verdict == "error"
    judge_server.responder = lambda body: Reply(body=completion(content="no tools today"))
    assert cached_judge.grade(rubric, "x").verdict == "error"
    judge_server.responder = lambda body: PASS
    assert cached_judge.grade(rubric, "x").details["judge"]["cached"] is False
    assert cached_judge.grade(rubric, "x").details["judge"]["cached"] is True


def test_a_corrected_verdict_is_cached_with_its_correction(
    cached_judge: Judge, judge_server: JudgeServer, rubric: Rubric
) -> None:
    judge_server.responder = None
    judge_server.script(
        Reply(body=completion(content="")),
        tool_reply("set_grade", {"reason": "ok", "verdict": "fail"}),
    )
    cached_judge.grade(rubric, "x")
    again = cached_judge.grade(rubric, "x")
    assert again.verdict == "fail" and again.details["judge"]["cached"] is True
    assert again.details["judge"]["corrected"] is True


def test_a_judge_without_cache_stores_nothing(judge: Judge, tmp_path: Path) -> None:
    assert judge.cache is None


def test_the_default_folder_follows_the_environment(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setenv("RUBRICLIB_CACHE_DIR", str(tmp_path / "here"))
    assert default_cache_dir() == tmp_path / "here"
    monkeypatch.delenv("RUBRICLIB_CACHE_DIR")
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    assert default_cache_dir() == tmp_path / "xdg" / "rubriclib"


def test_concurrent_writers_share_one_cache(tmp_path: Path) -> None:
    caches = [VerdictCache(tmp_path) for _ in range(4)]
    errors: list[BaseException] = []

    def write(cache: VerdictCache, offset: int) -> None:
        try:
            for number in range(100):
                cache.put(f"key-{offset}-{number}", {"verdict": "pass", "reason": str(number)})
                cache.put(f"shared-{number}", {"verdict": "pass", "reason": str(offset)})
        except BaseException as error:  # noqa: BLE001 - the test reports whatever escaped
            errors.append(error)

    threads = [threading.Thread(target=write, args=(c, i)) for i, c in enumerate(caches)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert errors == []
    assert VerdictCache(tmp_path).info()["entries"] == 4 * 100 + 100


@pytest.mark.parametrize("damage", ["corrupt", "not a folder"])
def test_an_unusable_cache_warns_once_and_the_run_goes_on(
    judge_server: JudgeServer,
    rubric: Rubric,
    tmp_path: Path,
    caplog: pytest.LogCaptureFixture,
    damage: str,
) -> None:
    judge_server.responder = lambda body: PASS
    if damage == "corrupt":
        folder = tmp_path / "cache"
        folder.mkdir()
        (folder / FILE_NAME).write_bytes(b"this is not a database" * 100)
    else:
        folder = tmp_path / "a-file"
        folder.write_text("x")
    judge = Judge(base_url=judge_server.url, api_key="k", cache=folder)
    results = judge.grade_many(rubric, [{"output": str(i)} for i in range(5)], concurrency=2)
    assert [r.verdict for r in results] == ["pass"] * 5
    assert len(judge_server.requests) == 5
    warnings = [r for r in caplog.records if r.levelno == logging.WARNING]
    assert len(warnings) == 1 and "cannot be used" in warnings[0].getMessage()


def test_info_and_clear(tmp_path: Path) -> None:
    cache = VerdictCache(tmp_path)
    assert cache.info() == {"path": str(tmp_path / FILE_NAME), "entries": 0, "bytes": 0}
    assert cache.clear() == 0
    cache.put(cache_key("http://h/v1", {"a": 1}, 1), {"verdict": "pass", "reason": "r"})
    assert cache.info()["entries"] == 1 and cache.info()["bytes"] > 0
    assert cache.clear() == 1 and cache.info()["entries"] == 0


def test_the_key_is_canonical() -> None:
    assert cache_key("u", {"a": 1, "b": 2}, 1) == cache_key("u", {"b": 2, "a": 1}, 1)
    assert cache_key("u", {"a": 1}, 1) != cache_key("u", {"a": 1}, 2)
    assert cache_key("u", {"a": 1}, 1) != cache_key("v", {"a": 1}, 1)


def test_an_unchanged_rerun_sends_nothing_and_an_edit_rejudges_only_its_rubric(
    judge_server: JudgeServer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    folder = tmp_path / "library"
    folder.mkdir()
    (folder / "keywords.md").write_text(KEYWORD_RUBRIC)
    (folder / "tiny.md").write_text(VALID_RUBRIC)
    monkeypatch.setenv("RUBRICLIB_PATH", str(folder))
    monkeypatch.setenv("OPENAI_BASE_URL", judge_server.url)
    monkeypatch.setenv("OPENAI_API_KEY", SECRET_KEY)
    judge_server.responder = keyword_responder()
    arguments = ["test-goldens", "keywords", "tiny", "--trials", "2", "--format", "json"]
    first = CliRunner().invoke(main, arguments)
    assert len(judge_server.requests) == (2 + 2) * 2
    second = CliRunner().invoke(main, arguments)
    assert len(judge_server.requests) == 8  # nothing sent
    assert second.exit_code == first.exit_code
    rubric = json.loads(second.output)["rubrics"][0]
    assert all(r["details"]["judge"]["cached"] for g in rubric["goldens"] for r in g["results"])
    (folder / "tiny.md").write_text(VALID_RUBRIC.replace("Pass when", "Pass only when"))
    CliRunner().invoke(main, arguments)
    assert len(judge_server.requests) == 8 + 2 * 2  # only tiny's goldens, each trial
    CliRunner().invoke(main, [*arguments, "--no-cache"])
    assert len(judge_server.requests) == 12 + 8
    info = CliRunner().invoke(main, ["cache", "info", "--json"])
    assert json.loads(info.output)["entries"] == 12
    cleared = CliRunner().invoke(main, ["cache", "clear"])
    assert cleared.output.splitlines() == [
        "Removed 12 cached verdict(s)",
        f"Removed 0 fetched rubric(s) from {tmp_path / 'verdict-cache' / 'rubrics'}",
    ]
    text = CliRunner().invoke(main, ["cache", "info"]).output
    assert "entries: 0" in text and str(tmp_path / "verdict-cache") in text


def test_a_pairwise_verdict_is_served_only_with_the_judges_answer(tmp_path: Path) -> None:
    from rubriclib.judging.asking.reply import JudgeVerdict
    from rubriclib.judging.cache import cached_result, stored_verdict
    from rubriclib.rubrics.registry import load_rubric

    path = tmp_path / "versus.md"
    path.write_text("---\nname: versus\nversion: 1.0.0\nscale: pairwise\ndescription: d\n---\nA?\n")
    versus = load_rubric(str(path))
    stored = stored_verdict(JudgeVerdict("fail", "B is better", winner="B"), "named", None)
    assert stored["winner"] == "B"
    result = cached_result(stored, versus, "judge-model")
    assert result is not None and result.details["winner"] == "B"
    assert result.details["judge"]["cached"] is True
    assert cached_result({**stored, "winner": None}, versus, "judge-model") is None
    assert "winner" not in stored_verdict(JudgeVerdict("pass", "fine"), "required", None)


def test_quirks_are_remembered_per_endpoint_and_model(tmp_path: Path) -> None:
    memory = VerdictCache(tmp_path)
    memory.remember_quirk("http://a/v1", "m", "no_required_tool_choice")
    memory.remember_quirk("http://a/v1", "m", "not-a-quirk")
    memory.remember_quirk("http://b/v1", "m", "no_temperature")
    again = VerdictCache(tmp_path)  # a new process
    assert again.known_quirks("http://a/v1", "m") == {"no_required_tool_choice"}
    assert again.known_quirks("http://a/v1", "other") == set()
    again.clear()
    assert again.known_quirks("http://b/v1", "m") == set()


def crash_on_required(body: dict[str, object]) -> Reply:
    """llama-cpp-python's answer to tool_choice="required": HTTP 500 with an empty message."""
    if body["tool_choice"] == "required":
        return error_reply(500, "")
    return tool_reply("set_grade", {"reason": "ok", "verdict": "pass"})


def test_a_new_judge_starts_from_the_quirks_an_endpoint_showed_before(
    judge_server: JudgeServer, rubric: Rubric, tmp_path: Path
) -> None:
    judge_server.responder = crash_on_required
    first = Judge(base_url=judge_server.url, api_key=SECRET_KEY, capabilities=tmp_path)
    assert first.grade(rubric, "x").verdict == "pass"
    assert [body["tool_choice"] for body in judge_server.requests][0] == "required"
    judge_server.requests.clear()
    later = Judge(base_url=judge_server.url, api_key=SECRET_KEY, capabilities=tmp_path)
    assert later.grade(rubric, "y").verdict == "pass"
    [sent] = judge_server.requests  # no refused request first
    assert sent["tool_choice"] == {"type": "function", "function": {"name": "set_grade"}}
    forgetful = Judge(base_url=judge_server.url, api_key=SECRET_KEY)
    judge_server.requests.clear()
    forgetful.grade(rubric, "z")
    assert judge_server.requests[0]["tool_choice"] == "required"


def test_the_cli_remembers_quirks_even_with_no_cache(
    judge_server: JudgeServer,
    write_file: Callable[..., Path],
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    judge_server.responder = crash_on_required
    monkeypatch.setenv("OPENAI_BASE_URL", judge_server.url)
    monkeypatch.setenv("RUBRICLIB_CACHE_DIR", str(tmp_path / "cache"))
    path = str(write_file("tiny.md", VALID_RUBRIC))
    for _ in range(2):
        outcome = CliRunner().invoke(main, ["judge", path, "--output", "x", "--no-cache"])
        assert outcome.exit_code == 0, outcome.output
    assert [body["tool_choice"] == "required" for body in judge_server.requests] == [
        True,
        False,
        False,
    ]
