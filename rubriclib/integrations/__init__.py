"""Adapters for the tools people already run: the pytest plugin (`pytest_plugin`, the pytest11
entry point) and `testing.assert_rubric`, promptfoo (`promptfoo.get_assert`), inspect_ai
(`inspect.rubric_scorer`) and letta-evals (`letta.rubric_grader`), each a thin layer over the
rooms below; `chosen_judge` is what they share.

Each adapter imports its tool only when used; `import rubriclib` imports none of them. Only the
`cli` room imports this one (to write the promptfoo and letta-evals shims).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from rubriclib.judging import Judge


def chosen_judge(judge: Judge | None, model: str | None, base_url: str | None, who: str) -> Judge:
    """An adapter's judge: `judge` as given, else a Judge of `model` at `base_url` (rubriclib's
    settings fill what is None). Giving both is a TypeError naming the adapter `who`."""
    from rubriclib.judging import Judge

    if judge is not None and (model or base_url):
        raise TypeError(f"{who}: give a judge or model/base_url, not both")
    return judge or Judge(model=model, base_url=base_url)
