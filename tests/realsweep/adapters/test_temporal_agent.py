"""The built-in Temporal agent swept at depth 1: keys off duplicates, keys from (workflow_id, activity_id) do not.

A Temporal sweep runs every scenario from scratch (no dedup: the history is in the server,
not in the work folder): one scenario per crash point, each a process killed there and a
restart to the end, all on the sweep's one dev server. A restart after a crash inside an
activity does not wait out its start-to-close timeout (1 s): it reports the dead worker's
attempt timed out at once (temporal_attempts.py), so the sweeps run two processes at a time,
as many as the cores.
"""

from __future__ import annotations

from pathlib import Path

from crashsweep.realsweep.adapters import script
from crashsweep.realsweep.sweep import SweepOptions, determinism, sweep
from crashsweep.spec.job import TRIAGE, load_job
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
