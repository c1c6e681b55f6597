"""The reference loop's retry layers (spec/RETRIES.md 1.2-1.4): which layer catches a failed write, and its record.

A layer's attempts are its supervisor's, not the process's: they survive a crash, as
Temporal's attempt number and DBOS's step attempts do. Here the supervisor keeps them in a
file of the run's world beside the checkpoint (`supervisor.json`, the spent entries of
spec/retries.py, as the model's `World.struck` keeps them), written whole by a rename; it is
the environment's record, so no crash point is in it and a power cut does not take it back
(the loop's journal of the checkpoint's saves does not see it). Which layer catches is
spec/retries.py's `catching`, the model's own rule.

A `timeout` layer (RETRIES.md 1.2) gives up on an attempt at a crash point (`timing_out`)
and starts a new one beside it: under a sweep the new attempt is a process started with
CRASHSWEEP_TIMED_OUT (faults/timeout.py), which records the retry first (`timed_out`).

The loop hears a caught failure as one of three answers: `call` (send the same request again,
the loop goes on as if that attempt had been the first), or the exceptions `RetryTurn` (throw
the turn away and ask the model again) and `RetryRun` (begin a new run in this process).
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass
from pathlib import Path

from crashsweep.realsweep.probe.crashpoint import count
from crashsweep.spec.retries import FAILURES, TIMEOUTS, Layer, Stack, catching, counter, spent_entry

SUPERVISOR_FILE = "supervisor.json"
"""The retry layers' spent attempts, beside the checkpoint: a JSON list of spec/retries.py's entries."""


class RetryTurn(Exception):
    """A `turn` layer caught a failure: the turn in memory is thrown away and the model asked again."""


class RetryRun(Exception):
    """A `run` layer caught a failure: the process begins a new run (a fresh run ID, the checkpoint unread)."""


@dataclass(frozen=True)
class Supervisor:
    """A design's retry layers (innermost first) and the file their spent attempts are kept in."""

    stack: Stack
    path: Path

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

    def _record(self, spent: tuple[str, ...]) -> None:
        """Write the spent attempts whole: a temp file renamed over the record."""
        tmp = self.path.with_name(self.path.name + ".tmp")
        tmp.write_text(json.dumps(list(spent)), encoding="utf-8")
        os.replace(tmp, self.path)
