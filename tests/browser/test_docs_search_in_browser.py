"""The documentation site's search box in a real headless Chromium: the site built as `make
docs` builds it, served on 127.0.0.1, each query typed key by key into Material's search box,
and the pages its results list, best first. A flag typed as the docs write it finds the page
that explains it; a name with a hyphen, an underscore or mixed case finds the pages that write
it, and only those."""

from __future__ import annotations

import functools
import json
import threading
from collections.abc import Iterator
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest
from chromium import why_unavailable

if (reason := why_unavailable()) is not None:
    pytest.skip(f"browser tests skipped: {reason}", allow_module_level=True)

from docs_site import built_site

FLAGS = {
    "--frozen": "versions/",
    "--resume": "eval-files/",
    "--checklist-answers": "writing-a-rubric/",
    "--from-docent": "command-line/",
    "--report": "eval-files/",
    "--checklist-ans": "writing-a-rubric/",
}
"""A flag (and one half typed) -> the page that explains it. Pages that only list the flag
among others (aligning's synopsis) or use it in a command may come before it: it is among the
first three."""
NAMES = {
    "OpenTelemetry": "agent-runs/",
    "Ctrl-C": "measuring/",
    "set_grade_label": "writing-a-rubric/",
    "expected_output": "writing-a-rubric/",
    "exit code": "troubleshooting/",
}
"""A name or phrase -> the page listed first: the one that explains it (the exit-code table),
never the changelog, which names everything again."""
SETTLED = """() => {
    const meta = document.querySelector(".md-search-result__meta").textContent.trim()
    const shown = meta + document.querySelector(".md-search-result__list").innerHTML
    const settled = shown === window.lastShown && /matching/.test(meta)
    window.lastShown = shown
    return settled
}"""
"""True once the results are those of a query (`N matching documents`, or `No matching
documents`) and unchanged since the last poll: the box searches at every key."""
PAGES = """items => items.map(item => new URL(item.querySelector("a").href).pathname.slice(1))"""


class _Quiet(SimpleHTTPRequestHandler):
    def log_message(self, format: str, *args: Any) -> None:
        """No line per request in the test's output."""


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return built_site(tmp_path_factory.mktemp("site"), {})


@pytest.fixture(scope="module")
def address(site: Path) -> Iterator[str]:
    """The built site served over HTTP on 127.0.0.1 (the search box needs a server: on
    file:// Material starts no search worker)."""
    server = ThreadingHTTPServer(("127.0.0.1", 0), functools.partial(_Quiet, directory=site))
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_port}/"
    server.shutdown()
    server.server_close()
    thread.join(timeout=5)


@pytest.fixture(scope="module")
def search_page(browser: Any, address: str) -> Iterator[Any]:
    """The site's home page in one tab, for every query."""
    tab = browser.new_page()
    tab.goto(address)
    yield tab
    tab.close()


def results(page: Any, query: str) -> list[str]:
    """The pages the search box lists for `query`, typed key by key, best first (`versions/`)."""
    box = page.locator("input[data-md-component=search-query]")
    box.fill("")
    page.evaluate("window.lastShown = null")
    box.press_sequentially(query)
    page.wait_for_function(SETTLED, polling=200, timeout=20_000)
    pages: list[str] = page.locator(".md-search-result__item").evaluate_all(PAGES)
    return pages


def writing(site: Path, word: str) -> set[str]:
    """The pages whose indexed text (a title or a section) holds `word`, case aside."""
    index = json.loads((site / "search" / "search_index.json").read_text(encoding="utf-8"))
    return {
        doc["location"].partition("#")[0]
        for doc in index["docs"]
        if word.lower() in f"{doc['title']} {doc['text']}".lower()
    }


@pytest.mark.parametrize(("flag", "explained"), FLAGS.items())
def test_a_flag_typed_as_the_docs_write_it_finds_the_page_that_explains_it(
    search_page: Any, site: Path, flag: str, explained: str
) -> None:
    """lunr read a leading "-" as "must not contain": `--frozen` found no page at all."""
    found = results(search_page, flag)
    assert explained in found[:3], found
    assert set(found) <= writing(site, flag)


@pytest.mark.parametrize(("name", "explained"), NAMES.items())
def test_a_name_finds_the_page_that_explains_it_first(
    search_page: Any, site: Path, name: str, explained: str
) -> None:
    """`OpenTelemetry` was searched as "open" or "telemetry" (33 pages), `Ctrl-C` as "ctrl" or
    any word starting with c; `set_grade_label` and `expected_output` came first from the
    changelog. A single word lists only the pages that write it."""
    found = results(search_page, name)
    assert found and found[0] == explained, found
    if " " not in name:
        assert set(found) <= writing(site, name), found
