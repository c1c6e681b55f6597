"""from-trace's reader of DBOS's system database, on small databases made by hand (values serialized by DBOS's own).

`Database` writes the tables and columns DBOS 3.4.0 reads and writes for a workflow
(workflow_status, operation_outputs, workflow_output; the columns the reader reads), one row per
step in the order the test adds them, each output serialized by DBOS's DefaultSerializer (a
base64 pickle, as DBOS records it). The runs are those of the two built-in agents for the
triage job, by hand from their code: DBOS's agent asks in a step (the reply's calls as a list of
{id, name, args}) and runs each call in a step of its own; pydantic-ai records each model request
(a ModelResponse) as a step and runs its tools inline, unrecorded.
"""

from __future__ import annotations

import sqlite3
from contextlib import closing
from pathlib import Path
from typing import Any

import pytest
from dbos._serialization import DefaultSerializer
from pydantic_ai.messages import ModelResponse, TextPart, ToolCallPart

from crashsweep.fromtrace import dbos_store, derive
from crashsweep.fromtrace.design import fields
from crashsweep.fromtrace.recording import TraceError
from crashsweep.spec.job import TRIAGE
from crashsweep.variants.presets import FRAMEWORKS
from tests.fromtrace.triage_replies import TURN_1, TURN_2

SEARCHED = '[{"number": 1, "title": "issue create_a"}]'
STATUS = "workflow_uuid, status, name, created_at, updated_at, recovery_attempts, serialization, forked_from"


class Database:
    """A DBOS system database written by hand: one workflow row per `workflow`, one step row per `step`."""

    def __init__(self, path: Path) -> None:
        self.path, self.steps = path, 0
        with closing(sqlite3.connect(path)) as db, db:
            db.execute(f"CREATE TABLE workflow_status ({STATUS}, completed_at, error)")
            db.execute(
                "CREATE TABLE operation_outputs (workflow_uuid, function_id, function_name, output, error, "
                "child_workflow_id, started_at_epoch_ms, completed_at_epoch_ms, serialization)"
            )
            db.execute("CREATE TABLE workflow_output (workflow_uuid, output, error)")

    def workflow(
        self,
        run: str = "triage",
        status: str = "SUCCESS",
        name: str = "triage",
        attempts: int = 1,
        forked: str = "",
        raised: BaseException | None = None,
    ) -> Database:
        """A workflow's row (and, when it `raised`, its error in workflow_output as DBOS pickles it)."""
        with closing(sqlite3.connect(self.path)) as db, db:
            row = (run, status, name, 1_000, 2_000, attempts, "py_pickle", forked or None)
            db.execute(f"INSERT INTO workflow_status ({STATUS}) VALUES (?, ?, ?, ?, ?, ?, ?, ?)", row)
            if raised is not None:
                error = DefaultSerializer().serialize(raised)
                db.execute("INSERT INTO workflow_output VALUES (?, NULL, ?)", (run, error))
        return self

    def step(self, function: str, output: Any, *, raw: str | None = None, run: str = "triage") -> Database:
        """The next step's row: `output` serialized as DBOS does (or `raw` as it is)."""
        self.steps += 1
        value = raw if raw is not None else DefaultSerializer().serialize(output)
        with closing(sqlite3.connect(self.path)) as db, db:
            db.execute(
                "INSERT INTO operation_outputs VALUES (?, ?, ?, ?, NULL, NULL, ?, ?, 'py_pickle')",
                (run, self.steps, function, value, 1_000 + self.steps, 1_001 + self.steps),
            )
        return self

    def dbos_agent(self) -> Database:
        """Triage as DBOS's agent records it: ask (1), two creates (2, 3), ask (4), search (5), comment (6), ask (7)."""
        self.workflow().step("ask_model", TURN_1).step("run_tool", "filed issue #1").step("run_tool", "filed issue #2")
        self.step("ask_model", TURN_2).step("run_tool", SEARCHED).step("run_tool", "commented #3 on issue #1")
        return self.step("ask_model", [])


def response(*calls: dict[str, Any], text: str = "") -> ModelResponse:
    """pydantic-ai's reply: a tool-call part per call, or (none) a text part."""
    if not calls:
        return ModelResponse(parts=[TextPart(text)], model_name="crashsweep-scripted")
    parts = [ToolCallPart(c["name"], c["args"], tool_call_id=c["id"]) for c in calls]
    return ModelResponse(parts=parts, model_name="crashsweep-scripted")


