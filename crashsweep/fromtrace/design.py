"""A draft design from one recorded run: each policy field as the run shows it (spec/FROM_TRACE.md section 3).

Each rule reads crashsweep's save spans (`save WHAT`, WHAT the reference loop's names: `start`,
`reply K`, `marker C`, `result C`, `turn K`, `final`, `approval C`), the tool spans' keys and the
lock spans, in the order they started. The draft is a valid policy (spec/policy.py checks it as
`--design` does): a field the run cannot decide takes the value the rules name.
"""

from __future__ import annotations

from crashsweep.fromtrace.derive import FULL_LADDER, Field, cite, job, writes
from crashsweep.fromtrace.recording import Marked, Recording
from crashsweep.spec.job import Job

UNDECIDED = {
    "unreadable": ("ask-person", ("ask-person", "fresh-run"), "no start found the checkpoint unreadable"),
    "transcript_on_restart": (
        "resume-pending",
        ("resume-pending", "as-is", "repair"),
        "no restart loaded a turn with calls lacking results",
    ),
    "transcript_repair": (
        "none",
        ("none", "add-missing-results", "both-directions"),
        "no restart loaded a conversation",
    ),
    "persist_granularity": ("per-call", ("per-call", "per-batch"), "no start loaded a reply's calls half done"),
}
"""Fields a run that never restarted cannot show: (the draft's value, the choices, why)."""
APPROVAL_UNDECIDED = {
    "approval_binding": ("call-and-args", ("call-and-args", "call", "none"), "no arguments changed under an approval"),
    "resume_granularity": ("step", ("step", "node"), "no restart resumed after an approval"),
    "approval_consume": (
        "after-resume-started",
        ("after-resume-started", "before-resume"),
        "no crash came between the person's answer and the resumed run",
    ),
}


def fields(recording: Recording) -> tuple[Field, ...]:
    """Every field of the draft, in spec/policy.py's order, the undecided ones with their choices."""
    the_job = job(recording)
    saves = recording.of("save")
    if not saves:
        return _untraced(recording, the_job)
    found = [
        _startup(recording, saves),
        _reply(recording, saves),
        _results(recording, the_job, saves),
        _markers(recording, the_job, saves),
        _keys(recording),
        _lock(recording),
    ]
    if found[3].value == "before-writes":
        found.append(_ladder(found[4].value == "run-call"))
    found.append(_on_error(recording))
    found.append(_fsync(saves))
    found += [Field(name, value, False, why, choices) for name, (value, choices, why) in UNDECIDED.items()]
    if the_job.gated:
        found.append(_storage(recording, the_job, saves))
        found += [Field(n, v, False, why, c) for n, (v, c, why) in APPROVAL_UNDECIDED.items()]
    return tuple(found)


def _named(saves: tuple[Marked, ...], *prefixes: str) -> list[Marked]:
    return [s for s in saves if any(s.value == p or s.value.startswith(p + " ") for p in prefixes)]


def _startup(recording: Recording, saves: tuple[Marked, ...]) -> Field:
    first = recording.replies[0].start
    start = [s for s in saves if s.value == "start" and s.start < first]
    if start:
        return Field("startup_save", True, True, cite([s.span for s in start], "a save before the first model call"))
    return Field("startup_save", False, True, "no save before the first model call")


def _reply(recording: Recording, saves: tuple[Marked, ...]) -> Field:
    """before-first-send: each reply with calls saved (`reply K`) before the first of its calls ran."""
    asks = [r for r in recording.replies if r.calls]
    found = []
    for k, reply in enumerate(asks, 1):
        ran = [t.start for c in reply.calls for t in recording.runs_of(c.id)]
        first = min(ran, default=None)
        saved = recording.named("save", f"reply {k}")
        found += [s for s in saved if reply.start <= s.start and (first is None or s.start < first)]
    if found and "reply_save" in recording.unseen:  # a store that keeps no time of its saves
        why = f"each reply saved; the {recording.records} do not show whether before its calls ran"
        return Field("reply_save", "never", False, cite([s.span for s in found], why), ("before-first-send", "never"))
    if found and len({s.value for s in found}) == len(asks):
        return Field(
            "reply_save", "before-first-send", True, cite([s.span for s in found], "each reply saved before its calls")
        )
    if not _named(saves, "reply"):
        return Field("reply_save", "never", True, "no reply saved before its calls")
    return Field(
        "reply_save",
        "never",
        False,
        cite([s.span for s in _named(saves, "reply")], "some replies saved"),
        ("before-first-send", "never"),
    )


