"""What a run would do, worked out with no request: judgments per grader, the estimated prompt
tokens, rows missing a field, prompts over the limit, and the first prompts cut to be read."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest
from click.testing import CliRunner
from judge_server import JudgeServer

from rubriclib.cli import main
from rubriclib.evals.formats import load_eval
from rubriclib.evals.plan import (
    CHARACTERS_PER_TOKEN,
    SHOWN_CHARACTERS,
    max_prompt_tokens,
    plan_eval,
    prompt_tokens,
    shown_prompt,
    too_large,
)
from rubriclib.item import Item
from rubriclib.rubrics.rubric import Rubric

EVAL = """\
name: planned
rows:
  - {id: a, input: q, context: c, output: short}
  - {id: b, input: q, output: no context}
  - {id: c, input: q, context: c, output: "%s"}
graders:
  - {name: kw, rubric: keywords}
  - {name: grounded, rubric: groundedness}
judge: {max_prompt_tokens: %d}
"""


def planned(write_file: Callable[..., Path], output: str = "long", limit: int = 128_000) -> Path:
    return write_file("eval.yaml", EVAL % (output, limit))


def test_every_judgment_is_counted_per_grader(
    library: Path, write_file: Callable[..., Path]
) -> None:
    plan = plan_eval(load_eval(planned(write_file)))
    assert (plan.rows, plan.judgments, plan.limit) == (3, 5, 128_000)
    assert plan.by_grader == {"kw": 3, "grounded": 2}
    assert plan.missing == [f"{plan_row(write_file, 2)}: grounded needs context"]
    assert plan.problem_rows == {plan_row(write_file, 2)} and plan.too_large == []
    assert plan.prompt_tokens == sum(plan.tokens_by_grader.values()) > 0
    assert list(plan.first_prompts) == ["kw", "grounded"]


def plan_row(write_file: Callable[..., Path], number: int) -> str:
    """Where the eval file's row `number` (from 1) is, as a plan names it."""
    rows = load_eval(planned(write_file)).dataset.rows()
    return next(row.where for index, row in enumerate(rows, 1) if index == number)


def test_a_prompt_over_the_limit_is_named_and_costs_nothing(
    library: Path, write_file: Callable[..., Path]
) -> None:
    small = plan_eval(load_eval(planned(write_file, "x", limit=10_000)))
    big = plan_eval(load_eval(planned(write_file, "x" * 40_000, limit=10_000)))
    assert small.too_large == []
    where = plan_row(write_file, 3)
    assert [line.split(": prompt too large")[0] for line in big.too_large] == [
        f"{where}: kw",
        f"{where}: grounded",
    ]
    assert where in big.problem_rows and big.judgments == small.judgments == 5
    first_two = plan_eval(load_eval(planned(write_file, limit=10_000)), limit=2)
    assert big.prompt_tokens == first_two.prompt_tokens < small.prompt_tokens  # never sent


def test_a_limit_caps_the_rows_planned(library: Path, write_file: Callable[..., Path]) -> None:
    plan = plan_eval(load_eval(planned(write_file)), limit=1)
    assert (plan.rows, plan.judgments, plan.missing) == (1, 2, [])


