"""Shared fixtures: a clean environment, the scripted judge server answering by keyword, a
rubric library folder, rubric-file helpers, and results made by hand."""

from __future__ import annotations

import itertools
import json
import os
import re
import subprocess
import sys
import threading
import time
import unicodedata
from collections import Counter
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest
from judge_server import JudgeServer, Reply, completion, tool_reply

from rubriclib.judging.judge import Judge
from rubriclib.judging.result import GradeResult, judge_details, make_result, with_details
from rubriclib.rubrics.registry import load_rubric
from rubriclib.rubrics.rubric import Rubric

if TYPE_CHECKING:
    from ray_cluster import RayCluster

SECRET_KEY = "sk-test-SECRET-0123456789abcdef"
RUBRICLIB = str(Path(sys.executable).parent / "rubriclib")
README = Path(__file__).parent.parent / "README.md"
INTEGRATIONS = Path(__file__).parent.parent / ".integrations"
"""Where `make integrations` installs the real tools the tests in tests/integrations drive."""


def integration_tool(*parts: str) -> Path:
    """A file `make integrations` installed (e.g. "inspect", "bin", "python"); the test fails,
    never skips, when it is missing."""
    path = INTEGRATIONS.joinpath(*parts)
    if not path.exists():
        pytest.fail(f"{path} is missing: run make integrations")
    return path


HOSTILE = (
    "\x1b[31mred\x1b[0m \x1b]0;owned\x07 NUL\x00 bell\x07 del\x7f csi\x9b2J "
    "</failure><testcase name='x'> ]]> <![CDATA[ &amp; \ud800 \ufffe \u202egnp.exe\n"
    "second line\r\n\ttabbed"
)
"""Text a judge could return that a terminal, an XML parser or a JSON reader could trip on."""
UNSAFE_FOR_TERMINALS = {"Cc", "Cf", "Cs", "Zl", "Zp"}


def run_tool(
    arguments: list[str], work: Path, env: dict[str, str] | None = None, timeout: float = 300
) -> subprocess.CompletedProcess[str]:
    """Run a pinned tool's script in `work` (with `env`, else ours); the test fails with the
    tail of its stderr when it exits other than 0."""
    done = subprocess.run(
        arguments, cwd=work, env=env, capture_output=True, text=True, timeout=timeout, check=False
    )
    assert done.returncode == 0, done.stderr[-4000:]
    return done


def unsafe_characters(text: str) -> set[str]:
    """Characters a terminal could act on, other than the newlines between table lines."""
    return {
        char
        for char in text.replace("\n", "")
        if unicodedata.category(char) in UNSAFE_FOR_TERMINALS
    }


def without_lines(text: str) -> str:
    """Problems with the `:LINE` after each file name dropped, for tests about fields alone."""
    return re.sub(r"(?m)^(.*?\S):\d+: ", r"\1: ", text)


DOCS = Path(__file__).parent.parent / "docs"
SNIPPET = re.compile(r"<!-- snippet: ([\w-]+) -->\n```\w*\n(.*?)\n```", re.S)


def documentation() -> list[Path]:
    """The files whose examples the tests run: README.md and every page under docs/."""
    return [README, *sorted(DOCS.rglob("*.md"))]


def without_keys(value: Any, keys: set[str]) -> Any:
    """`value` (JSON) with every dict's `keys` left out, at any depth: a recorded run compared
    with one written again, but for when it ran."""
    if isinstance(value, dict):
        return {k: without_keys(v, keys) for k, v in value.items() if k not in keys}
    if isinstance(value, list):
        return [without_keys(v, keys) for v in value]
    return value


def snippet_file(name: str) -> Path:
    """The one file of `documentation()` holding the code block after `<!-- snippet: NAME -->`."""
    found = [
        path
        for path in documentation()
        if any(match[1] == name for match in SNIPPET.finditer(path.read_text(encoding="utf-8")))
    ]
    assert len(found) == 1, f"snippet {name!r} is in {len(found)} files ({found}), not one"
    return found[0]


def snippet(name: str) -> str:
    """The code block after `<!-- snippet: NAME -->` in README.md or a docs page, so the
    documentation's examples are the ones the tests run."""
    text = snippet_file(name).read_text(encoding="utf-8")
    [body] = [match[2] for match in SNIPPET.finditer(text) if match[1] == name]
    return body + "\n"


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


