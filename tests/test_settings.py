"""JudgeSettings: one schema for a judge's settings, layered by one rule; Judge.from_settings."""

from __future__ import annotations

from typing import Any

import pytest
from pydantic import ValidationError

from rubriclib import Panel
from rubriclib.errors import JudgeConfigError
from rubriclib.judging.judge import Judge
from rubriclib.settings import JudgeSettings

LOCAL = "http://127.0.0.1:9/v1"


def test_a_later_layer_wins_and_an_unset_field_changes_nothing() -> None:
    config = JudgeSettings(model="from-config", temperature=0.2, max_tokens=300)
    eval_file = JudgeSettings(model="from-eval", max_tokens=None, votes=3)
    merged = config.merge(eval_file, model="from-flag", votes=None)
    assert merged == JudgeSettings(model="from-flag", temperature=0.2, max_tokens=300, votes=3)


def test_merge_keeps_only_judge_fields_of_a_subclass() -> None:
    class WithRubric(JudgeSettings):
        rubric: str

    merged = JudgeSettings().merge(WithRubric(rubric="groundedness", model="m"))
    assert type(merged) is JudgeSettings
    assert merged == JudgeSettings(model="m")


def test_settings_are_checked_and_hashable() -> None:
    with pytest.raises(ValidationError, match="extra"):
        JudgeSettings(modle="typo")  # type: ignore[call-arg]
    with pytest.raises(ValidationError, match="greater than or equal to 1"):
        JudgeSettings(votes=0)
    with pytest.raises(ValidationError, match="http"):
        JudgeSettings(base_url="ftp://example.com")
    assert {JudgeSettings(model="a"): 1}[JudgeSettings(model="a")] == 1


