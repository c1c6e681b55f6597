"""The parts every reference design is built from: memory, saves, the scripted model, sends, the ladder.

`Loop` is one process of a durable agent loop (SEMANTICS.md section 4): it loads the
checkpoint from disk (never the temp file), holds the run in memory as plain JSON-ready data,
saves it with a real two-step save (temp file, rename, both fsynced), asks the job's scripted
model for the next reply, and sends calls to the real tracker service over HTTP. Each crash
point of SEMANTICS.md is a `self.point(...)` call here (crashpoint, and a timeout layer's
chance), at the place the contract puts it;
loop.py arranges these parts into one readable code path per design.

Memory: {"run": ID, "done": bool, "turns": [{"index": k, "results": {call: answer},
"marked": [call, ...], "complete": bool}]}; a turn `trim-context` cut (faults/trim_context.py)
also holds "trimmed": 1 (its reply left the conversation) or 2 (all of it did).

The tools: a write whose tool is `comment` comments on the first issue the job files (as in
the triage job: "comments on the first issue"); every other write files an issue; every read
searches the issues.

Faults (spec/FAULTS.md, told by the sweep's nemesis through the environment, read with
probe/faults_env.py): a write whose reply is lost passes `tracker accepted <call>` and `tool failed <call>` and raises
`ToolFailed`; the design's loop body then runs again for the call, which has no result
(SITUATIONS.md section 2). The person of rung 3 is asked at a pause ("person answers <call>",
crashpoint.pause); a question the nemesis names is answered wrongly: "no" when the tracker
holds the call's record (the call is sent again), "yes" when it does not (the loop stores
WRONG_ANSWER, a result no record stands behind). A comment whose issue the loop so never got a
number for goes to the first issue of the job the tracker holds. With fresh call IDs the
scripted model names the calls of each reply anew (a counter the model keeps in the work
directory, beside the loop's files), the turn keeps the IDs its reply gave, and Key(run,
call) is derived from them.

Retry layers (spec/RETRIES.md, supervisor.py): with a `supervisor`, a write a layer would
catch a failure of is announced by a pause (faults_env.retry_chance) just before it is sent,
and a write the nemesis names in CRASHSWEEP_FAIL_ATTEMPT fails after accept as a lost reply
does; loop.py's `composed` hands the failure to the supervisor. Under a one-attempt budget
(RETRIES.md 1.8) every request is an attempt the supervisor keeps in flight, from right before
it is sent until it answered (`_in_flight`, `_answered`).

Locks (spec/FAULTS.md 7.1, the design's `lock`): `take_lock` right after the load. Beside a
second live process (the fault `pause`) a process may have to stop: its OS lock or fencing
token refused, or its rename's temp file renamed by the other; it raises `Stopped`, and
loop.py exits with crashpoint.STOPPED_STATUS.

Spans (tracing.py, only when $CRASHSWEEP_OTLP names a file): each ask of the model, send of a
call, checkpoint save and lock taken is a span, with the points passed in it as its events.
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import os
import sys
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from crashsweep.realsweep.probe import checkpoint, faults_env
from crashsweep.realsweep.probe.crashpoint import MALFORMED, call_site, count, crashpoint, fresh_id, pause
from crashsweep.realsweep.reference import tracing
from crashsweep.realsweep.reference.supervisor import Supervisor
from crashsweep.realsweep.tracker.client import TrackerClient
from crashsweep.spec.job import Call, Job, JobError
from crashsweep.spec.keys import key
from crashsweep.spec.policy import RUNGS, Rung
from crashsweep.spec.retries import ACCEPTED, RETURNED  # a call's points, where a `call` timeout may strike

CHECKPOINT_FILE = "checkpoint.json"
LOCK_FILE = "lock.json"
FLOCK_FILE = "run.flock"
"""The file the `os-lock` policy holds an OS lock (flock) on, beside the checkpoint."""
LEASE_FILE = "lease.txt"
"""The newest fencing token granted (`lease+fencing`), beside the checkpoint: the disk's fence."""
MODEL_FILE = "model-ids.txt"
"""The scripted model's own counter of replies handed out (fresh call IDs only): not the loop's."""
REPLIES_FILE = "model-replies.json"
"""The scripted model's hand-outs of each reply and its strikes of changed arguments, by reply
(`changed-args` only, faults/changed_args.py): {"asked": {k: n}, "changed": {k: n}}, not the loop's."""

