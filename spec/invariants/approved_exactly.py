"""approved-exactly: every gated write applied under a matching approval, each redeemed once (CONVERSATIONS.md 2).

Over a History: each `effect` of a gated call carries the approval it was applied under (its
entry `call@version#number`, spec/entries.py) and its arguments' version (`args_digest` "vN");
one with no approval, one approved for another call or other arguments, and an approval
carried by two effects each break it. The model keeps the same facts as the world's history of
approvals (spec/approval.py), which its check reads.
"""

from __future__ import annotations

from crashsweep.spec import approval
from crashsweep.spec.entries import parts
from crashsweep.spec.history import History
from crashsweep.spec.invariants.common import job_gated
from crashsweep.spec.invariants.value import Invariant, ModelCheck, Violation
from crashsweep.spec.job import Job
from crashsweep.spec.world import World

NAME = "approved-exactly"
WITNESS = "some approved write applied"


def version(digest: str) -> int:
    """The arguments' version of an `args_digest` "vN" (1 when the producer gave none)."""
    return int(digest[1:]) if digest.startswith("v") and digest[1:].isdigit() else 1


def check(history: History) -> Violation | None:
    """Unapproved, misapproved and twice-redeemed effects of gated calls, in the order applied."""
    gated = set(history.gated)
    found: list[str] = []
    evidence = []
    seen_numbers: set[int] = set()
    for event in history.events:
        if event.f != "effect" or event.type != "ok" or event.call not in gated:
            continue
        sent = f"{event.call}@{version(event.args_digest)}"
        if not event.approval:
            found.append(f"{sent} was applied with no approval that matches it")
            evidence.append(event)
            continue
        try:
            approved, approved_version, number = parts(event.approval)
        except ValueError:  # a recorded approval that is no entry call@version#number matches nothing
            found.append(f"{sent} was applied under {event.approval!r}, which names no approval")
            evidence.append(event)
            continue
        if (approved, approved_version) != (event.call, version(event.args_digest)):
            found.append(
                f"{sent} was applied under approval #{number}, given for {approved} with arguments v{approved_version}"
            )
            evidence.append(event)
        if number in seen_numbers:
            found.append(f"approval #{number} was redeemed twice")
            evidence.append(event)
        seen_numbers.add(number)
    return Violation(NAME, "; ".join(found), tuple(evidence)) if found else None


def seen(history: History) -> bool:
    """Some gated write has an effect (or the job gates none)."""
    gated = set(history.gated)
    return not gated or any(e.f == "effect" and e.type == "ok" and e.call in gated for e in history.events)


def holds(world: World, job: Job) -> bool:
    """Every gated write's record was applied under a matching approval, each redeemed at most once."""
    return not job_gated(job) or not approval.broken(world, job)


def approved_write(world: World, job: Job) -> bool:
    """Some gated write has a record (approved-exactly had something to check)."""
    count = world.tracker.count
    gated = job_gated(job)
    return not gated or any(count(call) for call in gated)


def explain(world: World, job: Job) -> str:
    """What breaks it, in the order applied."""
    return "; ".join(approval.broken(world, job))


INVARIANT = Invariant(
    NAME,
    "always",
    WITNESS,
    ("effects", "approvals"),
    "every gated write applied under a matching approval, each redeemed once",
    check,
    seen,
    ModelCheck(holds, approved_write, explain),
)
