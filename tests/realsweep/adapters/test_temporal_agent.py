"""The built-in Temporal agent swept at depth 1: keys off duplicates, keys from (workflow_id, activity_id) do not.

A Temporal sweep runs every scenario from scratch (no dedup: the history is in the server,
not in the work folder): one scenario per crash point, each a process killed there and a
restart to the end, all on the sweep's one dev server. A restart after a crash inside an
activity does not wait out its start-to-close timeout (1 s): it reports the dead worker's
attempt timed out at once (temporal_attempts.py), so the sweeps run two processes at a time,
as many as the cores. Under `--schedule-to-close one-attempt` (spec/RETRIES.md 1.8) a crash
inside a tool activity fails the run instead, and the model of the agent's design agrees on
every decided verdict (the last tests, which say where the counts of losses differ and why).
"""

from __future__ import annotations

import itertools
from pathlib import Path
from typing import Any

import pytest

from crashsweep.explorer.model import Action
from crashsweep.explorer.search import Exploration, explore
from crashsweep.importers import temporal_json
from crashsweep.realsweep import rows
from crashsweep.realsweep.adapters import builtin, script, temporal
from crashsweep.realsweep.sweep import SweepOptions, SweepResult, determinism, replay, sweep
from crashsweep.reports.summary import summarize
from crashsweep.spec import invariants
from crashsweep.spec.invariants import no_loss
from crashsweep.spec.job import TRIAGE, load_job
from crashsweep.spec.retries import ONE_ATTEMPT
from crashsweep.spec.tracker import TRACKERS
from crashsweep.variants import model
from crashsweep.variants.design_file import load_design
from tests.docs.shown import printed
from tests.realsweep.adapters.test_temporal import agent_target, expected_points

EXAMPLES = Path(__file__).resolve().parents[3] / "docs" / "examples"
OPTIONS = SweepOptions(depth=1, workers=2)


def test_keys_off_duplicates_exactly_where_a_write_is_done_and_its_completion_unrecorded() -> None:
    """Triage, keys off: 17 points (test_temporal.expected_points), 17 scenarios, 6 with one duplicate each.

    A write is made twice exactly when the worker dies after the tracker accepted it and
    before the server recorded the activity's completion: then the server times the attempt
    out and the restart's worker runs the activity again. Of each write activity's three
    points ("before activity", the tracker's "filed/commented", "before reporting activity")
    the last two lie in that window: 2 x 3 writes = 6 scenarios, one duplicate each. A crash
    in a model activity re-asks the scripted model (stable call IDs: the same calls); a
    crash before a body had no effect yet. Processes: the baseline, then two per scenario.
    A restart after a crash in run_tool 2 runs its attempt 2 first: its points are the run's
    from "before activity run_tool 2" on, whether the killed attempt had filed create_a or not.
    """
    result = sweep(agent_target("off"), script.check(TRIAGE), OPTIONS)
    assert list(result.baseline.points) == expected_points()
    assert (len(result.scenarios), result.unreached, result.processes) == (17, (), 35)
    duplicated = [s.crashes[0].point for s in result.scenarios if s.outcome.dups]
    assert duplicated == [
        "tracker filed issue create_a",
        "before reporting activity run_tool 2",
        "tracker filed issue create_b",
        "before reporting activity run_tool 3",
        "tracker commented comment comment_a",
        "before reporting activity run_tool 6",
    ]
    assert [s.outcome.dups for s in result.scenarios if s.outcome.dups] == [1] * 6
    assert sum(s.outcome.missing for s in result.scenarios) == 0
    restarts = {s.crashes[0].point: list(s.points) for s in result.scenarios}
    for point in ("before activity run_tool 2", "tracker filed issue create_a", "before reporting activity run_tool 2"):
        assert restarts[point] == expected_points()[2:]


def test_keys_from_workflow_and_activity_ids_leave_no_duplicate(tmp_path: Path) -> None:
    """One write (create_a), keys on: 7 points, 7 scenarios, no duplicate, nothing missing.

    Points: ask_model 1 (2), run_tool 2 with the tracker's point (3), ask_model 3 (2). The two
    crashes in the write's window retry run_tool 2 in the restart: the same workflow ID and
    activity ID, so the same key, and the tracker answers the first write's number again.
    """
    job = tmp_path / "one.toml"
    job.write_text(
        'name = "one"\nturns = [["create_a"]]\n[calls]\ncreate_a = { tool = "create_issue", writes = true }\n'
    )
    result = sweep(agent_target("on", job), script.check(load_job(job)), OPTIONS)
    assert len(result.baseline.points) == 7
    assert (len(result.scenarios), result.unreached) == (7, ())
    assert [(s.outcome.dups, s.outcome.missing, s.outcome.applied) for s in result.scenarios] == [(0, 0, 1)] * 7


