"""The `rubriclib` console script: parse arguments, call the library, print. No logic of its own."""

from __future__ import annotations

import json
import logging
import os
import sys
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import click

from rubriclib import __version__
from rubriclib.errors import EvalError, InputError, JudgeConfigError, Problem, RubricError

# Each command imports what it needs, so `--help` and the commands that only read rubrics
# start fast, and only the commands that judge load asyncio and the openai SDK.
if TYPE_CHECKING:
    from rubriclib.evalfile import Eval
    from rubriclib.evals import EvalReport
    from rubriclib.goldens import RunReport
    from rubriclib.result import GradeResult
    from rubriclib.rubric import Rubric

SIGNAL_EXIT_CODES = {"SIGINT": 130, "SIGTERM": 143}

EXIT_CODES = """\b
Exit codes:
  0    success (judge: pass; test-goldens: every golden matched)
  1    judge: fail; validate: a rubric is invalid; test-goldens: a judged golden missed
  2    usage or input error (bad reference, invalid rubric, missing API key, unreadable file)
  3    judge / test-goldens: judge errors and nothing else (an outage, not a regression)
  130  interrupted (SIGINT; 143 for SIGTERM): test-goldens writes what was judged"""


class BadInput(click.ClickException):
    """Bad input from the user: one line on stderr per problem, exit 2."""

    exit_code = 2

    def __init__(self, *problems: str) -> None:
        super().__init__("\n".join(problems))
        self.problems = problems

    def show(self, file: Any = None) -> None:
        for problem in self.problems:
            click.echo(f"rubriclib: error: {' '.join(problem.split())}", err=True)


class _Group(click.Group):
    def invoke(self, ctx: click.Context) -> Any:
        try:
            return super().invoke(ctx)
        except InputError as error:  # a bad rubric, eval file, dataset or reference
            raise BadInput(*(str(problem) for problem in error.problems)) from None
        except JudgeConfigError as error:
            raise BadInput(str(error)) from None


def _one_stdin(**options: str | None) -> None:
    """Refuse two options that would both read stdin: the second would read nothing."""
    readers = [f"--{name}" for name, value in options.items() if value == "-"]
    if len(readers) > 1:
        raise click.UsageError(f"only one option can read stdin (-); got {', '.join(readers)}")


def _writable(path: str, option: str) -> Path:
    """`path` if a report can be written there; checked before any judge call is made."""
    target = Path(path).expanduser()
    folder = target.parent if str(target.parent) else Path(".")
    if target.is_dir():
        raise BadInput(f"{option}: {target} is a directory")
    if not folder.is_dir():
        raise BadInput(f"{option}: cannot write {target}: folder {folder} does not exist")
    if not os.access(folder, os.W_OK) or (target.exists() and not os.access(target, os.W_OK)):
        raise BadInput(f"{option}: cannot write {target}: permission denied")
    return target


def _write_atomically(target: Path, text: str) -> None:
    """Write through a temporary file beside `target`, so a reader never sees half a report."""
    temporary = target.with_name(f".{target.name}.{os.getpid()}.tmp")
    temporary.write_text(text, encoding="utf-8")
    os.replace(temporary, target)


def _text(value: str | None, option: str) -> str | None:
    """An option's text: literal, `@path` for a file's contents, `-` for stdin (`@@` escapes @)."""
    if value is None:
        return None
    if value == "-":
        return sys.stdin.read()
    if value.startswith("@@"):
        return value[1:]
    if value.startswith("@"):
        path = Path(value[1:]).expanduser()
        try:
            return path.read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError) as error:
            reason = getattr(error, "strerror", None) or "not UTF-8 text"
            raise BadInput(f"{option}: cannot read {path}: {reason}") from None
    return value


def _source_label(rubric: Rubric) -> str:
    return (
        "builtin" if rubric.source.startswith("builtin:") else rubric.source.removeprefix("file:")
    )


