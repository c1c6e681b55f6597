"""The policy record: a loop design as data, one value per decision the loop makes.

Every built-in design is a point in one small space of policies: when the loop saves, whether
it marks writes and keys them, whether it takes a lock, how it settles a call whose outcome it
does not know, and what it does when a tool fails. A `Policy` holds one value per field; the
rules of each value are in spec/POLICIES.md. Combinations that mean nothing are refused with a
`PolicyError` whose one-line message names the field and says why. `all_policies` enumerates
every valid combination in a fixed order, so the whole design space can be explored.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from dataclasses import dataclass, fields, replace
from itertools import permutations, product
from pathlib import Path
from typing import Literal, TypeAlias, get_args

from crashsweep.spec import files
from crashsweep.spec.job import Job
from crashsweep.spec.retries import RetryError, Stack, check_stack, parse_stack, stack_label

ReplySave: TypeAlias = Literal["before-first-send", "never"]
ResultSaves: TypeAlias = Literal["each-call", "writes-only", "whole-turn", "none"]
Markers: TypeAlias = Literal["before-writes", "none"]
Keys: TypeAlias = Literal["run-call", "none"]
Lock: TypeAlias = Literal["file", "none", "os-lock", "lease+fencing"]
Rung: TypeAlias = Literal["rerun-when-harmless", "lookup", "person"]
OnToolError: TypeAlias = Literal["retry", "model"]

TranscriptOnRestart: TypeAlias = Literal["resume-pending", "repair", "as-is"]
ApprovalBinding: TypeAlias = Literal["call-and-args", "call", "none"]
ApprovalStorage: TypeAlias = Literal["durable", "memory", "service"]
ResumeGranularity: TypeAlias = Literal["step", "node"]
ApprovalConsume: TypeAlias = Literal["after-resume-started", "before-resume"]
PersistGranularity: TypeAlias = Literal["per-call", "per-batch"]
TranscriptRepair: TypeAlias = Literal["none", "add-missing-results", "both-directions"]

Fsync: TypeAlias = Literal["none", "no-dir-fsync", "full"]
Unreadable: TypeAlias = Literal["ask-person", "fresh-run"]

RUNGS: tuple[Rung, ...] = get_args(Rung)
# --- Locks against a second live process (POLICIES.md 1.6, FAULTS.md section 7) ---
CRASH_LOCKS: tuple[Lock, ...] = ("file", "none")
"""The lock values `all_policies` enumerates by default: the two a crash alone can tell apart."""
PAUSE_LOCKS: tuple[Lock, ...] = get_args(Lock)
"""Every lock value, enumerated when a second live process is possible (`--faults pause`)."""
CHOICES: dict[str, tuple[object, ...]] = {
    "startup_save": (True, False),
    "reply_save": get_args(ReplySave),
    "result_saves": get_args(ResultSaves),
    "markers": get_args(Markers),
    "keys": get_args(Keys),
    "lock": get_args(Lock),
    "ladder": RUNGS,
    "on_tool_error": get_args(OnToolError),
}
"""Each field's allowed values (for `ladder`: the rungs a ladder is made of, in any order)."""
DURABILITY: dict[str, tuple[object, ...]] = {"fsync": get_args(Fsync), "unreadable": get_args(Unreadable)}
"""The two fields that matter only under power loss (spec/FAULTS.md 6); enumerated only with it."""
CONVERSATION: dict[str, tuple[object, ...]] = {
    "transcript_on_restart": get_args(TranscriptOnRestart),
    "approval_binding": get_args(ApprovalBinding),
    "approval_storage": get_args(ApprovalStorage),
    "resume_granularity": get_args(ResumeGranularity),
    "approval_consume": get_args(ApprovalConsume),
    "persist_granularity": get_args(PersistGranularity),
    "transcript_repair": get_args(TranscriptRepair),
}
"""The saved conversation, approvals and a node's resume (spec/CONVERSATIONS.md); each field's
first value is what every design did before, and the design space enumerates only it unless asked."""
OPTIONAL: tuple[str, ...] = (*DURABILITY, "retries", *CONVERSATION)
"""Fields a design file may leave out, and that a policy at their default is written without."""


class PolicyError(ValueError):
    """A policy that cannot be used; the message names the field and says why."""


