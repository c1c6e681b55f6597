"""The reference loop's retry layers (spec/RETRIES.md 1.2-1.4): which layer catches a failed write, and its record.

A layer's attempts are its supervisor's, not the process's: they survive a crash, as
Temporal's attempt number and DBOS's step attempts do. Here the supervisor keeps them in a
file of the run's world beside the checkpoint (`supervisor.json`, the spent entries of
spec/retries.py, as the model's `World.struck` keeps them), written whole by a rename; it is
the environment's record, so no crash point is in it and a power cut does not take it back
(the loop's journal of the checkpoint's saves does not see it). Which layer catches is
spec/retries.py's `catching`, the model's own rule.

A `call` layer with a one-attempt budget (`schedule_to_close = "one-attempt"`, RETRIES.md 1.8)
also keeps the attempt in flight: recorded right before its request is sent (`sending`) and
cleared once it answered (`answered`), so a process that dies inside it leaves the model's
`attempt timed out RUN C`, and a start that loads a checkpoint of that run fails it (`failed`).
While an attempt is in flight its process holds a shared OS lock on `attempt.flock`: an entry
left by a process that still lives (held by the fault `pause` beside a second one, FAULTS.md 7)
is no timeout, as in the model, where only a death records it. The kernel drops the lock when
the process dies; the empty file's bytes are the same in every world.

A `timeout` layer (RETRIES.md 1.2) gives up on an attempt at a crash point (`timing_out`)
and starts a new one beside it: under a sweep the new attempt is a process started with
CRASHSWEEP_TIMED_OUT (faults/timeout.py), which records the retry first (`timed_out`).

The loop hears a caught failure as one of three answers: `call` (send the same request again,
the loop goes on as if that attempt had been the first), or the exceptions `RetryTurn` (throw
the turn away and ask the model again) and `RetryRun` (begin a new run in this process).
"""

from __future__ import annotations

import fcntl
import json
import os
from dataclasses import dataclass, field
from pathlib import Path

from crashsweep.realsweep.probe.crashpoint import count
from crashsweep.spec.retries import (
    ACCEPTED,
    FAILURES,
    TIMEOUTS,
    Layer,
    Stack,
    catching,
    counter,
    failed_for_good,
    spent_entry,
    timed_out,
)

SUPERVISOR_FILE = "supervisor.json"
"""The retry layers' spent attempts, beside the checkpoint: a JSON list of spec/retries.py's entries."""
FLIGHT_FILE = "attempt.flock"
"""The file a process with an attempt in flight (one-attempt budget) holds a shared OS lock on."""


class RetryTurn(Exception):
    """A `turn` layer caught a failure: the turn in memory is thrown away and the model asked again."""


class RetryRun(Exception):
    """A `run` layer caught a failure: the process begins a new run (a fresh run ID, the checkpoint unread)."""


@dataclass(frozen=True)
class Supervisor:
    """A design's retry layers (innermost first) and the file their spent attempts are kept in."""

    stack: Stack
    path: Path
    _flight: list[int] = field(default_factory=list, compare=False, repr=False)
    """This process's descriptor of FLIGHT_FILE, once opened (a list: the dataclass is frozen)."""

    def spent(self) -> tuple[str, ...]:
        """The retries made so far in this scenario, one entry each."""
        if not self.path.exists():
            return ()
        return tuple(json.loads(self.path.read_text(encoding="utf-8")))

    def catching(self, run: str, call: str, turn: int) -> tuple[int, Layer, str] | None:
        """The layer that would catch a failure of `call` in turn `turn` of `run`, its index and instance."""
        return catching(self.stack, FAILURES, self.spent(), run, call, turn)

    def catch(self, run: str, call: str, turn: int) -> str | None:
        """Catch a failure of `call`: the catching layer's scope, its retry recorded and counted; None: no layer."""
        found = self.catching(run, call, turn)
        if found is None:
            return None
        index, layer, where = found
        self._record((*self.spent(), spent_entry(index, where)))
        count(counter(layer.scope))
        return layer.scope

    @property
    def times_out(self) -> bool:
        """Whether a layer gives up on an attempt on a timeout (its chances are crash points)."""
        return any(layer.on == "timeout" for layer in self.stack)

    def timing_out(self, run: str, call: str | None, turn: int | None) -> tuple[int, Layer, str] | None:
        """The timeout layer that may give up here (in `call` of turn `turn`, None: in none), its index and instance."""
        return catching(self.stack, TIMEOUTS, self.spent(), run, call, turn)

    def timed_out(self, index: int, scope: str, where: str) -> None:
        """Record a timeout layer's retry, as its supervisor does before it starts the new attempt."""
        self._record((*self.spent(), spent_entry(index, where)))
        count(counter(scope))

    @property
    def one_attempt(self) -> bool:
        """Whether a layer's budget is one attempt's: an attempt in flight is recorded (RETRIES.md 1.8)."""
        return any(layer.one_attempt for layer in self.stack)

    def sending(self, run: str, call: str) -> None:
        """Record an attempt of `call` in flight, right before its request: a death inside it leaves it timed out."""
        entry = timed_out(self.stack, ACCEPTED + call, run)  # the model's entry, `attempt timed out RUN C`
        if entry is not None:
            fcntl.flock(self._flight_fd(), fcntl.LOCK_SH)
            self._record((*self.spent(), entry))

    def answered(self, run: str, call: str) -> None:
        """Clear the attempt of `call` in flight: it answered (a result, or a quick error the layers may retry)."""
        entry = timed_out(self.stack, ACCEPTED + call, run)
        if entry is None:
            return
        spent = list(self.spent())
        if entry in spent:
            spent.remove(entry)
            self._record(tuple(spent))
            fcntl.flock(self._flight_fd(), fcntl.LOCK_UN)

    def failed(self, run: str) -> bool:
        """Whether an attempt of `run` died in flight under a one-attempt budget: its next start fails it (1.8)."""
        return self.one_attempt and failed_for_good(self.spent(), run) and not self._in_flight_elsewhere()

    def _in_flight_elsewhere(self) -> bool:
        """Whether another live process holds an attempt in flight (its shared lock refuses an exclusive one)."""
        fd = self._flight_fd()
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            return True
        fcntl.flock(fd, fcntl.LOCK_UN)
        return False

    def _flight_fd(self) -> int:
        """This process's descriptor of FLIGHT_FILE, opened (and the file made) once."""
        if not self._flight:
            self._flight.append(os.open(self.path.with_name(FLIGHT_FILE), os.O_RDWR | os.O_CREAT, 0o644))
        return self._flight[0]

    def _record(self, spent: tuple[str, ...]) -> None:
        """Write the spent attempts whole: a temp file renamed over the record."""
        tmp = self.path.with_name(self.path.name + ".tmp")
        tmp.write_text(json.dumps(list(spent)), encoding="utf-8")
        os.replace(tmp, self.path)
