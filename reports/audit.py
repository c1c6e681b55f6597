"""`crashsweep audit`'s report: each run's verdicts and anomalies, as text, JSON or JUnit.

An audit judges runs that were recorded, not explored (spec/HISTORY.md 6-8): each run of the
records read gets every registered invariant's verdict (holds, violated with the few events
that prove it, or not decided and why) and the anomalies found in it, each definite or
possible with its witness, whose `src` points back into the raw record. The text says, per
invariant, in how many runs it was violated (the first shown), then lists the anomalies by
run, then how the calls were joined and what could not be; JSON and JUnit give every run.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

from crashsweep.reports import junit
from crashsweep.spec.anomalies import Anomaly
from crashsweep.spec.auditing import RunAudit
from crashsweep.spec.history import Event
from crashsweep.spec.joining import RULES


def place(event: Event) -> str:
    """An event as a witness shows it: its seq, where it came from, and the receiver's or model's ID."""
    where = " ".join(part for part in (event.src, event.effect_id or event.call_id or event.call) if part)
    return f"{event.seq} ({where})" if where else str(event.seq)


def evidence(events: Sequence[Event]) -> str:
    """The events that prove a violation, as "events 3 (tracker #1), 7 (tracker #2)"."""
    return ("event " if len(events) == 1 else "events ") + ", ".join(place(e) for e in events)


def label(run: RunAudit) -> str:
    """Where a run came from: its unit, and its run ID when it has one."""
    return f"{run.unit} (run {run.run})" if run.run else run.unit


def text(runs: Sequence[RunAudit]) -> str:
    """The invariants' summary, the anomalies by run, and the joining."""
    lines = [f"audit of {len(runs)} run{'' if len(runs) == 1 else 's'}", *_verdicts(runs)]
    lines += _anomalies(runs)
    lines += _joining(runs)
    return "\n".join(lines) + "\n"


def _verdicts(runs: Sequence[RunAudit]) -> list[str]:
    """Per invariant: violated in how many runs (the first with its words and evidence), holds, or not decided."""
    lines = []
    names = [v.name for v in runs[0].verdicts] if runs else []
    width = max((len(name) for name in names), default=0)
    for n, name in enumerate(names):
        verdicts = [(r, r.verdicts[n]) for r in runs]
        bad = [(r, v) for r, v in verdicts if v.violation is not None]
        undecided = [v for _, v in verdicts if not v.decided]
        if bad:
            first, verdict = bad[0]
            assert verdict.violation is not None
            lines.append(f"  {name:<{width}}  VIOLATED in {len(bad)} of {len(runs)}, first {label(first)}:")
            lines.append(f"  {'':<{width}}    {verdict.violation.why} ({evidence(verdict.violation.evidence)})")
        elif len(undecided) == len(runs):
            lines.append(f"  {name:<{width}}  not decided ({undecided[0].why})")
        else:
            also = f" (not decided in {len(undecided)}: {undecided[0].why})" if undecided else ""
            lines.append(f"  {name:<{width}}  holds in {len(runs) - len(undecided)} of {len(runs)}{also}")
    return lines


def _anomalies(runs: Sequence[RunAudit]) -> list[str]:
    """Each run's anomalies: name, definite or possible, call, words, witness."""
    found = [a for r in runs for a in r.found]
    if not found:
        return ["anomalies: none"]
    definite = sum(a.definite for a in found)
    lines = [f"anomalies: {definite} definite, {len(found) - definite} possible"]
    for run in (r for r in runs if r.found):
        lines.append(f"  {label(run)}")
        for anomaly in run.found:
            lines.append(f"    {anomaly.name}  {_kind(anomaly)}  {anomaly.why}")
            lines.append(f"      witness: {'; '.join(place(e) for e in anomaly.witness)}")
    return lines


def _kind(anomaly: Anomaly) -> str:
    return "definite" if anomaly.definite else "possible"


def _joining(runs: Sequence[RunAudit]) -> list[str]:
    """How many events each join rule joined, and the events none could."""
    counts = [sum(r.joined.joined[n] for r in runs) for n in range(len(RULES))]
    said = ", ".join(f"{count} by {rule}" for count, rule in zip(counts, RULES, strict=True))
    unjoined = [(r, e) for r in runs for e in r.joined.unjoined]
    if not unjoined:
        return [f"calls joined: {said}; none left unjoined"]
    shown = "; ".join(f"{label(r)} event {place(e)}" for r, e in unjoined[:3])
    more = f" and {len(unjoined) - 3} more" if len(unjoined) > 3 else ""
    return [f"calls joined: {said}; {len(unjoined)} not joined to any call: {shown}{more}"]


def to_json(runs: Sequence[RunAudit]) -> str:
    """Every run with every verdict, its anomalies (witness seqs and sources) and its joining."""
    return json.dumps({"runs": [_run_json(r) for r in runs]}, indent=2) + "\n"


def _run_json(run: RunAudit) -> dict[str, Any]:
    verdicts: dict[str, Any] = {}
    for v in run.verdicts:
        found = v.violation
        verdicts[v.name] = {
            "decided": v.decided,
            "holds": v.holds,
            "witnessed": v.witnessed,
            "why": v.why if not v.decided else (found.why if found is not None else ""),
            "evidence": [e.seq for e in found.evidence] if found is not None else [],
        }
    return {
        "unit": run.unit,
        "run": run.run,
        "verdicts": verdicts,
        "anomalies": [_anomaly_json(a) for a in run.found],
        "joined": dict(zip(RULES, run.joined.joined, strict=True)),
        "unjoined": [{"seq": e.seq, "src": e.src} for e in run.joined.unjoined],
    }


def _anomaly_json(anomaly: Anomaly) -> dict[str, Any]:
    return {
        "name": anomaly.name,
        "definite": anomaly.definite,
        "call": anomaly.call,
        "why": anomaly.why,
        "witness": [{"seq": e.seq, "src": e.src} for e in anomaly.witness],
    }


def suites(runs: Sequence[RunAudit]) -> list[junit.Suite]:
    """A suite per run: a case per invariant (failed when violated, skipped when not decided), one per anomaly."""
    found = []
    for run in runs:
        cases = []
        for v in run.verdicts:
            if not v.decided:
                cases.append(junit.Case(v.name, skipped=f"not decided: {v.why}"))
            elif v.violation is not None:
                said = f"{v.name} VIOLATED: {v.violation.why}"
                cases.append(junit.Case(v.name, junit.Failure(said, "violated", evidence(v.violation.evidence))))
            else:
                cases.append(junit.Case(v.name))
        for n, anomaly in enumerate(run.found, 1):
            name = f"{anomaly.name} {n}"
            witness = evidence(anomaly.witness)
            if anomaly.definite:
                cases.append(junit.Case(name, junit.Failure(f"{anomaly.name}: {anomaly.why}", "anomaly", witness)))
            else:
                cases.append(junit.Case(name, skipped=f"possible {anomaly.name}: {anomaly.why} ({witness})"))
        found.append(junit.Suite(label(run), cases, {}))
    return found
