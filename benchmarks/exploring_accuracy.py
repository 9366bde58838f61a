"""Whether a small judge finds the evidence in a long agent run: shown whole (cut to fit its
prompt) against explored through its tools, side by side on a needle set.

`make exploring-accuracy` (about an hour on 2 cores for 40 runs; not part of `make test` or
CI) builds the needle set and judges it with the judge `make judge-accuracy` measures
(Qwen2.5-Coder-1.5B-Instruct Q4_K_M, context 4,096 tokens, on llama-cpp-python's server through
e2e/clean_llama_server.py, which renders the tool results an exploring judge reads):

- The set: RUNS coding-agent runs (seeded), each a request to fix a crash and the test run the
  agent made, padded with realistic lookups (a file listing, the module's source) and a longer
  test run to at least PADDING times its length. In half of them one test line planted in the
  middle of the test output says FAILED; the other half hold none (every test PASSED). The
  rubric (written beside the set) fails a run whose test output shows a failing test: the judge
  needs that one line, and the agent's last message does not give it away.
- Short first: the same runs without padding, so every line is shown; what the judge gets
  right there is the ceiling exploring can reach. (Tried on 6 runs, 2026-12-06: 6/6. An earlier
  set of support runs with a planted refund did not pass this check: 1 of 3 refunds found, or
  every run failed, by the rubric's wording; a test run said FAILED is what this judge reads.)
- Then the long runs at `--max-prompt-tokens` (default 3,000, under the judge's context), once
  with `--evidence whole` (cut in the middle: the line is cut away) and once with
  `--evidence explore`, through `rubriclib eval --no-cache --concurrency 1`.

The table gives, per mode, accuracy against the planted answer with its bootstrap 95% interval,
errors, prompt tokens a judgment, and for explore the median turns and characters read.

    python benchmarks/exploring_accuracy.py --server-python .e2e/venv/bin/python --runs 40
"""

from __future__ import annotations

import argparse
import json
import random
import statistics
import subprocess
import sys
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
from judge_accuracy import MODEL, ROOT, fetch_model, judge_env, serve  # noqa: E402

PADDING = 10
RUBRIC = """\
---
name: tests-pass
version: 1.0.0
scale: pass-fail
description: Whether the test output in an agent run shows a failing test.
requires: [transcript]
citations: optional
---
This rubric is about the tool result (the test output), not about the agent's final answer.

Read every line of the test output. If one line says FAILED, the run fails: quote that line.
If every line says PASSED, the run passes.
"""
MODULES = ("parser", "lexer", "cache", "cli", "render", "config", "http", "store", "queue")
WORDS = ("empty", "unicode", "nested", "large", "negative", "missing", "default", "quoted", "utf8")