TEXT_HELP = "Text, @path to read a file, or - for stdin."
NO_CACHE_HELP = "Ask the judge even when the verdict cache has this judgment."
judged_inputs = [
    click.option("--output", "output", required=True, help=f"The candidate output. {TEXT_HELP}"),
    click.option("--input", "input_", help=f"The task input. {TEXT_HELP}"),
    click.option("--context", help=f"Source context. {TEXT_HELP}"),
    click.option("--reference", help=f"A reference answer. {TEXT_HELP}"),
]


def with_judged_inputs(command: Any) -> Any:
    for option in reversed(judged_inputs):
        command = option(command)
    return command


@click.group(cls=_Group, epilog=EXIT_CODES)
@click.version_option(__version__, prog_name="rubriclib")
def main() -> None:
    """Versioned LLM-judge rubrics: list, inspect, validate, render, judge and regression-test them.

    \b
    Example:
      rubriclib judge groundedness --output "Paris." --context "Paris is France's capital."
    """
    _show_warnings()


def _show_warnings() -> None:
    """The library's warnings (an unusable cache, say) as `rubriclib: warning: ...` lines."""
    logger = logging.getLogger("rubriclib")
    if not logger.handlers:
        handler = logging.StreamHandler()
        handler.setFormatter(logging.Formatter("rubriclib: warning: %(message)s"))
        handler.setLevel(logging.WARNING)
        logger.addHandler(handler)


@main.command("list")
@click.option("--json", "as_json", is_flag=True, help="Print JSON.")
def list_command(as_json: bool) -> None:
    """List every resolvable rubric: RUBRICLIB_PATH folders first, then built-ins.

    \b
    Example:
      rubriclib list --json
    """
    from rubriclib.registry import builtin_names, list_rubrics

    builtins = set(builtin_names())
    rubrics = list_rubrics()
    shadowing = {
        r.name for r in rubrics if not r.source.startswith("builtin:") and r.name in builtins
    }
    if as_json:
        rows = [
            {**r.identity, "description": r.description, "shadows_builtin": r.name in shadowing}
            for r in rubrics
        ]
        click.echo(json.dumps(rows, indent=2))
        return
    width = max(len(rubric.name) for rubric in rubrics)
    for rubric in rubrics:
        marker = click.style(" (shadows built-in)", fg="yellow") if rubric.name in shadowing else ""
        click.echo(
            f"{click.style(rubric.name.ljust(width), bold=True)}  {rubric.version:<8} "
            f"{rubric.scale:<9}  {rubric.description}\n"
            f"{'':{width}}  source: {_source_label(rubric)}{marker}"
        )


@main.command()
@click.argument("ref")
@click.option("--json", "as_json", is_flag=True, help="Print JSON.")
def show(ref: str, as_json: bool) -> None:
    """Show one rubric: its frontmatter, golden count and body.

    \b
    Example:
      rubriclib show groundedness@^1
    """
    from rubriclib.registry import load_goldens, load_rubric

    rubric = load_rubric(ref)
    info = {
        **rubric.identity,
        "description": rubric.description,
        "pass_threshold": rubric.pass_threshold,
        "goldens": len(load_goldens(rubric)),
    }
    if as_json:
        click.echo(json.dumps({**info, "body": rubric.body}, indent=2))
        return
    for key, value in info.items():
        if value is not None:
            click.echo(f"{click.style(key + ':', bold=True)} {value}")
    click.echo(f"\n{rubric.body}")


@main.command()
@click.argument("refs", nargs=-1, required=True)
@click.option("--json", "as_json", is_flag=True, help="Print JSON: one entry per REF.")
def validate(refs: Sequence[str], as_json: bool) -> None:
    """Validate rubrics and their goldens; print every problem as FILE: field: message.

    Exits 0 when every rubric is valid, 1 when any is not.

    \b
    Example:
      rubriclib validate rubrics/*.md
    """
    from rubriclib.registry import load_goldens, load_rubric

    entries = []
    for ref in refs:
        try:
            rubric = load_rubric(ref)
            goldens = load_goldens(rubric)
        except RubricError as error:
            problems = [
                {"source": p.source, "field": p.field, "message": " ".join(p.message.split())}
                for p in error.problems
            ]
            entries.append({"ref": ref, "valid": False, "problems": problems})
            continue
        entries.append(
            {"ref": ref, "valid": True, "rubric": rubric.identity, "goldens": len(goldens)}
        )
    if as_json:
        click.echo(json.dumps(entries, indent=2))
    else:
        for entry in entries:
            click.echo(_validation_lines(entry))
    sys.exit(0 if all(entry["valid"] for entry in entries) else 1)


