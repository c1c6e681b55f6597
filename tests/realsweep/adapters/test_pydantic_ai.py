"""The pydantic-ai adapter (pydantic-ai-slim 2.68.0): the scripted model, the tracker tools, step crash points.

The adapter's pieces run here in this process with no DBOS (a DBOS step outside a workflow is a
plain call), against a real tracker service; the user's agent in docs/examples is swept for real.
"""

from __future__ import annotations

import asyncio
import json
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from pydantic_ai import Agent, ToolApproved, ToolDenied

from crashsweep.realsweep.adapters import pydantic_ai, script, transcripts
from crashsweep.realsweep.adapters.pydantic_ai import (
    AgentTools,
    Answer,
    run_approving,
    scripted_model,
    step_crash_points,
    tracker_toolset,
    turns_done,
)
from crashsweep.realsweep.probe import crashpoint
from crashsweep.realsweep.sweep import Scenario
from crashsweep.realsweep.tracker.client import TrackerClient
from crashsweep.realsweep.tracker.service import ServiceProcess
from crashsweep.spec import cassette, metrics
from crashsweep.spec.job import TRIAGE, load_job
from tests.docs.shown import printed
from tests.paths import ROOT

pytestmark = pytest.mark.usefixtures("no_event_loop_left")  # run_sync in this process (tests/conftest.py)

EXAMPLES = ROOT / "docs" / "examples"
TRIAGE_APPROVAL = load_job(ROOT / "examples" / "triage-approval.toml")


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


