"""Approvals for real (spec/CONVERSATIONS.md 2 and 3): the gate of a composed design, where an approval is kept.

A gated write waits for a person, scripted here: the request goes out (crash point
`approval requested <call>`), the person approves at once (`approved <call>`), and the
approval is kept as the design's `approval_storage` says: in memory and saved with the
checkpoint (`durable`, Save(approval <call>)), in memory only (`memory`: a start never loads
one), or by the approval service (`service`: the file `approvals.json` beside the checkpoint,
a file of the world, written at once). `approval_binding` says which approvals match a gate:
the call's (`call-and-args`, `call`: the scripted model never changes a call's arguments, so
the two match the same approvals here) or any (`none`). Under `resume_granularity = "node"`
the approval resumes its node from the start: the calls before it in its node lose their
results and markers, and the loop body sends them again first.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

from crashsweep.realsweep.probe.crashpoint import count
from crashsweep.spec.job import Call
from crashsweep.spec.policy import Policy

SERVICE_FILE = "approvals.json"
"""The approval service's store (`approval_storage = "service"`): {run: [approved call, ...]}."""


class Replan(Exception):
    """The approval resumed its node from the start: the loop body picks the next call again."""


def forget(memory: dict[str, Any]) -> None:
    """What a start loads under `approval_storage = "memory"`: no approval (no save wrote one)."""
    for turn in memory.get("turns", []):
        turn.pop("approved", None)


def gate(loop: Any, turn: dict[str, Any], call: Call, policy: Policy) -> None:
    """Pass `call`'s gate: ask the person unless an approval the loop has matches; Replan after a node's resume."""
    if not call.approval or _held(loop, call, policy):
        return
    count("approvals")
    loop.point(f"approval requested {call.id}")
    if policy.approval_storage == "service":
        _keep_at_service(loop.workdir, loop.memory["run"], call.id)
    else:
        turn.setdefault("approved", []).append(call.id)
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


def _held(loop: Any, call: Call, policy: Policy) -> bool:
    """Whether an approval the loop has matches `call` under the design's binding."""
    if policy.approval_storage == "service":
        approved = _service(loop.workdir).get(loop.memory["run"], [])
    else:
        approved = [c for t in loop.memory["turns"] for c in t.get("approved", [])]
    return bool(approved) if policy.approval_binding == "none" else call.id in approved


def _service(workdir: Path) -> dict[str, list[str]]:
    path = workdir / SERVICE_FILE
    if not path.exists():
        return {}
    kept: dict[str, list[str]] = json.loads(path.read_text(encoding="utf-8"))
    return kept


def _keep_at_service(workdir: Path, run: str, call: str) -> None:
    """The service keeps the approval at once (temp file, then rename: it is whole or absent)."""
    kept = _service(workdir)
    kept.setdefault(run, []).append(call)
    tmp = workdir / f"{SERVICE_FILE}.tmp"
    tmp.write_text(json.dumps(kept, sort_keys=True), encoding="utf-8")
    os.replace(tmp, workdir / SERVICE_FILE)
