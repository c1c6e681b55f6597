"""trim-context on the built-in OpenAI Agents SDK agent: a SQLiteSession compacted at a restart, killed for real.

The triage run's session after turn 1 was written holds the user's input, reply 1 (create_a,
create_b) and its two outputs; after turn 2, reply 2 (search, comment_a) and its outputs too.
A trim drops every item up to and including the oldest reply that has an output: turn 1's
outputs stay without their calls. The restart sends them (repair `none`, or
`add-missing-results`, which has no call without its output to answer) and the provider
refuses: the process is stuck. Under `both-directions` they are not sent, and the scripted
model, reading the run's progress from the items moved aside, asks for turn 2: nothing is done
twice.
"""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest
from agents import SQLiteSession

from crashsweep.realsweep import world as worlds
from crashsweep.realsweep.adapters import openai_agents_agent, script
from crashsweep.realsweep.adapters.openai_agents_provider import REFUSALS_FILE, refused
from crashsweep.realsweep.adapters.openai_agents_session import aside_items, session_items
from crashsweep.realsweep.adapters.openai_agents_trim import chance, cut, replies, trim, trimmable
from crashsweep.realsweep.probe import crashpoint
from crashsweep.realsweep.values import Scenario
from crashsweep.spec.invariants import well_formed_transcript
from crashsweep.spec.job import TRIAGE
from tests.realsweep.adapters.test_openai_agents import forked, under_sweep

__all__ = ["under_sweep"]

TURN_1 = "after session write reply calling create_issue, create_issue; results of create_issue, create_issue"
TURN_2 = "after session write reply calling search_issues, comment; results of search_issues, comment"


def call(call_id: str) -> dict[str, Any]:
    """A stored function_call item."""
    return {"type": "function_call", "call_id": call_id, "name": "create_issue", "arguments": "{}"}


def output(call_id: str) -> dict[str, Any]:
    """A stored function_call_output item."""
    return {"type": "function_call_output", "call_id": call_id, "output": "ok"}


USER = {"role": "user", "content": "go"}
FINAL = {"role": "assistant", "content": "done"}


def test_the_oldest_reply_with_an_output_is_the_one_trimmed() -> None:
    """Replies are runs of calls; a reply waiting for all its outputs is passed over; a finished run has none."""
    items = [USER, call("a"), call("b"), output("a"), output("b"), call("c"), output("c")]
    assert replies(items) == [(1, 2), (5, 5)]
    assert trimmable(items) == (0, 2)
    assert trimmable([USER, call("a"), call("c"), output("c")]) == (0, 2)  # c answered: the reply has a result
    assert trimmable([USER, call("a")]) is None  # waiting for approval: no output yet
    assert trimmable([*items, FINAL]) is None
    assert trimmable([output("a"), output("b"), call("c"), output("c")]) == (0, 2)


def test_a_trim_deletes_the_rows_and_moves_them_aside(tmp_path: Path) -> None:
    """Written by the SDK's SQLiteSession, trimmed twice: each time the prefix through the oldest reply goes aside."""
    path = tmp_path / "s.sqlite"
    assert not trim(path, "1", tmp_path)
    session = SQLiteSession("1", path)
    items = [USER, call("a"), call("b"), output("a"), output("b"), call("c"), output("c")]
    asyncio.run(session.add_items(items))  # type: ignore[arg-type]
    session.close()
    assert trim(path, "1", tmp_path)
    assert session_items(path, "1") == items[3:]
    assert aside_items(tmp_path) == items[:3]
    assert trim(path, "1", tmp_path)
    assert session_items(path, "1") == items[6:]
    assert aside_items(tmp_path) == items[:6]
    assert not trim(path, "1", tmp_path)  # c's call is gone: nothing left to trim


