"""power-loss for real (spec/FAULTS.md section 6): the power goes, and what was not fsynced is lost.

It may strike at each point where a cut would lose something, read off the points' names:
the reference loop's marked points (probe/fsjournal.at_risk) or, under `--points syscalls`,
the program's system calls (syscalls/names.at_risk: spec/POINTS.md section 4), with the calls
`--points-exclude` dropped still counted (logged as pauses by the shim). The process
records its file operations (CRASHSWEEP_FS_JOURNAL: the checkpoint's saves, or every call on
the work folder with the work folder as it started) and is killed at the point; then the work
directory loses what the cut loses (fsjournal.cut, or syscalls/durable.cut over every file),
and the restart runs on that disk. Not yet a move of the merging sweep: a sweep with power
loss runs every scenario, in scenarios of one move.

Under a persistence model other than strict (spec/PERSISTENCE.md, `--persistence`), a cut
may leave several disks: the shim logs each cut's count of crash states among the pauses
(names.crash_states), a move is offered per state (its `detail`: "MODEL S"), labelled
"power-loss at NAME#K / state S", and the strike lays out that state (persistence.files).
The states of one cut share one killed process (process/cuts.py): the first state's strike
kills it and its leftovers are kept (the journal with its start copy, the logs, the tracker
space); every other state of the cut starts from a copy of them, lays out its own state from
the kept journal, and restarts. Each is still a scenario of its own; only fewer processes run.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from crashsweep.realsweep.faults.kind import AtPoint, Passed, Stage
from crashsweep.realsweep.faults.move import Fault
from crashsweep.realsweep.probe import fsjournal
from crashsweep.realsweep.syscalls import durable, names, persistence
from crashsweep.spec import faults as model

EXIT = "exit"
"""The point of a cut once the process has exited (`--points syscalls` only): "power-loss at exit"."""
AT_EXIT = f"{model.POWER_LOSS.name} at {EXIT}"
"""That cut's label (what `label` gives it)."""
STATE = " / state "
"""Between a cut and its crash state's number, in a label and in `--crash`: "write s#2 / state 3"."""


def split_state(crash: str) -> tuple[str, int]:
    """A `--crash` text as (the point, its crash state's number; 0 when it names none)."""
    point, found, number = crash.rpartition(STATE)
    if not found or not number.isdigit() or int(number) < 1:
        return crash, 0
    return point, int(number)


def cut_words(labels: Sequence[str]) -> str:
    """What the power cuts among a scenario's fault labels do, in words (at a point the process dies)."""
    state = next((label.rpartition(STATE)[2] for label in labels if STATE in label), "")
    kept = f"the disk is left in crash state {state} of the persistence model" if state else ""
    if any(label.partition(STATE)[0] == AT_EXIT for label in labels):
        return f"the process exits, then the power goes: {kept or 'what was not fsynced is lost'}"
    return f"the process dies, {kept or 'what was not fsynced is lost'}"


