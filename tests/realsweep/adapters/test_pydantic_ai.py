"""The pydantic-ai adapter (pydantic-ai-slim 2.68.0): the scripted model, the tracker tools, step crash points.

The adapter's pieces run here in this process with no DBOS (a DBOS step outside a workflow is a
plain call), against a real tracker service; the user's agent in docs/examples is swept for real.
"""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from pathlib import Path

import pytest
from pydantic_ai import Agent

from crashsweep.realsweep.adapters import pydantic_ai, script, transcripts
from crashsweep.realsweep.adapters.pydantic_ai import (
    AgentTools,
    scripted_model,
    step_crash_points,
    tracker_toolset,
    turns_done,
)
from crashsweep.realsweep.probe import crashpoint
from crashsweep.realsweep.sweep import Scenario
from crashsweep.realsweep.tracker.client import TrackerClient
from crashsweep.realsweep.tracker.service import ServiceProcess
from crashsweep.spec.job import TRIAGE
from tests.docs.shown import printed

EXAMPLES = Path(__file__).resolve().parents[3] / "docs" / "examples"


@pytest.fixture
def under_sweep(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, keyed_service: ServiceProcess) -> Iterator[Path]:
    """This process as one process of a sweep that never crashes: its points go to a log."""
    log = tmp_path / "points.log"
    monkeypatch.setenv(crashpoint.POINTS_LOG, str(log))
    monkeypatch.delenv(crashpoint.CRASH_AT, raising=False)
    monkeypatch.setenv(script.TRACKER_URL, keyed_service.space_url("pai"))
    monkeypatch.setenv(script.WORKDIR, str(tmp_path))
    crashpoint.reset()
    yield log
    crashpoint.reset()


@pytest.mark.parametrize("steps", [False, True], ids=["plain tools", "tools as steps"])
def test_an_agent_with_no_dbos_plays_the_job_against_the_tracker(under_sweep: Path, steps: bool) -> None:
    """The triage job through a plain pydantic-ai Agent: three asks, the three writes, each once.

    With no workflow there is no step: the model's point is "model replied to turn K" and a
    step-wrapped tool's "<tool> returned" (its DBOS step runs as a plain call). Each record's
    call is the model's tool call ID (the job's, stable IDs) and its run pydantic-ai's run ID.
    """
    agent = Agent(scripted_model(TRIAGE), toolsets=[tracker_toolset(AgentTools(keys=True), steps=steps)])
    result = asyncio.run(agent.run("triage"))
    assert result.output == "done: 2 tool turn(s)"

    def returned(tool: str) -> list[str]:
        return [f"{tool} returned"] if steps else []

    assert under_sweep.read_text().splitlines() == [
        "model replied to turn 1",
        "tracker filed issue create_a",
        *returned("create_issue"),
        "tracker filed issue create_b",
        *returned("create_issue"),
        "model replied to turn 2",
        *returned("search_issues"),
        "tracker commented comment comment_a",
        *returned("comment"),
        "model replied to turn 3",
    ]
    records = script.tracker().records()
    assert [r["call"] for r in records] == ["create_a", "create_b", "comment_a"]
    assert {r["run"] for r in records} == {result.run_id}
    assert turns_done(result.all_messages()) == 2
    assert len((under_sweep.parent / script.LEDGER).read_text().splitlines()) == 3


@pytest.mark.parametrize(("keys", "records"), [(True, 3), (False, 6)])
def test_a_run_done_again_files_nothing_new_with_keys(under_sweep: Path, keys: bool, records: int) -> None:
    """The same run twice (its run ID given, the job's call IDs): keys from (run, tool call ID) are the same.

    With keys the keyed tracker files each write once (3 records); with keys off, set after
    the tools were made (as a module's tools made at import follow `--arg keys=off`), twice (6).
    """
    tools = AgentTools(keys=True)
    tools.keys = keys
    agent = Agent(scripted_model(TRIAGE), toolsets=[tracker_toolset(tools)])
    for _ in range(2):
        asyncio.run(agent.run("triage", run_id="run-1"))
    assert len(script.tracker().records()) == records


def test_step_crash_points_pass_after_the_body_sync_or_async(under_sweep: Path) -> None:
    """The point follows the body's end, also for a coroutine function (its result awaited first)."""

    def plain() -> int:
        crashpoint.crashpoint("body")
        return 1

    async def coroutine() -> int:
        crashpoint.crashpoint("body")
        return 2

    assert step_crash_points(plain)() == 1
    assert asyncio.run(step_crash_points(coroutine)()) == 2
    assert under_sweep.read_text().splitlines() == ["body", "plain returned", "body", "coroutine returned"]


def test_the_users_agent_in_docs_is_swept_and_its_plain_tools_rerun_on_recovery() -> None:
    """docs/examples/my_pydantic_agent.py, keys off, as its docstring says: 9 scenarios with 18 duplicates.

    Its 13 points in order (DBOS numbers steps as they start): the workflow's start; step 1
    (the model's first reply) before and after its record; "tracker filed issue create_a" and
    "... create_b" (plain tools: no step, no record); step 2 (the second reply) before and
    after; search_issues (plain, no point); the comment, step 3, "tracker commented comment
    comment_a" then after its record (the adapter adds no point before a user's step); step 4
    (the final answer) before and after; the final status before and after: 1+2+2+2+2+2+2 = 13.

    On recovery DBOS replays steps 1, 2 and 4 from their records, but the plain tools run
    again, whatever was recorded after them; the comment runs again only if step 3 was not
    recorded. A crash at a point P duplicates:
      filed create_a: create_a (1); filed create_b, before/after step 2: both creates (2 each);
      commented: both creates and the comment (3); after step 3, before/after step 4, before
      the SUCCESS record: both creates, the comment replayed (2 each); after SUCCESS: nothing
      runs again (0); the first three points come before any write (0).
    9 scenarios, 1 + 2*3 + 3 + 2*4 = 18 duplicates; nothing lost.
    """
    command = "crashsweep sweep --target my_pydantic_agent:run --check my_pydantic_agent:check --depth 1 --arg keys=off"
    assert command in (EXAMPLES / "my_pydantic_agent.py").read_text()
    shown = printed("docs/guide/pydantic-ai.md", f"cd docs/examples && ../../bin/{command}")  # run by test_blocks
    assert shown.startswith("my_pydantic_agent:run keys=off  (real sweep")
    assert "crash points  13\n" in shown
    assert "with_dups 9   dups 18   missing 0" in shown


def test_the_adapters_check_reads_the_effects_and_says_why_the_rest_is_not_decided(
    tmp_path: Path, keyed_service: ServiceProcess
) -> None:
    """A user's own agent's check: the tracker's effects; the conversation and approvals unseen, and why."""
    scenario = Scenario((), tmp_path, TrackerClient(keyed_service.space_url("pydantic_ai")))
    history = pydantic_ai.check(TRIAGE)(scenario).history
    assert history is not None
    assert dict(history.unseen) == dict(transcripts.UNDECIDED["pydantic-ai"])
    assert history.facts == frozenset({"effects", "status"})
