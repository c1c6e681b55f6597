"""pydantic-ai adapter (pydantic-ai-slim 2.68.0, DBOS path): a scripted model, tracker tools, crash points.

pydantic-ai makes an agent durable under DBOS with the `DBOSDurability` capability (2.68.0; the
older `DBOSAgent` wrapper is deprecated and warns): inside a `@DBOS.workflow`, each model
request is a DBOS step (`<agent name>__model.request`) whose reply, with its tool call IDs, is
recorded before any tool runs; MCP toolsets are wrapped in steps. Function tools are NOT
steps: they run inline in the workflow's code, so on recovery every tool call of every turn
the workflow replays runs again, however long ago its result went to the model. A tool whose
body is a `@DBOS.step()` (or, for async tools, one with `metadata={'dbos': {'child_workflow':
...}}`) has its result recorded and is not redone once recorded.

The crash points:

- around DBOS's records, as for any DBOS workflow: `dbos.install_crash_points()` (after the
  workflow's start is recorded, after each step's record, around the final status);
- "before recording step N" at the end of each model request (the scripted model has replied
  and written its ledger, DBOS has not recorded the reply) and at the end of a tool wrapped
  in a step by `tracker_toolset(steps=True)` (`step_crash_points`, async or not);
- "tracker filed/commented ..." right after the tracker accepted a write, in every tool body.

Approvals: a tool with `requires_approval=True` ends the run with `DeferredToolRequests`;
`run_approving` answers each waiting call with a scripted person (`approve`, or any `Person`)
in one DBOS step (`answers`, each answer counted an approval) and runs the agent again from
the message history with those `DeferredToolResults`. Across a crash DBOS replays the first
run from its recorded replies, rebuilding the history, and the recorded answers.

`AgentTools` are the tracker tools' bodies (script.TrackerTools) for pydantic-ai tools: the
record's run is the DBOS workflow ID, its call the model's tool call ID (`ctx.tool_call_id`,
mapped back to the job's call by the model's ledger). With keys, a tool that runs as a DBOS
step keys its write from (workflow ID, step ID), as the DBOS adapter does; a tool that is not
a step has no step ID, and keys from (workflow ID, tool call ID), which is durable because the
model's reply was recorded as a step before the tool ran.
"""

from __future__ import annotations

import asyncio
import functools
import inspect
from collections.abc import Callable, Collection, Sequence
from typing import Any, TypeVar

from dbos import DBOS
from pydantic_ai import (
    Agent,
    AgentRunResult,
    DeferredToolRequests,
    DeferredToolResults,
    RunContext,
    Tool,
    ToolApproved,
    ToolDenied,
)
from pydantic_ai.messages import ModelMessage, ModelRequest, ModelResponse, TextPart, ToolCallPart, ToolReturnPart
from pydantic_ai.models.function import AgentInfo, FunctionModel
from pydantic_ai.toolsets import FunctionToolset

from crashsweep.realsweep.adapters import script, transcripts
from crashsweep.realsweep.adapters.script import ScriptedModel, TrackerTools
from crashsweep.realsweep.probe.crashpoint import count, crashpoint
from crashsweep.realsweep.process import warming
from crashsweep.realsweep.tracker.client import TrackerClient
from crashsweep.realsweep.values import Check
from crashsweep.spec import metrics
from crashsweep.spec.job import Job

F = TypeVar("F", bound=Callable[..., Any])
MODEL_NAME = "crashsweep-scripted"
Answer = bool | ToolApproved | ToolDenied
Person = Callable[[str, dict[str, Any]], Answer]
"""The scripted person: given a waiting call's tool name and arguments, True/False or a ToolApproved/ToolDenied."""


def turns_done(messages: Sequence[ModelMessage]) -> int:
    """The tool turns answered so far: the model's earlier replies that called tools."""
    return sum(1 for message in messages if isinstance(message, ModelResponse) and message.tool_calls)


def tool_results(messages: Sequence[ModelMessage]) -> dict[str, str]:
    """The tools' answers so far, as the model reads them, by tool call ID (what a cassette's references read)."""
    return {
        part.tool_call_id: part.model_response_str()
        for message in messages
        if isinstance(message, ModelRequest)
        for part in message.parts
        if isinstance(part, ToolReturnPart)
    }


def before_record(fallback: str) -> None:
    """Pass "before recording step N" inside a DBOS step; `fallback` outside one (a run with no DBOS)."""
    step = DBOS.step_id
    crashpoint(f"before recording step {step}" if step is not None else fallback)


