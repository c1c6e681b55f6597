"""A scenario's result in words and as a record: a power cut kills its process, and a restart follows."""

from __future__ import annotations

from dataclasses import replace

from crashsweep.realsweep.sweep import Crash, Outcome
from crashsweep.realsweep.values import ScenarioResult, Target


def test_a_power_cut_scenario_says_its_process_died() -> None:
    """One cut (spec/FAULTS.md 6): two processes, the one that died and the restart; a lost reply has one."""
    cut = ScenarioResult((), Outcome(), {}, ("start: tmp written",), faults=("power-loss at reply 1 arrived",))
    assert (
        cut.describe()
        == "power-loss at reply 1 arrived: the process dies, what was not fsynced is lost, restart to the end"
    )
    assert cut.record()["processes"] == 2
    lost = ScenarioResult((), Outcome(), {}, ("start: tmp written",), faults=("lost-reply at tracker accepted a",))
    assert lost.describe() == "lost-reply at tracker accepted a, the process goes on to the end"
    assert lost.record()["processes"] == 1


def test_a_pause_scenario_counts_the_processes_beside_the_first() -> None:
    """A pause (spec/FAULTS.md 7): process 1, its restart, and the supervisor's restart when the last one stopped."""
    label = "pause at lock: renamed, wake at p2 stopped"
    alone = ScenarioResult((), Outcome(), {}, (), faults=(label,), beside=1)
    restarted = ScenarioResult((), Outcome(), {}, (), faults=(label,), beside=2)
    assert (alone.record()["processes"], restarted.record()["processes"]) == (2, 3)
    assert alone.record()["faults"] == [label]
    assert alone.describe() == f"{label}: each process goes on to its stop, a restart if the run is unfinished"
    timeout = "retry at reply 1: tmp written on timeout, wake at p2 stopped"
    beside = ScenarioResult((), Outcome(), {}, (), faults=(timeout,), beside=1)
    assert beside.describe() == f"{timeout}: each process goes on to its stop, a restart if the run is unfinished"


def test_a_target_runs_its_upgrade_at_every_restart() -> None:
    """Process 1 of a scenario runs the target; processes 2, 3, ... its upgrade (spec/RETRIES.md 2)."""
    old, new = Target.command("python old.py"), Target.command("python new.py")
    deployed = replace(old, upgrade=new)
    assert [deployed.version(n) for n in (1, 2, 3)] == [deployed, new, new]
    assert old.version(2) is old


def test_a_stuck_scenario_says_its_restart_is_stuck_for_good() -> None:
    """A restart that can never go on (exit crashpoint.STUCK_STATUS) reaches no end: the words say so."""
    stuck = ScenarioResult((Crash(5, "reply 1: renamed"),), Outcome(missing=3, stuck="stuck: refused"), {}, ())
    assert stuck.describe() == "crash at point 5 'reply 1: renamed', restart, stuck for good"
    done = replace(stuck, outcome=Outcome())
    assert done.describe() == "crash at point 5 'reply 1: renamed', restart to the end"


def test_a_restart_that_cannot_recover_is_named_in_words_and_in_its_record() -> None:
    """Its exit status in the words; its status and what it said in the record (the --scenarios line)."""
    said = "the restart exited with status 1: json.decoder.JSONDecodeError: Extra data"
    failed = ScenarioResult((Crash(4, "saved", 2),), Outcome(missing=1, stuck=said, exit_status=1), {}, ())
    assert failed.describe() == "crash at point 4 'saved', restart, which cannot recover (exit status 1)"
    assert failed.record()["outcome"] == {"dups": 0, "missing": 1, "applied": 0, "stuck": said, "exit_status": 1}
    assert ScenarioResult((), Outcome(applied=1), {}, ()).record()["outcome"] == {"dups": 0, "missing": 0, "applied": 1}