def _results(recording: Recording, the_job: Job, saves: tuple[Marked, ...]) -> Field:
    """each-call, writes-only, whole-turn or none, by which calls' results were saved."""
    saved = {s.value.removeprefix("result ") for s in _named(saves, "result")}
    spans = [s.span for s in _named(saves, "result")]
    calls = {c.id for c in the_job.calls}
    written = set(the_job.writes)
    if saved and saved == calls and saved != written:
        return Field("result_saves", "each-call", True, cite(spans, "every call's result saved"))
    if saved and saved == written and saved != calls:
        return Field("result_saves", "writes-only", True, cite(spans, "each write's result saved, no read's"))
    if saved and saved == calls:
        return Field(
            "result_saves",
            "each-call",
            False,
            cite(spans, "every call writes: each-call and writes-only save the same"),
            ("each-call", "writes-only"),
        )
    turns = _named(saves, "turn")
    if not saved and turns:
        return Field(
            "result_saves",
            "whole-turn",
            True,
            cite([s.span for s in turns], "a save after each turn, none after a call"),
        )
    if not saved:
        return Field("result_saves", "none", True, "no save after a call or a turn")
    return Field(
        "result_saves",
        "each-call",
        False,
        cite(spans, f"the results of {sorted(saved)} saved"),
        ("each-call", "writes-only", "whole-turn", "none"),
    )


def _markers(recording: Recording, the_job: Job, saves: tuple[Marked, ...]) -> Field:
    marks = _named(saves, "marker")
    if not marks:
        return Field("markers", "none", True, "no marker saved before a write")
    return Field("markers", "before-writes", True, cite([m.span for m in marks], "a marker saved before each write"))


def _ladder(keyed: bool) -> Field:
    """Not decided: the full ladder, less its first rung without keys (it never applies to an unkeyed write)."""
    ladder = list(FULL_LADDER) if keyed else list(FULL_LADDER[1:])
    why = "no crash left a marked call without a result"
    return Field("ladder", ladder, False, why, (list(FULL_LADDER), list(FULL_LADDER[1:]), ["person"]))


def _keys(recording: Recording) -> Field:
    keyed = [t.span for t in recording.tools if t.key]
    if keyed:
        return Field("keys", "run-call", True, cite(keyed, "tool calls sent idempotency keys"))
    if "keys" in recording.unseen:
        return Field("keys", "none", False, f"the {recording.records} hold no key a call sent", ("none", "run-call"))
    return Field("keys", "none", True, "no tool span sent an idempotency key")


def _lock(recording: Recording) -> Field:
    locks = recording.of("lock")
    if locks:
        return Field("lock", locks[0].value, True, cite([m.span for m in locks], f"a {locks[0].value} lock taken"))
    if "lock" in recording.unseen:
        why = f"the {recording.records} record no lock"
        return Field("lock", "none", False, why, ("none", "file", "os-lock", "lease+fencing"))
    return Field("lock", "none", True, "no lock taken")


def _on_error(recording: Recording) -> Field:
    """retry when a failed call ran again, model when the model was asked after a failure instead."""
    failed = [t for t in recording.tools if t.failed and not t.deferred]
    if not failed:
        return Field("on_tool_error", "retry", False, "no tool failed", ("retry", "model"))
    again = [t for t in failed if len(recording.runs_of(t.call_id)) > 1]
    if again:
        return Field("on_tool_error", "retry", True, cite([t.span for t in again], "a failed call sent again"))
    return Field("on_tool_error", "model", True, cite([t.span for t in failed], "a failed call handed to the model"))


def _fsync(saves: tuple[Marked, ...]) -> Field:
    synced = [s for s in saves if any(p.endswith(": tmp synced") for p in s.points)]
    full = [s for s in synced if any(p.endswith(": dir synced") for p in s.points)]
    if not any(s.points for s in saves):
        return Field("fsync", "none", False, "the save spans hold no crash points", ("none", "no-dir-fsync", "full"))
    if full:
        return Field("fsync", "full", True, cite([s.span for s in full], "saves synced the temp file and the folder"))
    if synced:
        return Field("fsync", "no-dir-fsync", True, cite([s.span for s in synced], "saves synced the temp file only"))
    return Field("fsync", "none", True, "no save synced")


def _storage(recording: Recording, the_job: Job, saves: tuple[Marked, ...]) -> Field:
    kept = [s for s in saves if s.value.startswith("approval ")]
    if kept:
        return Field("approval_storage", "durable", True, cite([s.span for s in kept], "each approval saved"))
    asked = [m.span for m in recording.of("approval")]
    return Field(
        "approval_storage",
        "memory",
        False,
        cite(asked, "approvals given, none saved with the checkpoint"),
        ("memory", "service"),
    )


def _untraced(recording: Recording, the_job: Job) -> tuple[Field, ...]:
    """A run with no save spans: the saves not decided; keys from the tool spans, the rest as the template."""
    why = "the trace records no saves (no `save` spans): the program's saves are not traced"
    found = [
        Field("startup_save", True, False, why, (True, False)),
        Field("reply_save", "before-first-send", False, why, ("before-first-send", "never")),
        Field("result_saves", "each-call", False, why, ("each-call", "writes-only", "whole-turn", "none")),
        Field("markers", "none", False, why, ("none", "before-writes")),
        _keys(recording),
        Field("lock", "none", False, why, ("none", "file", "os-lock", "lease+fencing")),
        _on_error(recording),
    ]
    return tuple(found)


def unknown_writes(recording: Recording) -> list[str]:
    """The calls the job says write only because nothing said otherwise."""
    return [a.id for r in recording.replies for a in r.calls if not writes(recording, a)[1]]
