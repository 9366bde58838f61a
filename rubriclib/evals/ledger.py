"""What an eval run has judged, kept and still misses, with the dataset read once: each row as
it is read and the graders that judge it, the lines a resumed run keeps, each job's place among
its row's judgments, and the results of a row judged in parts until its last part is in."""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterator, Mapping
from typing import TYPE_CHECKING, Any

from rubriclib.judging import GradeResult

if TYPE_CHECKING:
    from rubriclib.evals.datasets import Row
    from rubriclib.evals.formats import GraderEntry
    from rubriclib.evals.judgments import Judgment, Judgments


class Ledger:
    """One run's account of its rows (`rows`: the dataset within the limit, read once) and
    graders: read, kept, planned into jobs, judged, and what an interrupt leaves missing."""

    def __init__(
        self,
        rows: Iterator[Row],
        graders: list[GraderEntry],
        kept: Mapping[tuple[str, str], dict[str, Any]],
    ) -> None:
        self._rows = rows
        self._graders = graders
        self._kept = kept
        self.read = 0
        """Rows read so far."""
        self.resumed = 0
        """Results kept from a previous run."""
        self.rows_judged = 0
        """Rows whose every grader has its result."""
        self._numbers: dict[str, int] = {}
        """Each row read and not yet judged: its number (from 1)."""
        self._awaited: Counter[str] = Counter()
        """Each row read: how many of its graders have no result yet."""
        self._open: dict[tuple[str, str], None] = {}
        """(row id, grader) of each judgment of a row read that has no result yet, in order."""
        self._jobs: dict[int, tuple[Row, GraderEntry, Judgments, int]] = {}
        """Each job in flight by its index: its row, grader, judgments and which part it is."""
        self._next_job = 0  # the engine numbers jobs in the order they are pulled
        self._parts: dict[tuple[str, str], dict[int, GradeResult]] = {}
        """The parts judged so far of each row judged in several (a letta row, turn by turn)."""

    def each_row(self) -> Iterator[tuple[Row, list[GraderEntry]]]:
        """Each row, read once, with the graders that judge it: all awaited from now."""
        for row in self._rows:
            graders = [grader for grader in self._graders if grader.judges(row.item)]
            self.read += 1
            if graders:
                self._numbers[row.id] = self.read
                self._awaited[row.id] = len(graders)
            else:
                self.rows_judged += 1
            self._open.update(((row.id, grader.name), None) for grader in graders)
            yield row, graders

    def kept(self, row: Row, grader: GraderEntry) -> GradeResult | None:
        """The result a resumed run keeps for the row and grader, if any."""
        line = self._kept.get((row.id, grader.name))
        if line is None:
            return None
        self.resumed += 1
        return GradeResult.model_validate(line["result"])

    def planned(self, row: Row, grader: GraderEntry, asked: Judgments) -> Iterator[Judgment]:
        """`asked`'s judgments, each noted as the next job as it is pulled."""
        for part, judgment in enumerate(asked.parts):
            self._jobs[self._next_job] = (row, grader, asked, part)
            self._next_job += 1
            yield judgment

    def finished(
        self, job: int, result: GradeResult
    ) -> tuple[Row, GraderEntry, GradeResult] | None:
        """The row, grader and result once `job`'s result completes their judgments (combined
        as they say), else None."""
        row, grader, asked, part = self._jobs.pop(job)
        done = self._parts.setdefault((row.id, grader.name), {})
        done[part] = result
        if len(done) < len(asked.parts):
            return None
        del self._parts[(row.id, grader.name)]
        return row, grader, asked.combine([done[n] for n in range(len(asked.parts))])

    def settle(self, row: Row, grader: GraderEntry) -> int:
        """Note that the row has the grader's result; the row's number."""
        del self._open[(row.id, grader.name)]
        self._awaited[row.id] -= 1
        if self._awaited[row.id] > 0:
            return self._numbers[row.id]
        self.rows_judged += 1
        del self._awaited[row.id]
        return self._numbers.pop(row.id)

    def missing(self) -> list[tuple[str, str]]:
        """(row id, grader) of every judgment with no result: those of the rows read, then those
        of the rows left unread (read now, from where the run stopped, never from the start)."""
        unread = [
            (row.id, grader.name)
            for row in self._rows
            for grader in self._graders
            if grader.judges(row.item)
        ]
        return [*self._open, *unread]
