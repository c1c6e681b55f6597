"""OpenAI Agents SDK adapter: crash points around a session's writes and each tool call, a scripted Model, resume.

Tested against openai-agents 0.24.0 (the version the `openai-agents` extra pins). What the SDK
does with a session (`Runner.run(agent, input, session=...)`), as this adapter's tests show:
it writes the user's input before the first ask, and each turn's items in ONE `add_items`
after the turn's tools ran: the model's reply (its function_call items) together with the
tools' function_call_output items; the final answer last. A crash between a tool's effect and
that write leaves nothing of the turn on disk: the model is asked again on restart.
A tool with `needs_approval` parks the run: the SDK writes the reply's function_call at once,
and its output only after the approved tool ran, so a crash in between leaves a
function_call without its output in the session (the orphaned tool call).

- `CrashPointSession(session)` wraps any `Session` (SQLiteSession, your own): each
  `add_items` and `pop_item` passes a crash point before and after the inner session's call,
  named by what is written ("before session write reply calling create_issue, create_issue;
  results of create_issue, create_issue"), never by a call ID.
- `tracker_tools(keys=...)`: create_issue, comment, search_issues as `function_tool`s whose
  bodies are the tracker tools' (script.TrackerTools), between the points "before TOOL ARG"
  and "after TOOL ARG" (the tracker's own point, after it accepted, lies between); a write's
  run is the session ID and its key comes from (session ID, tool call ID).
- `ScriptedAgentsModel(job, call_ids)`: an `agents.Model` that plays a job (script.ScriptedModel).
- `resume(agent, input, session, state_file=...)` (openai_agents_resume, offered here too): runs
  the conversation to its final answer, starting it, continuing it from the session, or from a
  RunState saved as JSON on disk while a tool waited for approval (the approval given by a
  scripted person, `approve_all`), unless the session already holds the approved call's output.
- `check(job, session_file, session_id)`: the default check, with the conversation the
  SQLiteSession saved (`session_events`, openai_agents_session: read with sqlite3, as the
  SDK's `get_items` reads it; with what a trim-context strike moved aside) and the requests the
  provider refused (openai_agents_provider) as History events: well-formed-transcript is
  decided on them (a session with two outputs for one call ID breaks it, and so does a request
  refused for a result without its call).

Importing it registers the SDK's warm-up with a sweep's zygote (openai_agents_warm.warm_up,
process/warming.py): a user's agent's processes start from an SDK that has run once.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Awaitable, Callable, Iterable
from pathlib import Path
from typing import Any

from agents import (
    Model,
    ModelResponse,
    Tool,
    Usage,
    function_tool,
)
from agents.items import TResponseInputItem, TResponseOutputItem, TResponseStreamEvent
from agents.memory import Session
from agents.tool_context import ToolContext
from openai.types.responses import ResponseFunctionToolCall, ResponseOutputMessage, ResponseOutputText

from crashsweep.realsweep.adapters import openai_agents_provider as provider
from crashsweep.realsweep.adapters import script, transcripts
from crashsweep.realsweep.adapters.openai_agents_resume import RUN, approve_all, aresume, resume
from crashsweep.realsweep.adapters.openai_agents_session import aside_items, conversation_events, session_events
from crashsweep.realsweep.adapters.openai_agents_warm import warm_up
from crashsweep.realsweep.adapters.script import ScriptedModel, TrackerTools, ledger_ids
from crashsweep.realsweep.probe.crashpoint import crashpoint
from crashsweep.realsweep.process import warming
from crashsweep.realsweep.tracker.client import TrackerClient
from crashsweep.realsweep.values import Check
from crashsweep.spec.job import Job

# What a user's agent imports from the adapter; resume lives in openai_agents_resume and is offered here too.
__all__ = [
    "CrashPointSession",
    "ScriptedAgentsModel",
    "approve_all",
    "aresume",
    "check",
    "describe",
    "resume",
    "session_events",
    "tracker_tools",
]

warming.register(warm_up)


def describe(items: Iterable[TResponseInputItem], names: dict[str, str]) -> str:
    """What a session write holds, in words: the user's input, the reply's calls, their results, the final answer."""
    parts: list[str] = []
    calls: list[str] = []
    results: list[str] = []
    for item in items:
        item_type = item.get("type", "message") if isinstance(item, dict) else type(item).__name__
        if item_type == "message" and isinstance(item, dict):
            parts.append({"user": "user input", "assistant": "final answer"}.get(str(item.get("role")), "message"))
        elif item_type == "function_call" and isinstance(item, dict):
            calls.append(str(item.get("name")))
        elif item_type == "function_call_output" and isinstance(item, dict):
            results.append(names.get(str(item.get("call_id")), "a tool"))
        else:
            parts.append(str(item_type))
    if calls:
        parts.append("reply calling " + ", ".join(calls))
    if results:
        parts.append("results of " + ", ".join(results))
    return "; ".join(parts) or "nothing"


class CrashPointSession:
    """A session that passes crash points before and after each write of the session it wraps.

    It implements the SDK's `Session` protocol by delegation; reads pass no point. The names
    of the tools whose results are written are learned from the calls it has seen written or
    read (an approved tool's result is written in another process than its call).
    """

    def __init__(self, inner: Session) -> None:
        self.inner = inner
        self.session_id = inner.session_id
        self.session_settings = inner.session_settings
        self._names: dict[str, str] = {}

    def _learn(self, items: Iterable[TResponseInputItem]) -> None:
        for item in items:
            if isinstance(item, dict) and item.get("type") == "function_call":
                self._names[str(item.get("call_id"))] = str(item.get("name"))

    async def get_items(self, limit: int | None = None) -> list[TResponseInputItem]:
        """The inner session's items (the tools' names among them are remembered)."""
        items = await self.inner.get_items(limit)
        self._learn(items)
        return items

    async def add_items(self, items: list[TResponseInputItem]) -> None:
        """Write `items` through the inner session, between two crash points named by what they hold."""
        self._learn(items)
        what = describe(items, self._names)
        crashpoint(f"before session write {what}")
        await self.inner.add_items(items)
        crashpoint(f"after session write {what}")

    async def pop_item(self) -> TResponseInputItem | None:
        """Remove the inner session's last item (the SDK rewinds a turn it retries), between two crash points."""
        crashpoint("before session pop")
        item = await self.inner.pop_item()
        crashpoint("after session pop")
        return item

    async def clear_session(self) -> None:
        """Clear the inner session."""
        await self.inner.clear_session()