def _validation_lines(entry: dict[str, Any]) -> str:
    if entry["valid"]:
        rubric = f"{entry['rubric']['name']}@{entry['rubric']['version']}"
        return f"{entry['ref']}: ok ({rubric}, {entry['goldens']} goldens)"
    return "\n".join(f"{p['source']}: {p['field']}: {p['message']}" for p in entry["problems"])


@main.command("render")
@click.argument("ref")
@with_judged_inputs
@click.option("--json", "as_json", is_flag=True, help="Print the messages as JSON.")
def render_command(
    ref: str,
    output: str,
    input_: str | None,
    context: str | None,
    reference: str | None,
    as_json: bool,
) -> None:
    """Print exactly the messages the judge would receive. No network, no API key.

    \b
    Example:
      rubriclib render groundedness --output @answer.txt --context @source.txt
    """
    from rubriclib.registry import load_rubric
    from rubriclib.render import render

    _one_stdin(output=output, input=input_, context=context, reference=reference)
    rubric = load_rubric(ref)
    messages = render(
        rubric,
        _text(output, "--output") or "",
        _text(input_, "--input"),
        _text(context, "--context"),
        _text(reference, "--reference"),
    )
    if as_json:
        click.echo(json.dumps(messages, indent=2))
        return
    for message in messages:
        click.echo(click.style(f"=== {message['role']} ===", bold=True))
        click.echo(message["content"])


@main.command("judge")
@click.argument("ref")
@with_judged_inputs
@click.option("--model", help="Judge model (default: $RUBRICLIB_MODEL or gpt-4o-mini).")
@click.option("--json", "as_json", is_flag=True, help="Print the GradeResult as JSON.")
@click.option("--no-cache", is_flag=True, help=NO_CACHE_HELP)
def judge_command(
    ref: str,
    output: str,
    input_: str | None,
    context: str | None,
    reference: str | None,
    model: str | None,
    as_json: bool,
    no_cache: bool,
) -> None:
    """Judge one output. Exit 0 pass, 1 fail, 3 judge error.

    The endpoint comes from OPENAI_BASE_URL and OPENAI_API_KEY.

    \b
    Example:
      rubriclib judge groundedness --output "1969." --context "Apollo 11 landed in 1969."
    """
    import asyncio

    from rubriclib.engine import interruptible
    from rubriclib.judge import Judge
    from rubriclib.registry import load_rubric

    _one_stdin(output=output, input=input_, context=context, reference=reference)
    rubric = load_rubric(ref)
    texts = [
        _text(value, name)
        for value, name in ((input_, "--input"), (context, "--context"), (reference, "--reference"))
    ]
    judge = Judge(model=model, cache=not no_cache)

    async def judge_once() -> GradeResult | str:
        with interruptible() as interrupt:
            try:
                return await judge.agrade(rubric, _text(output, "--output") or "", *texts)
            except asyncio.CancelledError:
                if interrupt.signal is None:
                    raise
                return interrupt.signal
            finally:
                await judge.aclose()

    result = asyncio.run(judge_once())
    if isinstance(result, str):
        click.echo(f"rubriclib: interrupted by {result}; nothing was judged", err=True)
        sys.exit(SIGNAL_EXIT_CODES[result])
    if as_json:
        click.echo(result.model_dump_json(indent=2))
    else:
        colour = {"pass": "green", "fail": "red", "error": "yellow"}[result.verdict]
        click.echo(
            f"{click.style(result.verdict.upper(), fg=colour, bold=True)} "
            f"{rubric.name}@{rubric.version}: {result.reason}"
        )
    sys.exit({"pass": 0, "fail": 1, "error": 3}[result.verdict])


