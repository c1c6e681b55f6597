"""The OpenAI Agents SDK adapter's resume: an agent killed between its session and its saved RunState, restarted.

The crashes are real, as in test_openai_agents: the built-in agent runs in a child forked from
this process and dies by SIGKILL at the chosen point; what its work directory then holds is
read, and the restart runs in this process. The windows are those of a call that waits for
approval: its function_call is saved at park time, its output only after the approved tool ran,
and the RunState on disk is removed only after the final answer.
"""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path
from typing import Any

import pytest

from crashsweep.realsweep.adapters import openai_agents, openai_agents_agent, script
from crashsweep.realsweep.adapters.openai_agents import ScriptedAgentsModel
from crashsweep.spec.history import History
from crashsweep.spec.invariants import well_formed_transcript
from crashsweep.spec.job import Job, load_job
from tests.realsweep.adapters.test_openai_agents import forked, under_sweep

__all__ = ["under_sweep"]  # the fixture, imported for pytest to find

APPROVAL = """\
name = "approval"
turns = [["create_a"], ["comment_a"]]

[calls]
create_a = { tool = "create_issue", writes = true }
comment_a = { tool = "comment", writes = true, approval = true }
"""


def saved(workdir: Path) -> list[tuple[str, str]]:
    """The session file's items, in order: (type, the tool's name or the message's role)."""
    with sqlite3.connect(workdir / openai_agents_agent.SESSION_FILE) as connection:
        rows = connection.execute("SELECT message_data FROM agent_messages ORDER BY id").fetchall()
    connection.close()
    items = [json.loads(data) for (data,) in rows]
    return [(i.get("type", "message"), str(i.get("name") or i.get("role") or "output")) for i in items]


class Recording(ScriptedAgentsModel):
    """The scripted model, keeping what the SDK sent it on each ask: (type, call ID or role) per item."""

    def __init__(self, job: Job, call_ids: str) -> None:
        super().__init__(job, call_ids)
        self.sent: list[list[tuple[str, str]]] = []

    async def get_response(self, *args: Any, **kwargs: Any) -> Any:
        """Keep the input, then answer as the scripted model does."""
        items = kwargs["input"]
        self.sent.append([(i.get("type", "message"), str(i.get("call_id") or i.get("role"))) for i in items])
        return await super().get_response(*args, **kwargs)


