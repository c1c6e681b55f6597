"""docs/examples/record_upgrade.c swept under each persistence model: every cut's crash states counted by hand.

The program, from an empty folder, makes these calls on its work folder (journal entries e,
points P: a point's kill comes before its call):

- the setup: open record.tmp (e1 create, e2 truncate), P1 pwrite64 record.tmp (e3, 4096 bytes at
  0), P2 fsync record.tmp (e4), P3 rename record.tmp -> record (e5), P4 fsync . (e6);
- without --wal: P5 pwrite64 record (e7, 4096 bytes at 0 over the old ones), P6 fsync record (e8);
- with --wal: open record.wal (e7, e8), P5 pwrite64 record.wal (e9), P6 fsync record.wal (e10),
  P7 fsync . (e11), P8 pwrite64 record (e12), P9 fsync record (e13), P10 unlink record.wal (e14),
  P11 fsync . (e15).

A cut before point P sees the entries before it; b is the last fsync among them
(spec/PERSISTENCE.md). Per cut, `ordered` has n - b states. `alice` adds, for each write after
the barrier, its 7 torn states (4096 bytes = 8 pieces of 512), its grown state when it extends
the file (the writes of record.tmp and record.wal; not the overwrite of record), and its
omitted state when another call follows it (none here: each write is followed by its fsync,
which is the barrier). `strict` offers a cut where POINTS.md 4 rule 4 reads something at risk.
"""

from __future__ import annotations

import subprocess
from collections import Counter
from pathlib import Path

import pytest

from crashsweep.realsweep.faults.nemesis import Nemesis
from crashsweep.realsweep.probe.modes import Points
from crashsweep.realsweep.sweep import SweepOptions, SweepResult, Target, replay, sweep
from tests.conftest import require_tool
from tests.realsweep.syscalls.conftest import EXAMPLES, example_check

STATE = " / state "