@main.command()
@click.argument("name")
@click.option(
    "--dir", "directory", default="rubrics", show_default=True, type=click.Path(file_okay=False)
)
@click.option("--scale", type=click.Choice(["pass-fail", "1-5"]), help="Default: pass-fail.")
@click.option("--description", help="One line: what the rubric judges.")
@click.option(
    "--from", "from_ref", help="Copy this rubric's body and goldens (version resets to 0.1.0)."
)
def new(
    name: str, directory: str, scale: str | None, description: str | None, from_ref: str | None
) -> None:
    """Write DIR/NAME.md at version 0.1.0: a body skeleton and two placeholder goldens.

    Never overwrites an existing file.

    \b
    Examples:
      rubriclib new house-style --description "Whether replies follow our style guide."
      rubriclib new strict-groundedness --from groundedness
    """
    from rubriclib.registry import load_rubric
    from rubriclib.scaffold import new_rubric

    if from_ref is not None and scale is not None and scale != load_rubric(from_ref).scale:
        raise click.UsageError(f"--scale {scale} differs from the scale of {from_ref}")
    path = new_rubric(name, Path(directory), scale or "pass-fail", description, from_ref)
    click.echo(f"Wrote {path}")
    click.echo("Next steps:")
    click.echo(f"  1. Edit {path}: write the criteria and replace every PLACEHOLDER.")
    click.echo("  2. Add goldens: real outputs with the verdict they must get, and why.")
    click.echo(f"  3. Run: rubriclib validate {path} && rubriclib test-goldens {path}")


@main.command("test-goldens")
@click.argument("refs", nargs=-1)
@click.option("--model", help="Judge model (default: $RUBRICLIB_MODEL or gpt-4o-mini).")
@click.option(
    "--trials",
    type=click.IntRange(min=1),
    default=1,
    show_default=True,
    help="Judge every golden this many times.",
)
@click.option(
    "--concurrency",
    type=click.IntRange(min=1),
    default=8,
    show_default=True,
    help="Judgments in flight at once.",
)
@click.option(
    "--goldens",
    "goldens_file",
    type=click.Path(dir_okay=False),
    help="A YAML file of extra goldens, added to every rubric in the run.",
)
@click.option(
    "--format",
    "report_format",
    type=click.Choice(["table", "json", "junit"]),
    default="table",
    show_default=True,
)
@click.option("--out", help="Write the report here, not stdout (checked before any judge call).")
@click.option("--no-cache", is_flag=True, help=NO_CACHE_HELP)
@click.option(
    "--requests-per-minute",
    type=click.FloatRange(min=0, min_open=True),
    help="Space request starts to stay under this quota.",
)
def test_goldens(
    refs: Sequence[str],
    model: str | None,
    trials: int,
    concurrency: int,
    goldens_file: str | None,
    report_format: str,
    out: str | None,
    no_cache: bool,
    requests_per_minute: float | None,
) -> None:
    """Regression run: judge every golden of each rubric (all built-ins when no REF is given).

    Exit 0 when every judgment matched its golden, 1 when a judged golden missed, 3 when only
    judge errors kept goldens from agreeing, 130/143 when interrupted (the report is written).

    \b
    Examples:
      rubriclib test-goldens
      rubriclib test-goldens ./rubrics/house-style.md --trials 3 --format junit --out goldens.xml
    """
    import asyncio

    from rubriclib.engine import interruptible
    from rubriclib.goldens import run_goldens
    from rubriclib.judge import Judge
    from rubriclib.registry import builtin_names, load_goldens, load_rubric
    from rubriclib.reports import FORMATTERS, format_table
    from rubriclib.rubric import duplicate_name_problems, parse_goldens_file

    destination = _writable(out, "--out") if out else None
    extra = parse_goldens_file(Path(goldens_file), goldens_file) if goldens_file else []
    problems = duplicate_name_problems(extra, goldens_file or "", "goldens")
    plan = []
    for ref in refs or builtin_names():
        rubric = load_rubric(ref)
        own = load_goldens(rubric)
        names = {golden.name for golden in own}
        problems += [
            Problem(
                str(goldens_file),
                f"goldens[{index}].name",
                f"{rubric.name} already has a golden named {golden.name!r}",
            )
            for index, golden in enumerate(extra)
            if golden.name in names
        ]
        plan.append((rubric, own + extra))
    if problems:
        raise RubricError(problems)
    judge = Judge(model=model, cache=not no_cache)  # a missing key stops here, before any call

    async def run_all(progress: Callable[[], None] | None) -> RunReport:
        with interruptible() as interrupt:
            try:
                return await run_goldens(
                    judge, plan, trials, concurrency, progress, interrupt, requests_per_minute
                )
            finally:
                await judge.aclose()

    total = sum(len(goldens) for _, goldens in plan) * trials
    if sys.stderr.isatty():
        with click.progressbar(length=total, label="judging", file=sys.stderr) as bar:
            run = asyncio.run(run_all(lambda: bar.update(1)))
    else:
        run = asyncio.run(run_all(None))
    report = FORMATTERS[report_format](run)
    if destination is not None:
        _write_atomically(destination, report + "\n")
        click.echo(format_table(run).splitlines()[-1] + f" (report: {out})")
    else:
        click.echo(report)
    sys.exit(_exit_code(run))