def test_an_agent_plays_a_cassette_its_references_read_from_the_tools_answers(
    under_sweep: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Under $CRASHSWEEP_CASSETTE the model plays the cassette; the comment's issue is the one the search found.

    The recorded run commented on "issue recorded", which this tracker does not hold: the
    comment is filed only because its title is read from the search's answer in the messages
    (ScriptedFunction passes the ToolReturnParts), which finds the issue this run filed.
    """
    title = cassette.Ref("search", (0, "title"), "issue recorded")
    played = cassette.Cassette(
        (
            cassette.Ask((cassette.CassetteCall("create_a", "create_issue", (("title", "issue live"),)),)),
            cassette.Ask((cassette.CassetteCall("search", "search_issues", (("query", "issue"),)),)),
            cassette.Ask((cassette.CassetteCall("comment_a", "comment", (("issue_title", title), ("body", "c"))),)),
            cassette.Ask((), "played"),
        )
    )
    cassette.write(tmp_path / "played.jsonl", played)
    monkeypatch.setenv(script.CASSETTE, str(tmp_path / "played.jsonl"))
    agent = Agent(scripted_model(TRIAGE), toolsets=[tracker_toolset(AgentTools(keys=True))])
    result = asyncio.run(agent.run("triage"))
    assert result.output == "played"
    records = script.tracker().records()
    assert [(r["call"], r["body"]) for r in records] == [("create_a", ""), ("comment_a", "c")]


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


@pytest.mark.parametrize(
    ("answer", "points"),
    [
        (True, ["tracker commented comment comment_a"]),
        (ToolApproved(override_args={"issue_title": "issue create_a", "body": "edited"}), ["tracker commented edited"]),
        (ToolDenied("not today"), []),
    ],
    ids=["approved", "approved with other arguments", "denied"],
)
def test_run_approving_asks_the_person_about_each_waiting_call_and_goes_on_from_the_history(
    under_sweep: Path, monkeypatch: pytest.MonkeyPatch, answer: Answer, points: list[str]
) -> None:
    """comment needs approval: the run ends with its deferral, the person answers, the next run goes on.

    The person is given the call's tool name and arguments; the answer is counted an approval
    and passes "answers returned" (outside DBOS; in a workflow "before recording step N").
    The comment then runs (with the person's arguments) or not (its denial goes to the model);
    the model gives its final answer either way, having seen both tool turns.
    """
    counters = under_sweep.parent / "counters.log"
    monkeypatch.setenv(crashpoint.COUNTERS_LOG, str(counters))
    asked: list[tuple[str, dict[str, Any]]] = []

    def person(tool: str, args: dict[str, Any]) -> Answer:
        asked.append((tool, args))
        return answer

    toolset = tracker_toolset(AgentTools(keys=True), needs_approval=("comment",))
    agent = Agent(scripted_model(TRIAGE_APPROVAL), toolsets=[toolset])
    assert run_approving(agent, "triage", person=person) == "done: 2 tool turn(s)"
    assert asked == [("comment", {"issue_title": "issue create_a", "body": "comment comment_a"})]
    assert counters.read_text().split().count(metrics.APPROVALS) == 1
    passed = under_sweep.read_text().splitlines()
    assert passed[passed.index("model replied to turn 2") :] == [
        "model replied to turn 2",
        "answers returned",
        *points,
        "model replied to turn 3",
    ]
    assert len(script.tracker().records()) == 2 + len(points)


def test_an_agent_whose_tool_needs_approval_is_swept_and_its_answers_are_recorded(tmp_path: Path) -> None:
    """docs/examples/my_pydantic_approval_agent.py, keys off, depth 1, swept for real: 14 points, 10 scenarios, 23 dups.

    Its steps: 1 the model's first reply, 2 its second (search and the comment; the run ends
    with the comment's deferral), 3 the person's answers, 4 the final answer. On recovery DBOS
    replays the first run from steps 1-2 (its plain tools run again: the creates and the
    search), returns the recorded answers, and the second run runs the approved comment again
    (a plain tool too). A crash at P duplicates: filed create_a, create_a (1); filed create_b,
    before/after step 2 or 3, both creates (2 each, 5 points); commented, before/after step 4,
    before SUCCESS, all three (3 each, 4 points): 10 scenarios, 1 + 10 + 12 = 23 duplicates.
    The person is asked once per scenario, and again after a crash "before recording step 3"
    (answered, not recorded): 14 + 1 = 15 approvals.
    """
    scenarios = tmp_path / "scenarios.jsonl"
    target = ["--target", "my_pydantic_approval_agent:run", "--check", "my_pydantic_approval_agent:check"]
    command = [str(ROOT / "bin" / "crashsweep"), "sweep", *target, "--depth", "1", "--arg", "keys=off"]
    done = subprocess.run(
        [*command, "--workers", "2", "--format", "json", "--scenarios", str(scenarios)],
        cwd=EXAMPLES,
        capture_output=True,
        text=True,
        check=False,
    )
    assert done.returncode == 1, done.stdout + done.stderr
    row = json.loads(done.stdout)
    assert (row["crash_points"], row["with_dups"], row["dups"], row["missing"]) == (14, 10, 23, 0)
    assert row["approvals"] == 15
    records = [json.loads(line) for line in scenarios.read_text().splitlines()]
    asked_twice = [[c["point"] for c in r["crashes"]] for r in records if r["counters"].get(metrics.APPROVALS) == 2]
    assert asked_twice == [["before recording step 3"]]


def test_the_approval_agent_in_docs_is_swept_with_keys_and_makes_nothing_twice() -> None:
    """The page's sweep of the same agent with keys: every repeat carries its first key, nothing is made twice."""
    command = (
        "crashsweep sweep --target my_pydantic_approval_agent:run --check my_pydantic_approval_agent:check --depth 1"
    )
    assert command in (EXAMPLES / "my_pydantic_approval_agent.py").read_text()
    shown = printed("docs/guide/pydantic-ai.md", f"cd docs/examples && ../../bin/{command}")  # run by test_blocks
    assert "crash points  14\n" in shown
    assert "with_dups 0   dups 0   missing 0" in shown
    assert f"approved-exactly not decided ({transcripts.UNDECIDED['pydantic-ai']['approvals']})" in shown