@pytest.fixture(scope="module")
def record_upgrade(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """docs/examples/record_upgrade.c, compiled with cc."""
    cc = require_tool("cc")
    binary = tmp_path_factory.mktemp("record_upgrade") / "record_upgrade"
    source = EXAMPLES / "record_upgrade.c"
    subprocess.run([cc, "-O2", "-Wall", "-Werror", "-o", str(binary), str(source)], check=True)
    return binary


def swept(binary: Path, model: str, *args: str) -> SweepResult:
    """The depth-1 sweep of the program with `args` under power loss and the persistence `model`."""
    options = SweepOptions(depth=1, points=Points(("syscalls",)), workers=2, dedup=False)
    nemesis = Nemesis(("power-loss",), persistence=model)
    return sweep(Target.command([str(binary), *args]), example_check("record_upgrade_check"), options, nemesis=nemesis)


def per_cut(result: SweepResult) -> dict[str, int]:
    """How many power-loss scenarios each cut has, by its label without the state."""
    cuts = Counter(s.faults[0].partition(STATE)[0] for s in result.scenarios if s.faults)
    return dict(cuts)


def unrecovered(result: SweepResult) -> list[str]:
    """The scenarios whose restart cannot go on (the record's checksum fails), by label."""
    return [s.faults[0] if s.faults else s.code for s in result.scenarios if s.outcome.exit_status]


CUT = "power-loss at "
NO_WAL = {
    "strict": {
        f"{CUT}fsync record.tmp": 1,  # rule 4: the write left record.tmp's data unsynced
        f"{CUT}rename record.tmp -> record": 1,  # its entry, new, is not yet synced on its folder
        f"{CUT}fsync .": 1,  # the rename's entries
        f"{CUT}fsync record": 1,  # the overwrite's data
        f"{CUT}exit": 1,  # rule 4 reads the written file's entry as unsynced still (a write may make a file)
    },
    "ordered": {
        f"{CUT}pwrite64 record.tmp": 2,  # b = 0, n = 2 (e1, e2)
        f"{CUT}fsync record.tmp": 3,  # b = 0, n = 3
        f"{CUT}fsync .": 1,  # b = 4, n = 5
        f"{CUT}fsync record": 1,  # b = 6, n = 7
    },
    "writeback": {  # as ordered: every write is followed by its fsync, so no metadata call gets ahead of data
        f"{CUT}pwrite64 record.tmp": 2,
        f"{CUT}fsync record.tmp": 3,
        f"{CUT}fsync .": 1,
        f"{CUT}fsync record": 1,
    },
    "alice": {
        f"{CUT}pwrite64 record.tmp": 2,
        f"{CUT}fsync record.tmp": 11,  # 3 prefixes, 7 torn, 1 grown (record.tmp was empty)
        f"{CUT}fsync .": 1,
        f"{CUT}fsync record": 8,  # 1 prefix, 7 torn (the overwrite grows nothing)
    },
}


@pytest.mark.parametrize("model", list(NO_WAL))
def test_an_overwrite_in_place_has_the_hand_counted_states_and_alice_tears_it(record_upgrade: Path, model: str) -> None:
    """Without --wal: strict 5 cuts, ordered and writeback 7 states, alice 22; only alice's 7 torn overwrites fail.

    A torn overwrite (`fsync record`, alice's states 2 to 8: prefix(6) is state 1) leaves a
    record whose checksum fails: the restart exits 3. Every other state leaves either no
    record (the setup runs again) or a whole version 1 or 2, and the upgrade completes.
    """
    result = swept(record_upgrade, model)
    assert len([s for s in result.scenarios if not s.faults]) == 6  # the crashes, one a point
    assert per_cut(result) == NO_WAL[model]
    torn = [f"{CUT}fsync record{STATE}{j}" for j in range(2, 9)]
    assert unrecovered(result) == (torn if model == "alice" else [])


WAL = {
    "strict": 8,  # P2, P3, P4, P6, P7, P9, P10, P11: rule 4 (P5, P8: after a folder's fsync; exit: after one)
    "ordered": 2 + 3 + 1 + 2 + 3 + 1 + 1,  # P1, P2, P4, P5 (b = 6), P6, P9 (b = 11), P11 (b = 13)
    "writeback": 13,  # as ordered: no metadata call follows a write before an fsync does
    "alice": 2 + 11 + 1 + 2 + 11 + 8 + 1,  # P6: 3 prefixes, 7 torn, 1 grown; P9: 1 prefix, 7 torn
}


@pytest.mark.parametrize("model", list(WAL))
def test_a_write_ahead_copy_makes_every_state_recover(record_upgrade: Path, model: str) -> None:
    """With --wal: 11 crashes, and 8, 13, 13 or 36 cuts' states; none leaves a restart that cannot go on.

    A torn copy (P6's states) is dropped, the record untouched; a torn record (P9's) is
    redone from the whole, synced copy. Every scenario ends with version 2, whole.
    """
    result = swept(record_upgrade, model, "--wal")
    assert len([s for s in result.scenarios if not s.faults]) == 11
    assert sum(per_cut(result).values()) == WAL[model]
    assert unrecovered(result) == []
    assert all(s.outcome.missing == 0 for s in result.scenarios)


def test_a_state_of_a_point_the_program_never_passes_is_unreached_not_laid_out(record_upgrade: Path) -> None:
    """`--crash 'nope / state 1'`: the process runs to its end without the point, so no state is laid out.

    The scenario comes back unreached (the CLI then names the program's points, as for a crash
    at an unknown point), not as an error about the cut's count of states; a state past a real
    cut's list is still refused, in one line naming the count (fsync record has 8 under alice).
    """
    options = SweepOptions(depth=1, points=Points(("syscalls",)), workers=1, dedup=False)
    target, check = Target.command([str(record_upgrade)]), example_check("record_upgrade_check")
    alice = Nemesis(("power-loss",), persistence="alice")
    typo = replay(target, check, options, [("fsync recrod", 1)], alice, cut=True, state=1)
    assert typo.unreached == 1
    assert "fsync record" in typo.points
    with pytest.raises(ValueError, match="a cut here has 8 crash state\\(s\\) under alice, not a state 9"):
        replay(target, check, options, [("fsync record", 1)], alice, cut=True, state=9)