def pydantic_agent(path: Path) -> Database:
    """Triage as pydantic-ai's DBOS durability records it: three model requests, the tools unrecorded."""
    database = Database(path).workflow(name="crashsweep.pydantic_ai.triage")
    database.step("triage__model.request", response(*TURN_1)).step("triage__model.request", response(*TURN_2))
    return database.step("triage__model.request", response(text="done: 2 tool turn(s)"))


def test_dbos_agents_run_reads_as_its_replies_runs_and_saves(tmp_path: Path) -> None:
    """Three replies (the last with no calls and no recorded text), four runs with their answers, eight saves.

    By hand: the workflow's record is the start (0); step N's body starts at 2N, its record 2N+1.
    """
    recording = dbos_store.read(Database(tmp_path / "dbos.sqlite").dbos_agent().path)
    assert [[(c.id, c.tool, c.arguments) for c in r.calls] for r in recording.replies] == [
        [(c["id"], c["name"], c["args"]) for c in turn] for turn in (TURN_1, TURN_2, [])
    ]
    assert [(r.final, r.start, r.span) for r in recording.replies] == [
        (None, 2, "operation_outputs row triage:1"),
        (None, 8, "operation_outputs row triage:4"),
        ("", 14, "operation_outputs row triage:7"),
    ]
    assert [(t.call_id, t.result, t.start, t.key, t.failed) for t in recording.tools] == [
        ("create_a", "filed issue #1", 4, "", False),
        ("create_b", "filed issue #2", 6, "", False),
        ("search", SEARCHED, 10, "", False),
        ("comment_a", "commented #3 on issue #1", 12, "", False),
    ]
    assert [(m.kind, m.value, m.start) for m in recording.marked] == [
        ("save", "start", 0),
        ("save", "reply 1", 3),
        ("save", "result create_a", 5),
        ("save", "result create_b", 7),
        ("save", "reply 2", 9),
        ("save", "result search", 11),
        ("save", "result comment_a", 13),
        ("save", "final", 15),
    ]
    assert (recording.run, recording.job, recording.agent) == ("triage", "triage", "triage")
    assert (recording.spans, recording.records) == (8, "workflow and step records")
    assert derive.job(recording) == TRIAGE


def test_dbos_agents_points_are_the_adapters_names_of_its_records(tmp_path: Path) -> None:
    """The 20 points of tests/realsweep/adapters/test_dbos.py's hand derivation, each passed once."""
    recording = dbos_store.read(Database(tmp_path / "dbos.sqlite").dbos_agent().path)
    tracker = {2: ["tracker filed issue create_a"], 3: ["tracker filed issue create_b"]}
    tracker[6] = ["tracker commented comment comment_a"]
    expected = ["after recording the workflow's start"]
    for step in range(1, 8):
        expected += [*tracker.get(step, []), f"before recording step {step}", f"after recording step {step}"]
    expected += ["before recording workflow triage SUCCESS", "after recording workflow triage SUCCESS"]
    assert list(recording.points) == expected


def test_the_decided_fields_of_dbos_agents_run_are_dbos_preset(tmp_path: Path) -> None:
    """startup, reply and result saves, markers and lock decided, each the `dbos` preset's value.

    The tool error is not decided (no call failed; the preset says model), nor fsync (no points in
    saves), nor keys (DBOS's records hold no key a call sent: the agent sends them by default).
    """
    recording = dbos_store.read(Database(tmp_path / "dbos.sqlite").dbos_agent().path)
    preset = next(p for p in FRAMEWORKS if p.name == "dbos").policy
    decided = {f.name: f.value for f in fields(recording) if f.decided}
    assert set(decided) == {"startup_save", "reply_save", "result_saves", "markers", "lock"}
    assert decided == {name: getattr(preset, name) for name in decided}


def test_pydantic_ais_run_reads_as_its_replies_and_their_saves_without_tool_runs(tmp_path: Path) -> None:
    """Three replies, the final one's text; no tool run (tools are no steps), no result saved: result_saves none."""
    recording = dbos_store.read(pydantic_agent(tmp_path / "dbos.sqlite").path)
    assert [[(c.id, c.tool, c.arguments) for c in r.calls] for r in recording.replies] == [
        [(c["id"], c["name"], c["args"]) for c in turn] for turn in (TURN_1, TURN_2, [])
    ]
    assert recording.replies[-1].final == "done: 2 tool turn(s)"
    assert recording.tools == ()
    assert [(m.value, m.start) for m in recording.marked] == [
        ("start", 0),
        ("reply 1", 3),
        ("reply 2", 5),
        ("final", 7),
    ]
    assert (recording.job, recording.agent, recording.points) == ("triage", "triage", ())
    assert derive.job(recording) == TRIAGE
    decided = {f.name: f.value for f in fields(recording) if f.decided}
    assert decided["result_saves"] == "none"
    assert (decided["startup_save"], decided["reply_save"]) == (True, "before-first-send")


