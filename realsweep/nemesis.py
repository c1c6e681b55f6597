"""The sweep's nemesis: the faults beside a crash (spec/FAULTS.md), carried out on real processes.

The engine chooses a scenario's moves; a crash it carries out itself (SIGKILL at a point), a
fault it hands to the `Nemesis`, which says where each enabled kind may strike in a process
(`chances`, from the points the process passed) and how a process is told to suffer it (the
environment of that process). The program under test and its tracker service carry the fault
out:

- `lost-reply`: at each `tracker accepted <call>` point, the k-th pass of it. The process is
  started with CRASHSWEEP_LOSE_REPLY="k:<call>"; its k-th write of <call> asks the tracker to
  apply the write and lose the reply (tracker_http.py), and the process sees a transport error.
- `key-expiry` strikes at a restart and `wrong-answer` before a person's answer on rung 3:
  neither has a chance in a scenario of one move (no restart comes before the first move, and
  a person is asked only about a call a crash or a lost reply left unsettled, which takes a
  move already). The real sweep injects faults in scenarios of one move, so these two never
  strike there, exactly as in the model at depth 1.
- `power-loss`: at each point where a cut would lose something (read off the points' names,
  fsjournal.at_risk). The process records its checkpoint's file operations
  (CRASHSWEEP_FS_JOURNAL) and is killed at the point; the runner then undoes in its work
  directory what the cut loses (fsjournal.cut), and the restart runs on that disk.

- `pause` (a second live process, FAULTS.md section 7) is not carried out for real: a sweep
  with it is refused before any process starts.

`--call-ids fresh` is not a move: every process is started with CRASHSWEEP_CALL_IDS=fresh,
and the program's scripted model names its calls anew on every ask.
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from crashsweep.realsweep import fsjournal

LOSE_REPLY = "CRASHSWEEP_LOSE_REPLY"
"""Environment: "k:<call>", the k-th write request of <call> in this process loses its reply."""
CALL_IDS = "CRASHSWEEP_CALL_IDS"
"""Environment: "fresh" for new call IDs on every ask of the scripted model; else stable."""
ACCEPTED = "tracker accepted "
POWER_LOSS = "power-loss"
KINDS = ("lost-reply", "key-expiry", "wrong-answer", POWER_LOSS)
"""The fault kinds of spec/faults.py the nemesis knows, in its order."""
MODEL_ONLY = ("pause",)
"""Kinds of spec/faults.py the real sweep does not carry out: a second live process (FAULTS.md section 7)."""


class NemesisError(ValueError):
    """A fault set the real sweep cannot carry out."""


@dataclass(frozen=True)
class Fault:
    """One fault move: `kind` at the `occurrence`-th pass of `point`, the `index`-th point (from 1)."""

    kind: str
    index: int
    point: str
    occurrence: int = 1

    @property
    def label(self) -> str:
        """The fault in words: "lost-reply at tracker accepted create_a" (#k past the first)."""
        where = self.point if self.occurrence == 1 else f"{self.point}#{self.occurrence}"
        return f"{self.kind} at {where}"

    @property
    def code(self) -> str:
        """A short name for folders and tracker spaces: "lost-reply-3" (its place among the points)."""
        return f"{self.kind}-{self.index}"

    @property
    def crash_at(self) -> str:
        """Where the process dies ("k:<point>"): a power cut kills it there, then the runner cuts the disk."""
        return f"{self.occurrence}:{self.point}"

    def env(self) -> dict[str, str]:
        """The environment that makes the process suffer this fault (a power cut needs none)."""
        if self.kind == POWER_LOSS:
            return {}
        assert self.kind == "lost-reply", self.kind
        return {LOSE_REPLY: f"{self.occurrence}:{self.point[len(ACCEPTED) :]}"}


@dataclass(frozen=True)
class Nemesis:
    """The enabled fault kinds and the call-ID mode of a sweep."""

    faults: tuple[str, ...] = ()
    fresh_ids: bool = False

    def check(self, depth: int) -> None:
        """Refuse what the real sweep cannot carry out, before any process starts."""
        for kind in self.faults:
            if kind in MODEL_ONLY:
                raise NemesisError(
                    f"the real sweep cannot carry out {kind!r}: explore it in the model (compare --faults {kind})"
                )
            if kind not in KINDS:
                raise NemesisError(f"unknown fault {kind!r} (known: {', '.join(KINDS)})")
        if self.faults and depth != 1:
            raise NemesisError(f"the real sweep injects faults in scenarios of one move: use depth 1, not {depth}")

    def env(self) -> dict[str, str]:
        """The environment of every process of the sweep (the call-ID mode)."""
        return {CALL_IDS: "fresh"} if self.fresh_ids else {}

    def chances(self, points: Sequence[str]) -> list[Fault]:
        """Every fault move open in a process that passes `points`, in the order of the points."""
        found = []
        if "lost-reply" in self.faults:
            for i, point in enumerate(points, start=1):
                if point.startswith(ACCEPTED):
                    found.append(Fault("lost-reply", i, point, points[:i].count(point)))
        if POWER_LOSS in self.faults:
            for i, (point, risky) in enumerate(zip(points, fsjournal.at_risk(points), strict=True), start=1):
                if risky:
                    found.append(Fault(POWER_LOSS, i, point, points[:i].count(point)))
        return found


def lost_reply(environ: Mapping[str, str] = os.environ) -> tuple[str, int] | None:
    """In the process under test: (call, k) when its k-th write of `call` is to lose its reply."""
    raw = environ.get(LOSE_REPLY, "")
    if not raw:
        return None
    occurrence, _, call = raw.partition(":")
    if not occurrence.isdigit() or not call:
        raise ValueError(f"{LOSE_REPLY}={raw!r}: expected K:CALL")
    return call, int(occurrence)


def fresh_ids(environ: Mapping[str, str] = os.environ) -> bool:
    """In the process under test: whether its scripted model hands out new call IDs on every ask."""
    return environ.get(CALL_IDS, "") == "fresh"
