"""The sweep's scenario record: --arg and --crash parsing, JSON lines, re-run commands, unreached scenarios."""

from __future__ import annotations

import json
import os
import re
import shlex
import stat
from pathlib import Path

import click
import pytest

from crashsweep.cli import sweep_scenarios
from crashsweep.realsweep.sweep import Crash, Outcome, ScenarioResult, SweepResult
from crashsweep.spec.history import Event, History
from crashsweep.spec.invariants import APPROVED_EXACTLY, CAN_FINISH


def scenario(*crashes: Crash, dups: int = 0, missing: int = 0, unreached: int = 0) -> ScenarioResult:
    """A finished scenario with these crashes and figures."""
    return ScenarioResult(crashes, Outcome(dups, missing, 1), {"model_calls": 3}, (), unreached)


BASELINE = scenario()
RESULT = SweepResult(
    2,
    BASELINE,
    (
        scenario(Crash(1, "a")),
        scenario(Crash(2, "b"), dups=1),
        scenario(Crash(2, "b"), Crash(3, "a", 2), missing=1),
    ),
    7,
    1.0,
    (scenario(Crash(1, "a"), Crash(4, "c"), unreached=2),),
)


def test_args_are_key_value_pairs() -> None:
    """key=value, the value may hold '=' and be empty; no '=' is refused."""
    assert sweep_scenarios.parse_args(["a=1", "b=x=y", "c="]) == {"a": "1", "b": "x=y", "c": ""}
    with pytest.raises(click.BadParameter, match="key=value"):
        sweep_scenarios.parse_args(["novalue"])


def test_a_crash_is_a_name_and_an_occurrence() -> None:
    """NAME is its first pass; NAME#K its K-th; a name that ends in #digits is written with its occurrence."""
    assert sweep_scenarios.parse_crash("after put step 1") == ("after put step 1", 1)
    assert sweep_scenarios.parse_crash("tools#3") == ("tools", 3)
    assert sweep_scenarios.parse_crash("issue #2#1") == ("issue #2", 1)
    assert sweep_scenarios.crash_arguments([Crash(5, "issue #2"), Crash(1, "x", 2)]) == [
        "--crash",
        "issue #2#1",
        "--crash",
        "x#2",
    ]


def test_the_rerun_lines_name_the_first_scenario_of_each_kind() -> None:
    """The first duplicate (2) and the first loss (2,3), each with the command that re-runs it."""
    lines = sweep_scenarios.rerun_lines(RESULT, ["crashsweep", "sweep", "--framework", "dbos"])
    assert lines == [
        "  re-run (no-duplicate, scenario 2):  crashsweep sweep --framework dbos --crash b",
        "  re-run (no-loss, scenario 2,3):  crashsweep sweep --framework dbos --crash b --crash 'a#2'",
    ]
    assert shlex.split(lines[1].split(":  ")[1])[-1] == "a#2"


STUCK = ScenarioResult((Crash(2, "b"),), Outcome(missing=1, stuck="stuck: refused"), {}, ())
GATED = History((Event("r", 0, 1, "ok", "effect", call="w", effect_id="#1", args_digest="v1"),), ("w",), ("w",))
UNAPPROVED = ScenarioResult((Crash(1, "a"),), Outcome(applied=1, history=GATED), {}, ())


def test_the_rerun_lines_follow_the_rows_properties() -> None:
    """A stuck scenario re-runs for can-finish (its lost write is no loss), an unapproved one for approved-exactly."""
    result = SweepResult(1, BASELINE, (UNAPPROVED, STUCK), 3, 1.0)
    names = ["no-duplicate", "no-loss", APPROVED_EXACTLY, CAN_FINISH]
    assert sweep_scenarios.rerun_lines(result, ["cs"], names) == [
        f"  re-run ({APPROVED_EXACTLY}, scenario 1):  cs --crash a",
        f"  re-run ({CAN_FINISH}, scenario 2):  cs --crash b",
    ]


UNRECOVERED = ScenarioResult(
    (Crash(2, "b"),), Outcome(missing=1, stuck="the restart exited with status 1: KeyError: 'x'", exit_status=1), {}, ()
)


def test_a_restart_that_cannot_recover_is_named_in_its_rerun_line_and_its_replay() -> None:
    """spec/POINTS.md 5: the re-run line says the restart's status; the re-run says what it said."""
    result = SweepResult(1, BASELINE, (UNRECOVERED,), 2, 1.0)
    assert sweep_scenarios.rerun_lines(result, ["cs"], [CAN_FINISH]) == [
        f"  re-run ({CAN_FINISH}, scenario 2, its restart exits with status 1):  cs --crash b"
    ]
    replayed = sweep_scenarios.replay_text("x", UNRECOVERED)
    assert "crash at 'b', restart, which cannot recover (the restart exited with status 1: KeyError: 'x')" in replayed