def test_a_saved_worlds_chance_is_read_off_its_bytes(tmp_path: Path) -> None:
    """chance(world): the session file and its WAL, as a saved world holds them; open after turn 1, not when done."""
    path = tmp_path / openai_agents_agent.SESSION_FILE
    assert not chance(worlds.capture(tmp_path, None))
    session = SQLiteSession(openai_agents_agent.SESSION_ID, path)
    asyncio.run(session.add_items([USER]))  # type: ignore[list-item]
    assert not chance(worlds.capture(tmp_path, None))  # the first turn not stored yet
    asyncio.run(session.add_items([call("a"), output("a")]))  # type: ignore[list-item]
    assert chance(worlds.capture(tmp_path, None))  # read from the WAL too: the session is still open
    asyncio.run(session.add_items([FINAL]))  # type: ignore[list-item]
    session.close()
    assert not chance(worlds.capture(tmp_path, None))  # the run is done


def restart(tmp_path: Path, repair: str, crash_at: str = TURN_1, strikes: int = 1) -> int:
    """The triage agent killed at `crash_at`, its session cut `strikes` times as a strike does; the restart's status."""
    argv = ["--transcript-repair", repair]
    assert forked(lambda: openai_agents_agent.main(argv), f"1:{crash_at}") == -9
    for _ in range(strikes):
        assert chance(worlds.capture(tmp_path, None))
        assert cut(tmp_path)
    crashpoint.reset()
    return openai_agents_agent.main(argv)


def verdict(tmp_path: Path) -> str | None:
    """well-formed-transcript's violation on what the agent saved and sent, as the built-in check reads it."""
    outcome = openai_agents_agent_check()(Scenario((), tmp_path, script.tracker()))
    assert outcome.history is not None
    broken = well_formed_transcript.check(outcome.history)
    return None if broken is None else broken.why


def openai_agents_agent_check() -> Any:
    """The built-in agent's check (builtin.check with the framework: the session and the refusals read)."""
    from crashsweep.realsweep.adapters import builtin

    return builtin.check(TRIAGE, "openai-agents")


@pytest.mark.parametrize("repair", ["none", "add-missing-results"])
def test_a_trimmed_turn_left_in_is_refused_and_the_process_is_stuck(
    under_sweep: Path, tmp_path: Path, repair: str
) -> None:
    """Turn 1 trimmed, its outputs sent without their calls: HTTP 400, stuck; the check finds the output alone."""
    assert restart(tmp_path, repair) == crashpoint.STUCK_STATUS
    [request] = refused(tmp_path)
    assert request["message"] == "No tool call found for function call output with call_id create_a."
    assert [i["type"] for i in request["items"]] == ["function_call_output", "function_call_output"]
    assert verdict(tmp_path) == "a result of create_a was saved with no call of it before"
    assert [r["call"] for r in script.tracker().records()] == ["create_a", "create_b"]  # nothing more was done


def test_both_directions_drops_the_orphaned_outputs_and_the_run_goes_on_without_redoing_turn_1(
    under_sweep: Path, tmp_path: Path
) -> None:
    """Turn 1 trimmed, its outputs not sent: the model asks for turn 2 (progress from the items moved aside)."""
    assert restart(tmp_path, "both-directions") == 0
    assert not (tmp_path / REFUSALS_FILE).exists()
    assert verdict(tmp_path) is None
    assert [r["call"] for r in script.tracker().records()] == ["create_a", "create_b", "comment_a"]
    assert session_items(tmp_path / openai_agents_agent.SESSION_FILE, "triage")[-1]["role"] == "assistant"


def test_after_turn_2_two_strikes_trim_both_turns(under_sweep: Path, tmp_path: Path) -> None:
    """Killed after turn 2's write, trimmed twice (turn 1, then turn 2): both-directions sends no result, and finishes.

    The outputs left (search, comment_a) have no call either: dropped, the model is sent no
    result, reads every turn done from the items moved aside, and gives the final answer.
    """
    assert restart(tmp_path, "both-directions", TURN_2, strikes=2) == 0
    assert not chance(worlds.capture(tmp_path, None))
    assert [r["call"] for r in script.tracker().records()] == ["create_a", "create_b", "comment_a"]
    assert verdict(tmp_path) is None
