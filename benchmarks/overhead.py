"""Our overhead per judgment vs a bare openai SDK call, on the same local scripted server.

Prints milliseconds per call and the ratio. Also times loading and rendering a rubric, and
CLI start-up for a command that does not judge. Run with `make bench`.
"""

from __future__ import annotations

import statistics
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests"))

import openai  # noqa: E402
from judge_server import JudgeServer, tool_reply  # noqa: E402

from rubriclib import load_rubric, render  # noqa: E402
from rubriclib.judging.asking.request import verdict_tools  # noqa: E402
from rubriclib.judging.judge import Judge  # noqa: E402

CALLS = 300


def per_call_ms(action: Callable[[], object], calls: int = CALLS) -> float:
    """Median milliseconds per call over five rounds."""
    rounds = []
    for _ in range(5):
        started = time.perf_counter()
        for _ in range(calls // 5):
            action()
        rounds.append((time.perf_counter() - started) * 1000 / (calls // 5))
    return statistics.median(rounds)


def main() -> None:
    rubric = load_rubric("groundedness")
    output, context = "Apollo 11 landed in 1969.", "Apollo 11 landed on 20 July 1969."
    with JudgeServer() as server:
        server.responder = lambda body: tool_reply("set_grade_pass", {"reason": "supported"})
        client = openai.OpenAI(api_key="bench", base_url=server.url, max_retries=0)
        messages = render(rubric, output, context=context)
        tools = verdict_tools(rubric, "required")

        def bare() -> object:
            return client.chat.completions.create(
                model="m",
                messages=messages,
                tools=tools,
                tool_choice="required",  # type: ignore[arg-type]
                temperature=0.0,
                max_tokens=1024,
            )

        judge = Judge(model="m", base_url=server.url, api_key="bench")

        def ours() -> object:
            return judge.grade(rubric, output, context=context)

        bare(), ours()  # warm both connection pools
        bare_ms, ours_ms = per_call_ms(bare), per_call_ms(ours)
    load_ms = per_call_ms(lambda: load_rubric("groundedness"), 500)
    render_ms = per_call_ms(lambda: render(rubric, output, context=context), 5000)
    rubriclib = str(Path(sys.executable).parent / "rubriclib")
    startup = []
    for _ in range(5):
        started = time.perf_counter()
        subprocess.run([rubriclib, "show", "groundedness"], capture_output=True, check=True)
        startup.append((time.perf_counter() - started) * 1000)
    print(f"bare SDK call:        {bare_ms:7.2f} ms/judgment")
    print(f"rubriclib grade:      {ours_ms:7.2f} ms/judgment")
    print(f"overhead ratio:       {ours_ms / bare_ms:7.2f}x  (rubriclib / bare SDK)")
    print(f"load_rubric:          {load_ms:7.3f} ms")
    print(f"render:               {render_ms:7.3f} ms")
    print(f"`rubriclib show` CLI: {statistics.median(startup):7.1f} ms start to exit")


if __name__ == "__main__":
    main()
