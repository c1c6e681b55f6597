"""power-loss for real: its chances where a cut loses something, and its strike: a kill, then the disk cut."""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Callable, Hashable, Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path

from crashsweep.realsweep.faults.power_loss import EXIT, POWER_LOSS
from crashsweep.realsweep.probe import fsjournal

POINTS = ("lock: tmp written", "lock: renamed", "start: tmp written", "start: renamed", "reply 1 arrived")


def test_a_power_cut_may_strike_where_something_is_not_durable() -> None:
    """spec/FAULTS.md 6.3: under fsync none every point from the first save's write on; its process dies there."""
    found = POWER_LOSS.chances(POINTS, (), (0, 0))
    assert [f.point for f in found] == ["start: tmp written", "start: renamed", "reply 1 arrived"]
    assert found[0].crash_at == "1:start: tmp written"
    assert found[0].env() == {}
    assert found[2].label == "power-loss at reply 1 arrived"
    assert (found[2].code, found[2].position) == ("power-loss-5", (5, 0))
    assert [f.index for f in POWER_LOSS.chances(POINTS, (), (4, 0))] == [5]


def test_a_cut_is_named_as_a_crash_is_with_its_pass() -> None:
    """Each cut its own name, "#K" past the first pass (as --crash takes it): 8 cuts at one call are 8 names.

    A name that itself ends in "#digits" carries its pass even at the first, so that the name reads back.
    """
    points = ("start: tmp written", "start: tmp written")
    assert [f.label for f in POWER_LOSS.chances(points, (), (0, 0))] == [
        "power-loss at start: tmp written",
        "power-loss at start: tmp written#2",
    ]
    issue = ("start: tmp written", "issue #2")
    assert [f.label for f in POWER_LOSS.chances(issue, (), (0, 0))][1] == "power-loss at issue #2#1"


@dataclass
class FakeStage:
    """A scenario under way: records the kill and writes the journal the killed process would have written."""

    folder: Path
    workdir: Path
    number: int = 2
    killed: list[tuple[str, dict[str, str]]] = field(default_factory=list)

    def run(self, env: Mapping[str, str]) -> None:
        self.kill("", env)  # to its end: the same calls on record here

    def shared(self, cut: Hashable, end: Callable[[], None], states: Callable[[], int]) -> None:
        end()  # no sharing here: the kill every time

    def passed(self) -> list[str]:
        return [crash_at.partition(":")[2] for crash_at, _ in self.killed if crash_at]  # it reached each kill

    def kill(self, crash_at: str, env: Mapping[str, str]) -> None:
        self.killed.append((crash_at, dict(env)))
        (self.workdir / "checkpoint.json.tmp").write_text("new", encoding="utf-8")
        entry = {"op": "write", "file": "checkpoint.json.tmp", "data": "new", "before": None}
        Path(env[fsjournal.JOURNAL]).write_text(json.dumps(entry) + "\n", encoding="utf-8")


def test_its_strike_kills_the_next_process_with_its_journal_and_cuts_the_disk(tmp_path: Path) -> None:
    """The unsynced temp file the killed process wrote is gone after the cut; the stage's process is ended."""
    stage = FakeStage(tmp_path, tmp_path / "work")
    stage.workdir.mkdir()
    fault = POWER_LOSS.chances(POINTS, (), (0, 0))[0]
    assert fault.strike(stage)
    assert stage.killed == [("1:start: tmp written", {fsjournal.JOURNAL: str(tmp_path / "journal-2.jsonl")})]
    assert not (stage.workdir / "checkpoint.json.tmp").exists()


def test_it_is_swept_scenario_by_scenario() -> None:
    assert (POWER_LOSS.every_scenario, POWER_LOSS.doing) == (True, "cuts the power")
    assert not POWER_LOSS.in_process


SYSCALLS = ("write s.tmp", "rename s.tmp -> s", "connect <tracker>", "write <tracker>")


