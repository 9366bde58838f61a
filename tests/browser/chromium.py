"""Debian's Chromium driven by Python's playwright (never a downloaded browser): launch it
offline-friendly, say why it cannot run, and time a report's load. Shared by the browser
tests, `make screenshot` and benchmarks/report_load.py."""

from __future__ import annotations

import importlib.util
import os
import shutil
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

CHROMIUM = Path(os.environ.get("RUBRICLIB_CHROMIUM", "/usr/bin/chromium"))
FLAGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]
"""No GPU, no sandbox (root in CI), and none of Chromium's own calls home: this machine's
network is closed and each refused connection costs time."""


def why_unavailable() -> str | None:
    """Why the browser tests cannot run here (one line), or None when they can."""
    if importlib.util.find_spec("playwright") is None:
        return "playwright is not installed: `make test` installs the pinned `browser` extra"
    if not CHROMIUM.exists():
        return f"no Chromium at {CHROMIUM}: `make test` installs Debian's chromium package"
    return None


@contextmanager
def launched(playwright: Any, **options: Any) -> Iterator[Any]:
    """A BrowserContext of `playwright` on Debian's Chromium with a fresh, empty profile."""
    profile = tempfile.mkdtemp(prefix="rubriclib-chromium-")
    try:
        context = playwright.chromium.launch_persistent_context(
            profile,
            executable_path=str(CHROMIUM),
            args=FLAGS,
            headless=True,
            **{"viewport": {"width": 1400, "height": 900}, **options},
        )
        try:
            yield context
        finally:
            context.close()
    finally:
        shutil.rmtree(profile, ignore_errors=True)


@contextmanager
def browser_context(**options: Any) -> Iterator[Any]:
    """Playwright started, and one BrowserContext on Debian's Chromium (see `launched`)."""
    from playwright.sync_api import sync_playwright

    with sync_playwright() as playwright, launched(playwright, **options) as context:
        yield context


def open_report(page: Any, report: Path) -> None:
    """Open a report in `page` and wait until its script has drawn it."""
    page.goto(report.resolve().as_uri())
    page.wait_for_selector("body[data-ready]")


def time_to_usable(page: Any, report: Path) -> dict[str, float]:
    """Milliseconds to open `report` until its matrix is drawn, then to filter to fails, then
    to open the first failed cell's judgment: what a person waits for."""
    started = time.perf_counter()
    page.goto(report.resolve().as_uri())
    page.wait_for_selector("body[data-ready]")
    ready = time.perf_counter()
    page.click("#filters button[data-filter=fails]")
    page.wait_for_selector("#filters button[data-filter=fails][aria-pressed=true]")
    filtered = time.perf_counter()
    page.click("#matrix tbody tr:not([hidden]) td.cell.fail")
    page.wait_for_selector("#detail:not([hidden]) #detail-reason")
    opened = time.perf_counter()
    return {
        "open_ms": (ready - started) * 1000,
        "filter_ms": (filtered - ready) * 1000,
        "detail_ms": (opened - filtered) * 1000,
        "total_ms": (opened - started) * 1000,
    }