@dataclass(frozen=True)
class PowerLoss(AtPoint):
    """The process dies at its point and the disk loses what was not durable."""

    name = model.POWER_LOSS.name
    every_scenario = True
    doing = "cuts the power"

    def chances(self, points: Sequence[str], pauses: Passed, after: tuple[int, int]) -> list[Fault]:
        """Each point after `after` where a cut would lose something.

        Syscall points: the calls the points' filters dropped count too (the shim logs them among
        the pauses): filters choose where a cut is tried, never what a cut loses.
        """
        counted = names.crash_states(pauses)
        if counted:
            return _each_state(self, points, counted, after)
        syscalls = bool(points) and all(names.parse(point) is not None for point in points)
        risky = names.at_risk(points, pauses) if syscalls else fsjournal.at_risk(points)
        found = [
            Fault(self, i, point, points[:i].count(point))
            for i, (point, at_risk) in enumerate(zip(points, risky, strict=True), start=1)
            if at_risk and (i, 0) > after
        ]
        exit_at = len(points) + 1
        if syscalls and names.at_risk_at_exit(points, pauses) and (exit_at, 0) > after:
            found.append(Fault(self, exit_at, EXIT))  # spec/POINTS.md 4, rule 6
        return found

    def reached(self, fault: Fault, points: Sequence[str]) -> bool:
        """A cut at exit strikes a process that ran to its end; any other, one that reached its point."""
        return fault.point == EXIT or super().reached(fault, points)

    def label(self, fault: Fault) -> str:
        """The cut in words, named as a crash is: "power-loss at fdatasync .#3" (the point's 3rd pass).

        What follows "power-loss at " is what `--crash` takes (with `--faults power-loss`, a re-run
        of this cut): "#K" past the first pass, and "#1" too when the name itself ends in "#digits".
        """
        point = fault.point
        ambiguous = "#" in point and point.rpartition("#")[2].isdigit()
        cut = point if fault.occurrence == 1 and not ambiguous else f"{point}#{fault.occurrence}"
        state = f"{STATE}{_state(fault)[1]}" if fault.detail else ""
        return f"{self.name} at {cut}{state}"

    def code(self, fault: Fault) -> str:
        """A short name for folders: "power-loss-3", "power-loss-3-s2" for a cut's second crash state."""
        state = f"-s{_state(fault)[1]}" if fault.detail else ""
        return f"{self.name}-{fault.index}{state}"

    def strike(self, fault: Fault, stage: Stage) -> bool:
        """Kill the stage's next process at the point, its file operations on record; then cut the disk.

        A crash state of a persistence model shares that kill with the other states of its cut
        (Stage.shared: the runner's, process/cuts.py); its own state is then laid out from the
        journal the kill left.
        """
        journal = stage.folder / f"journal-{stage.number}.jsonl"
        env = {fsjournal.JOURNAL: str(journal)}

        def end() -> None:
            if fault.point == EXIT:
                stage.run(env)  # to its end, every call on record, then the cut
            else:
                stage.kill(fault.crash_at, env)

        if fault.detail:
            model = _state(fault)[0]
            stage.shared((fault.index, fault.point, fault.occurrence, model), end, lambda: _count(model, journal))
        else:
            end()
        if fault.detail and not self.reached(fault, stage.passed()):
            return True  # no cut: the runner says the process never reached the point (a re-run's typo)
        if fault.detail:  # a crash state of a persistence model (spec/PERSISTENCE.md)
            _lay_state(stage.workdir, journal, fault)
        elif durable.traced(journal):  # the syscall tracer's journal: the work folder's start copy beside it
            durable.cut(stage.workdir, journal)
        else:
            fsjournal.cut(stage.workdir, journal)
        return True


POWER_LOSS = PowerLoss()


def _each_state(
    kind: PowerLoss, points: Sequence[str], counted: dict[int, tuple[str, int]], after: tuple[int, int]
) -> list[Fault]:
    """A move per crash state of each cut the shim counted (after `points[:i-1]`), then of the cut at exit."""
    found: list[Fault] = []
    for i, point in enumerate([*points, EXIT], start=1):
        name, states = counted.get(i - 1, ("", 0))
        if (i, 0) <= after:
            continue
        occurrence = 1 if point == EXIT else points[:i].count(point)
        found.extend(Fault(kind, i, point, occurrence, detail=f"{name} {s}") for s in range(1, states + 1))
    return found


def _state(fault: Fault) -> tuple[str, int]:
    """A move's persistence model and crash state's number, from its `detail` ("MODEL S")."""
    model, _, number = fault.detail.partition(" ")
    return model, int(number)


def _lay_state(workdir: Path, journal: Path, fault: Fault) -> None:
    """Leave in `workdir` the crash state `fault` names, of the journal and its start copy."""
    model, number = _state(fault)
    start, entries = durable.recorded(journal)
    durable.lay_out(workdir, persistence.files(model, entries, start, number))


def _count(model: str, journal: Path) -> int:
    """How many crash states the cut the journal records has under `model` (what the shim counted there)."""
    start, entries = durable.recorded(journal)
    return len(persistence.states(model, entries, start))
