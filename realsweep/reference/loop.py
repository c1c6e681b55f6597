"""The reference durable agent loop: real code, one code path per design, every crash point marked.

Each design below is the whole process, from load to exit, as plain Python that reads like
its variant's docstring in variants/; the parts it calls (parts.py) save to a real
checkpoint file and send real HTTP requests to the tracker service. A crash point is a
`crashpoint(...)` call at the place SEMANTICS.md puts it, so that under a sweep this program
passes exactly the model's crash points, in the same order.

    python -m crashsweep.realsweep.reference.loop --variant keys-and-markers [--job FILE] [--tracker keyed]
    python -m crashsweep.realsweep.reference.loop --design FILE [--job FILE] [--tracker keyed]

`composed` runs any policy of spec/POLICIES.md (a design file) as one code path, under the
design's retry layers (spec/RETRIES.md 1.7): a failed call goes to the supervisor
(supervisor.py), whose catching layer resends it, throws the turn away (RetryTurn) or begins
a new run in the same process (RetryRun); a timeout layer's new attempt is a process of its
own, started by the sweep beside the one given up on.

The work directory is the current one (or $CRASHSWEEP_WORKDIR); the tracker's base URL is
$CRASHSWEEP_TRACKER_URL. Exit 0 when the run is done; under a sweep, death at the chosen point;
75 (crashpoint.STOPPED_STATUS) when another live process drives the run and this one stops
(its lock or fencing token refused, or its temp file renamed by the other: spec/FAULTS.md 7);
76 (crashpoint.STUCK_STATUS) when it can never go on (`transcript_on_restart = "as-is"` after a
crash that left a call without its result, or a conversation `trim-context` left a result without
its call: the provider refuses it, spec/CONVERSATIONS.md 1 and 7; a gate that must ask for a
request consumed before the resume, section 5).
A lost reply (a fault, spec/FAULTS.md) is a ToolFailed from `send` (also when a marked call is
being settled by a re-send): each design goes on with the call as SITUATIONS.md section 2 says
for `fails_after_accept` (error-to-model, which hands the error to the model, is not among the
designs here, and the sweep refuses a lost reply for a composed policy with on_tool_error =
"model").

With $CRASHSWEEP_OTLP naming a file, each process records its OpenTelemetry spans there
(tracing.py): how `crashsweep from-trace` reads one uninterrupted run of a design.
"""

from __future__ import annotations

import argparse
import contextlib
import io
import os
import sys
from collections.abc import Callable
from pathlib import Path

from crashsweep.realsweep.probe.crashpoint import STOPPED_STATUS, STUCK_STATUS
from crashsweep.realsweep.reference import approvals, loading, tracing
from crashsweep.realsweep.reference.parts import OFFERS, Loop, Stopped, StuckError, ToolFailed, Turn
from crashsweep.realsweep.reference.supervisor import SUPERVISOR_FILE, RetryRun, RetryTurn, Supervisor
from crashsweep.realsweep.tracker.client import FENCED, TrackerClient, TrackerError
from crashsweep.spec.job import TRIAGE, Call, Job, load_job
from crashsweep.spec.policy import Policy, PolicyError, read_design_file

TRACKER_URL = "CRASHSWEEP_TRACKER_URL"
WORKDIR = "CRASHSWEEP_WORKDIR"


def save_once_per_turn(loop: Loop) -> None:
    """Saves only when a turn is complete; a crash inside a turn asks the model again."""
    if not loop.resume():
        return
    loop.save("start")
    for turn in loop.turns(save_reply=False):
        for call in loop.open_calls(turn):
            try:
                loop.store(turn, call, loop.send(call, keyed=False))
            except ToolFailed:
                continue  # no result: the call comes again and is sent again
        loop.end_turn(turn)


def save_after_reply(loop: Loop, *, keyed: bool = False) -> None:
    """Saves the reply before its calls and each result after; `keyed` sends Key(run, call)."""
    if not loop.resume():
        return
    loop.save("start")
    for turn in loop.turns(save_reply=True):
        for call in loop.open_calls(turn):
            try:
                loop.store(turn, call, loop.send(call, keyed=keyed))
            except ToolFailed:
                continue  # no result: the call comes again and is sent again (with the same key)
            loop.save_result(call)
        loop.end_turn(turn)


def idempotency_keys(loop: Loop) -> None:
    """save-after-reply, and every write carries Key(run ID, call ID)."""
    save_after_reply(loop, keyed=True)


