"""`crashsweep audit`'s report: each history's verdicts under the registered invariants, as text, JSON or JUnit.

An audit judges histories that were recorded, not explored: a History JSONL a user or another
tool wrote, or the `history.jsonl` each scenario of a kept sweep holds (spec/HISTORY.md). Each
invariant of the registry gives its verdict on each history: holds, violated (its words and the
few events that prove it, by their `seq`), or not decided (a fact the history lacks, and why).
The text says, per invariant, in how many histories it was violated and shows the first; the
JSON and JUnit forms give every history.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from crashsweep.reports import junit
from crashsweep.spec.history import Event
from crashsweep.spec.invariants import Verdict


@dataclass(frozen=True, slots=True)
class Audited:
    """One history's verdicts: where it was read (`path`, as given) and each registered invariant's verdict."""

    path: str
    verdicts: tuple[Verdict, ...]

    @property
    def violated(self) -> tuple[Verdict, ...]:
        """The verdicts that found a violation."""
        return tuple(v for v in self.verdicts if v.violation is not None)


def evidence(events: Sequence[Event]) -> str:
    """The events that prove a violation, as "events 3 (tracker #1), 7 (tracker #2)"."""
    words = []
    for event in events:
        where = " ".join(part for part in (event.src, event.effect_id or event.call_id or event.call) if part)
        words.append(f"{event.seq} ({where})" if where else str(event.seq))
    return ("event " if len(words) == 1 else "events ") + ", ".join(words)


def text(audits: Sequence[Audited]) -> str:
    """Per invariant: violated in how many histories (the first with its words and evidence), holds, or not decided."""
    lines = [f"audit of {len(audits)} histor{'y' if len(audits) == 1 else 'ies'}"]
    names = [v.name for v in audits[0].verdicts] if audits else []
    width = max((len(name) for name in names), default=0)
    for n, name in enumerate(names):
        verdicts = [(a, a.verdicts[n]) for a in audits]
        bad = [(a, v) for a, v in verdicts if v.violation is not None]
        undecided = [(a, v) for a, v in verdicts if not v.decided]
        if bad:
            first, verdict = bad[0]
            assert verdict.violation is not None
            lines.append(f"  {name:<{width}}  VIOLATED in {len(bad)} of {len(audits)}, first {first.path}:")
            lines.append(f"  {'':<{width}}    {verdict.violation.why} ({evidence(verdict.violation.evidence)})")
        elif len(undecided) == len(audits):
            lines.append(f"  {name:<{width}}  not decided ({undecided[0][1].why})")
        else:
            decided = len(audits) - len(undecided)
            also = f" (not decided in {len(undecided)}: {undecided[0][1].why})" if undecided else ""
            lines.append(f"  {name:<{width}}  holds in {decided} of {len(audits)}{also}")
    return "\n".join(lines) + "\n"


def to_json(audits: Sequence[Audited]) -> str:
    """Every history with every verdict: decided, holds, why, and the evidence's `seq` numbers."""
    return json.dumps({"histories": [_history_json(a) for a in audits]}, indent=2) + "\n"


def _history_json(audited: Audited) -> dict[str, Any]:
    verdicts: dict[str, Any] = {}
    for v in audited.verdicts:
        found = v.violation
        verdicts[v.name] = {
            "decided": v.decided,
            "holds": v.holds,
            "witnessed": v.witnessed,
            "why": v.why if not v.decided else (found.why if found is not None else ""),
            "evidence": [e.seq for e in found.evidence] if found is not None else [],
        }
    return {"path": audited.path, "verdicts": verdicts}


def suites(audits: Sequence[Audited]) -> list[junit.Suite]:
    """A suite per history, a case per invariant: failed when violated, skipped when not decided."""
    found = []
    for audited in audits:
        cases = []
        for v in audited.verdicts:
            if not v.decided:
                cases.append(junit.Case(v.name, skipped=f"not decided: {v.why}"))
            elif v.violation is not None:
                said = f"{v.name} VIOLATED: {v.violation.why}"
                cases.append(junit.Case(v.name, junit.Failure(said, "violated", evidence(v.violation.evidence))))
            else:
                cases.append(junit.Case(v.name))
        found.append(junit.Suite(audited.path, cases, {}))
    return found