def test_the_limit_comes_from_the_eval_file_then_the_environment(
    library: Path, write_file: Callable[..., Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    assert max_prompt_tokens(load_eval(planned(write_file, limit=500))) == 500
    monkeypatch.setenv("RUBRICLIB_MAX_PROMPT_TOKENS", "777")
    assert max_prompt_tokens(load_eval(planned(write_file, limit=500))) == 500
    without = write_file(
        "bare.yaml", (EVAL % ("x", 1)).replace("judge: {max_prompt_tokens: 1}\n", "")
    )
    assert max_prompt_tokens(load_eval(without)) == 777


def test_too_large_says_the_size_and_the_limit() -> None:
    assert too_large(1_000, 1_000) is None
    assert too_large(150_001, 128_000) == "prompt too large: about 150,001 tokens > 128,000"


def test_prompt_tokens_grow_with_the_output_at_four_characters_a_token(rubric: Rubric) -> None:
    short = prompt_tokens(rubric, Item(output="x"), 128_000)
    longer = prompt_tokens(rubric, Item(output="x" * 4001), 128_000)
    assert longer - short == 4000 // CHARACTERS_PER_TOKEN


def test_a_shown_prompt_cuts_long_fields_and_names_their_size(rubric: Rubric) -> None:
    item = Item(output="o" * 10_000, input="short question")
    user = shown_prompt(rubric, item, 128_000)[-1]["content"]
    assert "o" * SHOWN_CHARACTERS + "... [cut: 10,000 characters, about 2,500 tokens]" in user
    assert "o" * (SHOWN_CHARACTERS + 1) not in user and "short question" in user


MODELS = """\
name: models
{judge}rows:
  - {{id: a, output: "verdict:pass"}}
graders:
  - {{name: plain, rubric: keywords}}
  - {{name: own, rubric: keywords, judge: {{model: grader-model}}}}
  - {{name: panel, rubric: keywords, judges: [{{}}, {{model: member-model}}]}}
"""


@pytest.mark.parametrize(
    ("variables", "config", "eval_model", "flags", "plain", "member"),
    [
        ({}, None, None, [], "gpt-4o-mini (default)", "gpt-4o-mini (default)"),
        (
            {"RUBRICLIB_MODEL": "env-model"},
            None,
            None,
            [],
            "env-model (RUBRICLIB_MODEL)",
            "env-model (RUBRICLIB_MODEL)",
        ),
        ({}, "rubriclib.toml", None, [], "toml-model (CONFIG)", "toml-model (CONFIG)"),
        ({}, "pyproject.toml", None, [], "toml-model (CONFIG [tool.rubriclib])", None),
        (
            {"RUBRICLIB_MODEL": "env-model"},
            "rubriclib.toml",
            None,
            [],
            "env-model (RUBRICLIB_MODEL)",
            None,
        ),
        ({"RUBRICLIB_MODEL": "env-model"}, None, "file-model", [], "file-model", "file-model"),
        (
            {"RUBRICLIB_MODEL": "env-model"},
            "rubriclib.toml",
            "file-model",
            ["--model", "flag-model"],
            "flag-model (--model)",
            "file-model",
        ),
    ],
)
def test_the_dry_run_names_the_model_each_grader_sends(
    library: Path,
    endpoint: JudgeServer,
    write_file: Callable[..., Path],
    monkeypatch: pytest.MonkeyPatch,
    tmp_path: Path,
    variables: dict[str, str],
    config: str | None,
    eval_model: str | None,
    flags: list[str],
    plain: str,
    member: str | None,
) -> None:
    monkeypatch.chdir(tmp_path)
    for name, value in variables.items():
        monkeypatch.setenv(name, value)
    if config is not None:
        table = "[tool.rubriclib]\n" if config == "pyproject.toml" else ""
        write_file(config, f'{table}model = "toml-model"\n')
        plain = plain.replace("CONFIG", str(tmp_path / config))
        member = member and member.replace("CONFIG", str(tmp_path / config))
    judge = f"judge: {{model: {eval_model}}}\n" if eval_model else ""
    path = str(write_file("models.yaml", MODELS.format(judge=judge)))
    dry = CliRunner().invoke(main, ["eval", path, "--dry-run", *flags])
    assert dry.exit_code == 0, dry.output
    assert f"  plain: keywords@2.1.0 ({library_source(library)}), {plain}\n" in dry.output
    own = "flag-model (--model)" if flags else "grader-model"
    assert f"  own: keywords@2.1.0 ({library_source(library)}), {own}\n" in dry.output
    if member is not None:
        assert f"    {member}: 1 judgment(s) = 1 request(s)\n" in dry.output
    assert "(default judge model)" not in dry.output and endpoint.requests == []
    judged = CliRunner().invoke(main, ["eval", path, "--no-cache", *flags])
    assert judged.exit_code == 0, judged.output
    sent = sorted(body["model"] for body in endpoint.requests)
    shown = [plain, own, member or plain, "member-model"]
    assert sent == sorted(model.split(" (")[0] for model in shown)  # what the run sent


def library_source(library: Path) -> str:
    return f"file:{library / 'keywords.md'}"