def attempt_markers(loop: Loop, *, keyed: bool = False) -> None:
    """A marker before each write: a marked write without a result goes up the ladder."""
    if not loop.resume():
        return
    loop.save("start")
    for turn in loop.turns(save_reply=True):
        for call in loop.open_calls(turn):
            try:
                if loop.has_marker(turn, call):
                    answer = loop.settle(call, keyed=keyed)
                else:
                    if call.writes:
                        loop.mark(turn, call)
                    answer = loop.send(call, keyed=keyed)
            except ToolFailed:
                continue  # marked, no result: the call comes again and is settled on the ladder
            loop.store(turn, call, answer)
            loop.save_result(call)
        loop.end_turn(turn)


def keys_and_markers(loop: Loop) -> None:
    """attempt-markers with keys on every write: rung 1 settles every marker."""
    attempt_markers(loop, keyed=True)


def agent_loop(loop: Loop) -> None:
    """The agent's own loop: a run lock, markers and keys, no reply save, no result save after a read."""
    if not loop.resume():
        return
    loop.take_lock("file")
    loop.save("start")
    for turn in loop.turns(save_reply=False):  # the first marker save makes the reply durable
        for call in loop.open_calls(turn):
            try:
                if loop.has_marker(turn, call):
                    answer = loop.settle(call, keyed=True)
                else:
                    if call.writes:
                        loop.mark(turn, call)
                    answer = loop.send(call, keyed=True)
            except ToolFailed:
                continue  # marked, no result: the call comes again and is settled on the ladder
            loop.store(turn, call, answer)
            if call.writes:  # a read is harmless to repeat
                loop.save_result(call)
        loop.end_turn(turn)


def composed(loop: Loop, policy: Policy) -> None:
    """Any policy (spec/POLICIES.md) as one code path, under its retry layers (spec/RETRIES.md 1.2)."""
    if policy.retries:
        loop.supervisor = Supervisor(policy.retries, loop.workdir / SUPERVISOR_FILE)
    approvals.redeeming(loop, policy)  # a gated write is sent under the approval it redeems
    if not loop.resume():
        return
    loading.loaded(loop.memory, loop.job, policy)  # what the start makes of what it loaded (spec/loading.py)
    while True:
        try:
            _composed_run(loop, policy)
            return
        except RetryRun:
            loop.new_run()  # a whole-run retry: a fresh run ID, the checkpoint unread; the start again


def _composed_run(loop: Loop, policy: Policy) -> None:
    """One run of the composed loop from its start: the lock, the startup save, every turn."""
    loop.take_lock(policy.lock)
    if policy.startup_save:
        loop.save("start")
    as_is = policy.transcript_on_restart == "as-is"
    if policy.transcript_on_restart == "repair" or (as_is and policy.transcript_repair != "none"):
        # A loaded turn's orphaned calls get an unknown outcome (CONVERSATIONS.md 1, 7; spec/loading.py
        # reload_how, not imported: the loop's process imports nothing of the model's world).
        loop.repair()
    elif policy.transcript_on_restart == "as-is" and loop.orphaned():
        with tracing.chat():
            loop.ask_model()  # the conversation as loaded: the provider refuses it (StuckError), every time
    saves = policy.result_saves
    for turn in loop.turns(save_reply=policy.reply_save == "before-first-send"):
        for call in loop.open_calls(turn):
            try:
                answer = _attempt(loop, turn, call, policy)
            except (ToolFailed, approvals.Replan):
                continue  # no result: the call comes again (settled if marked, else sent again), or its node
            except RetryTurn:
                loop.memory["turns"].pop()  # a turn-level retry: the turn thrown away, the model asked again
                break
            loop.store(turn, call, answer)
            if saves == "each-call" or (saves == "writes-only" and call.writes):
                loop.save_result(call)
        else:
            loop.end_turn(turn, save=saves != "none")


def _attempt(loop: Loop, turn: Turn, call: Call, policy: Policy) -> str:
    """The call's answer: settled when marked, else (marked and) sent; a failure goes to the retry layers.

    A `call` layer sends the same request again (the same key), as often as it catches; a
    `turn` or `run` layer raises RetryTurn or RetryRun; ToolFailed when no layer catches.
    """
    try:
        if policy.ladder and loop.has_marker(turn, call):  # no ladder, no marker read (RETRIES.md 2, rule 5)
            return loop.settle(call, keyed=policy.keyed, ladder=policy.ladder)
        approvals.gate(loop, turn, call, policy)  # a Replan (a node's resume) goes through to the loop body
        if call.writes and policy.markers == "before-writes":
            loop.mark(turn, call)
        return loop.send(call, keyed=policy.keyed)
    except ToolFailed:
        pass
    while True:
        scope = None if loop.supervisor is None else loop.supervisor.catch(loop.memory["run"], call.id, turn["index"])
        if scope is None:
            raise ToolFailed(call.id)
        if scope == "turn":
            raise RetryTurn(call.id)
        if scope == "run":
            raise RetryRun(call.id)
        try:
            return loop.send(call, keyed=policy.keyed)
        except ToolFailed:
            continue