def test_a_power_cut_is_re_run_by_its_point_with_power_loss() -> None:
    """The row's "power-loss at NAME#K" re-runs with `--faults power-loss --crash NAME#K`; another fault move cannot."""
    cut = ScenarioResult((), Outcome(dups=1, applied=2), {}, (), faults=("power-loss at fdatasync .#3",))
    lost = ScenarioResult((), Outcome(dups=1, applied=2), {}, (), faults=("lost-reply at x",))
    result = SweepResult(1, BASELINE, (lost, cut), 3, 1.0)
    rerun = "cs --faults power-loss --crash 'fdatasync .#3'"
    assert sweep_scenarios.rerun_lines(result, ["cs"], ["no-duplicate"]) == [
        f"  re-run (no-duplicate, scenario [power-loss at fdatasync .#3]):  {rerun}"
    ]
    assert sweep_scenarios.parse_crash("fdatasync .#3") == ("fdatasync .", 3)
    replayed = sweep_scenarios.replay_text("x", cut)
    assert (
        "  power-loss at fdatasync .#3: the process dies, what was not fsynced is lost, restart to the end\n"
        in replayed
    )
    missed = ScenarioResult((), Outcome(), {}, ("fdatasync .",), unreached=1, faults=("power-loss at fdatasync .#3",))
    assert sweep_scenarios.unknown_point(missed, ("fdatasync .", 3)) == (
        "--crash 'fdatasync .#3': the program passes 'fdatasync .' once (fdatasync .#1)"
    )


def test_a_replayed_scenario_says_it_is_stuck_and_what_breaks() -> None:
    """The restart of a stuck scenario reaches no end; a property the check found broken is named."""
    assert "crash at 'b', restart, stuck for good (stuck: refused)" in sweep_scenarios.replay_text("x", STUCK)
    said = sweep_scenarios.replay_text("x", UNAPPROVED)
    assert f"  {APPROVED_EXACTLY}: w@1 was applied with no approval that matches it\n" in said


def test_unreached_scenarios_are_counted_and_listed() -> None:
    """One unreached: its code, the process that missed its point, and the point."""
    assert sweep_scenarios.unreached_lines(RESULT) == [
        "  unreached     1 scenario(s) whose chosen point was not reached: 1,4 (process 2, 'c')"
    ]


def test_every_scenario_is_one_json_line_the_baseline_first(tmp_path: Path) -> None:
    """1 + 3 + 1 lines; the unreached one has no outcome; nothing else is left in the folder."""
    path = tmp_path / "out" / "scenarios.jsonl"
    sweep_scenarios.write_jsonl(path, RESULT)
    records = [json.loads(line) for line in path.read_text().splitlines()]
    assert [r["code"] for r in records] == ["", "1", "2", "2,3", "1,4"]
    assert records[3]["crashes"][1] == {"index": 3, "point": "a", "occurrence": 2}
    assert records[3]["processes"] == 3
    assert records[3]["outcome"] == {"dups": 0, "missing": 1, "applied": 1}
    assert (records[4]["outcome"], records[4]["unreached"], records[4]["processes"]) == (None, 2, 2)
    assert [p.name for p in path.parent.iterdir()] == ["scenarios.jsonl"]


def test_the_record_keeps_a_file_s_mode_and_a_new_one_gets_the_umask_s(tmp_path: Path) -> None:
    """Written through a temporary file (mkstemp: 0600), the record still has the mode a file would get."""
    kept = tmp_path / "kept.jsonl"
    kept.write_text("old\n")
    kept.chmod(0o664)
    new = tmp_path / "new.jsonl"
    mask = os.umask(0o027)
    try:
        sweep_scenarios.write_jsonl(kept, RESULT)
        sweep_scenarios.write_jsonl(new, RESULT)
    finally:
        os.umask(mask)
    assert (stat.S_IMODE(kept.stat().st_mode), stat.S_IMODE(new.stat().st_mode)) == (0o664, 0o640)


def test_an_interrupted_sweep_s_record_keeps_the_file_s_mode(tmp_path: Path) -> None:
    """--scenarios FILE after SIGTERM (`Partial.keep`): the lines so far, with FILE's mode."""
    path = tmp_path / "s.jsonl"
    path.write_text("")
    path.chmod(0o644)
    partial = sweep_scenarios.Partial.beside(path)
    partial(RESULT.baseline)
    assert partial.keep() == 1
    assert stat.S_IMODE(path.stat().st_mode) == 0o644


