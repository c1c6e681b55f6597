"""The crash points a run of the built-in LangGraph agent passed, derived from its checkpoints (spec/FROM_TRACE.md 2).

The names are the LangGraph adapter's (realsweep/adapters/langgraph.py): CrashPointSaver passes
"before put step S" and "after put step S" around each checkpoint it saves (S its step) and
"before put_writes step S TASK" and "after put_writes step S TASK" around each task's writes
(S the step of the checkpoint they are saved on, plus one; TASK the node's name from the task
path); the tracker's tools (realsweep/adapters/script.py TrackerTools) pass "tracker filed
TITLE" once the tracker filed an issue and "tracker commented BODY" once it took a comment.
Every checkpoint row is one put and every task's writes on a checkpoint one put_writes, so the
rows give every save point; a tracker tool's result ("filed issue #N", "commented #N on ...")
says the tracker accepted its write, and its arguments give the name.

The order is the one a run under durability "sync" passes them in: each tracker point before
the first save holding its result, each checkpoint's put before the writes saved on it. A run
passes them in another order where LangGraph saves from background threads (durability
"async") or a turn's tools run in parallel: the thread scheduler's order, which no record
keeps. `--points from:FILE` reads the names and passes, not their order.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from typing import Any

from crashsweep.fromtrace.recording import ToolRun

TRACKER_POINTS = {
    "create_issue": ("filed issue #", "tracker filed {title}"),
    "comment": ("commented #", "tracker commented {body}"),
}
"""Each tracker write: how its result starts once the tracker accepted it, and the point's name from its args."""


@dataclass(frozen=True, slots=True)
class Saved:
    """One checkpoint of a thread: its step, its messages, each task's messages written on it, what it says."""

    checkpoint_id: str
    parent: str | None
    step: int
    source: str
    """Who made it (the metadata's `source`): "input", "loop", or an update or fork."""
    messages: tuple[Any, ...]
    writes: tuple[tuple[str, tuple[Any, ...]], ...]
    """(the task's node name, the messages it wrote) for each task with writes on it, in the saver's order."""
    resumed: bool
    """Whether it carries the mark of a resumed run (`versions_seen["__interrupt__"]`)."""
    asked: bool
    """Whether an interrupt is pending on it."""

    @property
    def place(self) -> str:
        """Where it is, as a draft's comments cite it."""
        return f"checkpoint step {self.step}"


def task_name(task_path: str) -> str:
    """A task's node name from its task path, as CrashPointSaver names it ("~__pregel_pull, tools" -> "tools")."""
    parts = [part.strip() for part in task_path.split(",")]
    if len(parts) >= 2 and parts[0] == "~__pregel_pull":
        return parts[1]
    return task_path.replace("~__pregel_", "") or "task"


def points(saved: Iterable[Saved], runs: dict[str, ToolRun]) -> tuple[str, ...]:
    """Every point passed, each name once per pass, in a run's order under durability "sync"."""
    passed: set[str] = set()

    def tools(messages: Iterable[Any]) -> Iterator[str]:
        for message in messages:
            call = str(getattr(message, "tool_call_id", "")) if message.type == "tool" else ""
            if call and call not in passed and call in runs:
                passed.add(call)
                yield from tracker_point(runs[call])

    def all_points() -> Iterator[str]:
        for checkpoint in saved:
            yield from tools(checkpoint.messages)
            yield from (f"{when} put step {checkpoint.step}" for when in ("before", "after"))
            for task, messages in checkpoint.writes:
                yield from tools(messages)
                yield from (f"{when} put_writes step {checkpoint.step + 1} {task}" for when in ("before", "after"))

    return tuple(all_points())


def tracker_point(run: ToolRun) -> list[str]:
    """The point a tracker tool passed after the tracker accepted its write; none for another tool or a refusal."""
    found = TRACKER_POINTS.get(run.tool)
    if found is None or not isinstance(run.arguments, dict) or not (run.result or "").startswith(found[0]):
        return []
    try:
        return [found[1].format(**run.arguments)]
    except (KeyError, IndexError):
        return []