def test_from_settings_passes_every_set_field_to_the_judge(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("HOUSE_KEY", "sk-house")
    settings = JudgeSettings(
        model="judge-m",
        base_url=LOCAL,
        api_key_env="HOUSE_KEY",
        temperature=0.7,
        max_tokens=99,
        timeout=5,
        max_retries=0,
        votes=3,
    )
    judge = Judge.from_settings(settings)
    assert (judge.model, judge.endpoint, judge.api_key) == ("judge-m", LOCAL, "sk-house")
    assert (judge.temperature, judge.max_tokens, judge.timeout) == (0.7, 99, 5)
    assert (judge.max_retries, judge.votes) == (0, 3)


def test_from_settings_leaves_unset_fields_to_the_judge_and_environment(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("RUBRICLIB_MODEL", "env-model")
    monkeypatch.setenv("OPENAI_BASE_URL", LOCAL)
    judge = Judge.from_settings(JudgeSettings())
    default = Judge()
    assert (judge.model, judge.endpoint) == ("env-model", LOCAL)
    assert (judge.temperature, judge.max_tokens, judge.votes) == (
        default.temperature,
        default.max_tokens,
        default.votes,
    )


def test_an_unset_api_key_env_is_named_where_the_user_wrote_it(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.delenv("MISSING_KEY", raising=False)
    monkeypatch.setenv("OPENAI_API_KEY", "sk-other-endpoint")
    settings = JudgeSettings(base_url=LOCAL, api_key_env="MISSING_KEY")
    with pytest.raises(JudgeConfigError, match=r"^config\.api_key_env: \$MISSING_KEY is not set"):
        Judge.from_settings(settings, named_by="config.api_key_env")


def test_a_key_given_wins_over_api_key_env(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("MISSING_KEY", raising=False)
    settings = JudgeSettings(base_url=LOCAL, api_key_env="MISSING_KEY")
    assert Judge.from_settings(settings, api_key="offline-no-key").api_key == "offline-no-key"


def test_the_promptfoo_assertion_checks_the_same_settings(monkeypatch: pytest.MonkeyPatch) -> None:
    from rubriclib.integrations.promptfoo import get_assert

    monkeypatch.delenv("MISSING_KEY", raising=False)
    bad_votes = get_assert("out", {"config": {"rubric": "groundedness", "votes": 0}})
    assert bad_votes["pass"] is False
    assert "config.votes" in bad_votes["reason"]
    assert "greater than or equal to 1" in bad_votes["reason"]
    no_key = get_assert(
        "out",
        {"config": {"rubric": "groundedness", "base_url": LOCAL, "api_key_env": "MISSING_KEY"}},
    )
    assert no_key["pass"] is False
    assert "config.api_key_env: $MISSING_KEY is not set" in no_key["reason"]


def test_an_adapter_takes_a_judge_or_its_settings_not_both() -> None:
    from rubriclib.integrations import chosen_judge

    given = Judge(base_url=LOCAL)
    assert chosen_judge(given, None, None, "rubric_scorer") is given
    assert chosen_judge(None, "m", LOCAL, "rubric_scorer").model == "m"
    with pytest.raises(TypeError, match="^rubric_grader: give a judge or model/base_url"):
        chosen_judge(given, "m", None, "rubric_grader")


def test_mode_and_answers_are_the_judge_s_own(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    judge = Judge.from_settings(JudgeSettings(mode="checklist", answers="one-call"))
    assert (judge.mode, judge.answers, judge.checklist_answers) == (
        "checklist",
        "one-call",
        "one-call",
    )
    implied = Judge.from_settings(JudgeSettings(answers="probability"))
    assert (implied.mode, implied.checklist_answers) == ("checklist", "probability")
    holistic = Judge.from_settings(JudgeSettings(mode="holistic"))
    assert (holistic.mode, holistic.checklist_answers) == ("holistic", None)
    with pytest.raises(ValidationError, match="'holistic' or 'checklist'"):
        JudgeSettings(mode="checklists")  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("old", "new"),
    [
        ({"checklist": True}, {"mode": "checklist"}),
        ({"checklist": False}, {"mode": "holistic"}),
        ({"checklist_answers": "one-call"}, {"answers": "one-call"}),
        (
            {"checklist": True, "checklist_answers": "probability"},
            {"mode": "checklist", "answers": "probability"},
        ),
        ({"checklist": None, "votes": 3}, {"votes": 3}),
    ],
)
def test_the_old_spelling_gives_the_same_settings_with_a_deprecation_warning(
    monkeypatch: pytest.MonkeyPatch, old: dict[str, Any], new: dict[str, Any]
) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    with pytest.warns(DeprecationWarning) as warned:
        settings = JudgeSettings(**old)
    assert settings == JudgeSettings(**new)
    assert [w.filename for w in warned] == [__file__] * len(old.keys() - {"votes"})  # the caller
    with pytest.warns(DeprecationWarning) as validated:
        assert JudgeSettings.model_validate(old) == settings
    assert {w.filename for w in validated} == {__file__}
    judge, same = Judge.from_settings(settings), Judge.from_settings(JudgeSettings(**new))
    assert (judge.mode, judge.answers, judge.votes) == (same.mode, same.answers, same.votes)


def test_the_deprecation_says_what_to_write_instead() -> None:
    with pytest.warns(DeprecationWarning) as warned:
        JudgeSettings(checklist=True, checklist_answers="one-call")
    assert [str(w.message) for w in warned] == [
        "the judge setting checklist is deprecated, use mode='checklist' (checklist is read "
        "until rubriclib 0.2.0)",
        "the judge setting checklist_answers is deprecated, use answers='one-call' "
        "(checklist_answers is read until rubriclib 0.2.0)",
    ]


def test_both_spellings_of_one_setting_are_refused_naming_both() -> None:
    with pytest.raises(ValidationError, match=r"checklist: give mode or checklist \(its old name"):
        JudgeSettings(mode="holistic", checklist=True)
    with pytest.raises(ValidationError, match="checklist_answers: give answers or checklist_ans"):
        JudgeSettings.model_validate({"answers": "tool", "checklist_answers": "one-call"})
    with pytest.raises(ValidationError, match="checklist: must be true or false"):
        JudgeSettings(checklist="maybe")


def test_the_old_names_still_read_with_a_deprecation_warning(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    settings = JudgeSettings(mode="checklist", answers="one-call")
    with pytest.warns(DeprecationWarning, match="JudgeSettings.checklist is deprecated, use mode"):
        assert settings.checklist is True
    with pytest.warns(DeprecationWarning, match="checklist_answers is deprecated, use answers"):
        assert settings.checklist_answers == "one-call"
    judge = Judge.from_settings(settings)
    with pytest.warns(DeprecationWarning, match="Judge.checklist is deprecated") as warned:
        assert judge.checklist == judge.checklist_answers == "one-call"
    assert warned[0].filename == __file__
    panel = Panel([judge, Judge("other", LOCAL)])
    with pytest.warns(DeprecationWarning, match="Panel.checklist is deprecated"):
        assert panel.checklist is panel.checklist_answers is None