def test_a_crash_after_an_approved_tool_ran_leaves_its_call_orphaned_in_the_session(
    under_sweep: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Killed after the tracker accepted the approved comment, before the session got its result.

    At park time the SDK wrote the reply's function_call and the RunState went to disk; the
    crash leaves the session with that call and no output (the orphaned tool call). The restart
    loads the RunState, the scripted person approves again, the tool runs again with the call
    ID the state holds, so the same key: with keys on and fresh call IDs, one comment. The SDK
    then writes the result and asks the model with the pair whole; the session ends well formed.
    """
    job = tmp_path / "approval.toml"
    job.write_text(APPROVAL)
    argv = ["--job", str(job), "--keys", "on", "--call-ids", "fresh"]
    assert forked(lambda: openai_agents_agent.main(argv), "1:tracker commented comment comment_a") == -9
    assert saved(tmp_path) == [
        ("message", "user"),
        ("function_call", "create_issue"),
        ("function_call_output", "output"),
        ("function_call", "comment"),
    ]
    assert (tmp_path / openai_agents_agent.STATE_FILE).exists()
    recording = Recording(load_job(job), "fresh")
    monkeypatch.setattr(openai_agents, "ScriptedAgentsModel", lambda job, call_ids: recording)  # build() reads it
    monkeypatch.setattr(openai_agents_agent, "_agents", {})
    openai_agents_agent.main(argv)
    assert [kind for kind, _ in recording.sent[-1]] == [
        "message",
        "function_call",
        "function_call_output",
        "function_call",
        "function_call_output",
    ]
    ids = script.ledger_ids(tmp_path)
    assert sorted(ids[r["call"]] for r in script.tracker().records()) == ["comment_a", "create_a"]
    assert saved(tmp_path)[4:] == [("function_call_output", "output"), ("message", "assistant")]


@pytest.mark.parametrize("keys", ["off", "on"])
def test_a_run_state_whose_approved_call_has_its_output_saved_is_not_run_again(
    under_sweep: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, keys: str
) -> None:
    """Killed after the SDK wrote the approved comment's result, before the final answer and the RunState's removal.

    The RunState on disk still waits for the comment's approval, but the session holds the
    comment's output: running the state again would approve and run the comment again (a
    duplicate without keys) and save its output a second time (two results for one call, with
    keys too). The restart goes on from the session instead: the comment is made once, the
    session holds one output per call and the final answer, and the stale RunState is gone.
    """
    job = tmp_path / "approval.toml"
    job.write_text(APPROVAL)
    argv = ["--job", str(job), "--keys", keys, "--call-ids", "stable"]
    assert forked(lambda: openai_agents_agent.main(argv), "1:after session write results of comment") == -9
    assert saved(tmp_path)[3:] == [("function_call", "comment"), ("function_call_output", "output")]
    assert (tmp_path / openai_agents_agent.STATE_FILE).exists()
    openai_agents_agent.main(argv)
    assert sorted(r["call"] for r in script.tracker().records()) == ["comment_a", "create_a"]
    assert saved(tmp_path)[3:] == [
        ("function_call", "comment"),
        ("function_call_output", "output"),
        ("message", "assistant"),
    ]
    assert not (tmp_path / openai_agents_agent.STATE_FILE).exists()
    assert well_formed_transcript.check(History(openai_agents_agent.conversation(tmp_path))) is None


def test_a_call_orphaned_before_its_run_state_was_saved_stays_in_the_session(
    under_sweep: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Killed after the SDK wrote the comment's function_call (park time), before the RunState reached disk.

    The restart finds no RunState and goes on from the session: the SDK drops the orphaned
    call from what it sends (drop_orphan_function_calls), so the model sees turn 1 only and,
    with fresh IDs, calls comment under a new ID; the run parks again, is approved and ends.
    The comment is made once (it never ran before the crash), and the saved conversation keeps
    the first call, with no output, for good; but no model call is sent it (what the model was
    sent is recorded above), so the conversation the check reads from the session, with the SDK's
    drop applied (transcripts.session_items), keeps well-formed-transcript.
    """
    job = tmp_path / "approval.toml"
    job.write_text(APPROVAL)
    argv = ["--job", str(job), "--keys", "on", "--call-ids", "fresh"]
    assert forked(lambda: openai_agents_agent.main(argv), "1:after session write reply calling comment") == -9
    assert not (tmp_path / openai_agents_agent.STATE_FILE).exists()
    recording = Recording(load_job(job), "fresh")
    monkeypatch.setattr(openai_agents, "ScriptedAgentsModel", lambda job, call_ids: recording)  # build() reads it
    monkeypatch.setattr(openai_agents_agent, "_agents", {})
    openai_agents_agent.main(argv)
    orphan = recording.sent[0]
    assert [kind for kind, _ in orphan] == ["message", "function_call", "function_call_output"]
    assert saved(tmp_path) == [
        ("message", "user"),
        ("function_call", "create_issue"),
        ("function_call_output", "output"),
        ("function_call", "comment"),
        ("function_call", "comment"),
        ("function_call_output", "output"),
        ("message", "assistant"),
    ]
    ids = script.ledger_ids(tmp_path)
    assert sorted(ids[r["call"]] for r in script.tracker().records()) == ["comment_a", "create_a"]
    read = openai_agents_agent.conversation(tmp_path)
    assert [e.call_id for e in read if e.f == "tool_call"] == [e.call_id for e in read if e.f == "result_saved"]
    assert well_formed_transcript.check(History(read)) is None