@dataclass(frozen=True, slots=True, kw_only=True)
class Policy:
    """One loop design as data (field rules: spec/POLICIES.md).

    startup_save: Save(start) right after a fresh start, making the new run ID durable.
    reply_save: "before-first-send" saves the model's reply (its call IDs) before any call
        goes out; "never" leaves it in memory until the next save.
    result_saves: "each-call" saves after every call's result, "writes-only" after a write's
        result only, "whole-turn" saves only once the turn is complete (Save(turn k)),
        "none" not even then (the turn reaches disk with the next save).
    markers: "before-writes" records and saves an attempt marker before each write is sent.
    keys: "run-call" sends every call with the idempotency key Key(run, call).
    lock: "file" takes the run's lock file at every start, before anything else; "os-lock" an
        OS lock held while the process lives (a second start is refused); "lease+fencing" a
        lease whose fencing token the tracker and the disk check (spec/FAULTS.md section 7).
    ladder: the rungs tried in order on a marked call without a result: "rerun-when-harmless"
        (a read, or a keyed write the tracker honours), "lookup" (the tracker offers one),
        "person" (always applies); a sub-sequence of that order ending with "person".
        Empty exactly when markers is "none".
    on_tool_error: "retry" settles a failed call as after a crash (on the ladder if marked,
        else sent again under the same ID and key); "model" hands the error to the model,
        which retries the same effect under a new call ID.
    fsync: the checkpoint save's fsyncs: "none" (the seed's save), "no-dir-fsync" (the temp
        file's content), "full" (the content, then the directory after the rename).
    unreadable: what a start that finds the checkpoint unreadable does: "ask-person" (refuse
        to start) or "fresh-run" (begin a new run). Only a power cut under "none" makes one.
    retries: the retry layers around the loop, innermost first (spec/RETRIES.md); none by default.
    transcript_on_restart: what a start does with a loaded turn whose calls lack a result:
        "resume-pending" settles them first, "repair" gives each the result "outcome unknown",
        "as-is" sends the conversation as it is (spec/CONVERSATIONS.md 1).
    approval_binding: what an approval matches: "call-and-args", "call", "none" (any gated call).
    approval_storage: where it is kept: "durable" (saved with the checkpoint), "memory", or
        "service" (outside the process, at once) (spec/CONVERSATIONS.md 2).
    resume_granularity: "step", or "node": an approval re-runs the calls before it in its node (3).
    approval_consume: when the person's request is consumed: "after-resume-started" (with the
        approval the resumed run keeps) or "before-resume" (at the answer, before it is kept) (5).
    persist_granularity: "per-call", or "per-batch": a start that loads a reply's calls half done
        runs them all again (6).
    transcript_repair: what a start repairs in the conversation it loads: "none",
        "add-missing-results" (`repair`'s results for calls without one), "both-directions" (and
        drops results whose call was trimmed away) (7).
    """

    startup_save: bool
    reply_save: ReplySave
    result_saves: ResultSaves
    markers: Markers
    keys: Keys
    lock: Lock
    ladder: tuple[Rung, ...] = ()
    on_tool_error: OnToolError = "retry"
    fsync: Fsync = "none"
    unreadable: Unreadable = "ask-person"
    retries: Stack = ()
    transcript_on_restart: TranscriptOnRestart = "resume-pending"
    approval_binding: ApprovalBinding = "call-and-args"
    approval_storage: ApprovalStorage = "durable"
    resume_granularity: ResumeGranularity = "step"
    approval_consume: ApprovalConsume = "after-resume-started"
    persist_granularity: PersistGranularity = "per-call"
    transcript_repair: TranscriptRepair = "none"

    def __post_init__(self) -> None:
        for name in CHOICES:
            _check_value(name, getattr(self, name))
        for name, allowed in CONVERSATION.items():
            value = getattr(self, name)
            if not isinstance(value, str) or value not in allowed:
                raise PolicyError(f"{name}: expected one of {_quoted(allowed)}, not {value!r}")
        _check_durability(self)
        try:
            check_stack(self.retries)
        except RetryError as error:
            raise PolicyError(str(error)) from None
        reason = _meaningless(self)
        if reason is not None:
            raise PolicyError(reason)

    @property
    def keyed(self) -> bool:
        """Whether calls carry Key(run, call)."""
        return self.keys == "run-call"

    def as_mapping(self) -> dict[str, object]:
        """The record as design-file values (the ladder as a list), in field order."""
        mapping: dict[str, object] = {}
        for field in fields(self):
            value = getattr(self, field.name)
            if field.name in OPTIONAL and value == field.default:
                continue  # the seed's durability, no retries: left out, so every design file and figure stays as it was
            if field.name == "retries":
                mapping[field.name] = [layer.as_mapping() for layer in self.retries]
                continue
            mapping[field.name] = list(value) if isinstance(value, tuple) else value
        return mapping

    @property
    def label(self) -> str:
        """A compact one-line name, e.g. `start reply each-call markers keys lock [lookup>person] retry`."""
        parts = [
            "start" if self.startup_save else "no-start",
            "reply" if self.reply_save == "before-first-send" else "no-reply",
            self.result_saves,
            "markers" if self.markers == "before-writes" else "no-markers",
            "keys" if self.keyed else "no-keys",
            _LOCK_LABELS[self.lock],
        ]
        if self.ladder:
            parts.append("[" + ">".join(self.ladder) + "]")
        parts.append(f"error-to-{self.on_tool_error}" if self.on_tool_error == "model" else "error-retry")
        if self.fsync != "none" or self.unreadable != "ask-person":
            parts.append(f"fsync-{self.fsync} unreadable-{self.unreadable}")
        if self.retries:
            parts.append(f"retries[{stack_label(self.retries)}]")
        parts.extend(
            f"{name.replace('_', '-')}-{getattr(self, name)}"
            for name, allowed in CONVERSATION.items()
            if getattr(self, name) != allowed[0]
        )
        return " ".join(parts)


