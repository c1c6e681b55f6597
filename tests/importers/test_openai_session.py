"""The openai-session importer on SQLiteSession databases written by the OpenAI Agents SDK (0.24.0) itself."""

from __future__ import annotations

import asyncio
import json
import sqlite3
from collections.abc import AsyncIterator
from contextlib import closing
from pathlib import Path
from typing import Any

import pytest
from agents import Agent, ModelResponse, RunConfig, Runner, SQLiteSession, Usage, function_tool
from agents.models.interface import Model
from openai.types.responses import (
    EasyInputMessageParam,
    ResponseFunctionToolCall,
    ResponseFunctionToolCallParam,
    ResponseOutputMessage,
    ResponseOutputText,
)
from openai.types.responses.response_input_item_param import FunctionCallOutput

from crashsweep.importers import openai_session
from crashsweep.importers.base import Unusable
from crashsweep.spec.history import Event, args_digest

USER: EasyInputMessageParam = {"role": "user", "content": "triage"}


def call(call_id: str, name: str, arguments: dict[str, Any]) -> ResponseFunctionToolCallParam:
    """A function_call item as the SDK saves a model's request."""
    return {"type": "function_call", "call_id": call_id, "name": name, "arguments": json.dumps(arguments)}


def output(call_id: str) -> FunctionCallOutput:
    """A function_call_output item as the SDK saves a tool's result."""
    return {"type": "function_call_output", "call_id": call_id, "output": "ok"}


ANSWER: dict[str, Any] = {"type": "message", "role": "assistant", "content": [{"type": "output_text", "text": "done"}]}


def write(path: Path, session_id: str, *batches: list[Any]) -> None:
    """Each batch written by one `SQLiteSession.add_items` of session `session_id` in the file `path`."""
    session = SQLiteSession(session_id, path)
    try:
        for batch in batches:
            asyncio.run(session.add_items(batch))
    finally:
        session.close()


def shape(events: tuple[Event, ...]) -> list[tuple[str, str, str]]:
    """Each event's f, call ID and the row its src names."""
    return [(e.f, e.call_id, e.src.rsplit(" ", 1)[-1]) for e in events]


def test_a_turn_of_two_calls_is_a_model_call_then_each_call_with_its_result(tmp_path: Path) -> None:
    """Rows 1-6: the user; calls a, b (one reply); their outputs; the answer (as the SDK writes a turn).

    By hand: the reply at row 2 begins a model call; a and b each go right before their output
    (the SDK sends a call once its output exists), so (tool_call a, row 2), (result a, row 4),
    (tool_call b, row 3), (result b, row 5); the answer at row 6 is the second model reply.
    The last row (6) is an assistant message and both calls have their output (rows 4, 5): the
    run finished, a `run_status` ok `finished` at the end with row 6's src and time.
    """
    path = tmp_path / "session.sqlite"
    write(
        path,
        "s1",
        [USER],
        [call("a", "create_issue", {"title": "A"}), call("b", "comment", {}), output("a"), output("b"), ANSWER],
    )
    with closing(sqlite3.connect(path)) as db, db:
        db.execute("UPDATE agent_messages SET created_at = '2025-01-02 03:04:05' WHERE id < 6")
        db.execute("UPDATE agent_messages SET created_at = '2025-01-02 03:04:07' WHERE id = 6")
    (history,) = openai_session.read(path)
    assert shape(history.events) == [
        ("model_call", "", "2"),
        ("tool_call", "a", "2"),
        ("result_saved", "a", "4"),
        ("tool_call", "b", "3"),
        ("result_saved", "b", "5"),
        ("model_call", "", "6"),
        ("run_status", "", "6"),
    ]
    assert [e.seq for e in history.events] == [1, 2, 3, 4, 5, 6, 7]
    assert {(e.run, e.incarnation) for e in history.events} == {("s1", 0)}
    calls = [e for e in history.events if e.f == "tool_call"]
    assert [(e.call, e.tool) for e in calls] == [("a", "create_issue"), ("b", "comment")]
    assert history.events[0].src == "session.sqlite:agent_messages row 2"
    finished = history.events[-1]
    assert (finished.type, finished.status) == ("ok", "finished")
    # 2025-01-01T00:00:00Z is 1735689600; + 1 day + 3:04:07 = 1735787047, row 6's time.
    assert (finished.src, finished.time) == ("session.sqlite:agent_messages row 6", 1735787047.0)
    assert history.facts == {"transcript", "status"}
    assert set(history.unseen) == {"effects", "approvals"}