WRONG_ANSWER = "said to have happened"
"""The result a person's wrong "yes" puts in memory (spec/process.py's): no record stands behind it."""

Turn = dict[str, Any]


@dataclass(frozen=True)
class TrackerOffer:
    """What the loop knows the tracker offers: honouring keys, and a lookup it may use as rung 2."""

    honours_keys: bool
    lookup: bool


OFFERS = {
    "keyed": TrackerOffer(honours_keys=True, lookup=False),
    "keyless": TrackerOffer(honours_keys=False, lookup=False),
    "keyless-lookup": TrackerOffer(honours_keys=False, lookup=True),
}


class ToolFailed(Exception):
    """A tool returned a transport error (its write's reply was lost): the call has no result."""


OUTCOME_UNKNOWN = "outcome unknown"
"""The result a repaired call is given: the model's `process.OUTCOME_UNKNOWN`, the same words."""


def arguments_words(version: int) -> str:
    """What a write's body says of its arguments: nothing for the first version, " (arguments v2)" after."""
    return "" if version == 1 else f" (arguments v{version})"


def record_version(record: dict[str, Any]) -> int:
    """The version of the arguments a tracker record was sent with (`arguments_words` in its body)."""
    body = str(record.get("body") or "")
    found = body.rpartition("(arguments v")[2].rstrip(")") if "(arguments v" in body else "1"
    return int(found) if found.isdigit() else 1


class StuckError(Exception):
    """The process can never go on (spec/CONVERSATIONS.md 4): loop.py exits with crashpoint.STUCK_STATUS."""


class Stopped(Exception):
    """The process stops: another live process drives the run (spec/FAULTS.md section 7).

    Raised when the OS lock is held, when the disk's fence holds a newer token than this
    process's, and when a rename finds its temp file gone (the other process renamed it).
    """


def _os_lock(workdir: Path) -> int:
    """The descriptor of the run's OS lock (flock), taken; Stopped while another live process holds it."""
    fd = os.open(workdir / FLOCK_FILE, os.O_RDWR | os.O_CREAT, 0o644)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        os.close(fd)
        raise Stopped(f"{workdir}: another live process holds the run's OS lock") from None
    return fd


def issue_target(job: Job, call: Call) -> Call | None:
    """The call whose issue `call` comments on (None: `call` files an issue or only reads)."""
    if not call.writes or call.tool != "comment":
        return None
    for candidate in job.calls[: job.calls.index(call)]:
        if candidate.writes and candidate.tool != "comment":
            return candidate
    raise JobError(f"calls.{call.id}: a comment needs an earlier write that files an issue to comment on")