def test_two_runs_from_each_start_world_send_the_same_workflow_ids(tmp_path: Path) -> None:
    """One write, keys on: the determinism check's 8 start worlds (the empty one, a crash at each point) hold.

    Its two runs are two runners, each with its own dev server; the records' run and the keys
    are the workflow ID, made from the start world (fresh_id) and the scenario's name.
    """
    job = tmp_path / "one.toml"
    job.write_text(
        'name = "one"\nturns = [["create_a"]]\n[calls]\ncreate_a = { tool = "create_issue", writes = true }\n'
    )
    starts, divergence = determinism(agent_target("on", job), script.check(load_job(job)), OPTIONS)
    assert (starts, divergence) == (8, None)


def test_the_agent_in_docs_is_swept_as_its_docstring_says() -> None:
    """docs/examples/my_temporal_agent.py: 8 points, one scenario with one duplicate (the refund's).

    Points: call_model 1 (2), lookup_order (2), refund (2), call_model 3 (2). Its refund sends
    no key and passes no point of its own: its one window is "before reporting activity refund
    refund" (the activity ID is the model's call ID), where the tracker has the refund and the
    server has no completion; the restart's attempt 2 refunds again.
    """
    command = "crashsweep sweep --target my_temporal_agent:run --check my_temporal_agent:check --depth 1"
    assert command in (EXAMPLES / "my_temporal_agent.py").read_text()
    shown = printed("docs/guide/temporal.md", f"cd docs/examples && ../../bin/{command}")  # run by test_blocks
    assert "crash points  8\n" in shown
    assert "every scenario run" in shown  # from scratch: the module imports CRASHSWEEP_FROM_SCRATCH
    assert "with_dups 1   dups 1   missing 0" in shown
    assert "first in scenario 6: crash at point 6 'before reporting activity refund refund'" in shown


LOST = {
    "before activity run_tool 2": 3,
    "tracker filed issue create_a": 2,
    "before reporting activity run_tool 2": 2,
    "before activity run_tool 3": 2,
    "tracker filed issue create_b": 1,
    "before reporting activity run_tool 3": 1,
    "before activity run_tool 5": 1,
    "before reporting activity run_tool 5": 1,
    "before activity run_tool 6": 1,
}
"""Triage under a one-attempt budget: the writes each crash inside a tool activity's attempt loses (none elsewhere)."""
FAILED = (*LOST, "tracker commented comment comment_a", "before reporting activity run_tool 6")
"""The crashes that fail the run: every point of the four tool activities (run_tool 2, 3, 5, 6), 3 + 3 + 2 + 3."""
SITES = {
    "tracker filed issue create_a": "tracker accepted create_a",
    "before reporting activity run_tool 2": "tool returned create_a",
    "tracker filed issue create_b": "tracker accepted create_b",
    "before reporting activity run_tool 3": "tool returned create_b",
    "before reporting activity run_tool 5": "tool returned search",
    "tracker commented comment comment_a": "tracker accepted comment_a",
    "before reporting activity run_tool 6": "tool returned comment_a",
}
"""The agent's points at the model's sites of a call's attempt (RETRIES.md 1.1): the tracker's, the answer."""
DESIGN = """name = "temporal-agent"
summary = "the Temporal agent: the history records each reply and result; keys from (workflow, activity)"
startup_save = true
reply_save = "before-first-send"
result_saves = "each-call"
markers = "none"
keys = "run-call"
lock = "none"
retries = [{ scope = "call", on = "error", retry_policy = "unset"BUDGET }]
"""
"""The design that describes the built-in agent (keys on): RETRIES.md 1.8's consequence, with or without the budget.

Saves as the workflow history records them: the start (WorkflowExecutionStarted), each reply
before its first call is sent (ask_model's completion is recorded before run_tool is
scheduled), each call's result (its activity's completion), one after the other; keys from
(workflow, activity), the run and the call; no lock, no marker. The tool activities' retry
policy is unbounded (the agent's RETRY sets no maximum: Temporal's default, `"unset"`), and
with `--schedule-to-close one-attempt` their budget is one attempt.
"""


