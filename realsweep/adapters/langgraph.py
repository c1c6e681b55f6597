"""LangGraph adapter: crash points around every checkpoint write, tracker tools, a scripted model, resume.

- `CrashPointSaver(saver)` wraps ANY checkpoint saver (SqliteSaver, PostgresSaver, InMemorySaver,
  your own): every `put` and `put_writes` passes a crash point before and after the inner
  saver's call. Points are named by step and task ("before put_writes step 2 tools"), never by
  the checkpoint's or task's IDs, which LangGraph derives from the clock. Under the default
  durability ("async") LangGraph saves from background threads and the tools of one turn run
  in parallel: the sweep names each point by name and occurrence, which threads do not change.
- `tracker_tools(keys=...)`: create_issue, comment, search_issues on the tracker service; each
  write records the thread ID as its run and the tool call ID as its call, and with keys sends
  the key derived from (thread_id, tool_call_id).
- `ScriptedChatModel(job, call_ids)`: plays a crashsweep job file where a chat model would be
  (`bind_tools(...)`, `invoke(messages)`).
- `resume(graph, input, config, person=...)`: starts the thread, or resumes it from its last
  checkpoint and pending writes, whatever `get_state().next` says; a scripted person answers
  each `interrupt()` with what `person` gives for what the node asked (True by default).
- `check(job, checkpoints, thread)`: the default check, with the messages channel of the
  thread's last checkpoint in a SqliteSaver database (`checkpoint_events`) as History events:
  well-formed-transcript is decided on it.
"""

from __future__ import annotations

import sqlite3
import threading
from collections.abc import AsyncIterator, Callable, Iterator, Sequence
from pathlib import Path
from typing import Annotated, Any

from langchain_core.messages import AIMessage, BaseMessage
from langchain_core.runnables import RunnableConfig
from langchain_core.tools import BaseTool, InjectedToolCallId, tool
from langgraph.checkpoint.base import (
    BaseCheckpointSaver,
    ChannelVersions,
    Checkpoint,
    CheckpointMetadata,
    CheckpointTuple,
)
from langgraph.checkpoint.sqlite import SqliteSaver
from langgraph.types import Command

from crashsweep.realsweep.adapters import script, transcripts
from crashsweep.realsweep.adapters.script import ScriptedModel, TrackerTools
from crashsweep.realsweep.probe.crashpoint import count, crashpoint
from crashsweep.realsweep.tracker.client import TrackerClient
from crashsweep.realsweep.values import Check
from crashsweep.spec import metrics
from crashsweep.spec.history import Event
from crashsweep.spec.job import Job

WAIT_FOR_PUT = 60.0
"""Seconds a put_writes waits for the put of its checkpoint to begin (it names the step)."""


