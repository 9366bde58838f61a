"""The judges a batch run sends with: an eval's graders rebuilt to send through a batch transport
(`files.Recorder`, `files.Answerer`, `api.BatchTransport`). Every batch path asks here, so a
judge panel is refused in one place."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING

from rubriclib.errors import JudgeConfigError
from rubriclib.judging import Judge

if TYPE_CHECKING:
    from rubriclib.judging import Grader, Transport

BATCH_TOTAL_TIMEOUT = 14 * 24 * 3600.0
"""A judgment's overall time limit in batch mode: a 24h window per wave, and a few waves."""


def batch_judges(
    graders: Mapping[str, Grader],
    transport: Transport | Callable[[Judge], Transport],
    *,
    records_only: bool = False,
) -> dict[str, Judge]:
    """The same graders, each distinct judge built again (once, however many graders share it)
    to send through `transport` (or one made per judge): no retries (a retry would only be
    another wave) and an overall limit that outlasts a batch's 24h window; `records_only` when
    the transport only records requests (`Judge.with_transport`). A judge panel is refused
    (JudgeConfigError): the one check, whichever batch path asks."""
    for grader in graders.values():
        if not isinstance(grader, Judge):
            raise JudgeConfigError(
                "a judge panel cannot be judged through a batch yet; run it live"
            )
    built: dict[int, Judge] = {}
    judges: dict[str, Judge] = {}
    for name, judge in graders.items():
        assert isinstance(judge, Judge)
        if id(judge) not in built:
            sender = transport(judge) if callable(transport) else transport
            built[id(judge)] = judge.with_transport(
                sender,
                max_retries=0,
                total_timeout=BATCH_TOTAL_TIMEOUT,
                records_only=records_only,
            )
        judges[name] = built[id(judge)]
    return judges