def _exit_code(run: RunReport) -> int:
    """130/143 when interrupted, 1 when a judged golden missed, 3 when only judge errors kept
    goldens from agreeing, 0 when every judgment matched."""
    if run.info is not None and run.info.interrupted is not None:
        judged = sum(report.judgments for report in run.rubrics)
        click.echo(
            f"rubriclib: interrupted by {run.info.interrupted}: judged {judged} of "
            f"{run.info.planned}; the report holds what was judged",
            err=True,
        )
        return SIGNAL_EXIT_CODES[run.info.interrupted]
    if run.misses:
        return 1
    return 3 if run.errors else 0


@main.group()
def cache() -> None:
    """The verdict cache: where it is, what it holds, and clearing it.

    Commands that judge keep every verdict (never an error) in it, keyed by the endpoint,
    model, exact messages, tools and sampling settings, so an unchanged rerun sends nothing.
    The folder is $RUBRICLIB_CACHE_DIR, else ~/.cache/rubriclib.
    """


@cache.command("info")
@click.option("--json", "as_json", is_flag=True, help="Print JSON.")
def cache_info(as_json: bool) -> None:
    """Print where the cache is, how many verdicts it holds and its size."""
    from rubriclib.cache import VerdictCache

    info = VerdictCache().info()
    if as_json:
        click.echo(json.dumps(info, indent=2))
        return
    click.echo(f"path: {info['path']}\nentries: {info['entries']}\nbytes: {info['bytes']}")


@cache.command("clear")
def cache_clear() -> None:
    """Delete every cached verdict."""
    from rubriclib.cache import VerdictCache

    removed = VerdictCache().clear()
    click.echo(f"Removed {removed} cached verdict(s)")


