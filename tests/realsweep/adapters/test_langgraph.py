"""The LangGraph adapter: crash points around any saver's writes, named by step and task; tools; resume."""

from __future__ import annotations

import json
import re
import sqlite3
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from langchain_core.messages import AIMessage, HumanMessage, ToolMessage
from langchain_core.runnables import RunnableConfig
from langgraph.checkpoint.base import empty_checkpoint
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.checkpoint.sqlite import SqliteSaver

from crashsweep.realsweep.adapters import script
from crashsweep.realsweep.adapters.langgraph import CrashPointSaver, checkpoint_events, resume, task_name
from crashsweep.realsweep.adapters.langgraph_agent import build
from crashsweep.realsweep.probe import crashpoint
from crashsweep.realsweep.tracker.service import ServiceProcess
from crashsweep.spec.job import TRIAGE

CONFIG: RunnableConfig = {"configurable": {"thread_id": "t-1"}}
INPUT = {"messages": [("user", "triage")]}


def expected_points() -> list[str]:
    """The points of one uninterrupted run of the triage agent, derived from the graph's shape.

    Steps: -1 (the input), 0 (__start__), 1 agent, 2 tools, 3 agent, 4 tools, 5 agent (the final
    answer): seven checkpoints, each put between two points; the six tasks of steps 0-5 each
    save their writes between two points; the three writes of the job each pass one point after
    the tracker answered: 14 + 12 + 3 = 29.
    """
    puts = [f"{when} put step {step}" for step in range(-1, 6) for when in ("before", "after")]
    tasks = ["__start__", "agent", "tools", "agent", "tools", "agent"]
    writes = [f"{when} put_writes step {i} {task}" for i, task in enumerate(tasks) for when in ("before", "after")]
    tools = ["tracker filed issue create_a", "tracker filed issue create_b", "tracker commented comment comment_a"]
    return puts + writes + tools


@pytest.fixture
def under_sweep(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, keyed_service: ServiceProcess) -> Iterator[Path]:
    """This process as one process of a sweep that never crashes: its points go to a log."""
    log = tmp_path / "points.log"
    monkeypatch.setenv(crashpoint.POINTS_LOG, str(log))
    monkeypatch.delenv(crashpoint.CRASH_AT, raising=False)
    monkeypatch.setenv(script.TRACKER_URL, keyed_service.space_url("lg"))
    monkeypatch.setenv(script.WORKDIR, str(tmp_path))
    crashpoint.reset()
    yield log
    crashpoint.reset()


@pytest.mark.parametrize("durability", ["sync", "async"])
def test_every_write_of_any_saver_passes_points_named_by_step_and_task(under_sweep: Path, durability: str) -> None:
    """An in-memory saver, wrapped: the 29 points of the triage run, in any order; no ID in any name."""
    graph = build(TRIAGE, keys=True, call_ids="stable", saver=CrashPointSaver(InMemorySaver()))
    graph.invoke(INPUT, CONFIG, durability=durability)
    points = under_sweep.read_text().splitlines()
    assert sorted(points) == sorted(expected_points())
    assert not [p for p in points if re.search(r"[0-9a-f]{8}-[0-9a-f]{4}", p)]
    for step in range(-1, 6):
        assert points.index(f"before put step {step}") < points.index(f"after put step {step}")


def test_resume_starts_a_new_thread_and_leaves_a_finished_one(under_sweep: Path, tmp_path: Path) -> None:
    """No checkpoint: the graph runs from the input (3 asks). Finished: nothing runs again, no ask."""
    saver = CrashPointSaver(InMemorySaver())
    graph = build(TRIAGE, keys=True, call_ids="stable", saver=saver)
    resume(graph, INPUT, CONFIG)
    ledger = tmp_path / script.LEDGER
    assert len(ledger.read_text().splitlines()) == 3
    resume(graph, INPUT, CONFIG)
    assert len(ledger.read_text().splitlines()) == 3
    assert sorted(r["call"] for r in script.tracker().records()) == ["comment_a", "create_a", "create_b"]


def test_resume_after_a_crash_in_the_tools_goes_on_from_the_checkpoint(under_sweep: Path, tmp_path: Path) -> None:
    """Stopped before the tools (step 2) and resumed: the tools run once, the model is asked twice more."""
    saver = CrashPointSaver(InMemorySaver())
    graph = build(TRIAGE, keys=True, call_ids="stable", saver=saver)
    graph.invoke(INPUT, CONFIG, interrupt_before=["tools"], durability="sync")
    assert graph.get_state(CONFIG).next == ("tools",)
    resume(graph, INPUT, CONFIG, durability="sync")
    records = script.tracker().records()
    assert sorted(r["call"] for r in records) == ["comment_a", "create_a", "create_b"]
    assert records[-1]["call"] == "comment_a"
    assert len((tmp_path / script.LEDGER).read_text().splitlines()) == 3


def test_task_names_come_from_the_task_path() -> None:
    """A pull task is named by its node; anything else by its path without LangGraph's prefix."""
    assert task_name("~__pregel_pull, tools") == "tools"
    assert task_name("~__pregel_push, 0, False") == "push, 0, False"
    assert task_name("") == "task"


