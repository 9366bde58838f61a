"""The browser tests' shared fixtures: playwright, one Chromium for a module, and a tab that
records every dialog and page error."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from chromium import launched


@pytest.fixture(scope="module")
def playwright() -> Iterator[Any]:
    from playwright.sync_api import sync_playwright

    with sync_playwright() as session:
        yield session


@pytest.fixture(scope="module")
def browser(playwright: Any) -> Iterator[Any]:
    with launched(playwright) as context:
        yield context


@pytest.fixture
def page(browser: Any) -> Iterator[Any]:
    """A tab that records every dialog (alert, confirm) and page error."""
    tab = browser.new_page()
    tab.dialogs, tab.errors = [], []
    tab.on("dialog", lambda dialog: (tab.dialogs.append(dialog.message), dialog.dismiss()))
    tab.on("pageerror", lambda error: tab.errors.append(str(error)))
    yield tab
    tab.close()