def test_a_replayed_scenario_is_told_in_words() -> None:
    """Its crashes by name, its figures; an unreached one says which process missed which point."""
    text = sweep_scenarios.replay_text("x", scenario(Crash(0, "b"), dups=1))
    assert "crash at 'b', restart to the end" in text
    assert "dups 1   missing 0   applied 1" in text
    missed = sweep_scenarios.replay_text("x", scenario(Crash(0, "b"), unreached=1))
    assert "process 1 ended without reaching 'b'" in missed


def test_a_scenario_with_a_fault_move_gets_no_rerun_line() -> None:
    """`--crash` names crashes only: the first duplicate of crashes is offered, not the lost reply before it."""
    lost = ScenarioResult((), Outcome(1, 0, 4), {}, (), faults=("lost-reply at tracker accepted create_a",))
    result = SweepResult(1, BASELINE, (lost, scenario(Crash(2, "b"), dups=1)), 3, 1.0)
    lines = sweep_scenarios.rerun_lines(result, ["crashsweep", "sweep", "--variant", "v"])
    assert lines == ["  re-run (no-duplicate, scenario 2):  crashsweep sweep --variant v --crash b"]
    assert lost.code == "[lost-reply at tracker accepted create_a]"
    assert lost.moves == 1


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("#0", "has no name before '#'"),
        ("#-1", "has no name before '#'"),
        ("#abc", "has no name before '#'"),
        ("#", "has no name before '#'"),
        ("tools#0", "'tools#0': passes count from 1 (tools#1 is the first)"),
        ("", "a crash point's name cannot be empty"),
        ("tools#" + "9" * 23, "a pass beyond 1,000,000,000 (no sweep lists that many points)"),
        ("tools#1000000001", "a pass beyond 1,000,000,000"),
    ],
)
def test_a_crash_that_can_never_match_is_refused(text: str, message: str) -> None:
    with pytest.raises(click.BadParameter, match=re.escape(message)):
        sweep_scenarios.parse_crash(text)


def test_a_pass_written_in_other_digits_is_part_of_the_name() -> None:
    """'²' is a digit to str.isdigit and not to int(): NAME#² is a name, never a ValueError."""
    assert sweep_scenarios.parse_crash("tools#²") == ("tools#²", 1)
    assert sweep_scenarios.parse_crash("tools#1000000000") == ("tools", 10**9)


def test_a_pass_beyond_the_programs_passes_is_named_with_how_many_it_makes() -> None:
    """The first process passed every point (as --list-points lists them): a K beyond a name's passes is refused."""
    points = ("apply", "saved", "apply", "saved")
    beyond = ScenarioResult((Crash(0, "saved", 7),), Outcome(), {}, points, unreached=1)
    assert (
        sweep_scenarios.unknown_point(beyond)
        == "--crash 'saved#7': the program passes 'saved' 2 times (saved#1 to saved#2)"
    )
    once = ScenarioResult((Crash(0, "end", 2),), Outcome(), {}, ("end",), unreached=1)
    assert sweep_scenarios.unknown_point(once) == "--crash 'end#2': the program passes 'end' once (end#1)"
    later = ScenarioResult((Crash(0, "end"), Crash(0, "end", 2)), Outcome(), {}, ("end",), unreached=2)
    assert sweep_scenarios.unknown_point(later) is None  # a restart may pass fewer: it is the scenario's


class _Module:
    """A target module as check_declared reads it."""

    def __init__(self, declared: object = None) -> None:
        if declared is not None:
            self.CRASHSWEEP_ARGS = declared


def test_declared_args_pass_and_others_are_one_clear_error() -> None:
    """--arg keys a module declares pass with an allowed value; a typo of a key or value is refused."""
    agent = _Module({"durability": ("sync", "async", "exit"), "note": ()})
    sweep_scenarios.check_declared(agent, "agent", {"durability": "sync", "note": "any text"})
    sweep_scenarios.check_declared(_Module(), "agent", {})  # no --arg: nothing to check
    with pytest.raises(ValueError, match=r"^--arg durability=synch: agent allows sync, async, exit$"):
        sweep_scenarios.check_declared(agent, "agent", {"durability": "synch"})
    with pytest.raises(ValueError, match=r"^--arg durabilty: agent takes durability, note \(CRASHSWEEP_ARGS\)$"):
        sweep_scenarios.check_declared(agent, "agent", {"durabilty": "sync"})
    with pytest.raises(ValueError, match=r"^--arg keys: agent declares no arguments; add CRASHSWEEP_ARGS = "):
        sweep_scenarios.check_declared(_Module(), "agent", {"keys": "off"})