DESIGNS: dict[str, Callable[[Loop], None]] = {
    "save-once-per-turn": save_once_per_turn,
    "save-after-reply": save_after_reply,
    "idempotency-keys": idempotency_keys,
    "attempt-markers": attempt_markers,
    "keys-and-markers": keys_and_markers,
    "agent-loop": agent_loop,
}


def _parser() -> argparse.ArgumentParser:
    """The command line of one process (its defaults from the environment are read by `main`)."""
    parser = argparse.ArgumentParser(
        prog="python -m crashsweep.realsweep.reference.loop", description=__doc__.split("\n")[0]
    )
    which = parser.add_mutually_exclusive_group(required=True)
    which.add_argument("--variant", choices=list(DESIGNS))
    which.add_argument("--design", type=Path, help="design file (TOML) of policies")
    parser.add_argument("--job", type=Path, help="job file (TOML); default: the built-in triage job")
    parser.add_argument("--tracker", choices=list(OFFERS), default="keyed", help="what the tracker offers")
    parser.add_argument("--tracker-url", help=f"default: ${TRACKER_URL}")
    parser.add_argument("--workdir", type=Path, help=f"default: ${WORKDIR}, else the current directory")
    return parser


PARSER = _parser()
"""Built once at import: a sweep forks each process from a zygote that imported this module, so
no process builds it again (building one costs a cold process several milliseconds: gettext
lookups and regular expressions), which is a large part of a short process's time."""


PARSED: dict[tuple[str, ...], argparse.Namespace] = {}
"""The command lines parsed so far (a sweep gives every process the same one); read, never changed."""


def _arguments(argv: tuple[str, ...]) -> argparse.Namespace:
    """The parsed command line, parsed once."""
    parsed = PARSED.get(argv)
    if parsed is None:
        parsed = PARSED[argv] = PARSER.parse_args(list(argv))
    return parsed


def zygote_warm(argv: list[str]) -> None:
    """Parse `argv` in the zygote before it forks (zygote.py): each process then finds it parsed.

    Parsing in a fresh fork costs about half a millisecond of a process that does little else,
    most of it copying the memory pages argparse touches. A refused command line prints
    nothing here (and is not kept): the process parses it again and reports it.
    """
    if tuple(argv) not in PARSED:
        with contextlib.redirect_stderr(io.StringIO()):
            _arguments(tuple(argv))


def main(argv: list[str] | None = None) -> int:
    """Run one process of the loop; exit 0 when the run is done."""
    args = _arguments(tuple(sys.argv[1:] if argv is None else argv))
    tracker_url = args.tracker_url or os.environ.get(TRACKER_URL)
    if not tracker_url:
        PARSER.error(f"no tracker: pass --tracker-url or set {TRACKER_URL}")
    workdir = args.workdir or Path(os.environ.get(WORKDIR) or ".")
    job = load_job(args.job) if args.job is not None else TRIAGE
    offer = OFFERS[args.tracker]
    tracing.start(workdir)  # only when $CRASHSWEEP_OTLP names a file: the process's spans
    try:
        with TrackerClient(tracker_url, keep_alive=True) as tracker:
            if args.design is None:
                return _stopping(lambda: DESIGNS[args.variant](Loop(workdir, job, tracker, offer)), args.variant, job)
            try:
                name, _, policy = read_design_file(args.design)
            except PolicyError as error:
                PARSER.error(str(error))
            # The design's fsync policy and unreadable-checkpoint choice (spec/FAULTS.md section 6).
            loop = Loop(workdir, job, tracker, offer, fsync=policy.fsync, unreadable=policy.unreadable)
            return _stopping(lambda: composed(loop, policy), name, job)
    finally:
        tracing.stop()  # the spans flushed when the process ends (a crash point's kill leaves what had ended)


def _stopping(run: Callable[[], None], design: str, job: Job) -> int:
    """Run the process: 0 when it ends, STOPPED_STATUS when another live process made it stop, STUCK_STATUS when stuck.

    It stops (spec/FAULTS.md section 7) when its lock or fencing token is refused, at the
    tracker (409) or on disk, or when a rename finds its temp file gone. It is stuck
    (spec/CONVERSATIONS.md 4) when the provider refuses its conversation: it says why, last.
    Traced, the run is the agent span of `design` on `job`, with an error status when it ends
    by an exception (stopped and stuck too).
    """
    try:
        with tracing.agent(design, job.name):
            run()
    except StuckError as error:
        print(f"stuck: {error}", file=sys.stderr)
        return STUCK_STATUS
    except (Stopped, TrackerError) as error:
        if isinstance(error, TrackerError) and error.status != FENCED:
            raise
        print(f"stopped: {error}", file=sys.stderr)
        return STOPPED_STATUS
    return 0


if __name__ == "__main__":
    sys.exit(main())