class Loop:
    """One process of the loop: its memory, its files in `workdir`, the job and the tracker."""

    def __init__(
        self,
        workdir: Path,
        job: Job,
        tracker: TrackerClient,
        offer: TrackerOffer,
        *,
        fsync: str = "none",
        unreadable: str = "ask-person",
    ) -> None:
        self.workdir, self.job, self.tracker, self.offer = workdir, job, tracker, offer
        self.fsync, self.unreadable = fsync, unreadable  # spec/FAULTS.md section 6
        self.path = workdir / CHECKPOINT_FILE
        self.memory: dict[str, Any] = {}
        self._flock: int | None = None
        self.token: int | None = None  # the lease's fencing token (lease+fencing)
        self.lose_replies = faults_env.lost_replies()
        self.failed_attempts = faults_env.failed_attempts()  # retry moves (faults/retry.py)
        self.supervisor: Supervisor | None = None  # the design's retry layers, if it has any
        self.wrong_answers = faults_env.wrong_answers()
        self.fresh_ids = faults_env.fresh_ids()
        self.args_may_change = faults_env.args_may_change()
        self.changed_args = faults_env.changed_args()  # the pauses where a re-asked reply's arguments change
        self._sent: dict[str, int] = {}  # write requests sent per call by this process
        self.approval_of: Callable[[Call], str | None] = lambda call: None
        """The approval a write is sent under (a composed design's gate sets it: approvals.py)."""

    # -- start --------------------------------------------------------------------------------

    def resume(self) -> bool:
        """Load the checkpoint (never the temp file); False when the run is already done.

        A timeout layer's new attempt (CRASHSWEEP_TIMED_OUT) first records the layer's retry;
        of scope `run`, it begins a new run without reading the checkpoint. False too when the
        loaded run failed: an attempt of it died under a one-attempt budget (RETRIES.md 1.8), so
        the process ends the run, unfinished, as it ends a done one (no lock, no save, no request).
        No checkpoint: begin a new run with a fresh run ID (`fresh_id()`: 128 random bits, never
        repeated; under a deduplicating sweep, derived from the world the process started from).
        """
        attempt = faults_env.timed_out()
        if attempt is not None and self.supervisor is not None:  # a timeout layer's new attempt (RETRIES.md 1.2)
            self.supervisor.timed_out(*attempt)
            if attempt[1] == "run":  # a new run, the checkpoint unread
                self.new_run()
                return True
        try:
            saved = checkpoint.load(self.path)
        except checkpoint.CheckpointError:
            # Unreadable (a power cut, spec/FAULTS.md 6.4): refuse and ask a person, or begin afresh.
            if self.unreadable == "ask-person":
                count("asks")
                print(f"{self.path}: unreadable checkpoint; a person must look at it", file=sys.stderr)
                return False
            saved = None
        if saved is None:
            self.new_run()
            return True
        self.memory = saved
        tracing.conversation(saved["run"])
        if self.supervisor is not None and self.supervisor.failed(saved["run"]):
            # An attempt of this run died with its one-attempt budget: the run fails at once (RETRIES.md 1.8).
            print(f"{saved['run']}: failed, an attempt timed out with no time left", file=sys.stderr)
            return False
        return not saved["done"]

    def repair(self) -> None:
        """Give each call of an incomplete last turn without a result "outcome unknown" (CONVERSATIONS.md 1).

        `transcript_on_restart = "repair"`, right after the start: no request, no crash point;
        the turn is then completed and the model asked, as the loop body goes on.
        """
        turns = self.memory["turns"]
        if not turns or turns[-1]["complete"]:
            return
        last = turns[-1]
        for call in self.job.turns[last["index"] - 1]:
            last["results"].setdefault(call.id, OUTCOME_UNKNOWN)

    def orphaned(self) -> bool:
        """Whether the last turn is incomplete and a call of it has no result (CONVERSATIONS.md 1)."""
        turns = self.memory["turns"]
        if not turns or turns[-1]["complete"]:
            return False
        return any(call.id not in turns[-1]["results"] for call in self.job.turns[turns[-1]["index"] - 1])

    def new_run(self) -> None:
        """Begin a new run in memory: a fresh run ID, no turns (a start, or a retry of the whole run)."""
        self.memory = {"run": fresh_id(), "done": False, "turns": []}
        tracing.conversation(self.memory["run"])

    def take_lock(self, lock: str) -> None:
        """Take the run's lock as the design's `lock` policy says (spec/FAULTS.md 7.1, POLICIES.md 1.6).

        `file`: the lock file (run ID and process ID, by temp file and rename), which nobody
        reads; `os-lock`: flock on a file beside the checkpoint, held until this process dies,
        refused (Stopped) while another live process holds it; `lease+fencing`: a fencing
        token from the tracker, sent with every request from now on and recorded at once
        beside the checkpoint, where every later disk write checks it; `none`: nothing.
        """
        if lock == "file":
            with tracing.lock("file"):
                self._save_file(self.workdir / LOCK_FILE, {"run": self.memory["run"], "pid": os.getpid()}, "lock")
        elif lock == "os-lock" and self._flock is None:  # a new run of this process holds it already
            with tracing.lock("os-lock"):
                self._flock = _os_lock(self.workdir)
        elif lock == "lease+fencing":
            with tracing.lock("lease"):
                self.token = self.tracker.lease()
                (self.workdir / LEASE_FILE).write_text(str(self.token), encoding="utf-8")
        elif lock not in ("none", "os-lock"):
            raise ValueError(f"unknown lock policy {lock!r}")

    def _fence(self) -> None:
        """Before a disk write under `lease+fencing`: stop if a newer token was granted since ours."""
        if self.token is None:
            return
        newest = int((self.workdir / LEASE_FILE).read_text(encoding="utf-8"))
        if self.token < newest:
            raise Stopped(f"fencing token {self.token} is older than the newest, {newest}: the disk refuses it")

    # -- saving ---------------------------------------------------------------------------------

    def save(self, what: str) -> None:
        """Save(what): the whole memory to the temp file, then rename it over the checkpoint."""
        with tracing.save(what):
            self._save_file(self.path, self.memory, what)

    def save_marker(self, call: Call) -> None:
        """The marker save before a write."""
        self.save(f"marker {call.id}")
        self.point(f"marker saved {call.id}")

    def save_result(self, call: Call) -> None:
        """The result save after a call."""
        self.save(f"result {call.id}")
        self.point(f"result saved {call.id}")

    def _save_file(self, path: Path, data: Any, what: str) -> None:
        if path != self.path:  # the lock file: synced in full, two points (spec/FAULTS.md 6.1)
            self._fence()
            checkpoint.write_tmp(path, data)
            self.point(f"{what}: tmp written")
            self._rename(path, sync_dir=True)
            self.point(f"{what}: renamed")
            return
        # The checkpoint: the steps of the design's fsync policy, each fsync with its point.
        self._fence()
        checkpoint.write_tmp(path, data, sync=False)
        self.point(f"{what}: tmp written")
        if self.fsync != "none":
            with contextlib.suppress(FileNotFoundError):  # renamed by another process: nothing left to sync
                checkpoint.sync_tmp(path)
            self.point(f"{what}: tmp synced")
        self._rename(path, sync_dir=False)
        self.point(f"{what}: renamed")
        if self.fsync == "full":
            checkpoint.sync_directory(path)
            self.point(f"{what}: dir synced")

    def _rename(self, path: Path, *, sync_dir: bool) -> None:
        """Rename the temp file into place; Stopped when it is gone (another process renamed it first)."""
        self._fence()
        try:
            checkpoint.rename_into_place(path, sync_dir=sync_dir)
        except FileNotFoundError:
            gone = checkpoint.tmp_path(path).name
            raise Stopped(f"{gone}: gone before the rename (another process renamed it)") from None

    # -- the model and the turns -------------------------------------------------------------

    def turns(self, *, save_reply: bool) -> Iterator[Turn]:
        """The turns to work on, asking the scripted model when the last one is complete.

        An incomplete last turn is continued without a model call (its reply was saved). At
        the final answer the run is marked done and saved, and the iteration ends.
        """
        while True:
            turns = self.memory["turns"]
            if turns and not turns[-1]["complete"]:
                yield turns[-1]
                continue
            turn = self._reply(len(turns) + 1)
            if turn is None:  # the scripted model's final answer
                self.memory["done"] = True
                self.save("final")
                return
            turns.append(turn)
            if save_reply:
                self.save(f"reply {turn['index']}")
            yield turns[-1]

    def _reply(self, k: int) -> Turn | None:
        """Ask the scripted model with k - 1 turns answered: turn k, new (memory's shape), or None: the final answer."""
        with tracing.chat() as chat:
            self.ask_model()
            if k > len(self.job.turns):
                self.point("final reply arrived")
                tracing.reply(chat, self.job, (), {})
                return None
            asked = self._hand_out(k)
            self.point(f"reply {k} arrived")
            version = self._arguments(k, asked)
            args = {"args": version} if version != 1 else {}
            ids = self._ids(k)
            tracing.reply(chat, self.job, self.job.turns[k - 1], ids.get("ids", {}))
            return {"index": k, "results": {}, "marked": [], "complete": False, **ids, **args}

    def ask_model(self) -> None:
        """Send the conversation in memory to the scripted model; StuckError when the provider refuses it.

        The conversation is each turn's reply (its calls) with the results memory holds for
        them, less what `trim-context` cut (a turn's `trimmed`: 1, its results without its
        reply; 2, nothing). The provider refuses (HTTP 400) a tool call without its result or a
        result without its call, and counts the request (crashpoint.MALFORMED): the real side of
        `well-formed-transcript` (spec/CONVERSATIONS.md 1 and 7).
        """
        count("model_calls")
        for turn in self.memory["turns"]:
            kept = turn.get("trimmed", 0)
            if kept == 1 and turn["results"]:  # its results are sent without their calls
                count(MALFORMED)
                first = next(iter(turn["results"]))
                raise StuckError(f"the provider refuses the conversation: the result of {first} has no call")
            if kept:
                continue
            calls = [call.id for call in self.job.turns[turn["index"] - 1]]
            orphans = [c for c in calls if c not in turn["results"]] + [r for r in turn["results"] if r not in calls]
            if orphans:
                count(MALFORMED)
                raise StuckError(f"the provider refuses the conversation (HTTP 400): {orphans[0]} has no result")

    def _hand_out(self, k: int) -> int:
        """Under `changed-args`: note one more hand-out of reply `k` in the scripted model's file; how many so far."""
        if not self.args_may_change:
            return 0
        replies = self._replies()
        asked = replies["asked"][str(k)] = replies["asked"].get(str(k), 0) + 1
        (self.workdir / REPLIES_FILE).write_text(json.dumps(replies, sort_keys=True), encoding="utf-8")
        return asked

    def _arguments(self, k: int, asked: int) -> int:
        """The version of reply `k`'s arguments: 1, or after a strike at its re-asked arrival the next one.

        A reply handed out before passes the pause `args_chance(k)`; struck there
        (CRASHSWEEP_CHANGED_ARGS), its calls carry one version more than the highest so far.
        """
        if asked < 2 or pause(faults_env.args_chance(k)) not in self.changed_args:
            return 1
        replies = self._replies()
        changed = replies["changed"][str(k)] = replies["changed"].get(str(k), 0) + 1
        (self.workdir / REPLIES_FILE).write_text(json.dumps(replies, sort_keys=True), encoding="utf-8")
        return 1 + changed

    def _replies(self) -> dict[str, dict[str, int]]:
        path = self.workdir / REPLIES_FILE
        if not path.exists():
            return {"asked": {}, "changed": {}}
        replies: dict[str, dict[str, int]] = json.loads(path.read_text(encoding="utf-8"))
        return replies

    def _ids(self, k: int) -> dict[str, Any]:
        """With fresh call IDs: {"ids": {call: ID}} for reply `k`, new on every ask; else nothing."""
        if not self.fresh_ids:
            return {}
        counter = self.workdir / MODEL_FILE
        asked = int(counter.read_text(encoding="utf-8")) + 1 if counter.exists() else 1
        counter.write_text(str(asked), encoding="utf-8")
        return {"ids": {call.id: f"{call.id}.{asked}" for call in self.job.turns[k - 1]}}

    def open_calls(self, turn: Turn) -> Iterator[Call]:
        """The first call of `turn` that has no result yet, again and again until every call has one.

        A call whose tool failed (ToolFailed) still has no result, so it comes again: the loop
        body decides anew what it calls for (SITUATIONS.md section 2).
        """
        while True:
            call = next((c for c in self.job.turns[turn["index"] - 1] if c.id not in turn["results"]), None)
            if call is None:
                return
            yield call

    def has_marker(self, turn: Turn, call: Call) -> bool:
        """Whether `call` has an attempt marker in `turn`."""
        return call.id in turn["marked"]

    def mark(self, turn: Turn, call: Call) -> None:
        """Record an attempt marker for `call` and save it before the call goes out."""
        turn["marked"].append(call.id)
        self.save_marker(call)

    def store(self, turn: Turn, call: Call, answer: str) -> None:
        """Put `answer` in memory as the result of `call`."""
        turn["results"][call.id] = answer

    def end_turn(self, turn: Turn, *, save: bool = True) -> None:
        """Mark the turn complete and Save(turn k) (unless `save` is false: result_saves = "none")."""
        turn["complete"] = True
        if save:
            self.save(f"turn {turn['index']}")

    # -- sending and settling ------------------------------------------------------------------

    def send(self, call: Call, *, keyed: bool) -> str:
        """Send `call` to the tracker (a write with Key(run, call) when `keyed`); its answer."""
        run = self.memory["run"]
        call_id = self.memory["turns"][-1].get("ids", {}).get(call.id, call.id)
        request_key = key(run, call_id) if keyed and call.writes else None
        with tracing.tool(self.job, call, call_id, request_key) as span:
            answer = self._write(run, call, request_key) if call.writes else self._search(run, call)
            tracing.result(span, answer)
        return answer

    def _write(self, run: str, call: Call, request_key: str | None) -> str:
        """Send the write `call` (with `request_key`, if any) to the tracker: its record's number, "#N"."""
        target = issue_target(self.job, call)
        title = f"{self.job.name}: {call.id}"
        self._sent[call.id] = self._sent.get(call.id, 0) + 1
        self._retry_chance(run, call)
        sent = (call.id, self._sent[call.id])
        lose = sent in self.lose_replies or sent in self.failed_attempts
        self.tracker.lose_next_reply = lose
        self.tracker.fail_first = call.fails_after_accept  # the tracker fails the first request of the call
        self._in_flight(run, call.id)  # no crash point until the request is sent
        try:
            approval = self.approval_of(call)
            words = arguments_words(self.memory["turns"][-1].get("args", 1))
            if target is None:
                number = self.tracker.create_issue(
                    title, run=run, call=call.id, body=words.strip(), key=request_key, approval=approval
                )
            else:
                number = self.tracker.comment(
                    self._issue_of(target),
                    run=run,
                    call=call.id,
                    body=title + words,
                    key=request_key,
                    approval=approval,
                )
        except ConnectionError:
            if not lose and not call.fails_after_accept:
                self._answered(run, call.id)
                raise
            self.point(f"tracker accepted {call.id}")  # the tracker applied it; the reply never came
            self._answered(run, call.id)  # a quick error: the attempt answered, a layer may retry it
            self.point(f"tool failed {call.id}")
            raise ToolFailed(call.id) from None
        except Exception:
            self._answered(run, call.id)  # refused (a fencing token) or broken: nothing left in flight
            raise
        self.point(f"tracker accepted {call.id}")
        self.point(f"tool returned {call.id}")
        self._answered(run, call.id)
        return f"#{number}"

    def _search(self, run: str, call: Call) -> str:
        """A read: the issues the job filed so far, as an attempt the supervisor may keep in flight."""
        self._in_flight(run, call.id)
        try:
            found = self.tracker.search(self.job.name)
        except Exception:
            self._answered(run, call.id)
            raise
        self.point(f"tool returned {call.id}")
        self._answered(run, call.id)
        return f"{len(found)} issues"

    def _in_flight(self, run: str, call: str) -> None:
        """Under a one-attempt budget, the supervisor records the attempt in flight (RETRIES.md 1.8, rule 2)."""
        if self.supervisor is not None:
            self.supervisor.sending(run, call)

    def _answered(self, run: str, call: str) -> None:
        """The attempt answered (its result in hand, or a quick error): the supervisor clears it."""
        if self.supervisor is not None:
            self.supervisor.answered(run, call)

    def point(self, name: str) -> None:
        """Pass the crash point `name` (reported at the caller's line); then mark a timeout layer's chance there.

        A timeout layer (spec/RETRIES.md 1.1) may give up on the attempt at this point: the
        pause `timeout_chance(...)` says so, with the layer and the instance its retry spends.
        """
        crashpoint(name, where=call_site(1))
        if self.supervisor is None or not self.supervisor.times_out:
            return
        turns = self.memory.get("turns") or [{"complete": True}]
        turn = None if turns[-1]["complete"] else turns[-1]["index"]
        call = next((name[len(p) :] for p in (ACCEPTED, RETURNED) if name.startswith(p)), None)
        found = self.supervisor.timing_out(self.memory["run"], call, turn)
        if found is not None:
            index, layer, where = found
            pause(faults_env.timeout_chance(index, layer.scope, where))

    def _retry_chance(self, run: str, call: Call) -> None:
        """Announce, by a pause, that a retry layer would catch a failure of this write (faults/retry.py)."""
        if self.supervisor is None:
            return
        found = self.supervisor.catching(run, call.id, self.memory["turns"][-1]["index"])
        if found is not None:
            pause(faults_env.retry_chance(found[1].label, call.id))

    def settle(self, call: Call, *, keyed: bool, ladder: tuple[Rung, ...] = RUNGS) -> str:
        """Settle a call that has a marker and no result, on the first rung of `ladder` open to it."""
        for rung in ladder:
            if rung == "rerun-when-harmless" and (not call.writes or (keyed and self.offer.honours_keys)):
                count("reruns")  # rung 1: a repeat is harmless
                return self.send(call, keyed=keyed)
            if rung == "lookup" and self.offer.lookup:
                record = self.tracker.lookup(self.memory["run"], call.id)  # rung 2: ask the tracker
                count("lookups")  # once it answered: a lookup the fence refuses is none (FAULTS.md 7.1)
                self.point(f"lookup answered {call.id}")
                return f"#{record['number']}" if record else self.send(call, keyed=keyed)
            if rung == "person":
                return self._ask_person(call, keyed=keyed)
        raise RuntimeError(f"no rung of {ladder} settles {call.id}")

    def _ask_person(self, call: Call, *, keyed: bool) -> str:
        """Rung 3: a person looks at the tracker and answers, truthfully unless the nemesis says otherwise."""
        question = pause(f"person answers {call.id}")  # a wrong answer's chance (spec/FAULTS.md section 4)
        count("asks")
        record = self.tracker.lookup(self.memory["run"], call.id, fenced=False)  # a person's look (7.1)
        if question in self.wrong_answers:  # "no" although it happened, "yes" although it did not
            return self.send(call, keyed=keyed) if record else WRONG_ANSWER
        return f"#{record['number']}" if record else self.send(call, keyed=keyed)

    def _issue_of(self, target: Call) -> int:
        for turn in self.memory["turns"]:
            answer = turn["results"].get(target.id)
            if answer is not None and answer.startswith("#"):
                return int(answer.lstrip("#"))
            if answer is not None:  # a person's wrong "yes": no number; the first issue of the job instead
                found = self.tracker.search(self.job.name)
                if not found:
                    raise RuntimeError(f"{target.id} was said to have happened, and the tracker holds no issue")
                return int(found[0]["number"])
        raise RuntimeError(f"{target.id} has no result to comment on")
