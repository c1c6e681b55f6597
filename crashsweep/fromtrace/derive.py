"""What one recorded run says: its job, its design's fields (each with the spans it was read from), its points.

The rules are spec/FROM_TRACE.md section 3. A field is *decided* when the run shows it (a save
span of each kind the value makes, a key on a tool span, a lock span); a field one uninterrupted
run cannot show (the ladder, which settles a marked call only after a crash; where an approval
not saved with the checkpoint is kept; what a restart does to its conversation) is *not decided*:
the draft takes the value named in the rules, and its comment lists the choices. A run that
records no save spans at all traces no saves: every save field is then not decided.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from crashsweep.fromtrace.recording import Asked, Recording
from crashsweep.spec.job import Arg, Call, Job

TRACKER_TOOLS = {"create_issue": True, "comment": True, "search_issues": False}
"""The tracker's tools (crashsweep's scripted tools) and whether each writes: a job's call on one has no args."""
FULL_LADDER = ("rerun-when-harmless", "lookup", "person")


@dataclass(frozen=True, slots=True)
class Field:
    """One design field: its value, whether the run decided it, why (citing spans), the choices when it did not."""

    name: str
    value: object
    decided: bool
    why: str
    choices: tuple[object, ...] = ()


def cite(places: Iterable[str], what: str) -> str:
    """`what` with at most three places it was read from: span IDs, or a store's rows and events."""
    ids = list(dict.fromkeys(places))
    shown = ", ".join(ids[:3]) + (f" and {len(ids) - 3} more" if len(ids) > 3 else "")
    return f"{what} (from {shown})" if ids else what


def job(recording: Recording) -> Job:
    """The job the run played: each reply with calls a turn, each call's tool, whether it writes, whether gated."""
    turns = []
    for reply in recording.replies:
        if reply.calls:
            turns.append(tuple(_call(recording, asked) for asked in reply.calls))
    return Job(recording.job, tuple(turns))


def writes(recording: Recording, asked: Asked) -> tuple[bool, bool, str]:
    """(writes, decided, why) for one call: a tracker tool's, a key sent, a marker saved, else assumed."""
    if asked.tool in TRACKER_TOOLS:
        return TRACKER_TOOLS[asked.tool], True, f"{asked.tool} is the tracker's"
    ran = recording.ran(asked.id)
    if ran is not None and ran.key:
        return True, True, cite([ran.span], "its tool span sent an idempotency key")
    marker = [m.span for m in recording.named("save", f"marker {asked.id}")]
    if marker:
        return True, True, cite(marker, "a marker was saved before it")
    return True, False, "nothing in the trace says whether it writes: true assumes the worst"


def gated(recording: Recording, asked: Asked) -> list[str]:
    """The spans that show a person approving the call: an approval span, or a deferral (pydantic-ai)."""
    spans = [m.span for m in recording.named("approval", asked.id)]
    spans += [t.span for t in recording.runs_of(asked.id) if t.deferred]
    return spans


def _call(recording: Recording, asked: Asked) -> Call:
    args: tuple[tuple[str, Arg], ...] | None = None
    if asked.tool not in TRACKER_TOOLS:
        args = scalar_args(asked.arguments)
    return Call(asked.id, asked.tool, writes(recording, asked)[0], approval=bool(gated(recording, asked)), args=args)


def scalar_args(arguments: object) -> tuple[tuple[str, Arg], ...] | None:
    """A call's arguments as a job's `args` table when every value is a scalar; else None (the cassette has them)."""
    if not isinstance(arguments, dict):
        return None
    if not all(isinstance(v, str | int | float | bool) for v in arguments.values()):
        return None
    return tuple((str(k), v) for k, v in arguments.items())


def points(recording: Recording) -> tuple[str, ...]:
    """The crash points passed, as `NAME#PASS` in order (the names `--crash` and `--list-points` use)."""
    seen: dict[str, int] = {}
    named = []
    for name in recording.points:
        seen[name] = seen.get(name, 0) + 1
        named.append(f"{name}#{seen[name]}")
    return tuple(named)