_LOCK_LABELS: dict[str, str] = {"file": "lock", "none": "no-lock", "os-lock": "os-lock", "lease+fencing": "lease"}


def _check_value(name: str, value: object) -> None:
    allowed = CHOICES[name]
    if name == "ladder":
        if not isinstance(value, tuple) or not all(isinstance(rung, str) and rung in allowed for rung in value):
            raise PolicyError(f"ladder: expected a list of rungs from {_quoted(allowed)}")
        return
    if name == "startup_save":
        if not isinstance(value, bool):
            raise PolicyError("startup_save: expected true or false")
        return
    if not isinstance(value, str) or value not in allowed:
        raise PolicyError(f"{name}: expected one of {_quoted(allowed)}, not {value!r}")


def _check_durability(policy: Policy) -> None:
    for name, allowed in DURABILITY.items():
        value = getattr(policy, name)
        if not isinstance(value, str) or value not in allowed:
            raise PolicyError(f"{name}: expected one of {_quoted(allowed)}, not {value!r}")
    if policy.unreadable != "ask-person" and policy.fsync != "none":
        raise PolicyError(
            f'unreadable: only a save with fsync = "none" can leave the checkpoint unreadable; '
            f'with fsync = "{policy.fsync}" leave it "ask-person"'
        )


def _meaningless(policy: Policy) -> str | None:
    """Why the combination means nothing, or None when it is a design."""
    ladder = policy.ladder
    if policy.markers == "none":
        if ladder:
            return 'ladder: without markers no call is ever settled on a ladder; leave it empty (markers = "none")'
        return None
    if not ladder:
        return 'ladder: markers need a ladder to settle a marked call without a result, e.g. ["lookup", "person"]'
    for rung in ladder:
        if ladder.count(rung) > 1:
            return f"ladder: rung {rung!r} appears twice"
    if "person" not in ladder:
        return 'ladder: must end with "person", the one rung that settles every call on every tracker'
    if ladder[-1] != "person":
        return 'ladder: no rung after "person" is ever reached (a person settles every call)'
    if list(ladder) != sorted(ladder, key=RUNGS.index):
        return (
            'ladder: rungs climb from the cheapest, in the order "rerun-when-harmless", "lookup", "person" '
            "(no tracker both honours keys and offers a lookup, so another order changes nothing)"
        )
    if "rerun-when-harmless" in ladder and not policy.keyed:
        return (
            'ladder: "rerun-when-harmless" never applies with keys = "none" '
            "(only writes carry markers, and an unkeyed write is not harmless to repeat)"
        )
    return None


def _quoted(values: tuple[object, ...]) -> str:
    return ", ".join(f'"{value}"' for value in values)


def _ladders() -> Iterator[tuple[Rung, ...]]:
    for length in range(len(RUNGS) + 1):
        yield from permutations(RUNGS, length)


def conversation_fields(job: Job, faults: tuple[str, ...] = ()) -> tuple[str, ...]:
    """The conversation fields whose values can change an outcome on `job` (spec/CONVERSATIONS.md).

    What a restart sends matters on every job; approvals (what they match, where they are kept,
    when they are consumed) only where a call is gated; a node's resume only where a call shares
    its node with an earlier one of its turn; a batch's persistence where a turn has a write or
    two calls (a read alone leaves nothing to drop); the transcript's repair only under
    `trim-context` (without it, `add-missing-results` is `repair` and `both-directions` finds
    no result without its call: section 7).
    """
    matters = {
        "transcript_on_restart": True,
        "approval_binding": bool(job.gated),
        "approval_storage": bool(job.gated),
        "resume_granularity": any(job.node_before(call.id) for call in job.calls),
        "approval_consume": bool(job.gated),
        "persist_granularity": any(len(turn) > 1 or any(call.writes for call in turn) for turn in job.turns),
        "transcript_repair": "trim-context" in faults,
    }
    return tuple(name for name in CONVERSATION if matters[name])


