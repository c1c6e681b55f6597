"""Jobs: the scripted model's tool turns, as data, and their TOML file format.

The model is scripted: its reply depends only on how many tool turns the conversation already
holds, so asking again gives the same reply with the same call IDs. A job is a list of tool
turns, each an ordered list of calls; after the last tool turn the model gives its final answer.
Loading a job file fails with a `JobError` whose message names the offending field. What the
scripted model passes each call's tool (`tool_name`, `arguments`) is here too, one rule for
every loop that plays a job: the framework adapters' scripted model and the reference loop's spans.
"""

from __future__ import annotations

import tomllib
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from crashsweep.spec import files

CALL_KEYS = frozenset({"tool", "writes", "fails_after_accept", "approval", "args", "node"})
Arg = str | int | float | bool
"""A value of a call's `args` table: what a scripted model passes a user's own tool."""
JOB_KEYS = frozenset({"name", "turns", "calls"})


class JobError(ValueError):
    """A job file or job definition that cannot be used; the message names the field."""


@dataclass(frozen=True, slots=True)
class Call:
    """One tool call of the script: its ID (unique in the job), tool, and whether it writes.

    Options of a write (spec/SITUATIONS.md): `fails_after_accept`, the tool returns an error
    after the tracker applied the write (once); `approval`, a person must approve it first.
    `args`: the arguments a real sweep's scripted model passes the program's own tool named
    `tool` (a framework agent's tools, not the tracker's; an empty table: no arguments); None:
    the tracker's tool plays the call. The model's rules never read them: a call's effect is
    whether it writes. `node`: the graph node the call runs in; consecutive calls of a turn
    with the same name share one, which a resume after an approval re-runs from its start
    under `resume_granularity = "node"` (spec/CONVERSATIONS.md 3); None: a node of its own.
    """

    id: str
    tool: str
    writes: bool
    fails_after_accept: bool = False
    approval: bool = False
    args: tuple[tuple[str, Arg], ...] | None = None
    node: str | None = None


@dataclass(frozen=True, slots=True)
class Job:
    """A scripted job: its tool turns in order, each a tuple of calls."""

    name: str
    turns: tuple[tuple[Call, ...], ...]
    _by_id: dict[str, Call] = field(init=False, repr=False, compare=False, hash=False, default_factory=dict)

    def __post_init__(self) -> None:
        seen: set[str] = set()
        for number, turn in enumerate(self.turns, start=1):
            if not turn:
                raise JobError(f"turns[{number - 1}]: a tool turn needs at least one call")
            for call in turn:
                if call.id in seen:
                    raise JobError(f"turns: call {call.id!r} appears twice; call IDs are unique")
                seen.add(call.id)
                self._by_id[call.id] = call

    @property
    def calls(self) -> tuple[Call, ...]:
        """Every call of the job, in script order."""
        return tuple(call for turn in self.turns for call in turn)

    @property
    def writes(self) -> tuple[str, ...]:
        """The IDs of the calls that change the tracker, in script order."""
        return tuple(call.id for call in self.calls if call.writes)

    def call(self, call_id: str) -> Call:
        """The call with this ID."""
        return self._by_id[call_id]

    def node_before(self, call_id: str) -> tuple[str, ...]:
        """The calls before `call_id` in its turn that run in its node (spec/CONVERSATIONS.md 3)."""
        call = self._by_id[call_id]
        if call.node is None:
            return ()
        for turn in self.turns:
            if call in turn:
                before = turn[: turn.index(call)]
                return tuple(other.id for other in before if other.node == call.node)
        return ()

    @property
    def gated(self) -> tuple[str, ...]:
        """The IDs of the calls that need a person's approval, in script order."""
        return tuple(call.id for call in self.calls if call.approval)


def _field(call_id: str) -> str:
    """How a message names call `call_id`'s field: calls.ID, or calls["..."] for an ID that needs quotes."""
    return f"calls.{call_id}" if call_id.replace("_", "").replace("-", "").isalnum() else f"calls[{call_id!r}]"


def _text(where: str, value: str) -> str:
    return files.printable(where, value, JobError)


def _call(call_id: str, raw: object) -> Call:
    where = _field(call_id)
    _text(f"{where} (the call ID)", call_id)
    if not isinstance(raw, Mapping):
        raise JobError(f'{where}: expected a table like {{ tool = "...", writes = true }}')
    unknown = sorted(set(raw) - CALL_KEYS)
    if unknown:
        known = ", ".join(sorted(CALL_KEYS))
        raise JobError(f"{where}: unknown key {unknown[0]!r} (known: {known})")
    tool = raw.get("tool")
    if not isinstance(tool, str) or not tool:
        raise JobError(f"{where}.tool: expected a non-empty string")
    _text(f"{where}.tool", tool)
    writes = raw.get("writes")
    if not isinstance(writes, bool):
        raise JobError(f"{where}.writes: expected true or false")
    options = {}
    for option in ("fails_after_accept", "approval"):
        value = raw.get(option, False)
        if not isinstance(value, bool):
            raise JobError(f"{where}.{option}: expected true or false")
        if value and not writes:
            raise JobError(f"{where}.{option}: only a write (writes = true) can have this option")
        options[option] = value
    args = _args(where, raw["args"]) if "args" in raw else None
    node = raw.get("node")
    if node is not None and (not isinstance(node, str) or not node):
        raise JobError(f"{where}.node: expected a non-empty string (the name of the graph node the call runs in)")
    if node is not None:
        _text(f"{where}.node", node)
    return Call(call_id, tool, writes, **options, args=args, node=node)


