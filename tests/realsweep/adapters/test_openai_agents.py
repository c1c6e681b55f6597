"""The OpenAI Agents SDK adapter (openai-agents 0.24.0): points around session writes and tool calls, the model.

resume's approval windows are crashed in test_openai_agents_resume, with `forked` and `under_sweep` from here.

The crashes here are real: the agent runs in a child forked from this process (the SDK is
imported once, as in the sweep's zygote) and dies by SIGKILL at the chosen point; what its
work directory then holds is read, and the restart runs in this process.
"""

from __future__ import annotations

import asyncio
import os
import traceback
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from agents import ModelSettings, SQLiteSession
from agents.models.interface import ModelTracing

from crashsweep.realsweep.adapters import openai_agents_agent, script
from crashsweep.realsweep.adapters.openai_agents import (
    ScriptedAgentsModel,
    answered,
    describe,
    session_events,
    turns_done,
)
from crashsweep.realsweep.probe import crashpoint
from crashsweep.realsweep.tracker.service import ServiceProcess
from crashsweep.spec.history import History
from crashsweep.spec.invariants import well_formed_transcript
from crashsweep.spec.job import TRIAGE
from tests.docs.shown import printed

EXAMPLES = Path(__file__).resolve().parents[3] / "docs" / "examples"


def expected_points() -> list[str]:
    """The points of one uninterrupted run of the triage agent, derived from what the SDK does.

    The SDK writes the user's input before the first ask (2 points around it). Each turn's
    tools run one after another (async tools), each between "before" and "after" points, a
    write's tracker point between them (3 writes); then the turn's reply and results are
    written in one session write (2 points). The final answer is one more write:
    2 + (3 + 3 + 2) + (2 + 3 + 2) + 2 = 19.
    """
    create = [f"{when} create_issue issue {c}" for c in ("create_a", "create_b") for when in ("before", "after")]
    create[1:1], create[4:4] = ["tracker filed issue create_a"], ["tracker filed issue create_b"]
    turn1 = "reply calling create_issue, create_issue; results of create_issue, create_issue"
    turn2 = "reply calling search_issues, comment; results of search_issues, comment"
    comment = [
        "before comment comment comment_a",
        "tracker commented comment comment_a",
        "after comment comment comment_a",
    ]
    writes = {w: [f"before session write {w}", f"after session write {w}"] for w in ("user input", turn1, turn2)}
    return [
        *writes["user input"],
        *create,
        *writes[turn1],
        "before search_issues issue",
        "after search_issues issue",
        *comment,
        *writes[turn2],
        "before session write final answer",
        "after session write final answer",
    ]


@pytest.fixture
def under_sweep(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, keyed_service: ServiceProcess) -> Iterator[Path]:
    """This process as one process of a sweep in `tmp_path`: its points go to a log, the tracker is a fresh space."""
    log = tmp_path / "points.log"
    monkeypatch.setenv(crashpoint.POINTS_LOG, str(log))
    monkeypatch.delenv(crashpoint.CRASH_AT, raising=False)
    monkeypatch.setenv(script.TRACKER_URL, keyed_service.space_url("oa"))
    monkeypatch.setenv(script.WORKDIR, str(tmp_path))
    crashpoint.reset()
    yield log
    crashpoint.reset()


def forked(run: Callable[[], object], crash_at: str) -> int:
    """Run `run` in a child forked from this process that dies at point `crash_at`; its wait status (-9: killed)."""
    pid = os.fork()
    if pid == 0:  # the child: never returns into pytest
        code = 1
        try:
            os.environ[crashpoint.CRASH_AT] = crash_at
            crashpoint.reset()
            run()
            code = 0
        except BaseException:
            traceback.print_exc()
        finally:
            os._exit(code)
    _, status = os.waitpid(pid, 0)
    return -os.WTERMSIG(status) if os.WIFSIGNALED(status) else os.WEXITSTATUS(status)


def test_a_run_passes_the_points_of_every_session_write_and_tool_call_in_order(under_sweep: Path) -> None:
    """The 19 points of expected_points, in order; a second run finds the final answer saved and passes none."""
    openai_agents_agent.main([])
    assert under_sweep.read_text().splitlines() == expected_points()
    under_sweep.unlink()
    openai_agents_agent.main([])
    assert not under_sweep.exists()
    assert [r["call"] for r in script.tracker().records()] == ["create_a", "create_b", "comment_a"]