class CrashPointSaver(BaseCheckpointSaver[Any]):
    """A checkpoint saver that passes crash points before and after each write of the saver it wraps."""

    def __init__(self, inner: BaseCheckpointSaver[Any]) -> None:
        super().__init__(serde=inner.serde)
        self.inner = inner
        self._steps: dict[str, int] = {}
        self._known = threading.Condition()

    @property
    def config_specs(self) -> list[Any]:
        """The inner saver's configuration options."""
        return self.inner.config_specs

    def _learn(self, checkpoint_id: str, step: int) -> None:
        with self._known:
            self._steps[checkpoint_id] = step
            self._known.notify_all()

    def _step_after(self, config: RunnableConfig) -> int:
        """The step whose tasks write on top of the checkpoint in `config`: its step plus one.

        Under durability "async" the writes of a step's tasks may reach the saver before the
        put of their checkpoint does; they wait until that put has begun (its crash points
        and the inner saver's work are not waited for).
        """
        checkpoint_id = str(config["configurable"]["checkpoint_id"])
        with self._known:
            if not self._known.wait_for(lambda: checkpoint_id in self._steps, WAIT_FOR_PUT):
                raise RuntimeError(f"put_writes on checkpoint {checkpoint_id}, which was never put nor read")
            return self._steps[checkpoint_id] + 1

    def _learn_tuple(self, saved: CheckpointTuple | None) -> CheckpointTuple | None:
        if saved is not None:
            self._learn(saved.checkpoint["id"], int(saved.metadata.get("step", -1)))
        return saved

    def get_tuple(self, config: RunnableConfig) -> CheckpointTuple | None:
        """The inner saver's checkpoint tuple (its step is remembered to name later writes)."""
        return self._learn_tuple(self.inner.get_tuple(config))

    def list(
        self,
        config: RunnableConfig | None,
        *,
        filter: dict[str, Any] | None = None,
        before: RunnableConfig | None = None,
        limit: int | None = None,
    ) -> Iterator[CheckpointTuple]:
        """The inner saver's checkpoints."""
        return self.inner.list(config, filter=filter, before=before, limit=limit)

    def put(
        self,
        config: RunnableConfig,
        checkpoint: Checkpoint,
        metadata: CheckpointMetadata,
        new_versions: ChannelVersions,
    ) -> RunnableConfig:
        """Save a checkpoint through the inner saver, between two crash points."""
        step = int(metadata.get("step", -1))
        self._learn(checkpoint["id"], step)
        crashpoint(f"before put step {step}")
        saved = self.inner.put(config, checkpoint, metadata, new_versions)
        crashpoint(f"after put step {step}")
        return saved

    def put_writes(
        self, config: RunnableConfig, writes: Sequence[tuple[str, Any]], task_id: str, task_path: str = ""
    ) -> None:
        """Save a task's writes through the inner saver, between two crash points."""
        name = f"step {self._step_after(config)} {task_name(task_path)}"
        crashpoint(f"before put_writes {name}")
        self.inner.put_writes(config, writes, task_id, task_path)
        crashpoint(f"after put_writes {name}")

    def delete_thread(self, thread_id: str) -> None:
        """Delete the thread in the inner saver."""
        self.inner.delete_thread(thread_id)

    def get_next_version(self, current: Any, channel: None) -> Any:
        """The inner saver's next channel version."""
        return self.inner.get_next_version(current, channel)

    async def aget_tuple(self, config: RunnableConfig) -> CheckpointTuple | None:
        """Async get_tuple."""
        return self._learn_tuple(await self.inner.aget_tuple(config))

    async def alist(
        self,
        config: RunnableConfig | None,
        *,
        filter: dict[str, Any] | None = None,
        before: RunnableConfig | None = None,
        limit: int | None = None,
    ) -> AsyncIterator[CheckpointTuple]:
        """Async list."""
        async for saved in self.inner.alist(config, filter=filter, before=before, limit=limit):
            yield saved

    async def aput(
        self,
        config: RunnableConfig,
        checkpoint: Checkpoint,
        metadata: CheckpointMetadata,
        new_versions: ChannelVersions,
    ) -> RunnableConfig:
        """Async put, between the same two crash points."""
        step = int(metadata.get("step", -1))
        self._learn(checkpoint["id"], step)
        crashpoint(f"before put step {step}")
        saved = await self.inner.aput(config, checkpoint, metadata, new_versions)
        crashpoint(f"after put step {step}")
        return saved

    async def aput_writes(
        self, config: RunnableConfig, writes: Sequence[tuple[str, Any]], task_id: str, task_path: str = ""
    ) -> None:
        """Async put_writes, between the same two crash points."""
        name = f"step {self._step_after(config)} {task_name(task_path)}"
        crashpoint(f"before put_writes {name}")
        await self.inner.aput_writes(config, writes, task_id, task_path)
        crashpoint(f"after put_writes {name}")


def task_name(task_path: str) -> str:
    """A task's node name from LangGraph's task path ("~__pregel_pull, tools" -> "tools")."""
    parts = [part.strip() for part in task_path.split(",")]
    if len(parts) >= 2 and parts[0] == "~__pregel_pull":
        return parts[1]
    return task_path.replace("~__pregel_", "") or "task"


def thread_id(config: RunnableConfig) -> str:
    """The thread ID of a run's config."""
    return str(config.get("configurable", {})["thread_id"])


def tracker_tools(keys: bool = True, client: TrackerClient | None = None) -> list[BaseTool]:
    """create_issue, comment and search_issues on the tracker; keys from (thread_id, tool_call_id)."""
    ops = TrackerTools(keys, client)

    @tool
    def create_issue(title: str, tool_call_id: Annotated[str, InjectedToolCallId], config: RunnableConfig) -> str:
        """File an issue in the tracker with this title."""
        run = thread_id(config)
        return ops.create_issue(title, run=run, call=tool_call_id, key_parts=(run, tool_call_id))

    @tool
    def comment(
        issue_title: str, body: str, tool_call_id: Annotated[str, InjectedToolCallId], config: RunnableConfig
    ) -> str:
        """Comment on the issue with this title."""
        run = thread_id(config)
        return ops.comment(issue_title, body, run=run, call=tool_call_id, key_parts=(run, tool_call_id))

    @tool
    def search_issues(query: str) -> str:
        """Search the tracker's issues."""
        return ops.search(query)

    return [create_issue, comment, search_issues]