@pytest.fixture(scope="module")
def swept() -> dict[str | None, SweepResult]:
    """The built-in agent on triage, keys on, depth 1: with the one-attempt budget, and without (two sweeps)."""
    found = {}
    for budget in (ONE_ATTEMPT, None):
        target = builtin.target(
            "temporal", None, keys=True, call_ids="stable", durability=None, schedule_to_close=budget
        )
        found[budget] = sweep(target, builtin.check(TRIAGE, "temporal"), OPTIONS)
    return found


def test_a_one_attempt_budget_fails_the_run_at_a_crash_inside_a_tool_activity(
    swept: dict[str | None, SweepResult],
) -> None:
    """Keys on, `--schedule-to-close one-attempt`: 17 scenarios, 11 failed runs, 9 of them losing 14 writes.

    Every one of the 17 points is inside an activity's attempt (the worker passes them while it
    runs the attempt: the server has it started). In the model's activity (ask_model 1, 4, 7:
    6 points) no budget is set: the server times the dead attempt out and retries it, the run
    goes on, nothing is lost. In a tool activity (run_tool 2, 3, 5, 6: 3 + 3 + 2 + 3 = 11
    points) the attempt never answers, the server times it out after start-to-close with no
    time left (ScheduleToClose), the workflow fails on its next step: the restart passes no
    point and says "run failed", and every write from the crashed call on that was not applied
    is missing: run_tool 2 (create_a) before the tracker filed it 3 (create_a, create_b,
    comment_a), after it 2 and 2; run_tool 3 (create_b) 2, 1, 1; run_tool 5 (the search) 1, 1;
    run_tool 6 (comment_a) 1 before the tracker commented, 0 and 0 after. 9 scenarios lose
    3 + 2 + 2 + 2 + 1 + 1 + 1 + 1 + 1 = 14 writes; none has a duplicate (keys), none is
    stuck: a failed run is over (can-finish holds), and no-loss fails.
    """
    result = swept[ONE_ATTEMPT]
    assert list(result.baseline.points) == expected_points()
    assert (len(result.scenarios), result.unreached, result.processes) == (17, (), 35)
    by_point = {s.crashes[0].point: s for s in result.scenarios}
    assert {p: s.outcome.missing for p, s in by_point.items() if s.outcome.missing} == LOST
    assert [p for p, s in by_point.items() if not s.points] == [p for p in expected_points() if p in FAILED]
    assert sum(s.outcome.dups for s in result.scenarios) == 0
    assert all(not s.outcome.stuck and not s.outcome.exit_status for s in result.scenarios)
    for scenario in result.scenarios:
        assert rows.violates(scenario, invariants.NO_LOSS) == (scenario.crashes[0].point in LOST)
        assert not rows.violates(scenario, invariants.CAN_FINISH)


def test_a_failed_run_says_so_and_its_workflow_history_shows_the_servers_timeout(tmp_path: Path) -> None:
    """One scenario kept: the worker killed once the tracker filed create_a, under the one-attempt budget.

    The restart finds the attempt started by a gone worker but with an expiration, so it waits
    for the server (temporal_attempts.dead): the server gives up retrying before the
    ScheduleToClose timeout, the workflow fails, the restart prints why and exits 0. The
    history, as `crashsweep audit` reads it: the attempt's outcome unknown (`info`), then the
    run failed; the sweep's own history of the scenario ends finished (RETRIES.md 1.8 rule 3).
    """
    target = builtin.target(
        "temporal", None, keys=True, call_ids="stable", durability=None, schedule_to_close=ONE_ATTEMPT
    )
    options = SweepOptions(root=tmp_path, keep=True)
    done = replay(target, builtin.check(TRIAGE, "temporal"), options, [("tracker filed issue create_a", 1)])
    assert (done.points, done.outcome.missing, done.outcome.stuck, done.outcome.exit_status) == ((), 2, "", 0)
    folder = tmp_path / "scenarios" / "s-0"
    said = (folder / "output-2.txt").read_text(encoding="utf-8")
    assert "run failed: activity run_tool 2 timed out (SCHEDULE_TO_CLOSE), so workflow triage failed" in said
    (history,) = temporal_json.histories(folder / "work" / temporal.HISTORY)
    assert [(e.type, e.f, e.call, e.status) for e in history.events][-2:] == [
        ("info", "tool_run", "2", ""),
        ("fail", "run_status", "", "failed"),
    ]
    assert "ScheduleToClose" in history.events[-2].detail