def test_a_pydantic_ai_tool_that_is_a_step_is_its_calls_run(tmp_path: Path) -> None:
    """A tool step named after its tool (crashsweep.search_issues) is the run of the reply's call to it."""
    database = Database(tmp_path / "dbos.sqlite").workflow()
    database.step("triage__model.request", response(*TURN_2)).step("crashsweep.search_issues", SEARCHED)
    database.step("triage__model.request", response(text="done"))
    recording = dbos_store.read(database.path)
    assert [(t.call_id, t.result, t.start) for t in recording.tools] == [("search", SEARCHED, 4)]
    assert [m.value for m in recording.marked] == ["start", "reply 1", "result search", "final"]


def test_arguments_a_provider_sent_as_json_text_are_read_as_json(tmp_path: Path) -> None:
    database = Database(tmp_path / "dbos.sqlite").workflow()
    call = ToolCallPart("create_issue", '{"title": "issue x"}', tool_call_id="x")
    database.step("a__model.request", ModelResponse(parts=[call])).step("a__model.request", response(text="ok"))
    (asked,) = dbos_store.read(database.path).replies[0].calls
    assert asked.arguments == {"title": "issue x"}


def refused(path: Path) -> str:
    """The one line a database is refused with."""
    with pytest.raises(TraceError) as caught:
        dbos_store.read(path)
    message = str(caught.value)
    assert "\n" not in message
    assert message.startswith(str(path))
    return message


def test_each_database_that_is_not_one_finished_uninterrupted_run_is_refused(tmp_path: Path) -> None:
    """Two workflows, none ended, an error, a recovery, a fork, no step: one line each, naming the file."""
    cases = {
        "2 workflows (a, b)": Database(tmp_path / "two").workflow("a").workflow("b"),
        "is PENDING: the run has not finished": Database(tmp_path / "pending").workflow(status="PENDING"),
        "ended ERROR: ValueError: no issue": Database(tmp_path / "error").workflow(
            status="ERROR", raised=ValueError("no issue")
        ),
        "ended CANCELLED": Database(tmp_path / "cancelled").workflow(status="CANCELLED"),
        "recovered after it started (recovery_attempts 2)": Database(tmp_path / "recovered").workflow(attempts=2),
        "forked from w0": Database(tmp_path / "forked").workflow(forked="w0"),
        "recorded no step": Database(tmp_path / "empty").workflow(),
        "0 workflows": Database(tmp_path / "none"),
    }
    for said, database in cases.items():
        assert said in refused(database.path)


def test_steps_that_are_not_one_whole_run_are_refused(tmp_path: Path) -> None:
    """A first step that is no reply, a call without its step, a step after the answer, no final answer."""
    not_a_reply = Database(tmp_path / "a").workflow().step("run_tool", "filed issue #1")
    assert "row triage:1 (run_tool): not a model reply" in refused(not_a_reply.path)
    unrun = Database(tmp_path / "b").workflow().step("ask_model", TURN_1).step("run_tool", "filed issue #1")
    assert "call create_b of operation_outputs row triage:1 has no step that ran it" in refused(unrun.path)
    after = Database(tmp_path / "c").workflow().step("ask_model", []).step("run_tool", "x")
    assert "row triage:2 (run_tool): a step after the final answer" in refused(after.path)
    unfinished = Database(tmp_path / "d").workflow().step("ask_model", TURN_1[:1]).step("run_tool", "filed issue #1")
    assert "the last model reply asks for calls" in refused(unfinished.path)
    stranger = pydantic_agent(tmp_path / "e").step("crashsweep.pydantic_ai.answers", {"x": True})
    assert "(crashsweep.pydantic_ai.answers): neither a model request nor a tool step" in refused(stranger.path)
    broken = Database(tmp_path / "f").workflow().step("ask_model", None, raw="not base64!")
    assert "row triage:1 (ask_model): its output is not a base64 pickle" in refused(broken.path)


def test_a_file_that_is_no_dbos_database_is_refused_in_one_line(tmp_path: Path) -> None:
    path = tmp_path / "notes.sqlite"
    path.write_text("workflow_status\n")
    assert "cannot be read" in refused(path)