def label(args: dict[str, str]) -> str:
    """A tool call's words in its crash points: its first argument (the issue's title, the comment's body)."""
    return next(iter(args.values()), "")


def tracker_tools(
    keys: bool = True,
    client: TrackerClient | None = None,
    needs_approval: Iterable[str] | Callable[[str], bool] = (),
) -> list[Tool]:
    """create_issue, comment and search_issues on the tracker, each between crash points; keys from (session, call).

    The tools are async functions whose tracker request blocks the event loop: the calls of
    one turn run one after another, in the model's order, so every run passes its points in
    the same order (the SDK runs a sync tool on a thread, beside the turn's other calls).
    `needs_approval`: the writes that wait for a person's approval (the SDK's `needs_approval`),
    by tool name ("comment"), or a test of the call ID; none by default.
    """
    ops = TrackerTools(keys, client)
    names = frozenset(() if callable(needs_approval) else needs_approval)

    def approval_of(name: str) -> Callable[[Any, dict[str, Any], str], Awaitable[bool]]:
        async def approval(ctx: Any, params: dict[str, Any], call_id: str) -> bool:
            return needs_approval(call_id) if callable(needs_approval) else name in names

        return approval

    def around(name: str, args: dict[str, str], body: Callable[[], str]) -> str:
        crashpoint(f"before {name} {label(args)}")
        answer = body()
        crashpoint(f"after {name} {label(args)}")
        return answer

    @function_tool(needs_approval=approval_of("create_issue"))
    async def create_issue(ctx: ToolContext[Any], title: str) -> str:
        """File an issue in the tracker with this title."""
        run, call = RUN.get(), ctx.tool_call_id
        return around(
            "create_issue", {"title": title}, lambda: ops.create_issue(title, run=run, call=call, key_parts=(run, call))
        )

    @function_tool(needs_approval=approval_of("comment"))
    async def comment(ctx: ToolContext[Any], issue_title: str, body: str) -> str:
        """Comment on the issue with this title."""
        run, call = RUN.get(), ctx.tool_call_id
        return around(
            "comment", {"body": body}, lambda: ops.comment(issue_title, body, run=run, call=call, key_parts=(run, call))
        )

    @function_tool
    async def search_issues(query: str) -> str:
        """Search the tracker's issues."""
        return around("search_issues", {"query": query}, lambda: ops.search(query))

    return [create_issue, comment, search_issues]


def answered(model_input: str | list[Any], ids: dict[str, str]) -> set[str]:
    """The job's calls whose results the conversation holds (call IDs mapped to the job's by the model's ledger)."""
    if isinstance(model_input, str):
        return set()
    outputs = (i.get("call_id") for i in model_input if isinstance(i, dict) and i.get("type") == "function_call_output")
    return {ids.get(str(call_id), str(call_id)) for call_id in outputs}


