"""docs/report.png: the README's picture of the HTML report, taken by the browser the tests
drive. Two runs of examples/support against the scripted judge (judge models told apart by a
keyword), the second reported against the first (with the messages each judgment sent), one
failed judgment open. `make screenshot`."""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
import zlib
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from chromium import browser_context, why_unavailable  # noqa: E402
from judge_server import JudgeServer, Reply, tool_reply  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent.parent
RUBRICLIB = str(Path(sys.executable).parent / "rubriclib")
REASONS = {
    "pass": "Every claim is backed by the passages; the steps match the help-centre article.",
    "fail": "The answer adds a burst limit of 20 requests per second that no passage states.",
}


def responder(body: dict[str, Any]) -> Reply:
    """A verdict that depends on the prompt and the model, as a real judge's would."""
    seed = zlib.crc32((body["model"] + body["messages"][1]["content"]).encode())
    if any(tool["function"]["name"] == "set_grade_score" for tool in body.get("tools", [])):
        score = 1 + seed % 5
        return tool_reply(
            "set_grade_score", {"score": score, "reason": f"Score {score}: " + REASONS["pass"]}
        )
    verdict = "pass" if seed % 4 else "fail"
    return tool_reply(f"set_grade_{verdict}", {"reason": REASONS[verdict]})


def run(server: JudgeServer, model: str, out: Path) -> None:
    environment = dict(os.environ, OPENAI_BASE_URL=server.url, OPENAI_API_KEY="sk-screenshot")
    environment["RUBRICLIB_CACHE_DIR"] = str(out.parent / "cache")
    command = [RUBRICLIB, "eval", "examples/support/eval.yaml", "--model", model, "--out", str(out)]
    subprocess.run(command, cwd=ROOT, env=environment, capture_output=True, check=False)


def main(target: Path) -> int:
    if (reason := why_unavailable()) is not None:
        print(f"screenshot: {reason}")
        return 1
    with tempfile.TemporaryDirectory() as temporary, JudgeServer() as server:
        folder = Path(temporary)
        server.responder = responder
        run(server, "gpt-4o-mini", folder / "last-week.jsonl")
        run(server, "gpt-4.1-mini", folder / "results.jsonl")
        report = folder / "report.html"
        command = [RUBRICLIB, "report", str(folder / "results.jsonl"), "--against"]
        command += [str(folder / "last-week.jsonl"), "--eval", "examples/support/eval.yaml"]
        subprocess.run([*command, "-o", str(report)], cwd=ROOT, check=True, capture_output=True)
        with browser_context(viewport={"width": 1400, "height": 1050}) as context:
            page = context.new_page()
            page.goto(report.as_uri())
            page.wait_for_selector("body[data-ready]")
            page.click("#filters button[data-filter=changed]")
            page.click("#matrix tbody tr.data td.cell.fail.changed")
            page.evaluate("window.scrollTo(0, 0)")
            target.parent.mkdir(parents=True, exist_ok=True)
            page.screenshot(path=str(target))
    print(f"wrote {target}")
    return 0


if __name__ == "__main__":
    sys.exit(main(Path(sys.argv[1]) if len(sys.argv) > 1 else ROOT / "docs" / "report.png"))
