"""One uninterrupted run, read from DBOS's system database (SQLite): the model's replies, the tools' runs, the saves.

`crashsweep from-trace dbos.sqlite` reads the one workflow of the database (spec/FROM_TRACE.md 2,
"DBOS's records") as from-trace reads spans: each model reply with its calls, each call's run,
and DBOS's records as saves in the reference loop's words. Two shapes of workflow are read, by
their steps' recorded outputs (read without running any: dbos_values.py):

- **DBOS's agent** (`--framework dbos`, realsweep/adapters/dbos_agent.py): a step asks the
  model and records the reply's calls as a list of {id, name, args} (empty: the final answer,
  whose text is not recorded); the next steps run those calls in order, one step each, each
  recording the call's answer.
- **pydantic-ai's DBOS durability** (`--framework pydantic-ai`): each model request is a step
  recording pydantic-ai's `ModelResponse` (its tool-call parts, or its text). Tools are not
  steps by default: the run asked them (their arguments are in the reply) but their results
  are not recorded, and the run has no tool runs. A tool that is a step (its step's name ends
  with the tool's) is matched to the first call of the reply before it to that tool not yet
  matched (DBOS numbers a turn's steps as they start, in the model's order).

The saves: the workflow's status and input are recorded before its first step ("start"), each
reply's step before its calls run ("reply K"; the final answer's, "final"), each call's step after
the call ("result C"). Each is in the order DBOS numbers the steps: step N's body starts at 2N,
its record at 2N + 1. DBOS records no key a call sent.

Refused in one line (TraceError): no workflow or more than one, a workflow not ended in
SUCCESS, one recovered after a crash (`recovery_attempts` above 1) or forked from another, a
step this reader cannot place or read, a reply's calls not all run (DBOS's agent), a run whose
last reply asks for calls.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from crashsweep.fromtrace import dbos_points
from crashsweep.fromtrace.dbos_values import Named, Unreadable, decode, text
from crashsweep.fromtrace.recording import Asked, Marked, Recording, Reply, ToolRun, TraceError
from crashsweep.importers import dbos_db
from crashsweep.importers.base import Unusable
from crashsweep.spec.history import FINISHED

RECORDS = "workflow and step records"
"""What the Recording's records are called (`spans` counts them: the workflow's row and its steps' rows)."""
RESPONSE = "pydantic_ai.messages.ModelResponse"
"""The class of a pydantic-ai model request's recorded output."""
CALL_KEYS = frozenset({"id", "name", "args"})
"""The keys of each call in the reply DBOS's agent records (realsweep/adapters/script.ToolCall)."""


@dataclass(frozen=True, slots=True)
class Step:
    """One operation_outputs row of the run: its place in the workflow, function, decoded output, error, where."""

    number: int
    function: str
    value: Any
    error: str
    place: str


def read(path: Path) -> Recording:
    """The one workflow of DBOS's system database at `path`; TraceError (one line) when it is not one finished run."""
    try:
        workflows, rows, errors = dbos_db.records(path, ("name", "forked_from"), ("output",))
    except Unusable as error:
        raise TraceError(str(error)) from None
    workflow = _one(path, workflows, errors)
    run = str(workflow["workflow_uuid"])
    mine = [row for row in rows if str(row["workflow_uuid"]) == run]
    steps = [_step(path, row) for row in mine if not dbos_db.own_operation(row)]
    if not steps:
        raise TraceError(f"{path}: workflow {run} recorded no step: from-trace needs the model's replies")
    start = Marked("save", "start", 0, f"workflow_status row {run}", ())
    response = isinstance(steps[0].value, Named) and steps[0].value.name == RESPONSE
    replies, tools, marked = _pydantic(path, steps) if response else _agent(path, steps)
    if replies[-1].final is None:
        raise TraceError(f"{path}: the last model reply asks for calls: the run stopped before its final answer")
    name = str(workflow["name"] or run)
    agent = steps[0].function.split("__model.")[0] if response else name
    points = () if response or len(steps) < len(mine) else dbos_points.passed(run, replies, tools)
    return Recording(
        path, run, agent, agent, replies, tools, (start, *marked), points, 1 + len(mine), RECORDS, frozenset({"keys"})
    )


def _one(path: Path, workflows: list[dict[str, Any]], errors: dict[Any, Any]) -> dict[str, Any]:
    """The database's one workflow, ended in SUCCESS without a recovery; else TraceError."""
    if len(workflows) != 1:
        named = ", ".join(str(w["workflow_uuid"]) for w in workflows[:3])
        raise TraceError(
            f"{path}: {len(workflows)} workflows{f' ({named})' if named else ''}: from-trace reads one run"
        )
    (workflow,) = workflows
    run, status = str(workflow["workflow_uuid"]), str(workflow["status"])
    try:
        ended = dbos_db.ending(path, workflow, errors.get(workflow["workflow_uuid"], workflow["error"]))
    except Unusable as error:
        raise TraceError(str(error)) from None
    if ended is None:
        raise TraceError(f"{path}: workflow {run} is {status}: the run has not finished (a crash?)")
    if ended.status != FINISHED:
        said = f": {ended.detail}" if ended.detail else ""
        raise TraceError(f"{path}: workflow {run} ended {status}{said}: from-trace reads a run that finished")
    attempts = workflow["recovery_attempts"]
    if isinstance(attempts, int) and attempts > 1:
        raise TraceError(
            f"{path}: workflow {run} was recovered after it started (recovery_attempts {attempts}): "
            "from-trace reads one uninterrupted run"
        )
    if workflow["forked_from"]:
        raise TraceError(f"{path}: workflow {run} was forked from {workflow['forked_from']}: it is not one whole run")
    return workflow