EXAMPLES = Path(__file__).resolve().parents[3] / "docs" / "examples"
CRASHSWEEP = str(Path(sys.executable).with_name("crashsweep"))


def test_the_tutorial_graph_in_docs_is_swept_as_its_docstring_says() -> None:
    """docs/examples/my_graph.py, swept exactly as its docstring's last command says (durability exit).

    Under "exit" the graph saves once, at the end: 3 tool points + 2 around that put = 5 crash
    points, which shows the --arg reached the graph (the default, async, has 29). Keys from the
    thread and the job's stable call IDs: no duplicate, nothing lost; the --arg shows in the row.
    """
    command = "crashsweep sweep --target my_graph:run --check my_graph:check --depth 1 --arg durability=exit"
    assert command in (EXAMPLES / "my_graph.py").read_text()
    argv = [CRASHSWEEP, *command.split()[1:], "--workers", "2"]
    done = subprocess.run(argv, cwd=EXAMPLES, capture_output=True, text=True, check=False)
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith("my_graph:run durability=exit  (real sweep")
    assert "crash points  5" in done.stdout
    assert "with_dups 0   dups 0   missing 0" in done.stdout
    assert "no-duplicate  holds" in done.stdout


def _sweep_example(entry: str) -> str:
    """docs/examples/my_approval_graph.py's `entry` swept at depth 1 as its docstring says; what it printed."""
    command = f"crashsweep sweep --target my_approval_graph:{entry} --check my_approval_graph:check --depth 1"
    assert command in (EXAMPLES / "my_approval_graph.py").read_text()
    done = subprocess.run([CRASHSWEEP, *command.split()[1:]], cwd=EXAMPLES, capture_output=True, text=True, check=False)
    assert done.returncode in (0, 1), done.stderr
    return done.stdout


def _figure(out: str, name: str) -> int:
    found = re.search(rf"\b{name} (\d+)", out)
    assert found is not None, out
    return int(found.group(1))


def test_a_write_before_interrupt_in_one_node_is_filed_again_on_every_resume() -> None:
    """spec/CONVERSATIONS.md 3 on LangGraph itself: `interrupt()`, and `Command(resume=True)` from a scripted person.

    In `run` one node files the issue and then calls interrupt(): the first invoke files it and
    stops at the interrupt; the resume runs the node again from its start, filing it again. So
    every run files create_a twice, the uninterrupted one too, and every scenario of a depth-1
    sweep has a duplicate. In `run_split` the filing is a node of its own, checkpointed before
    the approval's node: the resume re-runs only the approval, and a duplicate needs a crash
    between the filing and that checkpoint (no keys), so some scenarios have none.
    """
    one_node = _sweep_example("run")
    scenarios = _figure(one_node, "1 crash:")
    assert _figure(one_node, "with_dups") == scenarios > 0
    assert "missing 0" in one_node
    split = _sweep_example("run_split")
    assert 0 < _figure(split, "with_dups") < _figure(split, "1 crash:")
    assert "missing 0" in split


class StopAtPut(InMemorySaver):
    """An in-memory saver whose put of step `step` fails once: the process stops as a crash would there."""

    def __init__(self, step: int) -> None:
        super().__init__()
        self.step = step

    def put(self, config: RunnableConfig, checkpoint: Any, metadata: Any, new_versions: Any) -> RunnableConfig:
        """Fail the put of step `step` once; save every other."""
        if metadata.get("step") == self.step:
            self.step = -99
            raise RuntimeError("stopped before the checkpoint of this step was saved")
        return super().put(config, checkpoint, metadata, new_versions)


def test_resume_applies_pending_writes_when_get_state_says_nothing_is_next(under_sweep: Path, tmp_path: Path) -> None:
    """The tools' writes saved (put_writes), the checkpoint after them not (stopped at put of step 2).

    get_state() then reports next == (): the tools task has its writes, so LangGraph does not
    list it. A resume that runs only when `next` is non-empty would stop here, and the comment
    turn would never run. `resume` sees the pending writes and goes on: the model is asked for
    the second turn and the final answer (3 asks in all) and the comment is made, once.
    """
    graph = build(TRIAGE, keys=True, call_ids="stable", saver=CrashPointSaver(StopAtPut(2)))
    with pytest.raises(RuntimeError, match="stopped before"):
        graph.invoke(INPUT, CONFIG, durability="sync")
    assert graph.get_state(CONFIG).next == ()
    resume(graph, INPUT, CONFIG, durability="sync")
    assert sorted(r["call"] for r in script.tracker().records()) == ["comment_a", "create_a", "create_b"]
    assert len((tmp_path / script.LEDGER).read_text().splitlines()) == 3