def all_policies(
    locks: tuple[Lock, ...] = CRASH_LOCKS,
    power_loss: bool = False,
    stacks: tuple[Stack, ...] = ((),),
    conversation: tuple[str, ...] = (),
) -> tuple[Policy, ...]:
    """Every valid policy, once each, in a fixed order (fields and values in declared order).

    `locks`: the lock values to enumerate; by default the two a crash alone can tell apart
    (512 designs); PAUSE_LOCKS adds `os-lock` and `lease+fencing` (1024).
    With `power_loss`, each is given every valid (fsync, unreadable) pair too, in declared
    order, the seed's first; without, only the seed's ("none", "ask-person"): under crashes
    alone an fsync changes no outcome, so "none" is as safe and no costlier.
    Each is given each retry stack of `stacks` in turn (by default none; spec/RETRIES.md), then
    every combination of the values of the `conversation` fields named (by default none:
    each at its first value; spec/CONVERSATIONS.md), in declared order.
    """
    if conversation:
        combos = product(*(CONVERSATION[name] for name in conversation))
        values = [dict(zip(conversation, combo, strict=True)) for combo in combos]
        return tuple(replace(p, **v) for p in all_policies(locks, power_loss, stacks) for v in values)  # type: ignore[arg-type]
    if stacks != ((),):
        return tuple(replace(p, retries=stack) for p in all_policies(locks, power_loss) for stack in stacks)
    if power_loss:
        pairs = [(f, u) for f in get_args(Fsync) for u in get_args(Unreadable) if f == "none" or u == "ask-person"]
        return tuple(replace(p, fsync=f, unreadable=u) for p in all_policies(locks) for f, u in pairs)
    found: list[Policy] = []
    for start, reply, results, markers, keys, lock, ladder, error in product(
        (True, False),
        get_args(ReplySave),
        get_args(ResultSaves),
        get_args(Markers),
        get_args(Keys),
        locks,
        tuple(_ladders()),
        get_args(OnToolError),
    ):
        try:
            found.append(
                Policy(
                    startup_save=start,
                    reply_save=reply,
                    result_saves=results,
                    markers=markers,
                    keys=keys,
                    lock=lock,
                    ladder=ladder,
                    on_tool_error=error,
                )
            )
        except PolicyError:
            continue
    return tuple(found)


REQUIRED = ("startup_save", "reply_save", "result_saves", "markers", "keys", "lock")
"""Fields a design file must give; `ladder` defaults to [], `on_tool_error` to "retry",
`fsync` to "none", `unreadable` to "ask-person", `retries` to [] and the conversation
fields (spec/CONVERSATIONS.md) to their first values."""


def policy_from_mapping(data: Mapping[str, object]) -> Policy:
    """Build a policy from parsed TOML (policy fields only), naming the first field that is wrong."""
    unknown = sorted(set(data) - set(CHOICES) - set(OPTIONAL))
    if unknown:
        raise PolicyError(f"unknown key {unknown[0]!r} (known: {', '.join((*CHOICES, *OPTIONAL))})")
    for name in REQUIRED:
        if name not in data:
            allowed = "true or false" if name == "startup_save" else f"one of {_quoted(CHOICES[name])}"
            raise PolicyError(f"{name}: missing ({allowed})")
    values = dict(data)
    ladder = values.get("ladder", [])
    if not isinstance(ladder, list):
        raise PolicyError(f"ladder: expected a list of rungs from {_quoted(RUNGS)}")
    values["ladder"] = tuple(ladder)
    if "retries" in values:
        try:
            values["retries"] = parse_stack(values["retries"])
        except RetryError as error:
            raise PolicyError(str(error)) from None
    return Policy(**values)  # type: ignore[arg-type]  # every value is checked in __post_init__


NAMING_KEYS = ("name", "summary")
"""The keys of a design file that name the design rather than set a policy field."""


def named_policy(data: Mapping[str, object], source: str) -> tuple[str, str, Policy]:
    """A design file's name, summary (default: "the design in SOURCE") and policy, from parsed TOML."""
    name = files.name("name", data.get("name"), PolicyError)
    summary = data.get("summary", f"the design in {source}")
    if not isinstance(summary, str):
        raise PolicyError("summary: expected a string")
    files.printable("summary", summary, PolicyError)
    policy = policy_from_mapping({key: value for key, value in data.items() if key not in NAMING_KEYS})
    return name, summary, policy


def read_design_file(path: Path) -> tuple[str, str, Policy]:
    """Read a design file (TOML, by spec/files.py); any problem becomes a one-line `PolicyError` naming the file."""
    data = files.read_toml(path, "design file", PolicyError)
    try:
        return named_policy(data, str(path))
    except PolicyError as error:
        raise PolicyError(f"{path}: {error}") from None
