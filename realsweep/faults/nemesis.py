"""The sweep's nemesis: the faults beside a crash (spec/FAULTS.md), carried out on real processes.

The engine chooses a scenario's moves; a crash it carries out itself (SIGKILL at a point), a
fault it hands to the `Nemesis`, which holds the kinds a sweep enables (by name, as the CLI
parses them) and asks each kind (registry.py: one module per kind, kind.py for its shape)
where it may strike (`chances`, from the points and pauses a process passed) and how a
process is told to suffer it (`process_env`). The kinds themselves carry their faults out:
lost-reply and wrong-answer in the process (told through its environment, read by
probe/faults_env.py), key-expiry and trim-context between two processes (`restart_chances`,
`restart_fault`), power-loss and pause in scenarios of their own kind.

A process may suffer several faults, in the order of its points and pauses (`Fault.position`);
a crash after them strikes at a later point. The merging sweep (dedup/graph.py) makes each a
move of the graph of real worlds, so faults go as deep as crashes. A sweep of every scenario
(`--no-dedup`) injects them in scenarios of one move only: there `key-expiry`, `trim-context`
and `wrong-answer` have no chance (no restart and no person comes before the first move); a kind
that is not yet a move of the merging sweep (`every_scenario`: power-loss, pause) makes the
sweep one of every scenario, at depth 1.

A design's retry layers (spec/RETRIES.md) enable the move `retry` (faults/retry.py) where
the program says a layer would catch a failure: `Nemesis.retries`, not a fault of `--faults`.

`--call-ids fresh` is not a move: every process is started with CRASHSWEEP_CALL_IDS=fresh,
and the program's scripted model names its calls anew on every ask.

`--persistence` is not a move either: it chooses which disks a power cut may leave
(spec/PERSISTENCE.md). Under a model other than strict every process is told it, its shim
counts each cut's crash states, and power-loss offers a move per state.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from crashsweep.realsweep.faults.key_expiry import KEY_EXPIRY
from crashsweep.realsweep.faults.kind import RESTART, FaultKind
from crashsweep.realsweep.faults.move import Fault
from crashsweep.realsweep.faults.registry import BY_NAME, KINDS, MODEL_ONLY
from crashsweep.realsweep.faults.retry import RETRY
from crashsweep.realsweep.faults.timeout import TIMEOUT_RETRY
from crashsweep.realsweep.probe import faults_env
from crashsweep.realsweep.syscalls import persistence
from crashsweep.realsweep.world import World

__all__ = ["Fault", "Nemesis", "NemesisError", "process_env", "restart_fault"]


class NemesisError(ValueError):
    """A fault set the real sweep cannot carry out."""


def process_env(faults: Sequence[Fault]) -> dict[str, str]:
    """The environment that makes one process suffer `faults` (in-process kinds only)."""
    assert all(fault.kind.in_process for fault in faults), faults
    env: dict[str, str] = {}
    for kind in (*KINDS, RETRY, TIMEOUT_RETRY):
        mine = [fault for fault in faults if fault.kind == kind]
        if mine:
            env.update(kind.env(mine))
    return env


def restart_fault(name: str = KEY_EXPIRY.name) -> Fault:
    """The move at a restart of the kind named `name` (key-expiry, trim-context: an `at_restart` kind)."""
    kind = BY_NAME[name]
    assert kind.at_restart, f"{name} does not strike at a restart"
    return Fault(kind, 0, RESTART)


@dataclass(frozen=True)
class Nemesis:
    """The enabled fault kinds (by name), the call-ID mode of a sweep, and whether retry moves are open."""

    faults: tuple[str, ...] = ()
    fresh_ids: bool = False
    retries: bool = False
    """The program has retry layers (spec/RETRIES.md): the move `retry` strikes where it marks a chance."""
    timeouts: bool = False
    """Among them `timeout` layers: a new attempt beside the one given up on, where it marks a chance."""
    persistence: str = persistence.STRICT
    """What a power cut may leave (spec/PERSISTENCE.md): `strict`, one state a cut; another model, several."""

    @property
    def kinds(self) -> tuple[FaultKind, ...]:
        """The enabled kinds the real sweep carries out, in the registry's order, then `retry`."""
        enabled = tuple(kind for kind in KINDS if kind.name in self.faults)
        moves = (RETRY,) if self.retries else ()
        return (*enabled, *moves, *((TIMEOUT_RETRY,) if self.timeouts else ()))

    def check(self, depth: int, dedup: bool = True) -> None:
        """Refuse what the real sweep cannot carry out, before any process starts."""
        if self.persistence not in persistence.MODELS:
            known = ", ".join(persistence.MODELS)
            raise NemesisError(f"unknown persistence model {self.persistence!r} (known: {known})")
        if self.persistence != persistence.STRICT and "power-loss" not in self.faults:
            raise NemesisError("--persistence chooses what a power cut leaves: give --faults power-loss too")
        for name in self.faults:
            if name in MODEL_ONLY:
                raise NemesisError(f"the real sweep does not carry out fault {name!r}: {MODEL_ONLY[name]}")
            if name not in BY_NAME:
                raise NemesisError(f"unknown fault {name!r} (known: {', '.join(BY_NAME)})")
        if self.every_scenario and depth != 1:
            asked = [BY_NAME[name] for name in self.faults]  # in the order asked, then the design's own moves
            what = " and ".join(kind.doing for kind in (*asked, *self.kinds[len(asked) :]) if kind.every_scenario)
            raise NemesisError(f"the real sweep {what} in scenarios of one move: use depth 1, not {depth}")
        if (self.faults or self.retries or self.timeouts) and depth != 1 and not dedup:
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
        return any(kind.every_scenario for kind in self.kinds)

    def env(self) -> dict[str, str]:
        """The environment of every process of the sweep: the call-ID mode, and what its kinds tell every process."""
        env = {faults_env.CALL_IDS: faults_env.FRESH} if self.fresh_ids else {}
        for kind in self.kinds:
            env.update(kind.sweep_env())
        if self.persistence != persistence.STRICT and "power-loss" in self.faults:
            env[persistence.PERSISTENCE] = self.persistence
        return env

    @property
    def expires_keys(self) -> bool:
        """Whether the tracker may forget its keys at a restart (a kind strikes between processes)."""
        return any(kind.at_restart for kind in self.kinds)

    def restart_chances(self, world: World) -> tuple[str, ...]:
        """The enabled kinds that may strike before a restart from the saved `world`, by name, in registry order."""
        return tuple(kind.name for kind in self.kinds if kind.at_restart and kind.restart_chance(world))

    @property
    def keys_ignored(self) -> bool:
        """Whether a kind is swept against a tracker that ignores keys only (changed-args)."""
        return any(kind.keys_ignored for kind in self.kinds)

    @property
    def fails_tool_calls(self) -> bool:
        """Whether the program may see a tool call fail (a lost reply): its design must take a tool error."""
        return any(kind.fails_tool_calls for kind in self.kinds)

    def chances(
        self, points: Sequence[str], pauses: Sequence[tuple[int, str]] = (), after: tuple[int, int] = (0, 0)
    ) -> list[Fault]:
        """Every fault open in a process that passed `points` and `pauses`, later than `after`.

        `after` is the position of the last fault the process already suffers: chances come
        in the order of the process's work, and a fault strikes only after the ones before it
        (at one position, in the registry's order).
        """
        found = [fault for kind in self.kinds for fault in kind.chances(points, pauses, after)]
        return sorted(found, key=lambda fault: fault.position)