def test_checkpoint_events_read_the_last_checkpoints_messages_with_sqlitesaver(tmp_path: Path) -> None:
    """A SqliteSaver database with two checkpoints of thread t: the last one's messages, as events, by tool call ID."""
    path = tmp_path / "checkpoints.sqlite"
    assert checkpoint_events(path, "t") == ()
    assert not path.exists()  # nothing saved: nothing read, no file made
    call = AIMessage("", tool_calls=[{"name": "create_issue", "args": {}, "id": "c1"}])
    connection = sqlite3.connect(path, check_same_thread=False)
    saver = SqliteSaver(connection)
    config: RunnableConfig = {"configurable": {"thread_id": "t", "checkpoint_ns": ""}}
    for messages in ([HumanMessage("go"), call], [HumanMessage("go"), call, ToolMessage("filed", tool_call_id="c1")]):
        checkpoint = empty_checkpoint()
        checkpoint["channel_values"] = {"messages": messages}
        config = saver.put(config, checkpoint, {"source": "loop", "step": len(messages), "parents": {}}, {})
    connection.close()
    assert [(e.f, e.call_id, e.run) for e in checkpoint_events(path, "t")] == [
        ("model_call", "", "t"),
        ("tool_call", "c1", "t"),
        ("result_saved", "c1", "t"),
    ]
    assert checkpoint_events(path, "other") == ()


DECISION_GRAPH = '''
"""A user's graph whose approval node reads the person's decision: `interrupt()` returns a dict."""

import sqlite3

from langgraph.checkpoint.sqlite import SqliteSaver
from langgraph.graph import END, START, StateGraph
from langgraph.types import interrupt
from typing_extensions import TypedDict

from crashsweep.realsweep.adapters.langgraph import CrashPointSaver, resume, thread_id
from crashsweep.realsweep.adapters.script import TrackerTools
from crashsweep.realsweep.adapters.script import check as job_check
from crashsweep.spec.job import Call, Job

JOB = Job("decision", ((Call("create_a", "create_issue", True),), (Call("comment_a", "comment", True, approval=True),)))
ANSWERS = {"comment_a": {"approved": True, "body": "ship it"}}  # the person's decision per call asked about
tracker = TrackerTools(keys=True)


class State(TypedDict, total=False):
    approved: bool


def file_issue(state, config):
    run = thread_id(config)
    tracker.create_issue("decision: create_a", run=run, call="create_a", key_parts=(run, "create_a"))
    return {}


def approve_and_comment(state, config):
    decision = interrupt({"call": "comment_a", "ask": "post the comment?"})
    if decision.get("approved"):
        run = thread_id(config)
        tracker.comment("decision: create_a", decision["body"], run=run, call="comment_a", key_parts=(run, "comment_a"))
    return {"approved": bool(decision.get("approved"))}


builder = StateGraph(State)
builder.add_node("file", file_issue)
builder.add_node("approve", approve_and_comment)
builder.add_edge(START, "file")
builder.add_edge("file", "approve")
builder.add_edge("approve", END)


def run():
    connection = sqlite3.connect("checkpoints.sqlite", check_same_thread=False)
    graph = builder.compile(checkpointer=CrashPointSaver(SqliteSaver(connection)))
    config = {"configurable": {"thread_id": "1"}}
    resume(graph, {}, config, durability="sync", person=lambda ask: ANSWERS[ask["call"]])
    connection.close()


check = job_check(JOB)
'''


def test_a_graph_whose_approval_node_reads_the_persons_decision_is_swept(tmp_path: Path) -> None:
    """A user's node does `decision = interrupt({...}); if decision.get("approved"): ...`, swept for real at depth 1.

    The person is the module's mapping, passed to `resume` as `person`: each interrupt is
    answered with the dict it gives for the call asked about (True, the default, has no
    `.get`). Every scenario ends with the comment posted once with the body the person gave,
    and every process that answered an interrupt counted an approval.
    """
    (tmp_path / "decision_graph.py").write_text(DECISION_GRAPH)
    scenarios = tmp_path / "scenarios.jsonl"
    command = [CRASHSWEEP, "sweep", "--target", "decision_graph:run", "--check", "decision_graph:check", "--depth", "1"]
    done = subprocess.run(
        [*command, "--workers", "2", "--scenarios", str(scenarios)],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        check=False,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    assert "with_dups 0   dups 0   missing 0" in done.stdout
    assert "no-loss       holds" in done.stdout
    assert "can-finish    holds" in done.stdout
    records = [json.loads(line) for line in scenarios.read_text().splitlines()]
    assert len(records) > 5
    assert all(r["counters"].get("approvals", 0) >= 1 for r in records)


def test_resume_answers_each_interrupt_with_what_the_person_gives(under_sweep: Path) -> None:
    """In process: the person is asked with the node's interrupt value; True when no person is given."""
    namespace: dict[str, Any] = {}
    exec(compile(DECISION_GRAPH, "decision_graph.py", "exec"), namespace)
    asked: list[Any] = []

    def person(ask: Any) -> Any:
        asked.append(ask)
        return {"approved": True, "body": "by hand"}

    graph = namespace["builder"].compile(checkpointer=CrashPointSaver(InMemorySaver()))
    assert resume(graph, {}, CONFIG, person=person) == {"approved": True}
    assert asked == [{"call": "comment_a", "ask": "post the comment?"}]
    assert [r["body"] for r in script.tracker().records() if r["kind"] == "comment"] == ["by hand"]