def test_at_syscall_points_it_strikes_where_a_cut_before_the_call_loses_something() -> None:
    """spec/POINTS.md section 4: not before the first write (nothing unsynced yet); at every point after it."""
    found = POWER_LOSS.chances(SYSCALLS, (), (0, 0))
    assert [(f.index, f.point) for f in found][:3] == [
        (2, "rename s.tmp -> s"),
        (3, "connect <tracker>"),
        (4, SYSCALLS[3]),
    ]
    assert found[0].crash_at == "1:rename s.tmp -> s"


def test_a_cut_at_exit_is_offered_when_the_calls_leave_something_unsynced() -> None:
    """spec/POINTS.md 4 rule 6: past the last call, a cut once the process has exited.

    The calls above never sync s.tmp's data nor the folder's entries: at exit they are still
    at risk, so the fifth chance is the cut at exit. A program whose last calls sync the file
    and its folder leaves nothing to lose: no cut at exit (nor at a point after the fsyncs).
    """
    found = POWER_LOSS.chances(SYSCALLS, (), (0, 0))
    assert [(f.index, f.point, f.label) for f in found][3:] == [(5, EXIT, "power-loss at exit")]
    synced = ("write s", "fsync s", "fsync .")
    assert [f.point for f in POWER_LOSS.chances(synced, (), (0, 0))] == ["fsync s", "fsync ."]
    assert POWER_LOSS.chances(SYSCALLS, (), (5, 0)) == []  # nothing after the exit
    assert [f.point for f in POWER_LOSS.chances(("start: tmp written",) * 2, (), (0, 0))] == ["start: tmp written"] * 2


def test_a_cut_at_exit_runs_the_process_to_its_end_then_cuts(tmp_path: Path) -> None:
    """The cut at exit kills nothing: the process runs to its end with its calls on record, then the disk is cut."""
    stage = FakeStage(tmp_path, tmp_path / "work")
    stage.workdir.mkdir()
    fault = POWER_LOSS.chances(SYSCALLS, (), (0, 0))[-1]
    assert fault.strike(stage)
    assert stage.killed == [("", {fsjournal.JOURNAL: str(tmp_path / "journal-2.jsonl")})]
    assert not (stage.workdir / "checkpoint.json.tmp").exists()
    assert fault.reached(())


@dataclass
class TracedStage(FakeStage):
    """As the syscall shim leaves things: the start copy beside the journal, every call on record."""

    def kill(self, crash_at: str, env: Mapping[str, str]) -> None:
        self.killed.append((crash_at, dict(env)))
        journal = Path(env[fsjournal.JOURNAL])
        Path(str(journal) + ".start").mkdir()
        (self.workdir / "s").write_text("new", encoding="utf-8")
        entries = [{"op": "create", "file": "s"}, {"op": "write", "file": "s", "offset": 0, "data": b"new".hex()}]
        journal.write_text("".join(json.dumps(entry) + "\n" for entry in entries), encoding="utf-8")


def test_after_a_traced_process_the_cut_follows_the_persistence_model(tmp_path: Path) -> None:
    """The file created and written, never synced, is gone: the work folder is its start copy (empty)."""
    stage = TracedStage(tmp_path, tmp_path / "work")
    stage.workdir.mkdir()
    assert POWER_LOSS.chances(SYSCALLS, (), (0, 0))[0].strike(stage)
    assert list(stage.workdir.iterdir()) == []


WAL_PROGRAM = """
import os

if not os.path.exists("progress"):
    with open("wal", "a") as wal:
        wal.write("entry\\n")
    fd = os.open("progress", os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
    os.write(fd, b"1")
    os.fsync(fd)
    os.close(fd)
    folder = os.open(".", os.O_RDONLY)
    os.fsync(folder)
    os.close(folder)
if not os.path.exists("finished"):
    os.mkdir("finished")
"""
"""Appends to `wal` (never fsynced), saves its progress durably, then marks itself finished."""
WAL_CHECK = """
from crashsweep import Outcome, Scenario


def check(scenario: Scenario) -> Outcome:
    wal = scenario.workdir / "wal"
    return Outcome.of(wal.read_text().splitlines() if wal.exists() else [], ["entry"])
"""
ROOT = Path(__file__).resolve().parents[3]


