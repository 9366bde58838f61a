"""How well rubriclib's protocol works with a local model server: a compatibility record.

Runs `rubriclib test-goldens --format json` against any OpenAI-compatible server and writes,
per rubric, the tool mode the judge ended up using, how many judgments needed a corrective turn
(and why), the verdict split, agreement with the goldens, Cohen's kappa and judge errors:

    python e2e/compat.py --base-url http://127.0.0.1:8080/v1 --model qwen2.5-1.5b \
        --out compat-qwen2.5-1.5b.json [RUBRIC ...]

The record also says whether the server hands the model the text it was sent
(`text_unchanged`, from `probe_text_unchanged`). `make e2e` uses the same summary for its own
report on the tiny model it builds.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
from collections import Counter
from collections.abc import Sequence
from pathlib import Path
from typing import Any

RUBRICLIB = str(Path(sys.executable).parent / "rubriclib")

CORRECTION_CAUSES = (
    ("not supported by a verified citation", "no verified citation"),
    ("without a verdict tool call", "no tool call"),
    ("tool calls", "several tool calls"),
    ("unknown tool", "unknown tool"),
    ("not JSON", "arguments not JSON"),
    ("not a JSON object", "arguments not an object"),
    ("without a 'reason'", "no reason"),
    ("score", "bad score"),
    ("verdict", "bad verdict"),
)
"""Why a corrective turn was needed, from the fragment of `details.judge.correction`."""


def correction_cause(correction: str) -> str:
    """A short label for why a judgment needed a corrective turn."""
    return next((label for fragment, label in CORRECTION_CAUSES if fragment in correction), "other")


def summarise(report: dict[str, Any]) -> dict[str, Any]:
    """Per rubric: modes, corrections (share and causes), verdict split, agreement, errors
    (and of them, failing verdicts `citations: required` found unsupported), citations by
    status."""
    rubrics = {}
    for entry in report["rubrics"]:
        results = [result for golden in entry["goldens"] for result in golden["results"]]
        judges = [result["details"]["judge"] for result in results]
        corrected = [judge for judge in judges if judge.get("corrected")]
        rubrics[entry["rubric"]["name"]] = {
            "version": entry["rubric"]["version"],
            "judgments": len(results),
            "modes": dict(Counter(str(judge.get("mode")) for judge in judges)),
            "corrected": len(corrected),
            "corrected_share": len(corrected) / len(results) if results else None,
            "correction_causes": dict(
                Counter(correction_cause(judge.get("correction", "")) for judge in corrected)
            ),
            "verdicts": dict(Counter(result["verdict"] for result in results)),
            "accuracy": entry["accuracy"],
            "kappa": entry["kappa"],
            "errors": entry["counts"]["errors"],
            "unsupported": sum(
                result["reason"].startswith("verdict not supported") for result in results
            ),
            "citations": dict(
                Counter(
                    citation["status"]
                    for result in results
                    for citation in result["details"].get("citations", [])
                )
            ),
            "error_reasons": sorted(
                {result["reason"][:160] for result in results if result["verdict"] == "error"}
            ),
        }
    return rubrics


def run_test_goldens(
    base_url: str,
    model: str,
    rubrics: list[str],
    concurrency: int,
    rubriclib: Sequence[str] = (RUBRICLIB,),
    flags: Sequence[str] = (),
) -> dict[str, Any]:
    """`rubriclib test-goldens --format json` (and `flags`) against the server, `rubriclib` the
    command that starts the CLI; the parsed report."""
    env = {**os.environ, "OPENAI_BASE_URL": base_url, "RUBRICLIB_MODEL": model}
    env.pop("OPENAI_API_KEY", None)
    command = [*rubriclib, "test-goldens", *rubrics, "--format", "json", "--no-cache"]
    command += ["--concurrency", str(concurrency), *flags]
    run = subprocess.run(command, env=env, capture_output=True, text=True)
    if run.returncode not in (0, 1):
        raise SystemExit(f"rubriclib test-goldens exited {run.returncode}: {run.stderr.strip()}")
    return json.loads(run.stdout)  # type: ignore[no-any-return]


PROBE_REPEATS = 20
PROBE_ESCAPABLE = 'a<b&c"d>e ' * PROBE_REPEATS
"""Characters an HTML escaper rewrites (`<` as `&lt;`, `&` as `&amp;`, `"` as `&#34;`...)."""
PROBE_LOOK_ALIKE = "a(b+c:d)e " * PROBE_REPEATS
"""The same shape in characters no escaper touches."""
PROBE_ESCAPED_EXTRA = 4
"""Extra prompt tokens per repetition from which the escapable text counts as rewritten.

Measured on llama-cpp-python 0.3.36 with SmolLM2-135M (`chatml-function-calling`, through
`e2e/clean_llama_server.py`): served raw, both texts cost 190 prompt tokens; served
HTML-escaped (`--keep-escaping`, as shipped), the escapable one costs 390, 10 extra tokens per
repetition. A tokenizer that splits `<&">` a little finer than `(+:)` may cost a token or so
more per repetition raw; escaping costs 2-3 per entity, so 4 sits between the two."""


def probe_text_unchanged(base_url: str, model: str) -> dict[str, Any]:
    """Whether the server gives the model a user message as sent, not HTML-escaped.

    A client cannot read the server's prompt, but it can count it: two plain chat requests (no
    tools, `max_tokens` 1, temperature 0) whose user messages differ only in escapable
    characters against look-alikes, compared by `usage.prompt_tokens`. `text_unchanged` is
    None when the server reports no usage (or zero tokens)."""
    from openai import OpenAI

    client = OpenAI(base_url=base_url, api_key="unused", timeout=120, max_retries=0)
    tokens: dict[str, int | None] = {}
    for name, text in (("escapable", PROBE_ESCAPABLE), ("look_alike", PROBE_LOOK_ALIKE)):
        response = client.chat.completions.create(
            model=model,
            messages=[{"role": "user", "content": text}],
            max_tokens=1,
            temperature=0,
        )
        tokens[name] = (response.usage.prompt_tokens if response.usage else 0) or None
    escapable, look_alike = tokens["escapable"], tokens["look_alike"]
    unchanged = (
        None
        if escapable is None or look_alike is None
        else escapable - look_alike < PROBE_ESCAPED_EXTRA * PROBE_REPEATS
    )
    return {"text_unchanged": unchanged, "text_probe_prompt_tokens": tokens}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("rubrics", nargs="*", help="Rubrics to run (default: every built-in).")
    parser.add_argument("--base-url", required=True, help="The server's OpenAI base URL.")
    parser.add_argument("--model", required=True, help="The model name to send and record.")
    parser.add_argument("--concurrency", type=int, default=2)
    parser.add_argument("--out", help="Write the record here (default: stdout).")
    args = parser.parse_args()
    started = time.time()
    probe = probe_text_unchanged(args.base_url, args.model)
    report = run_test_goldens(args.base_url, args.model, args.rubrics, args.concurrency)
    from rubriclib import __version__

    record = {
        "model": args.model,
        "base_url": args.base_url,
        **probe,
        "rubriclib": __version__,
        "started": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(started)),
        "seconds": round(time.time() - started, 1),
        "rubrics": summarise(report),
    }
    text = json.dumps(record, indent=2)
    if args.out:
        Path(args.out).write_text(text + "\n", encoding="utf-8")
    else:
        print(text)


if __name__ == "__main__":
    main()