def test_a_turn_half_answered_is_asked_for_its_unanswered_calls(tmp_path: Path) -> None:
    """The model counts the job's calls answered, not its replies: a turn whose comment was dropped asks for it again.

    The conversation holds turn 1 and the search of turn 2, as the SDK sends it when the
    comment's call was orphaned (dropped): the reply is the comment alone, not the final answer.
    """
    model = ScriptedAgentsModel(TRIAGE, "stable")
    model.script.folder = tmp_path
    calls = [("create_a", "create_issue"), ("create_b", "create_issue"), ("search", "search_issues")]
    conversation: list[Any] = [
        {"role": "user", "content": "triage"},
        *({"type": "function_call", "call_id": c, "name": n, "arguments": "{}"} for c, n in calls[:2]),
        *({"type": "function_call_output", "call_id": c, "output": "ok"} for c, _ in calls[:2]),
        {"type": "function_call", "call_id": "search", "name": "search_issues", "arguments": "{}"},
        {"type": "function_call_output", "call_id": "search", "output": "[]"},
    ]
    done = answered(conversation, {})
    assert done == {"create_a", "create_b", "search"}
    assert (turns_done(TRIAGE, done), turns_done(TRIAGE, done | {"comment_a"})) == (1, 2)
    reply = asyncio.run(model.get_response(None, conversation, ModelSettings(), [], None, [], ModelTracing.DISABLED))
    assert [(item.type, getattr(item, "call_id", None)) for item in reply.output] == [("function_call", "comment_a")]


def test_session_writes_are_named_by_what_they_hold() -> None:
    """User input, the reply's calls, their results (named through the calls seen), the final answer."""
    names = {"c1": "create_issue"}
    call = {"type": "function_call", "call_id": "c1", "name": "create_issue", "arguments": "{}"}
    output = {"type": "function_call_output", "call_id": "c1", "output": "ok"}
    assert describe([{"role": "user", "content": "go"}], names) == "user input"
    assert describe([call, output], names) == "reply calling create_issue; results of create_issue"  # type: ignore[list-item]
    assert describe([output], {}) == "results of a tool"  # type: ignore[list-item]
    assert describe([{"role": "assistant", "content": "done"}], names) == "final answer"


def test_session_events_read_a_sqlite_session_and_see_an_output_saved_twice(tmp_path: Path) -> None:
    """A SQLiteSession written by the SDK's own add_items, read back as events; a second output for a call breaks it."""
    path = tmp_path / "s.sqlite"
    assert session_events(path, "1") == ()
    assert not path.exists()
    call = {"type": "function_call", "call_id": "c1", "name": "create_issue", "arguments": "{}"}
    output = {"type": "function_call_output", "call_id": "c1", "output": "filed"}
    session = SQLiteSession("1", path)
    asyncio.run(session.add_items([{"role": "user", "content": "go"}, call, output]))  # type: ignore[list-item]
    assert [(e.f, e.call_id, e.run) for e in session_events(path, "1")] == [
        ("model_call", "", "1"),
        ("tool_call", "c1", "1"),
        ("result_saved", "c1", "1"),
    ]
    asyncio.run(session.add_items([output]))  # type: ignore[list-item]
    session.close()
    broken = well_formed_transcript.check(History(session_events(path, "1")))
    assert broken is not None
    assert broken.why == "c1 has two results in the conversation"


def test_the_agent_in_docs_is_swept_as_its_docstring_says() -> None:
    """docs/examples/my_openai_agent.py, swept as its docstring says: 25 points, no duplicate, no loss, well formed.

    The triage run's 19 points (expected_points) less the comment's part of turn 2's session
    write, which parks for approval: its reply (both calls) and the search's result are
    written (2 points), the RunState saved (2), the approved comment runs (3), its result is
    written (2), then the final answer (2) and the RunState removed (2): 12 + 2 + 2 + 3 + 2 +
    2 + 2 = 25. Keys from the session and the job's stable call IDs: no duplicate anywhere.
    Killed after the comment's result reached the session, before the RunState was removed
    (scenario 21), the restart takes the RunState as superseded and goes on from the session:
    the comment's output is saved once, so well-formed-transcript holds in every scenario.
    """
    command = "crashsweep sweep --target my_openai_agent:run --check my_openai_agent:check --depth 1"
    assert command in (EXAMPLES / "my_openai_agent.py").read_text()
    shown = printed("docs/guide/openai-agents.md", f"cd docs/examples && ../../bin/{command}")  # run by test_blocks
    assert shown.startswith("my_openai_agent:run  (real sweep")
    assert "crash points  25" in shown
    assert "with_dups 0   dups 0   missing 0" in shown
    assert "no-loss       holds" in shown
    assert "well-formed-transcript holds" in shown
    assert "re-run" not in shown
