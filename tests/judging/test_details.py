"""A result's typed details: results written while details were a dict read and re-dump byte
for byte, an unknown key is an error, and a block still reads like the dict it was."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from conftest import judged
from pydantic import ValidationError

from rubriclib.judging.result import Details, GradeResult, not_judged
from rubriclib.rubrics.rubric import Rubric

OLD_RESULTS = Path(__file__).parent.parent / "data" / "results_before_typed_details.jsonl"
"""Results-file lines written by rubriclib before details were typed: some by `rubriclib eval`
in this suite's tests, the rest by its builders (votes, pairwise orders, votes and panels,
checklists with probability answers and a profile, panels of votes and checklists, letta
turns, an agent run's cuts, cached and not-judged results, citations at every depth)."""


def old_lines() -> list[str]:
    return OLD_RESULTS.read_text(encoding="utf-8").splitlines()


@pytest.mark.parametrize("text", old_lines(), ids=lambda text: json.loads(text)["row"])
def test_a_result_written_before_reads_and_dumps_byte_for_byte(text: str) -> None:
    line = json.loads(text)
    result = GradeResult.model_validate(line["result"])
    assert json.dumps(line | {"result": result.model_dump(mode="json")}) == text
    assert result.model_dump_json() == json.dumps(line["result"], separators=(",", ":"))


def test_the_old_results_hold_every_block() -> None:
    written = {key for text in old_lines() for key in json.loads(text)["result"]["details"]}
    own = {"winner", "answer", "p", "p_yes", "mass", "logprobs"}
    newer = {"output", "label", "evidence", "exploration"}  # came after these were written
    assert written == set(Details.model_fields) - own - newer
    # a pairwise order's and a checklist item's own keys are kept only inside their whole


@pytest.mark.parametrize(
    ("where", "typo"),
    [
        ((), "raw_scor"),
        (("judge",), "usgae"),
        (("judge", "usage"), "prompt_token"),
        (("rubric",), "digets"),
    ],
)
def test_an_unknown_key_is_a_validation_error_naming_it(where: tuple[str, ...], typo: str) -> None:
    line = json.loads(old_lines()[0])
    block = line["result"]["details"]
    for key in where:
        block = block[key]
    block[typo] = 1
    with pytest.raises(ValidationError, match=rf"details\.{'.'.join((*where, typo))}\n") as error:
        GradeResult.model_validate(line["result"])
    assert "Extra inputs are not permitted" in str(error.value)


def test_a_block_reads_like_the_dict_it_was(scored: Rubric) -> None:
    details = judged(scored, "pass", raw_score=4).details
    assert details["rubric"]["version"] == scored.version == details.rubric.version
    assert details["judge"]["usage"] == {"prompt_tokens": 5, "completion_tokens": 1}
    assert details["judge"]["mode"] == "required" and details.get("raw_score") == 4
    assert "raw_score" in details and "votes" not in details
    assert details.get("votes") is None and details.get("votes", "none") == "none"
    assert dict(details.judge) == {**details.judge} == details.model_dump()["judge"]
    assert details == details.model_dump()


def test_attributes_are_typed(rubric: Rubric) -> None:
    details = judged(rubric, "pass").details
    assert details.judge.usage.prompt_tokens == 5 and details.judge.attempts == 1
    assert details.raw_score is None and details.judge.correction is None
    assert not_judged(rubric, "m", "x").details.judge.mode is None  # set, and None


def test_a_key_that_is_not_set_is_a_key_error_as_before(rubric: Rubric) -> None:
    details = judged(rubric, "pass").details
    with pytest.raises(KeyError) as error:
        details["raw_score"]  # a pass-fail result has none, as before
    assert error.value.args == ("raw_score",)
    with pytest.raises(KeyError):
        details["judge"]["correction"]
    assert not_judged(rubric, "m", "x").details["judge"]["mode"] is None  # written as null


@pytest.mark.parametrize(
    "read", [lambda d: d["nope"], lambda d: d.get("nope"), lambda d: "nope" in d]
)
def test_a_name_that_is_no_field_is_a_key_error_saying_so(rubric: Rubric, read: object) -> None:
    details = judged(rubric, "pass").details
    with pytest.raises(KeyError, match="Details has no such field: 'nope'"):
        read(details)  # type: ignore[operator]
    with pytest.raises(KeyError, match="JudgeInfo has no such field: 'usgae'"):
        details["judge"].get("usgae", {})
