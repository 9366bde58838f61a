"""The scripted judge server in a process of its own, answering each request in the shape it asked.

Benchmarks time the client; a server in the same process would take its share of the GIL. Run
`python benchmarks/bench_server.py --latency 0.2`: it prints its base URL on the first line, then
answers `stats` on stdin with a JSON line (requests served, most in flight since the last
`stats`, CPU seconds used) and stops when stdin closes. `served()` does all of that for a
benchmark.

Every request gets a verdict in the form its client asked for: the tool named by `tool_choice`
(or the passing one of rubriclib's pair, or the first tool offered) with arguments filled in from
the tool's JSON schema; a JSON object filling a `json_schema` response format; `{"score": 1.0,
...}` for a bare `json_object` format; plain text otherwise.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests"))

from judge_server import JudgeServer, Reply, completion  # noqa: E402

REASON = "Every claim is supported by the source."


def example_of(schema: dict[str, Any]) -> Any:
    """A value that satisfies a simple JSON schema: the first enum value, else a passing one."""
    if "enum" in schema:
        return schema["enum"][0]
    kind = schema.get("type")
    if isinstance(kind, list):
        kind = next((k for k in kind if k != "null"), "string")
    if kind == "object":
        properties: dict[str, Any] = schema.get("properties", {})
        return {name: example_of(sub) for name, sub in properties.items()}
    if kind == "boolean":
        return True
    if kind == "integer":
        return int(schema.get("maximum", 1))
    if kind == "number":
        return float(schema.get("maximum", 1.0))
    if kind == "array":
        return [example_of(schema.get("items", {"type": "string"}))]
    return REASON


def chosen_tool(body: dict[str, Any]) -> dict[str, Any]:
    """The tool a request forces, else rubriclib's passing tool, else the first one offered."""
    tools: list[dict[str, Any]] = [tool["function"] for tool in body["tools"]]
    choice = body.get("tool_choice")
    if isinstance(choice, dict):
        name = choice.get("function", {}).get("name")
        return next(tool for tool in tools if tool["name"] == name)
    passing = [tool for tool in tools if tool["name"].endswith("_pass")]
    return passing[0] if passing else tools[0]


def answer(body: dict[str, Any]) -> bytes:
    """The reply body for a request, in the shape it asked for."""
    if body.get("tools"):
        tool = chosen_tool(body)
        arguments = example_of(tool.get("parameters") or {"type": "object"})
        if tool["name"] == "set_grade" and "verdict" in arguments:
            arguments["verdict"] = "pass"
        return json.dumps(completion([(tool["name"], arguments)])).encode()
    response_format = body.get("response_format") or {}
    if response_format.get("type") == "json_schema":
        content = json.dumps(example_of(response_format["json_schema"]["schema"]))
    elif response_format.get("type") == "json_object":
        content = json.dumps({"score": 1.0, "rationale": REASON})
    else:
        content = REASON
    return json.dumps(completion(content=content)).encode()


class Responder:
    """`answer`, remembered per request shape so the server spends little CPU per reply."""

    def __init__(self) -> None:
        self._replies: dict[str, bytes] = {}

    def __call__(self, body: dict[str, Any]) -> Reply:
        shape = json.dumps(
            [body.get("tools"), body.get("tool_choice"), body.get("response_format")],
            sort_keys=True,
        )
        if shape not in self._replies:
            self._replies[shape] = answer(body)
        return Reply(body=self._replies[shape])


@contextlib.contextmanager
def served(latency: float = 0.0) -> Iterator[ServedJudge]:
    """A benchmark server in a child process, answering after `latency` seconds."""
    process = subprocess.Popen(
        [sys.executable, __file__, "--latency", str(latency)],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    assert process.stdin is not None and process.stdout is not None
    try:
        yield ServedJudge(process.stdout.readline().strip(), process)
    finally:
        process.stdin.close()
        try:
            process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()


class ServedJudge:
    """A handle on the child server: its base URL and its counters."""

    def __init__(self, url: str, process: subprocess.Popen[str]) -> None:
        self.url = url
        self._process = process

    def stats(self) -> dict[str, float]:
        """Requests served so far, the most in flight since the last call, CPU seconds used."""
        assert self._process.stdin is not None and self._process.stdout is not None
        self._process.stdin.write("stats\n")
        self._process.stdin.flush()
        return json.loads(self._process.stdout.readline())  # type: ignore[no-any-return]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--latency", type=float, default=0.0, help="seconds before each answer")
    options = parser.parse_args()
    with JudgeServer(latency=options.latency, record=False) as server:
        server.responder = Responder()
        print(server.url, flush=True)
        for line in sys.stdin:
            if line.strip() == "stats":
                with server._lock:
                    stats = {
                        "requests": server.request_count,
                        "max_in_flight": server.max_in_flight,
                        "cpu_seconds": time.process_time(),
                    }
                    server.max_in_flight = server.in_flight
                print(json.dumps(stats), flush=True)


if __name__ == "__main__":
    main()