def _args(where: str, raw: object) -> tuple[tuple[str, Arg], ...]:
    """A call's `args` table: names to strings, numbers or booleans, in the file's order."""
    if not isinstance(raw, Mapping):
        raise JobError(f'{where}.args: expected a table like {{ order_id = "A-1", amount = 20 }}')
    found: list[tuple[str, Arg]] = []
    for name, value in raw.items():
        _text(f"{where}.args (an argument's name)", name)
        if not isinstance(value, str | int | float | bool):
            raise JobError(f"{where}.args.{name}: expected a string, a number or true/false")
        if isinstance(value, str):
            _text(f"{where}.args.{name}", value)
        found.append((name, value))
    return tuple(found)


def job_from_mapping(data: Mapping[str, object]) -> Job:
    """Build a job from parsed TOML, naming the first field that is wrong."""
    unknown = sorted(set(data) - JOB_KEYS)
    if unknown:
        raise JobError(f"unknown top-level key {unknown[0]!r} (known: name, turns, calls)")
    name = files.name("name", data.get("name"), JobError)
    raw_calls = data.get("calls", {})
    if not isinstance(raw_calls, Mapping):
        raise JobError("calls: expected a table of calls")
    calls = {call_id: _call(call_id, raw) for call_id, raw in raw_calls.items()}
    raw_turns = data.get("turns")
    if not isinstance(raw_turns, list):
        raise JobError("turns: expected a list of turns, each a list of call IDs")
    turns: list[tuple[Call, ...]] = []
    used: set[str] = set()
    for index, raw_turn in enumerate(raw_turns):
        if not isinstance(raw_turn, list) or not all(isinstance(c, str) for c in raw_turn):
            raise JobError(f"turns[{index}]: expected a list of call IDs (strings)")
        for call_id in raw_turn:
            if call_id not in calls:
                raise JobError(f"turns[{index}]: call {call_id!r} is not defined under [calls]")
        used.update(raw_turn)
        turns.append(tuple(calls[call_id] for call_id in raw_turn))
    unused = sorted(set(calls) - used)
    if unused:
        raise JobError(f"{_field(unused[0])}: defined but used in no turn")
    return Job(name, tuple(turns))


def load_job(path: Path) -> Job:
    """Read a job file (TOML, read by spec/files.py); any problem becomes a one-line `JobError` naming the file."""
    data = files.read_toml(path, "job file", JobError)
    try:
        return job_from_mapping(data)
    except JobError as error:
        raise JobError(f"{path}: {error}") from None


def tool_name(call: Call) -> str:
    """The tool that plays `call`: the program's own (a call with `args`), else the tracker's.

    The tracker's: create_issue, comment, or search_issues for a read.
    """
    if call.args is not None:
        return call.tool
    if not call.writes:
        return "search_issues"
    return "comment" if call.tool == "comment" else "create_issue"


def title(call_id: str) -> str:
    """The title of the issue the job's call `call_id` files."""
    return f"issue {call_id}"


def arguments(job: Job, call: Call) -> dict[str, Any]:
    """The arguments the scripted model gives `call`'s tool: the job's `args`, or the tracker tool's."""
    if call.args is not None:
        return dict(call.args)
    name = tool_name(call)
    if name == "create_issue":
        return {"title": title(call.id)}
    if name == "comment":
        return {"issue_title": title(_filed_by(job, call).id), "body": f"comment {call.id}"}
    return {"query": "issue"}


def _filed_by(job: Job, call: Call) -> Call:
    """The earlier call that files the issue `call` comments on (the first one, as in the triage job)."""
    for candidate in job.calls[: job.calls.index(call)]:
        if tool_name(candidate) == "create_issue":
            return candidate
    raise JobError(f"calls.{call.id}: a comment needs an earlier write that files an issue to comment on")


TRIAGE_TOML = """\
name = "triage"
turns = [
  ["create_a", "create_b"],
  ["search", "comment_a"],
]

[calls]
create_a = { tool = "create_issue", writes = true }
create_b = { tool = "create_issue", writes = true }
search = { tool = "search_issues", writes = false }
comment_a = { tool = "comment", writes = true }
"""

TRIAGE = job_from_mapping(tomllib.loads(TRIAGE_TOML))
"""The built-in job: files two issues, runs a search, comments on the first issue."""
