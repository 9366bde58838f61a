"""A checklist in one call vs item by item, on the same local scripted server, side by side.

Judges every golden of every built-in with a checklist (not pairwise) in checklist mode twice:
`answers="tool"` (one request per item) and `answers="one-call"` (one request per golden),
and prints, per rubric and in total, the requests sent, the prompt tokens they carried and the
wall time with the judge answering each request after `--latency` seconds. Prompt tokens are
what the server reports, and it reports each request's messages and tools at four characters
a token (rubriclib's own estimate, `request.estimated_tokens`): a real tokenizer differs, the
ratio between the modes hardly. Run with `python benchmarks/checklist_calls.py`.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests"))

from judge_server import JudgeServer, Reply, completion  # noqa: E402

from rubriclib import Rubric, load_rubric  # noqa: E402
from rubriclib.judging.judge import Judge  # noqa: E402
from rubriclib.rubrics import builtin_names, load_goldens  # noqa: E402

MODES = ("tool", "one-call")
FIELDS = ("input", "context", "reference", "output", "transcript")


def answer(body: dict[str, Any]) -> Reply:
    """Every item satisfied, by whichever tool was offered; usage at four characters a token."""
    tool = body["tools"][0]["function"]
    if tool["name"] == "answer":
        arguments: dict[str, Any] = {"reason": "satisfied", "answer": "yes"}
    else:
        items = [
            key for key in tool["parameters"]["required"] if key not in ("reason", "citations")
        ]
        arguments = {"reason": "satisfied"} | dict.fromkeys(items, "yes")
    reply = completion([(tool["name"], arguments)])
    prompt = sum(len(message["content"]) for message in body["messages"])
    prompt += len(json.dumps(body["tools"]))
    reply["usage"] = {
        "prompt_tokens": prompt // 4,
        "completion_tokens": len(json.dumps(arguments)) // 4,
    }
    return Reply(body=reply)


def rubrics() -> list[Rubric]:
    loaded = [load_rubric(name) for name in builtin_names()]
    return [rubric for rubric in loaded if rubric.checklist and rubric.scale != "pairwise"]


def measure(server: JudgeServer, rubric: Rubric, mode: str) -> tuple[int, int, int, float]:
    """Requests, prompt tokens, completion tokens and seconds for judging the goldens."""
    items = [
        {key: getattr(golden, key) for key in FIELDS if getattr(golden, key) is not None}
        for golden in load_goldens(rubric)
    ]
    judge = Judge("m", server.url, "bench", mode="checklist", answers=mode)  # type: ignore[arg-type]
    before = server.request_count
    started = time.perf_counter()
    results = judge.grade_many(rubric, items, concurrency=8)
    seconds = time.perf_counter() - started
    assert all(result.verdict != "error" for result in results), results
    prompt = sum(result.details.judge.usage.prompt_tokens for result in results)
    completion_tokens = sum(result.details.judge.usage.completion_tokens for result in results)
    return server.request_count - before, prompt, completion_tokens, seconds


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--latency", type=float, default=0.2, help="seconds per answer")
    latency = parser.parse_args().latency
    totals = {mode: [0, 0, 0, 0.0] for mode in MODES}
    print(
        f"{'rubric':28} {'items':>5} {'goldens':>7}   requests (tool / one-call)   "
        "prompt tokens (tool / one-call)"
    )
    with JudgeServer(latency, record=False) as server:
        server.responder = answer
        for rubric in rubrics():
            measured = {mode: measure(server, rubric, mode) for mode in MODES}
            for mode in MODES:
                totals[mode] = [a + b for a, b in zip(totals[mode], measured[mode], strict=True)]
            (tool_requests, tool_prompt, _, _), (one_requests, one_prompt, _, _) = measured.values()
            goldens = len(load_goldens(rubric))
            print(
                f"{rubric.name:28} {len(rubric.checklist):5} {goldens:7}   "
                f"{tool_requests:8} / {one_requests:<8} ({tool_requests / one_requests:.1f}x)   "
                f"{tool_prompt:10,} / {one_prompt:<10,} ({tool_prompt / one_prompt:.2f}x)"
            )
    (tool_requests, tool_prompt, tool_completion, tool_s) = totals["tool"]
    (one_requests, one_prompt, one_completion, one_s) = totals["one-call"]
    print(f"\nall told, item by item vs one call ({latency:g} s an answer, 8 requests in flight):")
    rows = [
        ("requests", tool_requests, one_requests, ""),
        ("prompt tokens", tool_prompt, one_prompt, ""),
        ("completion tokens", tool_completion, one_completion, "; scripted one-word reasons"),
    ]
    for name, tool, one, note in rows:
        print(f"{name + ':':18} {tool:9,} vs {one:9,}  ({tool / one:.2f}x{note})")
    print(f"{'wall time:':18} {tool_s:8.2f}s vs {one_s:8.2f}s  ({tool_s / one_s:.2f}x)")


if __name__ == "__main__":
    main()
