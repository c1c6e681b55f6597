"""OpenAI Agents SDK adapter, its resume: a conversation run to its final answer from what a crash left saved.

What is saved is a session (the SDK's, wrapped in openai_agents.CrashPointSession) and, while
a tool waits for a person's approval, the run's `RunState` as JSON in a file (`save_state`: a
temporary file renamed over the old one, whole or absent). The two are written apart, so a
crash can leave them out of step: the session may hold the approved call's output while the
file still waits for its approval (the SDK wrote the result, the run died before the final
answer and the file's removal). Run again, such a RunState would approve and run the tool a
second time and save a second output for the call; `aresume` takes it as superseded by the
session (`superseded`), removes it and goes on from the session.

- `aresume(agent, input, session, state_file=..., approve=...)`, `resume` (its synchronous
  form, in place of `Runner.run_sync`).
- `approve_all`: the scripted person, who approves every call that waits (each answer counted
  as an approval).
- `RUN`: the session ID of the run being resumed, which the tracker tools key their writes from.
"""

from __future__ import annotations

import asyncio
import contextvars
from collections.abc import Callable
from pathlib import Path
from typing import Any

from agents import Agent, Runner, RunResult, RunState
from agents.items import ToolApprovalItem, TResponseInputItem
from agents.memory import Session

from crashsweep.realsweep.probe.crashpoint import count, crashpoint
from crashsweep.spec import metrics

RUN: contextvars.ContextVar[str] = contextvars.ContextVar("crashsweep_openai_agents_run", default="session")
"""The session ID of the run `resume` drives: the tracker records it as the write's run, and it keys writes."""
Approver = Callable[[ToolApprovalItem], bool]


def approve_all(item: ToolApprovalItem) -> bool:
    """The scripted person: approves every tool call that waits for approval."""
    return True


def finished(items: list[TResponseInputItem]) -> bool:
    """Does the saved conversation end with the model's final answer (an assistant message)?"""
    last = items[-1] if items else None
    return isinstance(last, dict) and last.get("type", "message") == "message" and last.get("role") == "assistant"


def final_text(item: TResponseInputItem) -> str:
    """The text of a saved assistant message (its output_text parts, joined)."""
    content: Any = item.get("content") if isinstance(item, dict) else None
    if isinstance(content, str):
        return content
    return "".join(str(part.get("text", "")) for part in content or () if isinstance(part, dict))


def decide(state: RunState[Any], approve: Approver) -> None:
    """The person's answer to every tool call the run waits on: approved or rejected (each counted an approval)."""
    for item in state.get_interruptions():
        count(metrics.APPROVALS)
        if approve(item):
            state.approve(item)
        else:
            state.reject(item)


def save_state(state_file: Path, text: str) -> None:
    """Save a RunState's JSON between two crash points (a temporary file renamed over the old: whole or absent)."""
    crashpoint("before saving run state")
    scratch = state_file.with_name(state_file.name + ".tmp")
    scratch.write_text(text, encoding="utf-8")
    scratch.replace(state_file)
    crashpoint("after saving run state")


def drop_state(state_file: Path | None) -> None:
    """Remove a saved RunState (the conversation finished, or the session superseded it), between two crash points."""
    if state_file is None or not state_file.exists():
        return
    crashpoint("before removing run state")
    state_file.unlink()
    crashpoint("after removing run state")


def outputs(items: list[TResponseInputItem]) -> set[str]:
    """The call IDs whose function_call_output the saved conversation holds."""
    return {str(i.get("call_id")) for i in items if isinstance(i, dict) and i.get("type") == "function_call_output"}


def superseded(state: RunState[Any], items: list[TResponseInputItem]) -> bool:
    """Does the session hold the output of a call the RunState waits on (the approved tool ran, its result saved)?

    The SDK writes the approved calls' outputs in one session write after they ran, and the
    RunState is removed only after the final answer: a crash in between leaves a state that
    still waits. Run again, it would run the tool again and save a second output for the call.
    """
    done = outputs(items)
    return any(item.call_id in done for item in state.get_interruptions())


async def saved_state(
    agent: Agent[Any], state_file: Path | None, items: list[TResponseInputItem]
) -> RunState[Any] | None:
    """The RunState in `state_file` to go on from; None if there is none, or if the session superseded it (removed)."""
    if state_file is None or not state_file.exists():
        return None
    state = await RunState.from_string(agent, state_file.read_text(encoding="utf-8"))
    if superseded(state, items):
        drop_state(state_file)
        return None
    return state


async def aresume(
    agent: Agent[Any],
    user_input: str,
    session: Session,
    *,
    state_file: Path | None = None,
    approve: Approver = approve_all,
    **options: Any,
) -> str:
    """Run the conversation to its final answer from what is saved; the answer.

    - The session holds the final answer: nothing runs (a RunState left on disk is removed).
    - A RunState is saved (a tool waited for approval) and the session has none of its calls'
      outputs: it is loaded, the person answers, and the run goes on from it
      (`Runner.run(agent, state, session=session)`). One whose call's output the session
      holds is removed instead (`superseded`), and the run goes on from the session.
    - The session holds items: the run goes on from them (`Runner.run(agent, [], ...)`): the
      SDK sends the saved conversation, less any function_call without its output.
    - Nothing saved: the run starts from `user_input`.
    Whenever the run stops for approval, its RunState is saved to `state_file` first (JSON),
    then the person answers. `options` go to `Runner.run` (e.g. max_turns).
    """
    token = RUN.set(session.session_id)
    try:
        items = await session.get_items()
        if finished(items):
            drop_state(state_file)
            return final_text(items[-1])
        state = await saved_state(agent, state_file, items)
        if state is not None:
            decide(state, approve)
            result: RunResult = await Runner.run(agent, state, session=session, **options)
        else:
            result = await Runner.run(agent, [] if items else user_input, session=session, **options)
        while result.interruptions:
            if state_file is None:
                raise RuntimeError("a tool waits for approval: give resume a state_file to save the RunState in")
            state = result.to_state()
            save_state(state_file, state.to_string())
            decide(state, approve)
            result = await Runner.run(agent, state, session=session, **options)
        drop_state(state_file)
        return str(result.final_output)
    finally:
        RUN.reset(token)


def resume(agent: Agent[Any], user_input: str, session: Session, **options: Any) -> str:
    """`aresume` from synchronous code, in place of `Runner.run_sync(agent, input, session=session)`."""
    return asyncio.run(aresume(agent, user_input, session, **options))