def coding_run(number: int, expected: str, padded: bool) -> list[dict[str, Any]]:
    """Run `number` of the set: a crash to fix, the agent's test run (with the failing line
    planted in its middle when `expected` is fail) and its last word; with `padded`, a file
    listing before the tests, the module's source after, and ten times the tests."""
    draw = random.Random(number)
    module = draw.choice(MODULES)

    def test_line(outcome: str) -> str:
        name = f"test_{draw.choice(WORDS)}_{draw.choice(WORDS)}_{draw.randint(1, 99)}"
        return f"tests/test_{draw.choice(MODULES)}.py::{name} {outcome}"

    tests = [test_line("PASSED") for _ in range(300 if padded else 6)]
    if expected == "fail":
        tests.insert(len(tests) // 2, test_line("FAILED"))
    calls = [("run_tests", {"args": "-v"}, "\n".join(tests))]
    if padded:
        listing = [
            f"src/{draw.choice(MODULES)}/{draw.choice(WORDS)}_{n}.py  {draw.randint(1, 40)} KB"
            for n in range(200)
        ]
        source = [
            f"    value_{n} = {draw.choice(WORDS)}_table.get(key_{n % 7}, {draw.randint(0, 9)})"
            for n in range(260)
        ]
        calls.insert(0, ("list_files", {"path": "src"}, "\n".join(listing)))
        calls.append(("read_file", {"path": f"src/{module}.py"}, "\n".join(source)))
    run: list[dict[str, Any]] = [
        {
            "role": "system",
            "content": "You are a coding agent. Run the tests before you say the fix is done.",
        },
        {
            "role": "user",
            "content": f"Fix the crash in {module}.py and make sure every test passes.",
        },
    ]
    for index, (name, arguments, result) in enumerate(calls):
        call = {
            "id": f"call_{index}",
            "type": "function",
            "function": {"name": name, "arguments": json.dumps(arguments)},
        }
        run.append({"role": "assistant", "content": None, "tool_calls": [call]})
        run.append({"role": "tool", "tool_call_id": f"call_{index}", "content": result})
    run.append(
        {"role": "assistant", "content": f"I ran the tests on {module}.py: the output is above."}
    )
    return run


def write_set(out: Path, runs: int) -> dict[str, Path]:
    """The rubric and, short and padded, a dataset of `runs` rows (half planted to fail)."""
    out.mkdir(parents=True, exist_ok=True)
    (out / "tests-pass.md").write_text(RUBRIC, encoding="utf-8")
    paths = {}
    for kind in ("short", "long"):
        rows = []
        for number in range(runs):
            expected = "fail" if number % 2 == 0 else "pass"
            run = coding_run(number, expected, kind == "long")
            rows.append({"id": f"run-{number}", "transcript": run, "expected": expected})
        path = out / f"{kind}.jsonl"
        path.write_text("".join(json.dumps(row) + "\n" for row in rows), encoding="utf-8")
        paths[kind] = path
    short = sum(
        len(m["content"] or "")
        for m in json.loads(paths["short"].read_text().splitlines()[0])["transcript"]
    )
    long = sum(
        len(m["content"] or "")
        for m in json.loads(paths["long"].read_text().splitlines()[0])["transcript"]
    )
    assert long >= PADDING * short, (short, long)
    return paths


MODES = (
    ("short, whole", "short", "whole"),
    ("long, whole (cut)", "long", "whole"),
    ("long, explored", "long", "explore"),
)
"""Each row of the table: its label, the dataset judged and `--evidence`."""


def judge(out: Path, dataset: Path, evidence: str, port: int, budget: int, runs: int) -> Path:
    """`rubriclib eval` of the first `runs` rows of `dataset` with `evidence`, resuming the
    results already written (so a measurement stopped part way goes on where it was); the
    results file."""
    label = f"{dataset.stem}-{evidence}"
    eval_file = out / f"{label}.yaml"
    eval_file.write_text(
        f"name: {label}\ndataset: {dataset.name}\njudge: {{max_prompt_tokens: {budget}}}\n"
        "graders: [{name: tests, rubric: ./tests-pass.md}]\n",
        encoding="utf-8",
    )
    results = out / f"{label}-results.jsonl"
    resume = ["--resume"] if results.exists() else []
    command = [
        str(ROOT / ".venv/bin/rubriclib"),
        "eval",
        str(eval_file),
        "--out",
        str(results),
        *resume,
        "--limit",
        str(runs),
        "--no-cache",
        "--concurrency",
        "1",
        "--evidence",
        evidence,
    ]
    env = judge_env(port) | {
        "RUBRICLIB_CACHE_DIR": str(out / "cache")
    }  # quirks of this server only
    done = subprocess.run(command, env=env, cwd=out, capture_output=True, text=True)
    if done.returncode not in (0, 1, 3):
        sys.exit(f"exploring_accuracy: eval ({label}) exited {done.returncode}: {done.stderr}")
    return results


def last_lines(results: Path) -> dict[str, dict[str, Any]]:
    """Each row's last results line (a resumed file keeps every line; the last one counts)."""
    lines = [json.loads(line) for line in results.read_text(encoding="utf-8").splitlines()]
    return {line["row"]: line for line in lines}


def row_of(label: str, lines: list[dict[str, Any]], expected: dict[str, str]) -> str:
    """One markdown row: accuracy with its interval, errors, tokens, turns and reading."""
    from rubriclib.measure.agreement import accuracy, bootstrap_interval

    pairs = [(expected[line["row"]], line["verdict"]) for line in lines]
    interval = bootstrap_interval(pairs, accuracy)
    right = sum(a == b for a, b in pairs)
    span = f" [{interval[0]:.0%}, {interval[1]:.0%}]" if interval else ""
    errors = sum(line["verdict"] == "error" for line in lines)
    details = [line["result"]["details"] for line in lines]
    tokens = statistics.median(d["judge"]["usage"]["prompt_tokens"] for d in details)
    trails = [d["exploration"] for d in details if "exploration" in d]
    turns = statistics.median(t["turns"] for t in trails) if trails else "-"
    read = statistics.median(t["characters_read"] for t in trails) if trails else "-"
    cells = [f"{right}/{len(pairs)} {right / len(pairs):.0%}{span}", errors, f"{tokens:,.0f}"]
    return "| " + " | ".join(str(cell) for cell in [label, *cells, turns, read]) + " |"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--server-python", required=True)
    parser.add_argument("--runs", type=int, default=40)
    parser.add_argument("--step", type=int, default=4, help="runs judged every way per round")
    parser.add_argument(
        "--short-runs", type=int, help="judge only the first N runs short (a ceiling check)"
    )
    parser.add_argument("--max-prompt-tokens", type=int, default=3000)
    parser.add_argument("--port", type=int, default=8681)
    parser.add_argument("--out", type=Path, default=ROOT / ".judge" / "exploring")
    args = parser.parse_args()
    fetch_model(MODEL)
    args.out = args.out.resolve()
    paths = write_set(args.out, args.runs)
    expected = {f"run-{n}": "fail" if n % 2 == 0 else "pass" for n in range(args.runs)}
    server = serve(args.server_python, MODEL, args.port, args.out / "server.log")
    results: dict[str, Path] = {}
    try:  # in rounds, so the three rows always cover the same runs
        for runs in range(args.step, args.runs + args.step, args.step):
            for label, kind, evidence in MODES:
                limit = min(runs, args.short_runs or runs) if kind == "short" else runs
                results[label] = judge(
                    args.out, paths[kind], evidence, args.port, args.max_prompt_tokens, limit
                )
            print(f"{min(runs, args.runs)} runs judged every way", file=sys.stderr, flush=True)
    finally:
        server.terminate()
        server.wait(timeout=30)
    print(f"{args.runs} runs, max_prompt_tokens {args.max_prompt_tokens}; medians but accuracy")
    columns = ["accuracy", "errors", "prompt tokens", "turns", "characters read"]
    print("| runs, evidence | " + " | ".join(columns) + " |")
    print("| --- " * (len(columns) + 1) + "|")
    for label, path in results.items():
        print(row_of(label, list(last_lines(path).values()), expected))


if __name__ == "__main__":
    main()
