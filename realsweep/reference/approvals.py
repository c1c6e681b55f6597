"""Approvals for real (spec/CONVERSATIONS.md 2 and 3): the gate of a composed design, where an approval is kept.

A gated write waits for a person, scripted here: the request goes out (crash point
`approval requested <call>`), the person approves at once (`approved <call>`). Every approval
the person gives is numbered in the world's ledger, `approvals.json` beside the checkpoint (a
file of the world, written at once: the person's record, which no crash takes back), and the
loop keeps the entry `call@version#number` (spec/entries.py) as the design's
`approval_storage` says: in memory and saved with the checkpoint (`durable`, Save(approval
<call>)), in memory only (`memory`: a start never loads one), or not at all (`service`: the
approval service is the ledger, read for the run's approvals). `approval_binding` says which
approvals match a gate: the call's with the arguments of the version its turn holds
(`call-and-args`: 1, or later after `changed-args`), the call's (`call`) or any (`none`).
Every gated write is sent under the latest approval the loop has that matches it (the
tracker keeps it on the record it applies: `redeeming`), and `broken` reads the records of
the final world for `approved-exactly`. Under `resume_granularity = "node"`
the approval resumes its node from the start: the calls before it in its node lose their
results and markers, and the loop body sends them again first. Under `approval_consume =
"before-resume"` the person's answer consumes its request at once (the ledger entry is the
mark, `consumed`): a gate that must ask for a consumed request leaves the process stuck
(StuckError, CONVERSATIONS.md 5); under `after-resume-started` the mark goes with the approval
the loop keeps, so a gate never meets it, and nothing is checked. Traced (tracing.py), the
question and its answer are the span `approval <call>`.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from crashsweep.realsweep.probe.crashpoint import count
from crashsweep.realsweep.reference import tracing
from crashsweep.realsweep.reference.parts import StuckError, record_version
from crashsweep.spec.entries import entry, parts
from crashsweep.spec.job import Call, Job
from crashsweep.spec.policy import Policy

LEDGER_FILE = "approvals.json"
"""The person's approvals, numbered in the order given: [[run, entry], ...]; the service's store too."""


class Replan(Exception):
    """The approval resumed its node from the start: the loop body picks the next call again."""


def forget(memory: dict[str, Any]) -> None:
    """What a start loads under `approval_storage = "memory"`: no approval (no save wrote one)."""
    for turn in memory.get("turns", []):
        turn.pop("approved", None)


def gate(loop: Any, turn: dict[str, Any], call: Call, policy: Policy) -> None:
    """Pass `call`'s gate: ask the person unless an approval the loop has matches; Replan after a node's resume.

    StuckError when it must ask for a request the person's answer consumed already
    (`approval_consume = "before-resume"`): the person cannot answer it again.
    """
    if not call.approval or latest(loop, call, policy) is not None:
        return
    if policy.approval_consume == "before-resume" and consumed(loop, call):
        raise StuckError(f"the approval of {call.id} (v{_version(loop)}) was consumed before the resumed run kept it")
    count("approvals")
    with tracing.approval(call.id):
        loop.point(f"approval requested {call.id}")
        given = _ledger(loop.workdir)
        kept = entry(call.id, _version(loop), len(given) + 1)
        _write_ledger(loop.workdir, [*given, [loop.memory["run"], kept]])  # the person approves: it is given
        if policy.approval_storage != "service":
            turn.setdefault("approved", []).append(kept)
        before = loop.job.node_before(call.id) if policy.resume_granularity == "node" else ()
        for other in before:  # the approval resumes the node from its start: its earlier calls run again
            turn["results"].pop(other, None)
            if other in turn["marked"]:
                turn["marked"].remove(other)
        loop.point(f"approved {call.id}")
    if policy.approval_storage == "durable":
        loop.save(f"approval {call.id}")
    if before:
        raise Replan(call.id)


def latest(loop: Any, call: Call, policy: Policy) -> str | None:
    """The latest approval the loop has that matches `call` under the design's binding, or None."""
    if policy.approval_storage == "service":
        held = [kept for run, kept in _ledger(loop.workdir) if run == loop.memory["run"]]
    else:
        held = [kept for turn in loop.memory["turns"] for kept in turn.get("approved", [])]
    now = _version(loop)
    for kept in reversed(held):
        approved, version, _ = parts(kept)
        if policy.approval_binding == "none" or (
            approved == call.id and (policy.approval_binding == "call" or version == now)
        ):
            return kept
    return None


def consumed(loop: Any, call: Call) -> bool:
    """Whether the person answered the request for `call` with its current arguments in this run already.

    Under `approval_consume = "before-resume"` the answer consumes its request the moment it
    arrives (spec/CONVERSATIONS.md 5): the ledger entry, written at the answer before the point
    `approved <call>`, in a file of the world that no crash or power cut takes back, is the mark.
    """
    wanted = (call.id, _version(loop))
    return any(run == loop.memory["run"] and parts(kept)[:2] == wanted for run, kept in _ledger(loop.workdir))


def _version(loop: Any) -> int:
    """The version of the arguments the last turn's calls carry (1 unless `changed-args` struck)."""
    turns = loop.memory["turns"]
    return int(turns[-1].get("args", 1)) if turns else 1


def redeeming(loop: Any, policy: Policy) -> None:
    """Send every gated write of `loop` under the latest matching approval it has (none: the record says so)."""
    loop.approval_of = lambda call: latest(loop, call, policy) if call.approval else None


def broken(records: Iterable[dict[str, Any]], job: Job) -> tuple[str, ...]:
    """What breaks `approved-exactly` in the tracker's records, in words (empty: it holds).

    A gated write's record kept no approval (unapproved), one of another call or other
    arguments (misapproved), or one that another record kept too (redeemed twice).
    """
    gated = set(job.gated)
    found: list[str] = []
    seen: set[int] = set()
    for record in records:
        if record["call"] not in gated:
            continue
        sent = f"{record['call']}@{record_version(record)}"
        if record.get("approval") is None:
            found.append(f"{sent} was applied with no approval that matches it")
            continue
        approved, version, number = parts(record["approval"])
        if (approved, version) != (record["call"], record_version(record)):
            found.append(f"{sent} was applied under approval #{number}, given for {approved} with arguments v{version}")
        if number in seen:
            found.append(f"approval #{number} was redeemed twice")
        seen.add(number)
    return tuple(found)


def _ledger(workdir: Path) -> list[list[str]]:
    path = workdir / LEDGER_FILE
    if not path.exists():
        return []
    given: list[list[str]] = json.loads(path.read_text(encoding="utf-8"))
    return given


def _write_ledger(workdir: Path, given: list[list[str]]) -> None:
    """The ledger, whole or absent (temp file, then rename)."""
    tmp = workdir / f"{LEDGER_FILE}.tmp"
    tmp.write_text(json.dumps(given), encoding="utf-8")
    os.replace(tmp, workdir / LEDGER_FILE)