def _step(path: Path, row: dict[str, Any]) -> Step:
    """A step's row, its output decoded (TraceError naming the row when it cannot be read)."""
    where = f"operation_outputs row {row['workflow_uuid']}:{row['function_id']}"
    try:
        value = decode(row["output"], row["serialization"])
    except Unreadable as error:
        raise TraceError(f"{path}: {where} ({row['function_name']}): its output is {error}") from None
    number = int(dbos_db.number(row["function_id"], path, "operation_outputs", row))
    raised = "" if row["error"] is None else dbos_db.raised(row["error"], row["serialization"], f"{path}: {where}")
    return Step(number, str(row["function_name"]), value, raised, where)


def _calls(value: Any) -> tuple[Asked, ...] | None:
    """The calls of a reply DBOS's agent recorded (a list of {id, name, args}), or None for another output."""
    if not isinstance(value, list) or not all(isinstance(c, dict) and set(c) == CALL_KEYS for c in value):
        return None
    return tuple(Asked(str(c["id"]), str(c["name"]), c["args"]) for c in value)


def _agent(path: Path, steps: list[Step]) -> tuple[tuple[Reply, ...], tuple[ToolRun, ...], tuple[Marked, ...]]:
    """DBOS's agent: a reply's step, then one step per call of it, in order; the last reply has no calls."""
    replies: list[Reply] = []
    tools: list[ToolRun] = []
    marked: list[Marked] = []
    pending: list[Asked] = []
    for step in steps:
        if pending:
            asked = pending.pop(0)
            tools.append(_run(step, asked))
            marked.append(Marked("save", f"result {asked.id}", 2 * step.number + 1, step.place, ()))
            continue
        if replies and replies[-1].final is not None:
            raise TraceError(f"{path}: {step.place} ({step.function}): a step after the final answer")
        calls = _calls(step.value)
        if calls is None or step.error:
            raise TraceError(
                f"{path}: {step.place} ({step.function}): not a model reply "
                f"({'it raised: ' + step.error if step.error else 'its output is no list of calls'}): "
                "from-trace reads DBOS's agent (a step records the reply's calls as {id, name, args}, then a step "
                "runs each call) and pydantic-ai's model requests"
            )
        replies.append(Reply(calls, None if calls else "", 2 * step.number, step.place))
        marked.append(_saved(replies, step))
        pending = list(calls)
    if pending:
        raise TraceError(f"{path}: call {pending[0].id} of {replies[-1].span} has no step that ran it")
    return tuple(replies), tuple(tools), tuple(marked)


def _pydantic(path: Path, steps: list[Step]) -> tuple[tuple[Reply, ...], tuple[ToolRun, ...], tuple[Marked, ...]]:
    """pydantic-ai: each model request's step a reply; a tool's step matched to the call it ran, by its name."""
    replies: list[Reply] = []
    tools: list[ToolRun] = []
    marked: list[Marked] = []
    pending: list[Asked] = []
    for step in steps:
        if isinstance(step.value, Named) and step.value.name == RESPONSE and not step.error:
            calls, final = _response(path, step)
            replies.append(Reply(calls, final, 2 * step.number, step.place))
            marked.append(_saved(replies, step))
            pending = list(calls)
            continue
        tool = step.function.rsplit(".", 1)[-1]
        asked = next((a for a in pending if a.tool == tool), None)
        if asked is None:
            raise TraceError(
                f"{path}: {step.place} ({step.function}): neither a model request nor a tool step of the reply "
                "before it: from-trace reads pydantic-ai's model requests and tools that are steps"
            )
        pending.remove(asked)
        tools.append(_run(step, asked))
        marked.append(Marked("save", f"result {asked.id}", 2 * step.number + 1, step.place, ()))
    return tuple(replies), tuple(tools), tuple(marked)


def _response(path: Path, step: Step) -> tuple[tuple[Asked, ...], str | None]:
    """A ModelResponse's calls (its tool-call parts, in order) and, with none, its text."""
    assert isinstance(step.value, Named)
    parts = step.value.fields().get("parts")
    if not isinstance(parts, list):
        raise TraceError(f"{path}: {step.place}: a ModelResponse without its parts")
    calls, texts = [], []
    for part in parts:
        fields = part.fields() if isinstance(part, Named) else {}
        if fields.get("part_kind") == "tool-call":
            arguments = fields.get("args")
            calls.append(Asked(str(fields.get("tool_call_id")), str(fields.get("tool_name")), _arguments(arguments)))
        elif fields.get("part_kind") == "text":
            texts.append(str(fields.get("content", "")))
    return tuple(calls), None if calls else "".join(texts)


def _arguments(arguments: Any) -> Any:
    """A call's arguments: a dict as it is, a JSON text read (pydantic-ai keeps a provider's raw JSON)."""
    if isinstance(arguments, str):
        try:
            return decode(arguments, "portable_json")
        except Unreadable:
            return arguments
    return {} if arguments is None else arguments


def _run(step: Step, asked: Asked) -> ToolRun:
    """The run of `asked` its step records: its answer, or the error it raised."""
    result = None if step.error else text(step.value)
    return ToolRun(
        asked.id, asked.tool, asked.arguments, result, "", bool(step.error), False, 2 * step.number, step.place
    )


def _saved(replies: list[Reply], step: Step) -> Marked:
    """The reply's record as a save: "reply K" (K counting replies with calls), or "final"."""
    reply = replies[-1]
    value = f"reply {sum(1 for r in replies if r.calls)}" if reply.calls else "final"
    return Marked("save", value, 2 * step.number + 1, step.place, ())