class ScriptedFunction:
    """The function of a FunctionModel that plays a job: each ask is answered by script.ScriptedModel.

    The tools' answers in the messages go with each ask, for a cassette's arguments that refer
    to an earlier call's result (`sweep --cassette`).

    The reply is written to the model's ledger before it is returned (as a provider has handed
    it out), then the point "before recording step N" is passed: under DBOS the model request
    is step N, and its reply is not recorded yet.
    """

    def __init__(self, job: Job, call_ids: str = "stable") -> None:
        self.script = ScriptedModel(job, call_ids)

    def __call__(self, messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        """The next tool turn's calls, or the final answer after the last one."""
        done = turns_done(messages)
        calls = self.script.reply(done, tool_results(messages))
        if calls is None:
            text = self.script.final(f"done: {done} tool turn(s)")
            response = ModelResponse(parts=[TextPart(text)], model_name=MODEL_NAME)
        else:
            parts = [ToolCallPart(call.name, dict(call.args), tool_call_id=call.id) for call in calls]
            response = ModelResponse(parts=parts, model_name=MODEL_NAME)
        before_record(f"model replied to turn {done + 1}")
        return response


def scripted_model(job: Job, call_ids: str = "stable") -> FunctionModel:
    """A pydantic-ai model that plays `job` with no network (in production: "openai:...", etc.)."""
    return FunctionModel(ScriptedFunction(job, call_ids), model_name=MODEL_NAME)


def step_crash_points(function: F) -> F:
    """A step's function, then "before recording step N" (put it under @DBOS.step(); async or not).

    dbos.crash_points does the same for a plain function; an async function's result is a
    coroutine, so the point must be passed after it is awaited.
    """
    if inspect.iscoroutinefunction(function):

        @functools.wraps(function)
        async def async_step(*args: Any, **kwargs: Any) -> Any:
            result = await function(*args, **kwargs)
            before_record(f"{function.__name__} returned")
            return result

        return async_step  # type: ignore[return-value]

    @functools.wraps(function)
    def step(*args: Any, **kwargs: Any) -> Any:
        result = function(*args, **kwargs)
        before_record(f"{function.__name__} returned")
        return result

    return step  # type: ignore[return-value]


class AgentTools:
    """The tracker tools' bodies for pydantic-ai tools: call them from your tools (`@agent.tool`).

    Each write records the workflow ID as its run and `ctx.tool_call_id` as its call; `keys`
    may be changed after the tools are made (e.g. from `--arg keys=off` when the run starts).
    """

    def __init__(self, keys: bool = True, client: TrackerClient | None = None) -> None:
        self.ops = TrackerTools(keys, client)

    @property
    def keys(self) -> bool:
        """Whether writes carry idempotency keys."""
        return self.ops.keys

    @keys.setter
    def keys(self, keys: bool) -> None:
        self.ops.keys = keys

    @staticmethod
    def ids(ctx: RunContext[Any]) -> tuple[str, str, tuple[str, str]]:
        """The write's run, call and key parts: (workflow, step N) in a step, else (workflow, tool call ID)."""
        call = str(ctx.tool_call_id)
        run = DBOS.workflow_id or ctx.run_id or "run"
        step = DBOS.step_id
        return run, call, (run, f"step {step}" if step is not None else call)

    def create_issue(self, ctx: RunContext[Any], title: str) -> str:
        """File an issue; the tool's answer."""
        run, call, parts = self.ids(ctx)
        return self.ops.create_issue(title, run=run, call=call, key_parts=parts)

    def comment(self, ctx: RunContext[Any], issue_title: str, body: str) -> str:
        """Comment on the first issue titled `issue_title`; the tool's answer."""
        run, call, parts = self.ids(ctx)
        return self.ops.comment(issue_title, body, run=run, call=call, key_parts=parts)

    def search(self, query: str) -> str:
        """The issues matching `query`."""
        return self.ops.search(query)


def tracker_toolset(
    tools: AgentTools, *, steps: bool = False, needs_approval: Collection[str] = ()
) -> FunctionToolset[Any]:
    """create_issue, comment and search_issues as async pydantic-ai tools; with `steps`, each a DBOS step.

    The tools named in `needs_approval` are made with `requires_approval=True`: their calls
    wait for a person's answer (`run_approving`).

    Async, as pydantic-ai's examples write tools: the calls of one turn then run as tasks on
    the run's event loop, in the model's order (a sync tool runs on a worker thread, and two
    of them in one turn would reach the tracker, and DBOS's step counter, in any order).
    Without `steps` the tools run inline in the workflow, as pydantic-ai runs them by default.
    With `steps`, the steps of one turn start in the model's order (DBOS numbers them so), but
    each awaits its record on one of DBOS's threads and the next starts meanwhile: the points
    of two steps interleave, and a crash between them may find either one recorded. Give
    `DBOSDurability(parallel_execution_mode="sequential")` for one window per step.
    """

    async def create_issue(ctx: RunContext[Any], title: str) -> str:
        """File an issue in the tracker with this title."""
        return tools.create_issue(ctx, title)

    async def comment(ctx: RunContext[Any], issue_title: str, body: str) -> str:
        """Comment on the issue with this title."""
        return tools.comment(ctx, issue_title, body)

    async def search_issues(query: str) -> str:
        """Search the tracker's issues."""
        return tools.search(query)

    def tool(function: Callable[..., Any]) -> Tool[Any]:
        name = function.__name__
        if steps:
            function = DBOS.step(name=f"crashsweep.{name}")(step_crash_points(function))
        return Tool(function, name=name, requires_approval=name in needs_approval)

    return FunctionToolset([tool(create_issue), tool(comment), tool(search_issues)])


def approve(tool: str, args: dict[str, Any]) -> Answer:
    """The default scripted person: approves every call that waits for approval."""
    return True


@DBOS.step(name="crashsweep.pydantic_ai.answers")
@step_crash_points
def answers(waiting: Sequence[ToolCallPart], person: Person) -> dict[str, Answer]:
    """The person's answer to each call waiting for approval, by its ID (each counted an approval); a DBOS step.

    In a workflow the answers are recorded: a recovery replays them and asks no one again,
    unless the crash came before the record ("before recording step N", passed on return).
    """
    count(metrics.APPROVALS, len(waiting))
    return {call.tool_call_id: person(call.tool_name, call.args_as_dict()) for call in waiting}


def run_approving(agent: Agent[Any, Any], prompt: str, *, person: Person = approve, **options: Any) -> Any:
    """`agent.run_sync(prompt, **options)` with its deferred approvals answered by `person`; the final output.

    A tool with `requires_approval=True` ends the run with `DeferredToolRequests` (added to the
    run's output types here); the person answers each waiting call (`answers`, a step), and the
    next run goes on from the message history with those `DeferredToolResults`, until the
    output is no longer a deferral. Call it inside your `@DBOS.workflow`: what the second run
    needs from the first is the message history, held in memory only, and a recovery rebuilds
    it by replaying the first run from DBOS's records (its model replies are steps; its plain
    tools run again), then the recorded answers.
    """
    options["output_type"] = [agent.output_type, DeferredToolRequests]
    result: AgentRunResult[Any] = agent.run_sync(prompt, **options)
    while isinstance(result.output, DeferredToolRequests):
        if result.output.calls:
            raise RuntimeError("run_approving answers approvals only: a tool deferred its call for an external result")
        results = DeferredToolResults(approvals=dict(answers(result.output.approvals, person)))
        result = agent.run_sync(message_history=result.all_messages(), deferred_tool_results=results, **options)
    return result.output


def warm_up(argv: list[str] | None = None) -> None:
    """Run a throwaway agent once, outside DBOS, with no tools and no crash point; at once after the first call.

    pydantic-ai imports much on a model's creation and an agent's first run (genai-prices'
    data, anyio's asyncio backend, the capabilities): 0.2-0.3 s. A sweep's zygote calls this
    before it forks, so that every swept process finds them imported: the built-in agent's
    `zygote_warm`, and for a user's agent the zygote itself (registered in process/warming.py
    when this module is imported).
    """
    if _warmed:
        return
    _warmed.append(True)

    def answer(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        return ModelResponse(parts=[TextPart("warm")], model_name=MODEL_NAME)

    agent = Agent(FunctionModel(answer, model_name=MODEL_NAME), name="crashsweep-warm-up")
    asyncio.run(agent.run("warm up"))


_warmed: list[bool] = []
warming.register(warm_up)


def check(job: Job) -> Check:
    """The default check of a pydantic-ai agent: the tracker's records; what the stack keeps none of is not decided.

    pydantic-ai's agent keeps its messages in memory, and its deferred tools' approvals cannot ride
    on an effect: well-formed-transcript and approved-exactly are "not decided", with the reasons
    transcripts.UNDECIDED gives.
    """
    return script.check(job, None, transcripts.UNDECIDED["pydantic-ai"])