@main.command("eval")
@click.argument("eval_file", type=click.Path(dir_okay=False))
@click.option("--dataset", help="Judge the rows of this file instead of the eval's own.")
@click.option("--model", help="Judge model for every grader (wins over the eval file).")
@click.option("--concurrency", type=click.IntRange(min=1), help="Judgments in flight (default 8).")
@click.option("--out", help="Append one JSON line per row and grader here, as each finishes.")
@click.option("--report", "report_path", help="Write the report here; print only its last line.")
@click.option(
    "--format",
    "report_format",
    type=click.Choice(["table", "json", "junit"]),
    default="table",
    show_default=True,
)
@click.option("--resume", is_flag=True, help="Keep the results already in --out; judge the rest.")
@click.option("--limit", type=click.IntRange(min=1), help="Judge only the first N rows.")
@click.option("--dry-run", is_flag=True, help="Check everything and show the plan; send nothing.")
@click.option("--no-cache", is_flag=True, help=NO_CACHE_HELP)
def eval_command(
    eval_file: str,
    dataset: str | None,
    model: str | None,
    concurrency: int | None,
    out: str | None,
    report_path: str | None,
    report_format: str,
    resume: bool,
    limit: int | None,
    dry_run: bool,
    no_cache: bool,
) -> None:
    """Judge a dataset with an eval file's graders (rubriclib, waza or letta-evals shape).

    Exit 0 when every gate condition holds, 1 when one fails, 2 for bad input, 3 when judge
    errors leave the gate undecided, 130/143 when interrupted (what was judged is kept).

    \b
    Examples:
      rubriclib eval examples/support/eval.yaml --dry-run
      rubriclib eval eval.yaml --out results.jsonl --format junit --report eval.xml
      rubriclib eval eval.yaml --out results.jsonl --resume
    """
    import asyncio

    from rubriclib.engine import interruptible
    from rubriclib.eval_reports import FORMATTERS, last_line
    from rubriclib.evalfile import load_eval
    from rubriclib.evals import arun_eval, make_judges, make_target

    if resume and out is None:
        raise click.UsageError("--resume needs --out: the results file to resume from")
    ev = load_eval(eval_file, dataset)
    problems, rows = ev.dataset.check()
    if problems:
        raise EvalError(problems)
    if dry_run:
        _print_plan(ev, limit)
        return
    targets = [
        _writable(path, name)
        for path, name in ((out, "--out"), (report_path, "--report"))
        if path is not None
    ]
    judges = make_judges(ev, model, cache=not no_cache)  # a missing key stops here
    target = make_target(ev)
    total = min(rows, limit or ev.limit or rows) * len(ev.graders)

    async def run_all(progress: Callable[[GradeResult], None] | None) -> EvalReport:
        with interruptible() as interrupt:
            return await arun_eval(
                ev,
                judges,
                concurrency=concurrency,
                out=targets[0] if out else None,
                resume=resume,
                limit=limit,
                keep_cases=report_format == "junit",
                on_result=progress,
                interrupt=interrupt,
                target=target,
            )

    if sys.stderr.isatty():
        with click.progressbar(length=total, label="judging", file=sys.stderr) as bar:
            errors = 0

            def advance(result: GradeResult) -> None:
                nonlocal errors
                errors += result.verdict == "error"
                bar.label = f"judging ({errors} error(s))"
                bar.update(1)

            report = asyncio.run(run_all(advance))
    else:
        report = asyncio.run(run_all(None))
    text = FORMATTERS[report_format](report)
    if report_path is not None:
        _write_atomically(targets[-1], text + "\n")
        click.echo(f"{last_line(report)} (report: {report_path})")
    else:
        click.echo(text)
    if report.interrupted:
        click.echo(
            f"rubriclib: interrupted by {report.interrupted}; results so far are kept", err=True
        )
        sys.exit(SIGNAL_EXIT_CODES[report.interrupted])
    sys.exit({"passed": 0, "failed": 1, "undecided": 3}[report.status])


def _print_plan(ev: Eval, limit: int | None) -> None:
    """`eval --dry-run`: the plan, the first row's prompt per grader, rows that would error."""
    from rubriclib.evals import plan_eval

    plan = plan_eval(ev, limit)
    click.echo(
        f"{ev.name} ({ev.shape} eval): {plan.rows} row(s) x {len(ev.graders)} grader(s) = "
        f"{plan.judgments} judgment(s), about {plan.prompt_tokens:,} prompt tokens"
    )
    for grader in ev.graders:
        rubric = grader.rubric
        model = grader.judge.model or "(default judge model)"
        click.echo(f"  {grader.name}: {rubric.name}@{rubric.version} ({rubric.source}), {model}")
    for line in ev.skipped:
        click.echo(f"  not run: {line}")
    if ev.target is not None:
        click.echo(f"  outputs: written by the target {ev.target.model} from each row's input")
    if plan.missing:
        click.echo(
            f"\n{len(plan.missing)} judgment(s) would be errors (a required field is "
            "missing; no request is sent for them):"
        )
        for line in plan.missing:
            click.echo(f"  {line}")
    for name, messages in plan.first_prompts.items():
        click.echo(click.style(f"\n--- the first row, as grader {name} sees it ---", bold=True))
        for message in messages:
            click.echo(f"=== {message['role']} ===\n{message['content']}")
