"""`crashsweep sweep --framework pydantic-ai`: the built-in agent (DBOSDurability, plain tools), swept for real.

A job of one write keeps these sweeps small (8 crash points); the docs page sweeps the triage
job (12 points: 8 scenarios with 19 duplicates keys off, none keys on), and docs/examples'
agent, with a tool that is a step, is swept in test_pydantic_ai.py.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from crashsweep.cli.main import main

ONE_WRITE = 'name = "one"\nturns = [["create_a"]]\n\n[calls]\ncreate_a = { tool = "create_issue", writes = true }\n'


def expected_points() -> list[str]:
    """One uninterrupted run of the one-write job, in order, derived from what DBOS and pydantic-ai record.

    DBOS records the workflow's start (one point after it). Step 1 is the model's first reply
    (its tool call): a point when the scripted model has replied, before DBOS records it, and
    one after. The tool is not a step: one point after the tracker filed the issue, no record.
    Step 2 is the model's final answer, between the same two points; then the workflow's
    SUCCESS is recorded between two points: 1 + 2 + 1 + 2 + 2 = 8.
    """
    return [
        "after recording the workflow's start",
        "before recording step 1",
        "after recording step 1",
        "tracker filed issue create_a",
        "before recording step 2",
        "after recording step 2",
        "before recording workflow triage SUCCESS",
        "after recording workflow triage SUCCESS",
    ]


def sweep_json(capsys: pytest.CaptureFixture[str], job: Path, *args: str) -> tuple[int, dict[str, Any]]:
    """`crashsweep sweep --framework pydantic-ai --job JOB ARGS --format json`: its status and its output."""
    status = main(["sweep", "--framework", "pydantic-ai", "--job", str(job), "--format", "json", *args])
    return status, json.loads(capsys.readouterr().out)


@pytest.fixture
def one_write(tmp_path: Path) -> Path:
    job = tmp_path / "one.toml"
    job.write_text(ONE_WRITE)
    return job


def test_list_points_runs_the_agent_once_and_names_each_point_and_its_place(
    capsys: pytest.CaptureFixture[str], one_write: Path
) -> None:
    """`--list-points`: the 8 points in order, each passed once, placed in the adapters' code."""
    status, listed = sweep_json(capsys, one_write, "--list-points")
    assert status == 0
    assert listed["target"] == "pydantic-ai, keys on, call IDs stable"
    assert [p["name"] for p in listed["points"]] == expected_points()
    assert {p["occurrence"] for p in listed["points"]} == {1}
    places = [p["where"].split(":")[0].rsplit("/", 1)[-1] for p in listed["points"]]
    assert places == [
        "dbos.py",
        "pydantic_ai.py",
        "dbos.py",
        "script.py",
        "pydantic_ai.py",
        "dbos.py",
        "dbos.py",
        "dbos.py",
    ]


def test_keys_off_a_plain_tool_is_made_again_by_every_recovery(
    capsys: pytest.CaptureFixture[str], one_write: Path
) -> None:
    """Keys off, depth 1: 4 scenarios with one duplicate each, nothing lost.

    The tool's result is never recorded by DBOS: on recovery DBOS replays step 1 (the reply
    that called the tool) from its record, and pydantic-ai runs the tool again, whatever was
    recorded after it. So every crash after the tracker filed the issue and before the
    workflow's SUCCESS is recorded duplicates it: "tracker filed issue create_a", before and
    after recording step 2 (the final answer: recorded, and the tool still runs again), and
    before recording SUCCESS: 4 scenarios, 1 duplicate each. The first three points come
    before the write; after SUCCESS recovery has nothing to run. A crash before recording
    step 1 or 2 has the model asked again for that reply: calls+ 2.
    """
    status, row = sweep_json(capsys, one_write, "--keys", "off", "--depth", "1", "--workers", "2")
    assert status == 1
    assert row["variant"] == "pydantic-ai, keys off, call IDs stable"
    assert (row["crash_points"], row["with_dups"], row["dups"], row["missing"], row["calls_plus"]) == (8, 4, 4, 0, 2)


def test_keys_from_the_workflow_and_the_tool_call_id_leave_no_duplicate_even_with_fresh_call_ids(
    capsys: pytest.CaptureFixture[str], one_write: Path
) -> None:
    """Keys on, depth 1, a model that hands out new call IDs on every ask: no duplicate.

    The key is derived from (workflow ID, tool call ID). The tool call ID is in the model's
    reply, which DBOS recorded (step 1) before the tool ran, so each of the 4 recoveries above
    replays the same ID and sends the write again with the same key. A crash before that
    record (points 1-2) has the model asked again, for new IDs, before any write. With the
    job's IDs (stable) nothing can change the key; the docs page sweeps that on the triage job.
    The model is asked again after the two crashes before a reply's record: calls+ 2.
    """
    status, row = sweep_json(capsys, one_write, "--keys", "on", "--call-ids", "fresh", "--depth", "1", "--workers", "2")
    assert status == 0
    assert row["variant"] == "pydantic-ai, keys on, call IDs fresh"
    assert (row["crash_points"], row["with_dups"], row["dups"], row["missing"], row["calls_plus"]) == (8, 0, 0, 0, 2)