def test_without_the_budget_every_crash_is_retried_and_nothing_is_lost(swept: dict[str | None, SweepResult]) -> None:
    """Keys on, no budget: every crash's attempt is timed out and retried (unbounded), the run ends, 0 lost, 0 dups."""
    result = swept[None]
    assert (len(result.scenarios), result.unreached, result.processes) == (17, (), 35)
    assert [(s.outcome.missing, s.outcome.dups) for s in result.scenarios] == [(0, 0)] * 17
    assert [list(s.points)[-1] for s in result.scenarios] == ["before reporting activity ask_model 7"] * 17


@pytest.mark.parametrize("budget", [ONE_ATTEMPT, None])
def test_the_model_of_the_agents_design_agrees_but_for_the_attempts_first_point(
    budget: str | None, swept: dict[str | None, SweepResult], tmp_path: Path
) -> None:
    """The design's exploration at depth 1 (keyed tracker) beside the sweep: every decided verdict agrees.

    The model's sites of a call's attempt are its `tracker accepted` and `tool returned`
    (RETRIES.md 1.8 rule 2); at each, the agent's point (SITES) loses what the model's does:
    create_a 2 and 2, create_b 1 and 1, the search 1, comment_a 0 and 0: 5 scenarios, 7 writes.
    The agent has one more point inside each tool attempt, "before activity run_tool N" (the
    attempt started, its request not sent), where the model has none (its last point before is
    the previous save, outside the attempt; its crash sends the call again): 4 scenarios losing
    3 + 2 + 1 + 1 = 7 writes more, 9 and 14 in all. Without the budget both lose nothing. The
    model's retry moves (a quick error at each write: 3 scenarios) lose nothing; the agent's
    tools make no error to sweep. well-formed-transcript and approved-exactly hold in the model
    and are not decided for the agent (its history is in the server; it has no approvals).
    """
    design = tmp_path / "temporal-agent.toml"
    design.write_text(DESIGN.replace("BUDGET", f', schedule_to_close = "{budget}"' if budget else ""))
    exploration = explore(model(load_design(design).design, TRIAGE, TRACKERS["keyed"]), 1)
    modelled = {v.name: v.holds for v in summarize(exploration, variant="d", job="triage", tracker="keyed").invariants}
    real = {v.name: v.holds for v in rows.verdicts_of(swept[budget]) if v.decided}
    assert set(real) == {invariants.NO_DUPLICATE, invariants.NO_LOSS, invariants.CAN_FINISH}
    assert real == {name: modelled[name] for name in real}
    assert real[invariants.NO_LOSS] == (budget is None)
    lost = modelled_losses(exploration)
    by_point = {s.crashes[0].point: s.outcome.missing for s in swept[budget].scenarios}
    assert {SITES[p]: by_point[p] for p in SITES} == {site: lost.get(site, 0) for site in SITES.values()}
    extra = {p: n for p, n in by_point.items() if n and p not in SITES}
    assert (sum(1 for n in lost.values() if n), sum(lost.values())) == ((5, 7) if budget else (0, 0))
    assert extra == ({p: LOST[p] for p in LOST if p.startswith("before activity")} if budget else {})


def modelled_losses(exploration: Exploration[Any]) -> dict[str, int]:
    """Depth 1: for each crash point of the uninterrupted run, the writes lost by the scenario crashing there.

    Walks the run's path; from each node with a crash point, the crash's edge and the one path
    after it (at depth 1 nothing else is enabled) to its finished state. Retry moves are left out
    (the agent's tools make no error).
    """
    node, lost = exploration.root, {}
    while not exploration.finished(node):
        ahead = out_edges(exploration, node)
        for action, target in ahead:
            if action.kind == "crash":
                while not exploration.finished(target):
                    ((_, target),) = out_edges(exploration, target)
                point = exploration.point(node)
                assert point is not None
                lost[point] = len(no_loss.lost(exploration.state(target), TRIAGE))
        (node,) = [target for _, target in ahead if exploration.crashes(target) == 0]
    return lost


def out_edges(exploration: Exploration[Any], node: int) -> list[tuple[Action, int]]:
    """Every edge out of `node`: its action and target."""
    found = []
    for choice in itertools.count():
        try:
            found.append(exploration.step(node, choice))
        except IndexError:
            return found
    raise AssertionError("unreachable")
