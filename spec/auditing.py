"""One audit of recorded runs, as values: merged, split by run, joined, judged (spec/HISTORY.md 6-8).

The histories of one unit of records (crashsweep/importers/units.py) are merged into one order,
split by run, and each run's events joined to their logical calls (spec/joining.py); then every
registered invariant gives its verdict and every anomaly rule its findings, on the same
history. `--job` gives what the run had to do where the records do not say it. Pure: the
reading is the importers', the words the report's (reports/audit.py).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from dataclasses import dataclass

from crashsweep.spec import anomalies, invariants
from crashsweep.spec.history import History
from crashsweep.spec.joining import Joined, by_run, join, merge


@dataclass(frozen=True, slots=True)
class RunAudit:
    """One run's verdicts: where it came from, its joined history, each invariant's verdict, its anomalies."""

    unit: str
    run: str
    joined: Joined
    verdicts: tuple[invariants.Verdict, ...]
    found: tuple[anomalies.Anomaly, ...]

    @property
    def violated(self) -> tuple[invariants.Verdict, ...]:
        """The verdicts that found a violation."""
        return tuple(v for v in self.verdicts if v.violation is not None)

    @property
    def definite(self) -> tuple[anomalies.Anomaly, ...]:
        """The anomalies that rest on no unknown outcome."""
        return tuple(a for a in self.found if a.definite)

    @property
    def failed(self) -> bool:
        """An invariant violated or a definite anomaly: the audit's exit status 1."""
        return bool(self.violated or self.definite)


def with_job(history: History, expected: Sequence[str], gated: Sequence[str]) -> History:
    """The history with the job's writes and gated calls added to what it says itself."""
    if not expected and not gated:
        return history
    return dataclasses.replace(
        history,
        expected=tuple(dict.fromkeys((*history.expected, *expected))),
        gated=tuple(dict.fromkeys((*history.gated, *gated))),
    )


def audit(
    unit: str, histories: Sequence[History], expected: Sequence[str] = (), gated: Sequence[str] = ()
) -> tuple[RunAudit, ...]:
    """Each run of the unit's histories, judged by every invariant and anomaly rule."""
    merged = with_job(merge(histories), expected, gated)
    found = []
    for history in by_run(merged):
        joined = join(history)
        run = next((event.run for event in history.events if event.run), "")
        verdicts = tuple(invariant.judge(joined.history) for invariant in invariants.registered())
        seen = tuple(a if a.run else dataclasses.replace(a, run=run) for a in anomalies.find(joined.history))
        found.append(RunAudit(unit, run, joined, verdicts, seen))
    return tuple(found)
