"""A real scenario as a History (spec/HISTORY.md 4), judged by the registered invariants.

The check gives what it saw (`Outcome.history`: the receiver's effects, and, where it reads
them, the saved conversation and the approvals); the sweep knows how the scenario ended: the
last process finished, or exited stuck (crashpoint.STUCK_STATUS) after the model refused its
conversation (crashpoint.MALFORMED), or was a restart that could not recover (it exited with
another status after a crash: spec/POINTS.md 5, `Outcome.exit_status`); either of the last two
is a run that can never go on. `scenario_history` puts both together, numbered in order;
`judge` gives every registered invariant's verdict on it. A check that gave counts alone
(Outcome(dups=..., ...)) gives a history without effects: what needs them is not decided.
"""

from __future__ import annotations

import dataclasses
from pathlib import Path

from crashsweep.realsweep.probe.crashpoint import MALFORMED
from crashsweep.realsweep.values import Outcome, ScenarioResult
from crashsweep.spec import invariants
from crashsweep.spec.history import FINISHED, KEPT, STUCK, Event, History, write

NO_HISTORY = "the check gave counts alone (build its Outcome with Outcome.of to give the effects)"
FILE = KEPT
"""The scenario's history in its kept folder (`--keep`)."""


def scenario_history(scenario: ScenarioResult) -> History:
    """The check's history of `scenario` with how it ended; events numbered 1, 2, ... in order."""
    outcome = scenario.outcome
    seen = outcome.history if outcome.history is not None else counted(outcome)
    events = list(seen.events)
    if outcome.stuck:  # stuck, or a restart that cannot recover (its status and what it said are the detail)
        if scenario.counters.get(MALFORMED, 0) and not outcome.exit_status:
            runs = [e for e in events if e.f in ("tool_call", "result_saved", "model_call")]
            run, incarnation = (runs[-1].run, runs[-1].incarnation) if runs else ("", 0)
            events.append(Event(run, incarnation, 0, "invoke", "model_call", src="sweep"))
            events.append(Event(run, incarnation, 0, "fail", "model_call", detail=outcome.stuck, src="sweep"))
        events.append(Event("", 0, 0, "fail", "run_status", status=STUCK, detail=outcome.stuck, src="sweep"))
    else:
        events.append(Event("", 0, 0, "ok", "run_status", status=FINISHED, src="sweep"))
    numbered = tuple(dataclasses.replace(event, seq=n) for n, event in enumerate(events, 1))
    return dataclasses.replace(seen, events=numbered, facts=seen.facts | {"status"})


def counted(outcome: Outcome) -> History:
    """The history of a check that gave counts alone (Outcome(dups=..., missing=..., applied=...)).

    Its writes have no names: each duplicate is a write "counted N" with two effects, each other
    effect one of its own, each missing write one without effect; no-duplicate and no-loss are
    decided from them as from the counts, and nothing else is.
    """
    events: list[Event] = []
    doubled, single = outcome.dups, max(0, outcome.applied - 2 * outcome.dups)
    for n in range(1, doubled + single + 1):
        for _ in range(2 if n <= doubled else 1):
            events.append(Event("", 0, 0, "ok", "effect", call=f"counted {n}", effect_id=f"#{len(events) + 1}"))
    writes = doubled + single + outcome.missing
    unseen = dict.fromkeys(("transcript", "approvals"), NO_HISTORY)
    return History(
        tuple(events), tuple(f"counted {n}" for n in range(1, writes + 1)), (), frozenset({"effects"}), unseen
    )


def judge(scenario: ScenarioResult) -> tuple[invariants.Verdict, ...]:
    """Every registered invariant's verdict on the scenario's history."""
    history = scenario_history(scenario)
    return tuple(invariant.judge(history) for invariant in invariants.registered())


def keep(scenario: ScenarioResult, folder: Path) -> Path:
    """Write the scenario's history into its kept folder (FILE), whole; its path."""
    path = folder / FILE
    write(scenario_history(scenario), path)
    return path


__all__ = ["FILE", "counted", "judge", "keep", "scenario_history"]
