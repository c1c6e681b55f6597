"""The sweep's scenario record: --arg and --crash parsing, JSON lines, re-run commands, unreached scenarios."""

from __future__ import annotations

import json
import re
import shlex
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
    ],
)
def test_a_crash_that_can_never_match_is_refused(text: str, message: str) -> None:
    with pytest.raises(click.BadParameter, match=re.escape(message)):
        sweep_scenarios.parse_crash(text)


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