def progress(model_input: str | list[Any], folder: Path) -> set[str]:
    """The job's calls the run in work directory `folder` has answered: the outputs sent, and the calls trimmed away."""
    ids = ledger_ids(folder)
    trimmed = {
        ids.get(str(i.get("call_id")), str(i.get("call_id")))
        for i in aside_items(folder)
        if i.get("type") == "function_call"
    }
    return answered(model_input, ids) | trimmed


def turns_done(job: Job, done: set[str]) -> int:
    """How many of the job's tool turns, from the first, have every call answered."""
    return next((k for k, turn in enumerate(job.turns) if not {c.id for c in turn} <= done), len(job.turns))


class ScriptedAgentsModel(Model):
    """An `agents.Model` that plays a job: the calls of the next tool turn, or a final answer.

    Asked, it first checks the conversation as the provider does (openai_agents_provider.refusal):
    a function_call_output with no function_call of its ID before it, or a function_call with
    no output, is refused with the API's HTTP 400 (an `openai.BadRequestError`), the request
    written to the work directory's REFUSALS_FILE and counted (crashpoint.MALFORMED).

    Else it finds the job's calls whose results the run holds (`progress`): the outputs the
    conversation carries, and the calls a compaction took out of the session (the items the
    trim-context strike moved aside, openai_agents_session.ASIDE_FILE), since only a turn with a
    stored result is trimmed and the SDK stores a reply's outputs with it. The run's progress is
    not the conversation (spec/CONVERSATIONS.md 7): a turn trimmed from it, its results dropped
    by a repair, is never asked for again. (A call parked for approval is stored before its
    output; trimmed then, it would count as answered: trim-context is not swept with approvals
    here.) The first turn with a call unanswered is the next, and it replies with that turn's
    unanswered calls (a turn half answered is one whose call the SDK dropped as orphaned: a call
    made to wait for approval, its run lost in a crash); with every turn answered, the final answer.

    It replaces the provider's model (the network); the rest of the SDK runs as it does for a
    user. Call IDs are the job's (`stable`) or new on every ask (`fresh`, as the SDK's real
    models get them from the provider); script.ScriptedModel writes each ask to its ledger.
    """

    def __init__(self, job: Job, call_ids: str = "stable") -> None:
        self.script = ScriptedModel(job, call_ids)

    async def get_response(
        self,
        system_instructions: str | None,
        input: str | list[TResponseInputItem],
        model_settings: Any,
        tools: list[Any],
        output_schema: Any,
        handoffs: list[Any],
        tracing: Any,
        *,
        previous_response_id: str | None = None,
        conversation_id: str | None = None,
        prompt: Any = None,
    ) -> ModelResponse:
        """Reply to the conversation the SDK sends (orphaned calls already dropped by the SDK), or refuse it."""
        folder = self.script.ledger.parent
        provider.refuse(input, folder)
        done = progress(input, folder)
        turns = turns_done(self.script.job, done)
        calls = self.script.reply(turns)
        if calls is not None:  # a turn half answered (a call orphaned, dropped by the SDK): the rest of it
            calls = [c for c, j in zip(calls, self.script.job.turns[turns], strict=True) if j.id not in done]
        output: list[TResponseOutputItem]
        if calls is None:
            text = ResponseOutputText(type="output_text", text=f"done: {turns} tool turn(s)", annotations=[])
            output = [
                ResponseOutputMessage(
                    id="msg_final", type="message", role="assistant", status="completed", content=[text]
                )
            ]
        else:
            output = [
                ResponseFunctionToolCall(
                    type="function_call", id=f"fc_{c.id}", call_id=c.id, name=c.name, arguments=json.dumps(c.args)
                )
                for c in calls
            ]
        return ModelResponse(output=output, usage=Usage(), response_id=None)

    def stream_response(self, *args: Any, **kwargs: Any) -> AsyncIterator[TResponseStreamEvent]:
        """Not played: the scripted model answers `Runner.run` and `run_sync`, not `run_streamed`."""
        raise NotImplementedError("the scripted model answers Runner.run and Runner.run_sync, not run_streamed")


def check(job: Job, session_file: str | Path, session_id: str) -> Check:
    """The default check, reading also the conversation of session `session_id` in `session_file` (in the work folder).

    The history holds the receiver's effects and that conversation: no-duplicate, no-loss and
    well-formed-transcript are decided; approved-exactly is not (transcripts.UNDECIDED says why).
    """
    unseen = transcripts.UNDECIDED["openai-agents"]
    return script.check(job, lambda folder: conversation_events(folder, session_file, session_id), unseen)
