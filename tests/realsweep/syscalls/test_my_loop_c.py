"""docs/examples/my_loop.c swept with --points syscalls: crashes, keys, power loss; figures derived by hand.

my_loop.c from an empty folder passes 16 points (test_trace.MY_LOOP): the start save S0
(1 write tmp, 2 fsync tmp, 3 rename, 4 fsync .), create_a's request (5 connect, 6 write
<tracker>), its save S1 (7-10), create_b's request (11, 12), its save S2 (13-16). A kill comes
before its call. With --no-fsync a save is two points (write tmp, rename): 10 in all.
"""

from __future__ import annotations

import shlex
import shutil
import subprocess
from pathlib import Path

from crashsweep.realsweep.faults.nemesis import Nemesis
from crashsweep.realsweep.probe.modes import Points
from crashsweep.realsweep.sweep import SweepOptions, SweepResult, Target, sweep
from tests.realsweep.syscalls.conftest import EXAMPLES, example_check
from tests.realsweep.syscalls.test_trace import MY_LOOP

check = example_check("my_c_loop_check")
SYSCALLS = Points(("syscalls",))
ROOT = Path(__file__).resolve().parents[3]


def swept(binary: Path, *args: str, tracker: str, depth: int = 1, **options: object) -> SweepResult:
    """A sweep of my_loop.c with `args` on a tracker of mode `tracker`."""
    nemesis = options.pop("nemesis", None)
    chosen = SweepOptions(depth=depth, tracker=tracker, points=SYSCALLS, workers=2, **options)  # type: ignore[arg-type]
    return sweep(Target.command([str(binary), *args]), check, chosen, nemesis=nemesis)  # type: ignore[arg-type]


def dups(result: SweepResult) -> dict[str, int]:
    """The scenarios with duplicates, by code, and their duplicates."""
    return {s.code: s.outcome.dups for s in result.scenarios if s.outcome.dups}


def test_depth_1_keyless_duplicates_where_a_reply_is_not_yet_saved_keyed_none(my_loop_c: Path) -> None:
    """A crash before S1's rename (7, 8, 9) or S2's (13, 14, 15) re-sends the request its save records: 6 dups.

    At 10 and 16 the rename is done (a crash keeps it): nothing re-sent. Keyed, the re-sent
    request carries the same key (the run ID is in S0, durable before any request): no dup.
    """
    keyless = swept(my_loop_c, tracker="keyless", dedup=False)
    assert keyless.baseline.points == tuple(MY_LOOP)
    assert len(keyless.scenarios) == 16
    assert dups(keyless) == dict.fromkeys(("7", "8", "9", "13", "14", "15"), 1)
    keyed = swept(my_loop_c, tracker="keyed", dedup=True)  # merged worlds: the same verdict, fewer processes
    assert keyed.counts is not None
    assert keyed.counts.measures[1]["dups"] == 0
    assert all(s.outcome.missing == 0 for s in (*keyless.scenarios, *keyed.scenarios))


def test_the_shim_forked_from_the_zygote_and_started_from_its_command_line_sweep_alike(my_loop_c: Path) -> None:
    """--spawn fork (the shim forked from the sweep's zygote) and --spawn exec (started): the same 16 outcomes.

    Scenario for scenario the same duplicates (7-9 and 13-15, as derived above) and exit statuses.
    """
    forked = swept(my_loop_c, tracker="keyless", dedup=False, spawn="fork")
    started = swept(my_loop_c, tracker="keyless", dedup=False, spawn="exec")
    assert forked.baseline.points == started.baseline.points == tuple(MY_LOOP)
    outcomes = [
        {s.code: (s.outcome.dups, s.outcome.missing, s.outcome.exit_status) for s in result.scenarios}
        for result in (forked, started)
    ]
    assert outcomes[0] == outcomes[1]
    assert {code for code, (found, _, _) in outcomes[0].items() if found} == {"7", "8", "9", "13", "14", "15"}


def test_depth_2_keyless_counts(my_loop_c: Path) -> None:
    """156 two-crash scenarios, 99 with duplicates, 126 duplicates (merged worlds, counted by paths).

    The restart after the first crash at i passes: 16 points (i = 1-3, no state.json), 12
    (i = 4-9: create_a to send), 6 (i = 10-15), none (16): 3*16 + 6*12 + 6*6 = 156. Duplicates
    by first crash: i = 1-3, a fresh run: the 6 of depth 1 each (18); i = 4-6, nothing sent
    yet: the restart's 3+3 unsaved-reply points, 1 each (18); i = 7-9, create_a sent: the
    restart re-sends it (1), and its own crash at its 3+3 unsaved points adds one more (2):
    1+1+2+2+2+1+1+1+2+2+2+1 = 18 dups in 12 scenarios, each i (54 in 36); i = 10-12: 3
    scenarios of 1 (9); i = 13-15, create_b sent: 1+1+2+2+2+1 = 9 in 6 (27 in 18).
    Scenarios 18+18+36+9+18 = 99, dups 18+18+54+9+27 = 126.
    """
    keyless = swept(my_loop_c, tracker="keyless", depth=2, dedup=True, snapshots=True)
    assert keyless.snapshots  # one run per world, the tracer holding each call while its world is copied
    assert keyless.counts is not None
    assert keyless.counts.scenarios == {0: 1, 1: 16, 2: 156}
    assert keyless.counts.measures[2]["with_dups"] == 99
    assert keyless.counts.measures[2]["dups"] == 126


def power_cuts(result: SweepResult) -> list[tuple[str, int, int]]:
    return sorted((s.faults[0], s.outcome.dups, s.outcome.missing) for s in result.scenarios if s.faults)