SCORED_RUBRIC = """\
---
name: scored
version: 1.0.0
scale: 1-5
pass_threshold: 4
description: A 1-5 rubric for tests.
---
Score it with `set_grade_score`.
"""


@pytest.fixture(autouse=True)
def clean_environment(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """No test sees the developer's keys, endpoint, model, rubric path or verdict cache: each
    test gets a cache folder of its own."""
    names = ("OPENAI_API_KEY", "OPENAI_BASE_URL", "RUBRICLIB_MODEL", "RUBRICLIB_PATH")
    for name in (*names, "RUBRICLIB_OFFLINE", "RUBRICLIB_INDEXES", "GIT_CONFIG_COUNT"):
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
def rubric(write_file: Callable[..., Path]) -> Rubric:
    """VALID_RUBRIC (tiny, pass-fail), loaded from a file."""
    return load_rubric(str(write_file("tiny.md", VALID_RUBRIC)))


@pytest.fixture
def scored(write_file: Callable[..., Path]) -> Rubric:
    """SCORED_RUBRIC (1-5, passing from 4), loaded from a file."""
    return load_rubric(str(write_file("scored.md", SCORED_RUBRIC)))


@pytest.fixture
def pairwise() -> Rubric:
    """The built-in preference rubric (pairwise)."""
    return load_rubric("preference")


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


SCORE_RUBRIC = """\
---
name: scored
version: 1.0.0
scale: 1-5
pass_threshold: 4
description: A 1-5 test rubric; the scripted judge scores by keyword.
---
Score it from 1 to 5 with `set_grade_score`.
"""
"""A 1-5 rubric for the integration tests; the scripted judge scores by keyword."""


KEYWORD_RUBRIC = """\
---
name: keywords
version: 2.1.0
scale: pass-fail
description: Test rubric; the scripted judge answers by keyword.
goldens:
  - {name: says-pass, output: "verdict:pass", expected: pass}
  - {name: says-fail, output: "verdict:fail", expected: fail}
---
Judge it. Call `set_grade_pass` or `set_grade_fail`.
"""


def keyword_responder(delay: float = 0.0) -> Callable[[dict[str, Any]], Reply]:
    """Answer from a keyword in the candidate output; `verdict:flip` alternates pass and fail
    over every such request; `verdicts:pfp` answers the Nth request of the same message with
    its Nth letter (p pass, f fail), so each item's trials get those verdicts in any order."""
    flips = itertools.cycle(["set_grade_pass", "set_grade_fail"])
    asked: Counter[str] = Counter()
    lock = threading.Lock()

    def respond(body: dict[str, Any]) -> Reply:
        time.sleep(delay)
        user = body["messages"][1]["content"]
        if "verdict:text" in user:
            return Reply(body=completion(content="I refuse to use tools."))
        if "verdict:flip" in user:
            with lock:
                name = next(flips)
        elif scripted := re.search(r"verdicts:([pf]+)", user):
            with lock:
                letters, asked[user] = scripted.group(1), asked[user] + 1
                letter = letters[(asked[user] - 1) % len(letters)]
            name = "set_grade_pass" if letter == "p" else "set_grade_fail"
        else:
            name = "set_grade_pass" if "verdict:pass" in user else "set_grade_fail"
        return tool_reply(name, {"reason": f"scripted {name}"} | scripted_citations(body, user))

    return respond


_SHOWN_BLOCK = re.compile(r"^## [^\n]*\[(\w+)\]\n\n(`{3,})\n(.*?)\n\2$", re.M | re.S)


def scripted_citations(body: dict[str, Any], user: str) -> dict[str, Any]:
    """What a judge that meets `citations: required` adds when the tools ask for a citation (a
    built-in such as groundedness): the first line of the output block, else of the first
    block shown with text; nothing under any other policy, so other verdicts stay as they were."""
    schemas = [tool["function"]["parameters"] for tool in body.get("tools", [])]
    asked = body.get("response_format", {})  # protocol: json
    schemas += [asked.get("json_schema", {}).get("schema") or asked.get("schema") or {}]
    wanted = [schema.get("properties", {}).get("citations") or {} for schema in schemas]
    if not any(citations.get("minItems") for citations in wanted):
        return {}
    shown = sorted(_SHOWN_BLOCK.findall(user), key=lambda found: found[0] != "output")
    for block, _, text in shown:
        if lines := [line.strip() for line in text.splitlines() if line.strip()]:
            return {"citations": [{"block": block, "quote": lines[0]}]}
    return {}


@pytest.fixture
def library(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A RUBRICLIB_PATH folder holding the keyword rubric."""
    folder = tmp_path / "library"
    folder.mkdir()
    (folder / "keywords.md").write_text(KEYWORD_RUBRIC)
    monkeypatch.setenv("RUBRICLIB_PATH", str(folder))
    return folder


@pytest.fixture
def endpoint(judge_server: JudgeServer, monkeypatch: pytest.MonkeyPatch) -> JudgeServer:
    """The scripted server as the judge endpoint, answering by keyword."""
    monkeypatch.setenv("OPENAI_BASE_URL", judge_server.url)
    monkeypatch.setenv("OPENAI_API_KEY", SECRET_KEY)
    judge_server.responder = keyword_responder()
    return judge_server


@pytest.fixture(scope="module")
def playwright() -> Iterator[Any]:
    """Playwright, for the browser tests (tests/browser, which skip where it is missing)."""
    from playwright.sync_api import sync_playwright

    with sync_playwright() as session:
        yield session


@pytest.fixture(scope="module")
def browser(playwright: Any) -> Iterator[Any]:
    """One Debian Chromium for a module of browser tests."""
    from chromium import launched  # tests/browser/chromium.py: on the path of those tests

    with launched(playwright) as context:
        yield context


@pytest.fixture
def page(browser: Any) -> Iterator[Any]:
    """A browser tab that records every dialog (alert, confirm) and page error."""
    tab = browser.new_page()
    tab.dialogs, tab.errors = [], []
    tab.on("dialog", lambda dialog: (tab.dialogs.append(dialog.message), dialog.dismiss()))
    tab.on("pageerror", lambda error: tab.errors.append(str(error)))
    yield tab
    tab.close()


PAIRWISE_TOOL = "set_pairwise_winner"
VERSUS = """\
---
name: versus
version: 1.0.0
scale: pairwise
description: Test pairwise rubric; the scripted judge prefers the response saying GOOD.
requires: [input]
goldens:
  - name: output-good
    input: q
    output: GOOD answer
    baseline: plain answer
    expected_winner: output
  - name: baseline-good
    input: q
    output: plain answer
    baseline: GOOD answer
    expected_winner: baseline
  - name: both-plain
    input: q
    output: plain one
    baseline: plain two
    expected_winner: tie
---
Pick the response that better answers the input. Call `set_pairwise_winner`.
"""


def responses(body: dict[str, Any]) -> tuple[str, str]:
    """The fenced text of Response A and Response B in a request."""
    user = body["messages"][1]["content"]
    first, second = user.split("## Response A [A]", 1)[1].split("## Response B [B]", 1)
    return first, second


def prefers(word: str) -> Callable[[dict[str, Any]], Reply]:
    """A consistent judge: the response containing `word` wins, in whichever position."""

    def respond(body: dict[str, Any]) -> Reply:
        first, second = responses(body)
        winner = "A" if word in first else "B" if word in second else "tie"
        return tool_reply(
            PAIRWISE_TOOL, {"reason": f"more correct: {winner} says {word}", "winner": winner}
        )

    return respond


def start(arguments: list[str], server: JudgeServer, library: Path) -> subprocess.Popen[str]:
    env = {
        **os.environ,
        "OPENAI_BASE_URL": server.url,
        "OPENAI_API_KEY": SECRET_KEY,
        "RUBRICLIB_PATH": str(library),
    }
    return subprocess.Popen(
        [RUBRICLIB, *arguments],
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


def wait_for_requests(server: JudgeServer, count: int) -> None:
    """Until `server` has seen `count` requests: a started command's first, on a machine loaded
    enough that its start-up can take tens of seconds."""
    deadline = time.monotonic() + 120
    while len(server.requests) < count:
        assert time.monotonic() < deadline, "the run never started judging"
        time.sleep(0.02)


def sections(user_message: str) -> tuple[list[str], dict[str, str]]:
    """Split a rendered user message the way a CommonMark reader would.

    Returns the headers seen outside any fence and each header's fenced value.
    """
    lines = user_message.split("\n")
    headers: list[str] = []
    values: dict[str, str] = {}
    index = 0
    while index < len(lines):
        line = lines[index]
        if line.startswith("## "):
            headers.append(line)
        opening = re.fullmatch(r"(`{3,})", line)
        if opening:
            ticks = opening[1]
            end = index + 1
            while end < len(lines) and not re.fullmatch(
                rf"\s{{0,3}}`{{{len(ticks)},}}\s*", lines[end]
            ):
                end += 1
            if headers:
                values[headers[-1]] = "\n".join(lines[index + 1 : end])
            index = end
        index += 1
    return headers, values


def embedded_data(page: str) -> dict[str, Any]:
    """The JSON data block an HTML report embeds."""
    found = re.search(
        r'<script type="application/json" id="report-data">(.*?)</script>', page, re.S
    )
    assert found, "no data block"
    return json.loads(found.group(1))  # type: ignore[no-any-return]


def citation(
    block: str | None, quote: str, span: list[int] | None = None, **more: Any
) -> dict[str, Any]:
    """One checked citation as a result's details record it: verified with `span`, else
    unverified (`more`: found_in or note)."""
    found: dict[str, Any] = {"block": block, "quote": quote}
    if span is not None:
        return found | {"status": "verified", "span": span}
    return found | {"status": "unverified", **more}


def recorded_citation(
    quote: str, status: str = "verified", block: str = "output", **more: Any
) -> dict[str, Any]:
    """A citation as rubriclib records it once checked (`span` left out)."""
    return {"block": block, "quote": quote, "status": status, **more}


def cited_result(rubric: Rubric, verdict: str, *citations: dict[str, Any]) -> GradeResult:
    """A result built by hand whose details hold `citations` (none: no `citations` key)."""
    details = judge_details("m", "required", 1, 1, {"prompt_tokens": 0, "completion_tokens": 0})
    result = make_result(rubric, details, verdict, f"because {verdict}")  # type: ignore[arg-type]
    return with_details(result, citations=list(citations)) if citations else result


def judged(
    rubric: Rubric, verdict: str, reason: str = "r", raw_score: int | None = None
) -> GradeResult:
    """A result with `verdict` from one request, as a vote, an order or a member gives it."""
    details = judge_details("m", "required", 1, 10, {"prompt_tokens": 5, "completion_tokens": 1})
    return make_result(rubric, details, verdict, reason, raw_score)  # type: ignore[arg-type]


def won(rubric: Rubric, winner: str) -> GradeResult:
    """A pairwise vote that found `winner`."""
    result = judged(rubric, "pass" if winner == "output" else "fail", f"{winner} won")
    return with_details(result, pairwise={"winner": winner})


def tally(verdicts: list[str], **more: Any) -> dict[str, Any]:
    """A `details.votes` block of these votes, every key a tally has, `more` added."""
    count = len(verdicts)
    reasons = [f"because {verdict}" for verdict in verdicts]
    kept = {"agreement": 1.0, "errors": 0, "cached": 0}
    return {"asked": count, "cast": count, "verdicts": verdicts, "reasons": reasons} | kept | more


def item_entry(item_id: str, answer: str | None, **more: Any) -> dict[str, Any]:
    """A `details.checklist` entry: the item's answer from one request, `more` added."""
    return {"id": item_id, "answer": answer, "reason": "r", "attempts": 1, "cached": False} | more


def order_entry(order: str, winner: str | None = None, **more: Any) -> dict[str, Any]:
    """A `details.pairwise.orders` entry: one order's answer from one request, `more` added."""
    return {"order": order, "winner": winner, "reason": "r", "attempts": 1, "retries": 0} | more


@pytest.fixture(scope="session")
def ray_cluster(tmp_path_factory: pytest.TempPathFactory) -> Iterator[RayCluster]:
    """The docs' Ray cluster (head and worker node, `ray_cluster.RayCluster`), started once for
    every Ray test of the session (seconds to start, tens on a loaded 2-core machine)."""
    from ray_cluster import RayCluster, without_judge_settings

    python = integration_tool("ray", "bin", "python")
    env = without_judge_settings(os.environ)
    env.update(
        PYTHONPATH=str(Path(__file__).parent.parent),
        RUBRICLIB_CACHE_DIR=str(tmp_path_factory.mktemp("ray-nodes") / "cache"),
    )
    with RayCluster(python, snippet("ray-cluster"), env, SECRET_KEY) as cluster:
        yield cluster
