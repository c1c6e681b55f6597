"""The process's instructions: what a loop does between two crash points, as frozen values.

A process's program counter is the tuple of instructions it has still to run (its
continuation). Because instructions are plain frozen values, a process in the middle of a
save or a send is as hashable and comparable as any other state, and the explorer can merge
two histories that reach the same place. `crashsweep.spec.process` runs them; designs only arrange them.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TypeAlias

CHECKPOINT = "checkpoint"
LOCK = "lock"


@dataclass(frozen=True, slots=True)
class Point:
    """A crash point: the process stops here, and a crash may strike before it goes on."""

    name: str


@dataclass(frozen=True, slots=True)
class WriteTmp:
    """Write the whole in-memory state (or the lock) to the temp file beside `file`."""

    file: str = CHECKPOINT


@dataclass(frozen=True, slots=True)
class Rename:
    """Rename the temp file over `file`: from now on its content is durable."""

    file: str = CHECKPOINT


@dataclass(frozen=True, slots=True)
class CallModel:
    """Ask the scripted model; run `after_reply` after a reply with calls, else `after_final`."""

    after_reply: tuple[Op, ...]
    after_final: tuple[Op, ...]


@dataclass(frozen=True, slots=True)
class AppendTurn:
    """Append the model's reply (the next tool turn of the script) to memory, its call IDs suffixed by `ids`."""

    ids: str = ""
    args: int = 1
    """The version of the arguments the reply's calls carry (`changed-args`, CONVERSATIONS.md 2.3)."""


@dataclass(frozen=True, slots=True)
class MarkDone:
    """Mark the run done in memory."""


@dataclass(frozen=True, slots=True)
class Mark:
    """Record an attempt marker for `call` in memory (durable only once saved)."""

    call: str


@dataclass(frozen=True, slots=True)
class Send:
    """Send `call` to the tracker, with its idempotency key when `keyed`.

    `rerun` marks a send made on rung 1 of the resolution ladder, so that it can be counted.
    `key_as` derives the key from another call ID (a retry the model issued under a new ID);
    the record still belongs to `call`, the effect the job asked for.
    """

    call: str
    keyed: bool
    rerun: bool = False
    key_as: str | None = None


@dataclass(frozen=True, slots=True)
class Store:
    """Put `answer` in memory as the result of `call`.

    `again` is the request that brought a write's answer, as a retry layer would send it again
    (spec/RETRIES.md 1.2); None for a read's answer or one the loop found without sending.
    """

    call: str
    answer: str
    again: Send | None = None


@dataclass(frozen=True, slots=True)
class Lookup:
    """Rung 2 of the ladder: ask the tracker whether `call` of this run happened."""

    call: str
    keyed: bool


@dataclass(frozen=True, slots=True)
class AskPerson:
    """Rung 3 of the ladder: ask a person whether `call` of this run happened (`wrong`: the answer is wrong)."""

    call: str
    keyed: bool
    wrong: bool = False


@dataclass(frozen=True, slots=True)
class Pause:
    """The process waits at `name` for the environment's choice (a fault or not); no crash strikes here."""

    name: str


@dataclass(frozen=True, slots=True)
class Gate:
    """The approval gate of `call` (CONVERSATIONS.md 2): passes when the loop has a matching approval, else asks."""

    call: str


@dataclass(frozen=True, slots=True)
class Replan:
    """Drop the rest of the plan: the loop body runs again from memory (a node re-run, CONVERSATIONS.md 3)."""


@dataclass(frozen=True, slots=True)
class Reload:
    """At a start: what `transcript_on_restart` does with a loaded turn lacking results (CONVERSATIONS.md 1)."""

    how: str


@dataclass(frozen=True, slots=True)
class Stuck:
    """The process can never go on (`why`): it offers no move, and its scenario never finishes (CONVERSATIONS.md 4)."""

    why: str


REFUSED = "the provider refuses the conversation: "
"""How the reason of a process stuck on a malformed conversation begins (CONVERSATIONS.md 1 and 7); the other
way to be stuck, a consumed approval (section 5), sends no request."""


def refused(why: str | None) -> bool:
    """Whether a stuck process's reason is the provider's refusal of the conversation it was sent."""
    return why is not None and why.startswith(REFUSED)


@dataclass(frozen=True, slots=True)
class RequestApproval:
    """Ask a person to approve `call` before it is sent."""

    call: str


@dataclass(frozen=True, slots=True)
class Approve:
    """The person approved `call`: note it in memory (durable once saved)."""

    call: str


@dataclass(frozen=True, slots=True)
class Failed:
    """The tool returned an error for `call`: a retry layer catches it, or it is noted in memory (no result).

    `again` is the request that failed, as a layer of scope `call` sends it again (spec/RETRIES.md).
    """

    call: str
    again: Send | None = None


@dataclass(frozen=True, slots=True)
class RetryViaModel:
    """Hand `call`'s error to the model, which retries it under a new call ID (keyed when `keyed`)."""

    call: str
    keyed: bool = True


@dataclass(frozen=True, slots=True)
class CompleteTurn:
    """Mark the last turn complete in memory."""


@dataclass(frozen=True, slots=True)
class Exit:
    """The process ends normally: the run is finished."""


# Durability (spec/FAULTS.md, power loss): the fsyncs a design's fsync policy adds to a save.


@dataclass(frozen=True, slots=True)
class FsyncTmp:
    """fsync the temp file beside the checkpoint: its content is durable from here on."""


@dataclass(frozen=True, slots=True)
class FsyncDir:
    """fsync the checkpoint's directory: the rename just made is durable from here on."""


# --- A second live process (spec/FAULTS.md section 7): the locks that may keep it out ---


@dataclass(frozen=True, slots=True)
class TakeOsLock:
    """Take the OS lock on the run (`os-lock`): refused while another live process holds it."""


@dataclass(frozen=True, slots=True)
class TakeLease:
    """Take the run's lease (`lease+fencing`): the next fencing token, which the tracker and the disk learn."""


@dataclass(frozen=True, slots=True)
class Stop(Exit):
    """The process stops without finishing the run: refused by a lock or a fencing token, or a failed rename."""

    why: str = ""


Op: TypeAlias = (
    Point
    | WriteTmp
    | Rename
    | CallModel
    | AppendTurn
    | MarkDone
    | Mark
    | Send
    | Store
    | Lookup
    | AskPerson
    | Pause
    | RequestApproval
    | Approve
    | Gate
    | Replan
    | Reload
    | Stuck
    | Failed
    | RetryViaModel
    | CompleteTurn
    | Exit
    | FsyncTmp
    | FsyncDir
    | TakeOsLock
    | TakeLease
)
Ops: TypeAlias = tuple[Op, ...]
