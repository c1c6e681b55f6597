"""The sweep's nemesis: the faults beside a crash (spec/FAULTS.md), carried out on real processes.

The engine chooses a scenario's moves; a crash it carries out itself (SIGKILL at a point), a
fault it hands to the `Nemesis`, which says where each enabled kind may strike (`chances`,
from the points and pauses a process passed) and how a process is told to suffer it (the
environment of that process). The program under test and its tracker carry the fault out:

- `lost-reply`: at the k-th pass of a `tracker accepted <call>` point. The process is
  started with CRASHSWEEP_LOSE_REPLY="k:<call>" (one line per lost reply); its k-th write of
  <call> asks the tracker to apply the write and lose the reply (tracker_http.py), and the
  process sees a transport error.
- `wrong-answer`: at a pause "person answers <call>" (crashpoint.pause: no crash point), the
  q-th pause of the process. It is started with CRASHSWEEP_WRONG_ANSWER="q" (one line per
  wrong answer), and its scripted person answers that question wrongly.
- `key-expiry`: at a restart (any process of a scenario but its first) while the tracker
  remembers a key. The sweep makes the tracker forget every key of the scenario's space
  before that process starts (tracker_store.forget_keys, on the saved world); no process is
  told anything.
- `power-loss`: at each point where a cut would lose something (read off the points' names,
  fsjournal.at_risk). The process records its checkpoint's file operations
  (CRASHSWEEP_FS_JOURNAL) and is killed at the point; the runner then undoes in its work
  directory what the cut loses (fsjournal.cut), and the restart runs on that disk. A sweep
  with power loss runs every scenario (`every_scenario`), in scenarios of one move.
- `pause` (a second live process, FAULTS.md section 7): at each crash point of the first
  process. The process is held there (the snapshot protocol's FIFO wait, and SIGSTOP), a
  restart runs beside it on the same disk and tracker, held in turn at its `wake`-th point
  (or run until it stops), then the paused one goes on with its memory (SIGCONT), then the
  held one (pausing.py). A sweep with pause runs every scenario (`every_scenario`), in
  scenarios of one move, as with power loss.

A process may suffer several faults, in the order of its points and pauses (`Fault.position`);
a crash after them strikes at a later point. The merging sweep (graph.py) makes each a move
of the graph of real worlds, so faults go as deep as crashes. A sweep of every scenario
(`--no-dedup`) injects them in scenarios of one move only: there `key-expiry` and
`wrong-answer` have no chance (no restart and no person comes before the first move).

`--call-ids fresh` is not a move: every process is started with CRASHSWEEP_CALL_IDS=fresh,
and the program's scripted model names its calls anew on every ask.
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace

from crashsweep.realsweep.probe import fsjournal

LOSE_REPLY = "CRASHSWEEP_LOSE_REPLY"
"""Environment: lines "k:<call>", the k-th write request of <call> in this process loses its reply."""
WRONG_ANSWER = "CRASHSWEEP_WRONG_ANSWER"
"""Environment: lines "q", the q-th pause of this process (a person's answer) is a wrong answer."""
CALL_IDS = "CRASHSWEEP_CALL_IDS"
"""Environment: "fresh" for new call IDs on every ask of the scripted model; else stable."""
ACCEPTED = "tracker accepted "
PERSON = "person answers "
RESTART = "restart"
POWER_LOSS = "power-loss"
PAUSE = "pause"
KINDS = ("lost-reply", "key-expiry", "wrong-answer", POWER_LOSS, PAUSE)
"""The fault kinds of spec/faults.py the nemesis knows, in its order."""
EVERY_SCENARIO = (POWER_LOSS, PAUSE)
"""The kinds swept scenario by scenario at depth 1 (not yet moves of the merging sweep)."""
WHAT = {POWER_LOSS: "cuts the power", PAUSE: "pauses a process"}
IN_PROCESS = ("lost-reply", "wrong-answer")
"""The kinds a running process suffers and goes on; key-expiry strikes between two processes,
a power cut ends its process, and a pause puts a second process beside it."""


class NemesisError(ValueError):
    """A fault set the real sweep cannot carry out."""


@dataclass(frozen=True)
class Fault:
    """One fault move: `kind` at the `occurrence`-th pass of `point`, after `index` points of its process.

    lost-reply: `point` is the `index`-th point (from 1) and `occurrence` its pass;
    wrong-answer: `point` is the pause, `index` the points passed before it, `occurrence`
    its number among the process's pauses; key-expiry: `point` is "restart"; pause: `point`
    is the `index`-th point, where process 1 is paused, and `wake` the point of the restart
    where it wakes (its index from 1, and its name as a label, "point#k" past the first
    pass), 0 and "" when it wakes as the restart stops.
    """

    kind: str
    index: int
    point: str
    occurrence: int = 1
    wake: int = 0
    wake_at: str = ""

    @property
    def label(self) -> str:
        """The fault in words: "lost-reply at tracker accepted create_a" (#k past the first)."""
        if self.kind == "key-expiry":
            return "key-expiry at restart"
        where = self.point
        if self.occurrence > 1 and self.kind in ("lost-reply", PAUSE):
            where = f"{self.point}#{self.occurrence}"
        if self.kind == PAUSE:
            return f"pause at {where}, wake at {self.wake_at if self.wake else 'p2 stopped'}"
        return f"{self.kind} at {where}"

    @property
    def code(self) -> str:
        """A short name for folders and tracker spaces: "lost-reply-3" (its place among the points), "pause-3-5"."""
        return f"{self.kind}-{self.index}" + (f"-{self.wake}" if self.kind == PAUSE else "")

    @property
    def position(self) -> tuple[int, int]:
        """Where it strikes in its process: (points passed, 0) at a point, (points passed, q) at the q-th pause."""
        return (self.index, 0) if self.kind in ("lost-reply", POWER_LOSS, PAUSE) else (self.index, self.occurrence)

    @property
    def counter(self) -> str:
        """The counter that tallies it (`fault.lost-reply`), as the model's fault edges do.

        spec.faults.fault_counter names it too; the process under test (python -S) cannot import spec.faults.
        """
        return f"fault.{self.kind}"

    @property
    def crash_at(self) -> str:
        """Where the process dies ("k:<point>"): a power cut kills it there, then the runner cuts the disk."""
        return f"{self.occurrence}:{self.point}"

    def env(self) -> dict[str, str]:
        """The environment that makes the process suffer this fault alone (a power cut and a pause need none)."""
        return {} if self.kind in EVERY_SCENARIO else process_env((self,))

    def waking_at(self, wake: int, points: Sequence[str]) -> Fault:
        """This pause with its process waking at the restart's point `wake` (from 1) of `points`."""
        point = points[wake - 1]
        occurrence = points[:wake].count(point)
        return replace(self, wake=wake, wake_at=point if occurrence == 1 else f"{point}#{occurrence}")


def process_env(faults: Sequence[Fault]) -> dict[str, str]:
    """The environment that makes one process suffer `faults` (in-process kinds only)."""
    env = {}
    lost = [f"{f.occurrence}:{f.point[len(ACCEPTED) :]}" for f in faults if f.kind == "lost-reply"]
    wrong = [str(f.occurrence) for f in faults if f.kind == "wrong-answer"]
    assert all(f.kind in IN_PROCESS for f in faults), faults
    if lost:
        env[LOSE_REPLY] = "\n".join(lost)
    if wrong:
        env[WRONG_ANSWER] = "\n".join(wrong)
    return env


@dataclass(frozen=True)
class Nemesis:
    """The enabled fault kinds and the call-ID mode of a sweep."""

    faults: tuple[str, ...] = ()
    fresh_ids: bool = False

    def check(self, depth: int, dedup: bool = True) -> None:
        """Refuse what the real sweep cannot carry out, before any process starts."""
        for kind in self.faults:
            if kind not in KINDS:
                raise NemesisError(f"unknown fault {kind!r} (known: {', '.join(KINDS)})")
        if self.every_scenario and depth != 1:
            what = " and ".join(WHAT[k] for k in self.faults if k in EVERY_SCENARIO)
            raise NemesisError(f"the real sweep {what} in scenarios of one move: use depth 1, not {depth}")
        if self.faults and depth != 1 and not dedup:
            raise NemesisError(
                f"a sweep of every scenario (--no-dedup) injects faults in scenarios of one move: use depth 1, "
                f"not {depth}, or merge worlds (drop --no-dedup)"
            )

    @property
    def every_scenario(self) -> bool:
        """Whether the sweep must run every scenario (no merged worlds).

        A power cut and a pause are not yet moves of the merging sweep, so they are swept in
        scenarios of one move, each from scratch.
        """
        return any(kind in EVERY_SCENARIO for kind in self.faults)

    def env(self) -> dict[str, str]:
        """The environment of every process of the sweep (the call-ID mode)."""
        return {CALL_IDS: "fresh"} if self.fresh_ids else {}

    @property
    def expires_keys(self) -> bool:
        """Whether the tracker may forget its keys at a restart."""
        return "key-expiry" in self.faults

    def chances(
        self, points: Sequence[str], pauses: Sequence[tuple[int, str]] = (), after: tuple[int, int] = (0, 0)
    ) -> list[Fault]:
        """Every fault open in a process that passed `points` and `pauses`, later than `after`.

        `after` is the position of the last fault the process already suffers: chances come
        in the order of the process's work, and a fault strikes only after the ones before it.
        """
        found = []
        if "lost-reply" in self.faults:
            for i, point in enumerate(points, start=1):
                if point.startswith(ACCEPTED) and (i, 0) > after:  # a pass at or before `after` already lost its reply
                    found.append(Fault("lost-reply", i, point, points[:i].count(point)))
        if POWER_LOSS in self.faults:
            for i, (point, risky) in enumerate(zip(points, fsjournal.at_risk(points), strict=True), start=1):
                if risky and (i, 0) > after:
                    found.append(Fault(POWER_LOSS, i, point, points[:i].count(point)))
        if PAUSE in self.faults:  # every crash point (a person's pause is none: FAULTS.md 7)
            found += [Fault(PAUSE, i, p, points[:i].count(p)) for i, p in enumerate(points, start=1) if (i, 0) > after]
        if "wrong-answer" in self.faults:
            for q, (passed, name) in enumerate(pauses, start=1):
                if name.startswith(PERSON) and (passed, q) > after:
                    found.append(Fault("wrong-answer", passed, name, q))
        return sorted(found, key=lambda f: f.position)


def restart_fault() -> Fault:
    """The key-expiry move at a restart."""
    return Fault("key-expiry", 0, RESTART)


def _lines(environ: Mapping[str, str], name: str) -> list[str]:
    return [line for line in environ.get(name, "").splitlines() if line]


def lost_replies(environ: Mapping[str, str] = os.environ) -> set[tuple[str, int]]:
    """In the process under test: every (call, k) whose k-th write of `call` is to lose its reply."""
    found = set()
    for raw in _lines(environ, LOSE_REPLY):
        occurrence, _, call = raw.partition(":")
        if not occurrence.isdigit() or not call:
            raise ValueError(f"{LOSE_REPLY}={raw!r}: expected K:CALL")
        found.add((call, int(occurrence)))
    return found


def lost_reply(environ: Mapping[str, str] = os.environ) -> tuple[str, int] | None:
    """In the process under test: (call, k) when its k-th write of `call` is to lose its reply (the first)."""
    found = sorted(lost_replies(environ), key=lambda pair: pair[1])
    return found[0] if found else None


def wrong_answers(environ: Mapping[str, str] = os.environ) -> set[int]:
    """In the process under test: the numbers of the pauses (a person's answers) that are to be wrong."""
    found = set()
    for raw in _lines(environ, WRONG_ANSWER):
        if not raw.isdigit():
            raise ValueError(f"{WRONG_ANSWER}={raw!r}: expected the number of a pause")
        found.add(int(raw))
    return found


def fresh_ids(environ: Mapping[str, str] = os.environ) -> bool:
    """In the process under test: whether its scripted model hands out new call IDs on every ask."""
    return environ.get(CALL_IDS, "") == "fresh"
