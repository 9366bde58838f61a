"""The pytest plugin: `--rubriclib-*` options, the `rubric_judge` fixture, golden test items.

Loaded in every pytest run of an environment with rubriclib, so it imports only pytest: the
judge (and the openai SDK) loads when a test asks for it, rubrics only with --rubriclib-goldens.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

if TYPE_CHECKING:
    from rubriclib.judging import Judge
    from rubriclib.measure import GoldenOutcome
    from rubriclib.rubrics import Golden, Rubric

GOLDENS_NODE = "rubriclib-goldens"
"""The collector holding every golden item: `rubriclib-goldens::NAME@VERSION::GOLDEN`."""
MARKER = "rubriclib_golden"

_JUDGE = pytest.StashKey["Judge"]()
_PREVIOUS = pytest.StashKey[Callable[[], "Judge"] | None]()
_PENDING = pytest.StashKey[list["GoldenItem"]]()
_OUTCOMES = pytest.StashKey[dict[str, "GoldenOutcome"]]()


def pytest_addoption(parser: pytest.Parser) -> None:
    """The `rubriclib` option group and the `rubriclib_rubrics` ini setting."""
    group = parser.getgroup("rubriclib", "rubriclib: LLM-judge rubrics")
    group.addoption(
        "--rubriclib-model",
        metavar="MODEL",
        help="Judge model (default: $RUBRICLIB_MODEL, the project config, else gpt-4o-mini).",
    )
    group.addoption(
        "--rubriclib-base-url",
        metavar="URL",
        help="Judge endpoint (default: $OPENAI_BASE_URL, the project config, else OpenAI).",
    )
    group.addoption(
        "--rubriclib-no-cache",
        action="store_true",
        help="Judge afresh: neither read nor write the verdict cache.",
    )
    group.addoption(
        "--rubriclib-goldens",
        action="store_true",
        help="Also collect every rubric's goldens as tests (only them: -m rubriclib_golden).",
    )
    group.addoption(
        "--rubriclib-rubric",
        action="append",
        dest="rubriclib_rubrics",
        metavar="REF",
        help="With --rubriclib-goldens: only this rubric's goldens (name, pin or path; repeat it).",
    )
    parser.addini(
        "rubriclib_rubrics",
        type="args",
        default=[],
        help="Rubrics whose goldens --rubriclib-goldens collects (default: every rubric).",
    )


def pytest_configure(config: pytest.Config) -> None:
    """Register the marker; let `assert_rubric` without a judge use the session's judge."""
    config.addinivalue_line("markers", f"{MARKER}: a rubric golden (from --rubriclib-goldens)")
    if config.getoption("rubriclib_rubrics") and not config.getoption("rubriclib_goldens"):
        raise pytest.UsageError("--rubriclib-rubric selects goldens: add --rubriclib-goldens")
    from rubriclib.integrations import testing

    config.stash[_PREVIOUS] = testing.set_default_judge(lambda: session_judge(config))


def pytest_unconfigure(config: pytest.Config) -> None:
    """Give `assert_rubric` back the default judge it had before this session."""
    if _PREVIOUS in config.stash:
        from rubriclib.integrations import testing

        testing.set_default_judge(config.stash[_PREVIOUS])


def session_judge(config: pytest.Config) -> Judge:
    """The session's judge, built on first use: options, then environment, then project config."""
    if _JUDGE not in config.stash:
        from rubriclib.integrations.testing import make_judge

        config.stash[_JUDGE] = make_judge(
            config.getoption("rubriclib_model"),
            config.getoption("rubriclib_base_url"),
            no_cache=config.getoption("rubriclib_no_cache"),
        )
    return config.stash[_JUDGE]


@pytest.fixture(scope="session")
def rubric_judge(pytestconfig: pytest.Config) -> Judge:
    """The session's rubriclib Judge (the one `assert_rubric` uses when given none)."""
    return session_judge(pytestconfig)


@pytest.hookimpl(tryfirst=True)
def pytest_collection_modifyitems(
    session: pytest.Session, config: pytest.Config, items: list[pytest.Item]
) -> None:
    """With --rubriclib-goldens, add the golden items (before -k and -m select)."""
    if config.getoption("rubriclib_goldens"):
        root = GoldensCollector.from_parent(session, name=GOLDENS_NODE, nodeid=GOLDENS_NODE)
        items.extend(session.genitems(root))


def pytest_collection_finish(session: pytest.Session) -> None:
    """Remember the golden items that will run, to judge them together."""
    golden = [item for item in session.items if isinstance(item, GoldenItem)]
    session.config.stash[_PENDING] = golden


class GoldensCollector(pytest.Collector):
    """Every selected rubric: --rubriclib-rubric, else the ini's rubriclib_rubrics, else all."""

    def collect(self) -> Iterator[RubricGoldens]:
        """One collector per rubric, named NAME@VERSION."""
        with _collect_errors(self):
            rubrics = _selected_rubrics(self.config)
        for rubric in rubrics:
            name = f"{rubric.name}@{rubric.version}"
            yield RubricGoldens.from_parent(self, name=name, rubric=rubric)


@contextmanager
def _collect_errors(collector: pytest.Collector) -> Iterator[None]:
    """A RubricError while `collector` collects (a bad reference, rubric or goldens file) fails
    the collection with the error's text, not a traceback."""
    from rubriclib.errors import RubricError

    try:
        yield
    except RubricError as error:
        raise collector.CollectError(f"rubriclib: {error}") from None