def test_the_digest_is_of_the_arguments_not_of_their_text(tmp_path: Path) -> None:
    """Two calls whose argument texts differ only in key order and spacing have one digest; other values another.

    (The session ends with c's output, not an assistant message: it has no status.)
    """
    path = tmp_path / "session.sqlite"
    same = {"type": "function_call", "call_id": "b", "name": "t", "arguments": '{ "y": 2,  "x": 1 }'}
    write(
        path,
        "s",
        [
            call("a", "t", {"x": 1, "y": 2}),
            same,
            call("c", "t", {"x": 1, "y": 3}),
            output("a"),
            output("b"),
            output("c"),
        ],
    )
    events = openai_session.read(path)[0].events
    assert "run_status" not in {e.f for e in events}
    digests = [e.args_digest for e in events if e.f == "tool_call"]
    assert digests[0] == digests[1] != digests[2]
    assert digests[0].startswith("sha256:")
    assert len(digests[0]) == len("sha256:") + 16


def test_a_call_left_without_output_is_sent_only_with_its_output_and_one_never_answered_comes_last(
    tmp_path: Path,
) -> None:
    """A run parked on call a (no output), then resumed; a second input whose reply calls b, never answered.

    Rows: 1 user, 2 call a (first batch, the park); 3 output a; 4 answer; 5 user; 6 call b.
    By hand: model call (row 2); a's request goes before its output (row 3), with its time; the
    answer's model call (row 4); the reply at row 6 is a third model call; b is last, time 0.
    The first run's answer (row 4) is not the session's last item: the last (row 6) is b's
    request, never answered, so the session has no status (the second run did not finish).
    """
    path = tmp_path / "session.sqlite"
    write(path, "s", [USER, call("a", "comment", {})], [output("a"), ANSWER], [USER, call("b", "comment", {})])
    with closing(sqlite3.connect(path)) as db, db:
        db.execute("UPDATE agent_messages SET created_at = '2025-01-02 03:04:05' WHERE id <= 2")
        db.execute("UPDATE agent_messages SET created_at = '2025-01-02 03:04:09' WHERE id > 2")
    events = openai_session.read(path)[0].events
    assert shape(events) == [
        ("model_call", "", "2"),
        ("tool_call", "a", "2"),
        ("result_saved", "a", "3"),
        ("model_call", "", "4"),
        ("model_call", "", "6"),
        ("tool_call", "b", "6"),
    ]
    # 2025-01-01T00:00:00Z is 1735689600; + 1 day + 3:04:05 = 1735787045 (and + 4 s for the later rows).
    assert [e.time for e in events] == [1735787045.0, 1735787049.0, 1735787049.0, 1735787049.0, 1735787049.0, 0.0]


def test_a_session_cut_short_after_a_tool_output_has_no_status(tmp_path: Path) -> None:
    """Rows: 1 user, 2 call a, 3 a's output; the run stopped there (a crash before the model answered).

    By hand: a model call (row 2), a with its output (rows 2, 3). The last item is a tool
    output, not an assistant message: no status. The status family is still recorded (the
    session says the run did not finish), so it stays in `facts`.
    """
    path = tmp_path / "session.sqlite"
    write(path, "s", [USER, call("a", "comment", {})], [output("a")])
    (history,) = openai_session.read(path)
    assert shape(history.events) == [("model_call", "", "2"), ("tool_call", "a", "2"), ("result_saved", "a", "3")]
    assert history.facts == {"transcript", "status"}


def test_an_answer_while_a_call_has_no_output_is_not_a_finish(tmp_path: Path) -> None:
    """Rows: 1 user, 2 call a, 3 call b, 4 a's output, 5 an assistant message; b never had an output.

    By hand: a model call (row 2), a with its output (rows 2, 4), the reply at row 5 a second
    model call, b last with time 0. The last item is an assistant message, but b is still
    unanswered: the run did not end with its final output, so no status.
    """
    path = tmp_path / "session.sqlite"
    write(path, "s", [USER, call("a", "comment", {}), call("b", "comment", {}), output("a"), ANSWER])
    events = openai_session.read(path)[0].events
    assert shape(events) == [
        ("model_call", "", "2"),
        ("tool_call", "a", "2"),
        ("result_saved", "a", "4"),
        ("model_call", "", "5"),
        ("tool_call", "b", "3"),
    ]
    assert events[-1].time == 0.0


def test_a_session_answered_then_given_new_input_has_no_status(tmp_path: Path) -> None:
    """Rows: 1 user, 2 the answer, 3 a second user message (a new run on the session, not answered yet).

    By hand: one model call (row 2); the last item is the user's, not an assistant message: no status.
    """
    path = tmp_path / "session.sqlite"
    write(path, "s", [USER, ANSWER], [USER])
    assert shape(openai_session.read(path)[0].events) == [("model_call", "", "2")]


def test_a_run_parked_on_a_call_and_resumed_to_its_answer_finished(tmp_path: Path) -> None:
    """Rows: 1 user, 2 call a (the park), then on resume 3 a's output, 4 the answer.

    By hand: a model call (row 2), a with its output (rows 2, 3), the answer's model call (row
    4); the last item (row 4) is an assistant message and a has its output: `finished` at row 4.
    """
    path = tmp_path / "session.sqlite"
    write(path, "s", [USER, call("a", "comment", {})], [output("a"), ANSWER])
    events = openai_session.read(path)[0].events
    assert shape(events) == [
        ("model_call", "", "2"),
        ("tool_call", "a", "2"),
        ("result_saved", "a", "3"),
        ("model_call", "", "4"),
        ("run_status", "", "4"),
    ]
    assert (events[-1].type, events[-1].status) == ("ok", "finished")