class ScriptedChatModel:
    """A chat model that plays a job: the calls of the next tool turn, or a final answer."""

    def __init__(self, job: Job, call_ids: str = "stable") -> None:
        self.script = ScriptedModel(job, call_ids)

    def bind_tools(self, tools: Sequence[Any]) -> ScriptedChatModel:
        """As a chat model's bind_tools; the script already names its tools."""
        return self

    def invoke(self, messages: Sequence[BaseMessage], config: RunnableConfig | None = None) -> AIMessage:
        """Reply to the conversation: turns answered so far are its AI messages that called tools."""
        turns_done = sum(1 for m in messages if isinstance(m, AIMessage) and m.tool_calls)
        calls = self.script.reply(turns_done)
        if calls is None:
            return AIMessage(content=f"done: {turns_done} tool turn(s)")
        return AIMessage(content="", tool_calls=[{"name": c.name, "args": dict(c.args), "id": c.id} for c in calls])


APPROVED = True
"""What the default scripted person answers every `interrupt()` with (the value `Command(resume=...)` carries)."""
Person = Callable[[Any], Any]
"""The scripted person: given what a node passed to `interrupt(...)`, the value that `interrupt()` returns there."""


def approve(ask: Any) -> Any:
    """The default scripted person: approves whatever is asked (`interrupt()` returns True)."""
    return APPROVED


def resume(graph: Any, graph_input: Any, config: RunnableConfig, *, person: Person = approve, **options: Any) -> Any:
    """Run the thread to its end: start it with `graph_input`, or resume it from what is saved.

    A thread with no checkpoint starts from `graph_input` (under durability "exit" a crash
    leaves none). A thread with a checkpoint is resumed with `invoke(None)`, even when
    `get_state().next` is empty: writes saved by put_writes after the last checkpoint are
    pending work that only a resume applies. A finished thread with nothing pending is left
    as it is. A thread waiting at `interrupt()`s (before a crash or after) is resumed with
    `Command(resume=...)` answering each by its ID with `person(value)`, `value` being what
    the node asked (a node that reads `decision.get("approved")` is given a dict by its
    person; the default answers True), as often as the graph asks; LangGraph then runs the
    interrupted node again from its start. Each answer is counted as an approval. `options`
    go to `invoke` (e.g. durability="sync").
    """
    saved = graph.checkpointer.get_tuple(config)
    if saved is None:
        result = graph.invoke(graph_input, config, **options)
    elif _asks(graph, config):
        result = graph.invoke(_answers(graph, config, person), config, **options)
    elif not graph.get_state(config).next and not saved.pending_writes:
        return saved.checkpoint["channel_values"]
    else:
        result = graph.invoke(None, config, **options)
    while _asks(graph, config):  # the person answers every interrupt the run reaches
        result = graph.invoke(_answers(graph, config, person), config, **options)
    return result


def _asks(graph: Any, config: RunnableConfig) -> list[Any]:
    """The interrupts the thread waits at (each task's pending `interrupt()`s); none when it waits at none."""
    return [ask for task in graph.get_state(config).tasks for ask in task.interrupts]


def _answers(graph: Any, config: RunnableConfig, person: Person) -> Command[Any]:
    """The person's answer to each interrupt the thread waits at, by the interrupt's ID (each counted an approval)."""
    asks = _asks(graph, config)
    count(metrics.APPROVALS, len(asks))
    return Command(resume={ask.id: person(ask.value) for ask in asks})


def checkpoint_events(path: Path, thread: str) -> tuple[Event, ...]:
    """The messages of thread `thread`'s last checkpoint in the SqliteSaver database `path`, as History events.

    Read with LangGraph's own SqliteSaver (`get_tuple`); () when the file or the thread has no
    checkpoint yet (the check must not create the file).
    """
    if not path.exists():
        return ()
    connection = sqlite3.connect(path, check_same_thread=False)
    try:
        saved = SqliteSaver(connection).get_tuple({"configurable": {"thread_id": thread}})
    finally:
        connection.close()
    messages = saved.checkpoint["channel_values"].get("messages", []) if saved is not None else []
    return transcripts.chat_messages(messages, thread)


def check(job: Job, checkpoints: str | Path, thread: str) -> Check:
    """The default check, reading also thread `thread`'s last checkpoint in the SqliteSaver file `checkpoints`.

    The history holds the receiver's effects and the checkpoint's messages: no-duplicate,
    no-loss and well-formed-transcript are decided; approved-exactly is not (transcripts.UNDECIDED).
    """
    unseen = transcripts.UNDECIDED["langgraph"]
    return script.check(job, lambda folder: checkpoint_events(folder / checkpoints, thread), unseen)
