"""Approvals as values (spec/CONVERSATIONS.md 2): the gate, what an approval matches, redeeming.

A write marked `approval = true` waits for a person before it is sent. The request goes out
(crash point `approval requested <call>`: the person is deciding), the person approves the
call with its current arguments (`approved <call>`), and, under `approval_storage =
"durable"`, Save(approval <call>) makes it durable. What the loop keeps is an entry
`call@version#number`: the call, the version of its arguments, and the approval's number in
the world (the n-th the person gave); `approval_binding` says which part a later gate matches.

The person's approvals and the tracker's redemptions are the environment's history, kept in
`World.struck` (which survives crashes): `approval N RUN CALL@V` for each approval given
(under `service` the loop finds its approvals there), `redeemed N` for each record a gated
write had applied against approval N, `unapproved CALL@V` for one applied with no matching
approval, `misapproved CALL@V under ENTRY` for one applied against an approval of another
call or other arguments. `approved-exactly` reads them (spec/invariants/approved_exactly.py).
"""

from __future__ import annotations

from crashsweep.spec.entries import entry, parts
from crashsweep.spec.job import Call, Job
from crashsweep.spec.ops import Approve, Gate, Ops, Point, Replan
from crashsweep.spec.save import save
from crashsweep.spec.world import Snapshot, World, make_turn

GIVEN = "approval "
REDEEMED = "redeemed "
UNAPPROVED = "unapproved "
MISAPPROVED = "misapproved "


def gate(call: Call, memory: Snapshot) -> Ops:
    """The gate before `call` is sent: the process decides, from memory and the world, whether to ask."""
    return (Gate(call.id),) if call.approval else ()


def held(world: World, memory: Snapshot, storage: str) -> tuple[str, ...]:
    """The approvals the loop has, oldest first: in memory, or at the service for this run."""
    if storage == "service":
        found = []
        for event in world.struck:
            if event.startswith(GIVEN):
                number, run, kept = event[len(GIVEN) :].split(" ", 2)
                if run == memory.run:
                    call, version, _ = parts(kept + "#0")
                    found.append(entry(call, version, int(number)))
        return tuple(found)
    return tuple(kept for turn in memory.turns for kept in turn.approved)


def matching(approvals: tuple[str, ...], call: str, version: int, binding: str) -> str | None:
    """The latest approval that matches `call` with arguments of `version` under `binding`, or None."""
    for kept in reversed(approvals):
        approved, approved_version, _ = parts(kept)
        if binding == "none" or (approved == call and (binding == "call" or approved_version == version)):
            return kept
    return None


def version(memory: Snapshot) -> int:
    """The version of the arguments the last turn's calls carry."""
    return 1 if memory.last is None else memory.last.args


def ask_unless_held(call: str, world: World, memory: Snapshot, binding: str, storage: str) -> bool:
    """Whether the gate of `call` must ask the person: no approval the loop has matches it."""
    return matching(held(world, memory, storage), call, version(memory), binding) is None


def request(call: str, job: Job, storage: str, granularity: str) -> Ops:
    """After the request goes out: the person decides, approves, the approval save (durable), a node re-run."""
    after: Ops = (Point(f"approval requested {call}"), Approve(call), Point(f"approved {call}"))
    if storage == "durable":
        after = (*after, *save(f"approval {call}"))
    if granularity == "node" and job.node_before(call):
        after = (*after, Replan())
    return after


def forgotten(memory: Snapshot) -> Snapshot:
    """`memory` as a start loads it under `approval_storage = "memory"`: no approval was ever saved."""
    if not any(turn.approved for turn in memory.turns):
        return memory
    turns = tuple(
        make_turn(t.index, t.results, t.marked, t.complete, (), t.failed, t.ids, t.args, t.trimmed)
        for t in memory.turns
    )
    return Snapshot(memory.run, memory.done, turns)


def consumed(call: str, world: World, memory: Snapshot) -> bool:
    """Whether the request for `call` with its current arguments in this run was answered already.

    Every answer the person gave is in the world's history (`approval N RUN CALL@V`); under
    `approval_consume = "before-resume"` an answer consumed its request at once (CONVERSATIONS.md 5).
    """
    wanted = f" {memory.run} {call}@{version(memory)}"
    return any(event.startswith(GIVEN) and event.endswith(wanted) for event in world.struck)


def consumed_why(call: str, memory: Snapshot) -> str:
    """Why a gate whose request was consumed is stuck (CONVERSATIONS.md 5)."""
    return f"the approval of {call} (v{version(memory)}) was consumed before the resumed run kept it"


def given(world: World) -> int:
    """How many approvals the person has given in this world."""
    return sum(1 for event in world.struck if event.startswith(GIVEN))


def approve(call: str, world: World, memory: Snapshot, storage: str) -> tuple[tuple[str, ...], Snapshot]:
    """The person approves `call` with its current arguments: the world's history, and memory (unless `service`)."""
    number = given(world) + 1
    now = version(memory)
    struck = (*world.struck, f"{GIVEN}{number} {memory.run} {call}@{now}")
    if storage == "service":
        return struck, memory
    assert memory.last is not None
    return struck, memory.with_last(memory.last.with_approval(entry(call, now, number)))


def redeem(call: str, world: World, memory: Snapshot, binding: str, storage: str) -> tuple[str, ...]:
    """The history after the tracker applied a record of gated `call`: redeemed, unapproved or misapproved."""
    now = version(memory)
    kept = matching(held(world, memory, storage), call, now, binding)
    if kept is None:
        return (*world.struck, f"{UNAPPROVED}{call}@{now}")
    approved, approved_version, number = parts(kept)
    redeemed = f"{REDEEMED}{number}"
    if approved != call or approved_version != now:
        return (*world.struck, f"{MISAPPROVED}{call}@{now} under {kept}", redeemed)
    return (*world.struck, redeemed)


def broken(world: World, job: Job) -> tuple[str, ...]:
    """What breaks `approved-exactly` in `world`, in words (empty: it holds)."""
    if not job.gated:
        return ()
    found: list[str] = []
    seen: set[str] = set()
    for event in world.struck:
        if event.startswith(UNAPPROVED):
            found.append(f"{event[len(UNAPPROVED) :]} was applied with no approval that matches it")
        elif event.startswith(MISAPPROVED):
            what, _, kept = event[len(MISAPPROVED) :].partition(" under ")
            call, version_, number = parts(kept)
            found.append(f"{what} was applied under approval #{number}, given for {call} with arguments v{version_}")
        elif event.startswith(REDEEMED):
            redeemed = event[len(REDEEMED) :]
            if redeemed in seen:
                found.append(f"approval #{redeemed} was redeemed twice")
            seen.add(redeemed)
    return tuple(found)