def test_each_session_is_a_history_in_the_order_they_began(tmp_path: Path) -> None:
    """Session "late" writes after "early" began: two histories, early first, each with its own items.

    Rows: 1 early's user, 2 late's user, 3 late's answer, 4 early's answer. By hand: each session
    is its user, then its answer (a model call); each ends with an assistant message and no call,
    so each finished, its status at its own last row: early's row 4, late's row 3.
    """
    path = tmp_path / "session.sqlite"
    write(path, "early", [USER])
    write(path, "late", [USER, ANSWER])
    write(path, "early", [ANSWER])
    early, late = openai_session.read(path)
    assert [(e.run, e.f, e.src) for e in early.events] == [
        ("early", "model_call", "session.sqlite:agent_messages row 4"),
        ("early", "run_status", "session.sqlite:agent_messages row 4"),
    ]
    assert [(e.run, e.f, e.src) for e in late.events] == [
        ("late", "model_call", "session.sqlite:agent_messages row 3"),
        ("late", "run_status", "session.sqlite:agent_messages row 3"),
    ]


class Scripted(Model):
    """A model that asks for create_issue(title="A") as call "c1" first, then answers."""

    async def get_response(self, *args: Any, **kwargs: Any) -> ModelResponse:
        """The request for c1, or the final answer once the conversation holds c1's output."""
        sent = args[1] if len(args) > 1 else kwargs["input"]
        if any(isinstance(i, dict) and i.get("type") == "function_call_output" for i in sent):
            text = ResponseOutputText(type="output_text", text="done", annotations=[])
            reply: Any = ResponseOutputMessage(
                id="m1", type="message", role="assistant", status="completed", content=[text]
            )
        else:
            reply = ResponseFunctionToolCall(
                type="function_call", id="fc1", call_id="c1", name="create_issue", arguments='{"title": "A"}'
            )
        return ModelResponse(output=[reply], usage=Usage(), response_id=None)

    def stream_response(self, *args: Any, **kwargs: Any) -> AsyncIterator[Any]:
        """Not used: the test runs `Runner.run`."""
        raise NotImplementedError


def test_a_session_written_by_runner_run_reads_as_its_conversation(tmp_path: Path) -> None:
    """A real run: the user's input, the reply calling c1, c1's output, the answer (four rows).

    By hand: a model call before the reply (row 2), c1 with its output (rows 2, 3), a model
    call before the answer (row 4); c1's digest is that of {"title": "A"}. The run returned its
    final output: the last row (4) is the answer and c1 has its output, so it finished (row 4).
    """

    @function_tool
    def create_issue(title: str) -> str:
        """File an issue."""
        return f"filed {title}"

    path = tmp_path / "session.sqlite"
    session = SQLiteSession("run-1", path)
    try:
        agent = Agent(name="triage", model=Scripted(), tools=[create_issue])
        asyncio.run(Runner.run(agent, "triage", session=session, run_config=RunConfig(tracing_disabled=True)))
    finally:
        session.close()
    (history,) = openai_session.read(path)
    assert shape(history.events) == [
        ("model_call", "", "2"),
        ("tool_call", "c1", "2"),
        ("result_saved", "c1", "3"),
        ("model_call", "", "4"),
        ("run_status", "", "4"),
    ]
    assert history.events[-1].status == "finished"
    assert history.events[1].args_digest == args_digest({"title": "A"})
    assert history.events[1].tool == "create_issue"


def test_a_row_that_is_not_json_is_refused_with_its_table_and_row(tmp_path: Path) -> None:
    """A session of two items whose second row's JSON was cut: refused, naming agent_messages row 2."""
    path = tmp_path / "session.sqlite"
    write(path, "s", [USER, ANSWER])
    with closing(sqlite3.connect(path)) as db, db:
        db.execute('UPDATE agent_messages SET message_data = \'{"type": "mess\' WHERE id = 2')
    with pytest.raises(Unusable, match=r"session\.sqlite: table agent_messages row 2: message_data is not JSON"):
        openai_session.read(path)


def test_only_a_database_with_sqlite_sessions_tables_is_recognised(tmp_path: Path) -> None:
    """The SDK's database is; an SQLite database of another schema, and a text file, are not."""
    path, other, text = tmp_path / "session.sqlite", tmp_path / "other.sqlite", tmp_path / "notes.txt"
    write(path, "s", [USER])
    with closing(sqlite3.connect(other)) as db, db:
        db.execute("CREATE TABLE agent_messages (id INTEGER, message_data TEXT)")  # one of the two tables only
    text.write_text("agent_sessions agent_messages\n")
    assert openai_session.recognises(path, path.read_bytes()[:100])
    assert not openai_session.recognises(other, other.read_bytes()[:100])
    assert not openai_session.recognises(text, text.read_bytes())