def _selected_rubrics(config: pytest.Config) -> list[Rubric]:
    """The rubrics named on the command line (paths from the invocation folder) or in the ini
    file (paths from its folder), once each; every resolvable rubric when none is named."""
    from rubriclib.rubrics import list_rubrics, load_rubric

    refs: list[str] = config.getoption("rubriclib_rubrics") or []
    base = config.invocation_params.dir
    if not refs:
        refs = config.getini("rubriclib_rubrics")
        base = config.inipath.parent if config.inipath else config.rootpath
    if not refs:
        return list_rubrics()
    rubrics: dict[str, Rubric] = {}
    for ref in refs:
        rubric = load_rubric(ref, base_dir=base)
        rubrics.setdefault(f"{rubric.name}@{rubric.version}", rubric)
    return list(rubrics.values())


class RubricGoldens(pytest.Collector):
    """One rubric's goldens (its frontmatter's and its goldens file's)."""

    def __init__(self, *, rubric: Rubric, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.rubric = rubric

    def collect(self) -> Iterator[GoldenItem]:
        """One item per golden, named as the golden."""
        from rubriclib.rubrics import load_goldens

        with _collect_errors(self):
            goldens = load_goldens(self.rubric)
        for golden in goldens:
            yield GoldenItem.from_parent(self, name=golden.name, rubric=self.rubric, golden=golden)


class GoldenItem(pytest.Item):
    """One golden: judged at setup (with every other golden of the run, concurrently), an error
    there when the judge gave no verdict, a failure when the verdict misses the expected one."""

    def __init__(self, *, rubric: Rubric, golden: Golden, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.rubric = rubric
        self.golden = golden
        self.add_marker(MARKER)

    def setup(self) -> None:
        """Judge (or find judged) this golden; no verdict is a test error, raised here."""
        from rubriclib.errors import InputError, JudgeConfigError
        from rubriclib.integrations.testing import describe

        try:
            outcome = self._outcome()
        except (JudgeConfigError, InputError) as error:  # no key, a bad setting
            pytest.fail(f"rubriclib: {error}", pytrace=False)
        if not outcome.results:
            pytest.fail(f"{self.nodeid}: not judged", pytrace=False)
        result = outcome.results[0]
        self.user_properties += [("verdict", result.verdict), ("reason", result.reason)]
        if result.verdict == "error":
            pytest.fail(describe(self.rubric, result, session_judge(self.config)), pytrace=False)

    def runtest(self) -> None:
        """Fail unless the judgment agreed with the golden, as `rubriclib test-goldens` decides."""
        outcome = self._outcome()
        if not outcome.agreed:
            pytest.fail(self._miss(outcome), pytrace=False)

    def _miss(self, outcome: GoldenOutcome) -> str:
        """What was expected, what the judge gave and why, and why the golden exists."""
        from rubriclib.integrations.testing import score_text

        result, golden = outcome.results[0], self.golden
        expected, got = outcome.expected_answer, outcome.answers[0]
        if golden.expected_winner is not None:  # pairwise: which output won
            expected, got = f"winner {expected}", f"winner {got}"
        if golden.expected_score is not None:
            expected += f" (score {golden.expected_score}/5)"
        judge = session_judge(self.config)
        uncited = ", ".join(f'"{quote}"' for quote in outcome.uncited(result))
        cited = (
            f" but did not cite {uncited}" if outcome.answers[0] == outcome.expected_answer else ""
        )
        lines = [
            f"{self.rubric.name}@{self.rubric.version} golden {golden.name}: expected "
            f"{expected}, the judge gave {got}{score_text(self.rubric, result)}{cited}: "
            f"{result.reason}",
            f"  judge: {judge.model} at {judge.endpoint}",
        ]
        if golden.why:
            lines.append(f"  why this golden: {golden.why}")
        return "\n".join(lines)

    def _outcome(self) -> GoldenOutcome:
        """This golden's outcome; the first asked judges every pending golden at once (only
        its own under pytest-xdist, whose workers each run a share of the items)."""
        outcomes = self.config.stash.setdefault(_OUTCOMES, {})
        if self.nodeid not in outcomes:
            batch = [self]
            if not hasattr(self.config, "workerinput"):
                pending = self.config.stash.get(_PENDING, [])
                batch += [i for i in pending if i is not self and i.nodeid not in outcomes]
            outcomes.update(_judge_goldens(self.config, batch))
        return outcomes[self.nodeid]

    def reportinfo(self) -> tuple[Path, int | None, str]:
        """The rubric's file, and a heading with no suffix of the node id (pytest would print
        the version's dots as `::`)."""
        return self.rubric.path, None, f"{self.rubric.name}@{self.rubric.version} {self.name}"


def _judge_goldens(config: pytest.Config, items: list[GoldenItem]) -> dict[str, GoldenOutcome]:
    """Judge the items' goldens through `run_goldens` (the engine `test-goldens` uses)."""
    import asyncio

    from rubriclib.config import resolve
    from rubriclib.measure import GoldensReport, run_goldens

    judge = session_judge(config)
    plan = [(item.rubric, [item.golden]) for item in items]

    async def run() -> GoldensReport:
        try:
            return await run_goldens(judge, plan, concurrency=resolve("concurrency").value)
        finally:
            await judge.aclose()

    report = asyncio.run(run())
    return {
        item.nodeid: rubric.outcomes[0] for item, rubric in zip(items, report.rubrics, strict=True)
    }
