"""Collects the per-rubric compatibility records of the e2e run and prints them at the end."""

from __future__ import annotations

import json
from typing import Any

import pytest

RECORDS: dict[str, dict[str, Any]] = {}


def pytest_terminal_summary(terminalreporter: pytest.TerminalReporter) -> None:
    if not RECORDS:
        return
    terminalreporter.section("rubriclib protocol on this server (per rubric)")
    for name, record in RECORDS.items():
        terminalreporter.write_line(
            f"{name}@{record['version']}: modes {record['modes']}, corrected "
            f"{record['corrected']}/{record['judgments']} {record['correction_causes']}, "
            f"verdicts {record['verdicts']}, accuracy {record['accuracy']}, kappa {record['kappa']}"
        )
    terminalreporter.write_line(json.dumps(RECORDS))