def test_excluding_a_write_from_the_points_keeps_what_a_cut_of_it_loses(tmp_path: Path) -> None:
    """--points-exclude wal: no crash at the append, but the cut at `mkdir finished` still loses it (issue 41, 5).

    Points kept: write progress, fsync progress, fsync ., mkdir finished. At the mkdir the
    progress is durable (the restart skips the append) but `wal`'s data never was: the cut
    leaves it empty, and the entry is missing. Without the dropped append counted, nothing
    looked at risk there and the sweep held. The cut at exit (spec/POINTS.md 4 rule 6: the
    mkdir and the append are still unsynced when the program ends) loses it the same way:
    two scenarios with the entry missing, the exit's named first.
    """
    (tmp_path / "wal_program.py").write_text(WAL_PROGRAM, encoding="utf-8")
    (tmp_path / "wal_check.py").write_text(WAL_CHECK, encoding="utf-8")
    target = f"{sys.executable} {tmp_path / 'wal_program.py'}"
    command = [str(ROOT / "bin" / "crashsweep"), "sweep", "--points", "syscalls", "--target", target]
    command += ["--check", "wal_check:check", "--depth", "1", "--faults", "power-loss", "--points-exclude", "wal"]
    run = subprocess.run(command, cwd=tmp_path, capture_output=True, text=True, check=False, timeout=300)
    assert run.returncode == 1, run.stdout + run.stderr
    assert "crash points  4  (syscalls: " in run.stdout
    assert "missing 2   " in run.stdout
    assert (
        "no-loss       VIOLATED  first in scenario [power-loss at exit]: power-loss at exit: the process exits, "
        in run.stdout
    )


@dataclass
class SharingStage(TracedStage):
    """A traced stage that shares a cut's kill (as process/stage.py's does): it records what the strike hands it."""

    handed: list[tuple[object, int]] = field(default_factory=list)

    def shared(self, cut: Hashable, end: Callable[[], None], states: Callable[[], int]) -> None:
        end()
        self.handed.append((cut, states()))


def test_a_crash_state_hands_its_kill_to_a_stage_that_shares_it_keyed_by_its_cut(tmp_path: Path) -> None:
    """alice's state 2 of the cut before `rename`: the kill goes through `shared`, keyed without the state.

    The journal (e1 create s, e2 write s 3 bytes at 0; b = 0, n = 2) has under alice (spec/
    PERSISTENCE.md 2.4) prefix(0), prefix(1), then e2's states: no torn one (3 bytes are one
    piece) and grown(1) (it extends the empty s); no omit(i), as e1, the only i in 1 .. n - 1,
    is no write. 3 states: the count `shared` reads from the journal. State 2 is prefix(1):
    `s` created, empty.
    """
    stage = SharingStage(tmp_path, tmp_path / "work")
    stage.workdir.mkdir()
    first = POWER_LOSS.chances(SYSCALLS, (), (0, 0))[0]
    fault = replace(first, detail="alice 2")
    assert fault.strike(stage)
    assert stage.handed == [((first.index, first.point, first.occurrence, "alice"), 3)]
    assert [p.name for p in stage.workdir.iterdir()] == ["s"]
    assert (stage.workdir / "s").read_bytes() == b""
    strict = TracedStage(tmp_path / "strict", tmp_path / "strict" / "work")
    strict.workdir.mkdir(parents=True)
    assert first.strike(strict)  # strict: one state a cut, nothing to share, the kill as before
    assert len(strict.killed) == 1
