"""crashsweep.fromtrace.langgraph_points: the adapter's crash points, derived from the checkpoints a run left.

The oracle is the adapter itself: the same graph run once with CrashPointSaver around its
SqliteSaver logs every point it passes (CRASHSWEEP_POINTS_LOG), and the points derived from the
database it wrote are those, every name, as often. By hand for the one-turn graph of
test_langgraph_store.py (steps -1 to 3): five checkpoints put between two points each, four
tasks' writes (`__start__`, agent, tools, agent) between two each, and the tracker point of
create_issue A: 10 + 8 + 1 = 19; under "exit" one put and the tracker point: 3.
"""

from __future__ import annotations

import sqlite3
from collections import Counter
from collections.abc import Iterator
from contextlib import closing
from pathlib import Path

import pytest
from langchain_core.messages import HumanMessage
from langgraph.checkpoint.sqlite import SqliteSaver
from langgraph.types import Durability

from crashsweep.fromtrace import langgraph_points, langgraph_store
from crashsweep.fromtrace.recording import ToolRun
from crashsweep.realsweep.adapters.langgraph import CrashPointSaver, task_name
from crashsweep.realsweep.probe import crashpoint
from tests.fromtrace.test_langgraph_store import graph

TRACKER = "tracker filed A"
"""The point the tracker's create_issue passes for c1 (its title A) once the tracker filed it."""


@pytest.fixture
def logged(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """This process passes its crash points into a log, never crashing (as one process of a sweep)."""
    log = tmp_path / "points.log"
    monkeypatch.setenv(crashpoint.POINTS_LOG, str(log))
    monkeypatch.delenv(crashpoint.CRASH_AT, raising=False)
    crashpoint.reset()
    yield log
    crashpoint.reset()


@pytest.mark.parametrize(("durability", "count"), [("sync", 19), ("async", 19), ("exit", 3)])
def test_the_derived_points_are_the_points_crashpointsaver_passed(
    logged: Path, tmp_path: Path, durability: Durability, count: int
) -> None:
    path = tmp_path / "db.sqlite"
    with closing(sqlite3.connect(path, check_same_thread=False)) as db:
        compiled = graph().compile(checkpointer=CrashPointSaver(SqliteSaver(db)))
        compiled.invoke({"messages": [HumanMessage("go")]}, {"configurable": {"thread_id": "t"}}, durability=durability)
    derived = langgraph_store.read(path).points
    passed = logged.read_text(encoding="utf-8").splitlines()
    assert Counter(derived) == Counter([*passed, TRACKER])  # the graph's own create_issue passes no point
    assert len(derived) == count
    assert derived.index(TRACKER) < derived.index(f"before put step {3 if durability == 'exit' else 2}")


def test_task_names_are_the_adapters() -> None:
    for path in ["~__pregel_pull, tools", "~__pregel_pull, __start__", "~__pregel_push, 0, agent", "", "plain"]:
        assert langgraph_points.task_name(path) == task_name(path)


def _run(tool: str, arguments: object, result: str) -> ToolRun:
    return ToolRun("c", tool, arguments, result, "", False, False, 1, "here")


def test_a_tracker_point_needs_the_trackers_tool_its_acceptance_and_its_argument() -> None:
    """The names TrackerTools gives (realsweep/adapters/script.py); a refused comment passed no point."""
    assert langgraph_points.tracker_point(_run("create_issue", {"title": "t"}, "filed issue #3")) == ["tracker filed t"]
    body = {"issue_title": "t", "body": "b"}
    assert langgraph_points.tracker_point(_run("comment", body, "commented #4 on issue #3")) == ["tracker commented b"]
    assert langgraph_points.tracker_point(_run("comment", body, "error: no issue titled 't'")) == []
    assert langgraph_points.tracker_point(_run("search_issues", {"query": "q"}, "[]")) == []
    assert langgraph_points.tracker_point(_run("create_issue", {}, "filed issue #3")) == []