def test_power_loss_without_fsyncs_loses_the_checkpoint_and_re_runs(my_loop_c: Path) -> None:
    """--no-fsync, keyed: 10 cuts (points 2-10, at 1 nothing is unsynced yet, and at exit), and keys do not help.

    Nothing is ever fsynced, so every cut leaves the start world (empty; spec/POINTS.md 4):
    state.json and its run ID are gone, the restart begins a new run with new keys and files
    again all it had filed. Points: 1 write tmp, 2 rename, 3 connect, 4 write <tracker>
    (create_a not yet sent), 5-8 (create_a sent: 1 dup), 9-10 (both sent: 2 dups); and once the
    program has exited (rule 6) a cut still leaves the empty folder: 2 dups. With its fsyncs the
    last save syncs the folder, so no cut is offered at exit (the next test's 9).
    """
    result = swept(my_loop_c, "--no-fsync", tracker="keyed", dedup=False, nemesis=Nemesis(("power-loss",)))
    assert len(result.baseline.points) == 10
    assert power_cuts(result) == [  # each cut named by its point's pass, as a crash is (--crash takes it)
        ("power-loss at connect <tracker>", 0, 0),
        ("power-loss at connect <tracker>#2", 1, 0),
        ("power-loss at exit", 2, 0),
        ("power-loss at rename state.json.tmp -> state.json", 0, 0),
        ("power-loss at rename state.json.tmp -> state.json#2", 1, 0),
        ("power-loss at rename state.json.tmp -> state.json#3", 2, 0),
        ("power-loss at write <tracker>", 0, 0),
        ("power-loss at write <tracker>#2", 1, 0),
        ("power-loss at write state.json.tmp#2", 1, 0),
        ("power-loss at write state.json.tmp#3", 2, 0),
    ]


def test_power_loss_with_fsyncs_loses_nothing_that_matters(my_loop_c: Path) -> None:
    """Full saves, keyed: 9 cuts (2-4, 8-10, 14-16: from a save's write to its folder's fsync), all clean.

    A cut in S0 leaves an empty folder (the temp file's entry was never synced): a fresh run,
    nothing sent yet. A cut in S1 or S2 undoes the rename (or loses the temp file): the
    previous durable save comes back with the same run ID, so the re-sent request carries its
    key and the tracker files it once.
    """
    result = swept(my_loop_c, tracker="keyed", dedup=False, nemesis=Nemesis(("power-loss",)))
    cuts = power_cuts(result)
    points = ("fsync state.json.tmp", "rename state.json.tmp -> state.json", "fsync .")
    assert cuts == sorted((f"power-loss at {point}{k}", 0, 0) for point in points for k in ("", "#2", "#3"))


def test_the_command_line_sweeps_the_c_loop(my_loop_c: Path, tmp_path: Path) -> None:
    """`crashsweep sweep --points syscalls --target ./my_loop`, its points kept to the renames: 2 dups, exit 1.

    The three renames (3, 9, 15 of the 16): a crash before S0's sends nothing twice (nothing
    was sent); before S1's and S2's, the request that save records was sent and is re-sent.
    """
    shutil.copy(my_loop_c, tmp_path / "my_loop")
    shutil.copy(EXAMPLES / "my_c_loop_check.py", tmp_path)
    command = [str(ROOT / "bin" / "crashsweep"), "sweep", "--points", "syscalls", "--target", "./my_loop"]
    command += ["--check", "my_c_loop_check:check", "--depth", "1", "--tracker", "keyless"]
    command += ["--points-include", "rename"]
    run = subprocess.run(command, cwd=tmp_path, capture_output=True, text=True, check=False, timeout=300)
    assert run.returncode == 1, run.stderr
    assert "crash points  3  (syscalls: " in run.stdout
    assert "with_dups 2   dups 2   missing 0" in run.stdout


def test_the_rerun_line_of_a_power_cut_re_runs_that_cut(my_loop_c: Path, tmp_path: Path) -> None:
    """--faults power-loss: the first duplicate is a cut at a point's 2nd pass; its re-run line cuts there again.

    --no-fsync, keyed: the cut at connect's 1st pass duplicates nothing, at its 2nd create_a is
    filed again (the run ID was never durable). Its re-run line names it `--crash 'connect
    <tracker>#2'` with `--faults power-loss`, and running that line gives the same duplicate.
    """
    shutil.copy(my_loop_c, tmp_path / "my_loop")
    shutil.copy(EXAMPLES / "my_c_loop_check.py", tmp_path)
    command = [str(ROOT / "bin" / "crashsweep"), "sweep", "--points", "syscalls", "--target", "./my_loop --no-fsync"]
    command += ["--check", "my_c_loop_check:check", "--depth", "1", "--faults", "power-loss"]
    run = subprocess.run(command, cwd=tmp_path, capture_output=True, text=True, check=False, timeout=300)
    assert run.returncode == 1, run.stderr
    assert "first in scenario [power-loss at connect <tracker>#2]: " in run.stdout
    rerun = run.stdout.splitlines()[-1]
    assert rerun.startswith("  re-run (no-duplicate, scenario [power-loss at connect <tracker>#2]):  ")
    assert rerun.endswith(" --faults power-loss --crash 'connect <tracker>#2'")
    again = subprocess.run(
        shlex.split(rerun.split(":  ", 1)[1]), cwd=tmp_path, capture_output=True, text=True, check=False, timeout=120
    )
    assert again.returncode == 1, again.stderr
    assert again.stdout.splitlines()[1:4] == [
        "  power-loss at connect <tracker>#2: the process dies, what was not fsynced is lost, restart to the end",
        "  dups 1   missing 0   applied 3",
        "  no-duplicate: create_a has 2 records: #1 and #2",
    ]
