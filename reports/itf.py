"""A counterexample as an ITF trace: the Informal Trace Format of Apalache and Quint (ADR-015).

Model-based testing tools that read Apalache's or Quint's traces read this one. The document:
`#meta` (format "ITF", format-description, source, description, and crashsweep's own keys:
the variant, invariant, path code and the replay command), `vars` (the variable names, in
order) and `states`, one per world of the path from the initial one, each with `#meta`
{index} and a value for every variable.

The variables are the world's parts as the JSON trace has them (crashsweep.reports.describe.world_json:
checkpoint, lock, tracker, process, finished, runs, struck, second) and, after them, how the
path came to each state: `mbt::actionTaken` (Quint's name for it: "init" for the first state,
then the action's label), `crashsweep::kind` (step, crash, restart or fault), `crashsweep::choice`
(the action's index among those enabled, as in the path code), `crashsweep::point` and
`crashsweep::moves` (crashes and faults so far). The choices alone rebuild the path code
(`path_code`), so a trace replays with `crashsweep replay --path`.

Values follow ADR-015: integers are {"#bigint": "N"}; strings and booleans are themselves;
lists are JSON arrays; records are objects; the calls a tool failure struck are a {"#set": [...]};
the tracker's keys a {"#map": [[key, answer], ...]}; a value that may be absent is Quint's
option, {"tag": "None", "value": {"#tup": []}} or {"tag": "Some", "value": V} (ITF has no null).
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

from crashsweep.reports.counterexample import Counterexample
from crashsweep.reports.describe import world_json
from crashsweep.reports.replay import PROGRAM, replay_command
from crashsweep.spec.world import World

FORMAT_DESCRIPTION = "https://apalache-mc.org/docs/adr/015adr-trace.html"
WORLD_VARS = ("checkpoint", "lock", "tracker", "process", "finished", "runs", "struck", "second")
PATH_VARS = ("mbt::actionTaken", "crashsweep::kind", "crashsweep::choice", "crashsweep::point", "crashsweep::moves")
VARS = WORLD_VARS + PATH_VARS
INIT = "init"
"""The action taken into the first state, as Quint names it."""

_OPTIONAL = {
    ("checkpoint", "file"),
    ("checkpoint", "tmp"),
    ("lock", "holder"),
    ("lock", "tmp"),
    ("process",),
    ("second",),
    ("second", "process"),
}
"""The places of a world where a value may be absent: each is an option (None or Some)."""

NONE: dict[str, Any] = {"tag": "None", "value": {"#tup": []}}


def some(value: Any) -> dict[str, Any]:
    """Quint's option holding `value`."""
    return {"tag": "Some", "value": value}


def bigint(n: int) -> dict[str, str]:
    """An integer as ITF writes every integer: {"#bigint": "N"}."""
    return {"#bigint": str(n)}


def encode(value: Any, where: tuple[str, ...] = ()) -> Any:
    """A JSON value of a world as an ITF value; `where` is its place (the keys leading to it)."""
    if where in _OPTIONAL:
        return NONE if value is None else some(_plain(value, where))
    return _plain(value, where)


def _plain(value: Any, where: tuple[str, ...]) -> Any:
    """`value` as ITF, not wrapped as an option (a None elsewhere is still None: ITF has no null)."""
    if value is None:
        return NONE
    if isinstance(value, bool | str):
        return value
    if isinstance(value, int):
        return bigint(value)
    if isinstance(value, list):
        return [encode(item, (*where, "[]")) for item in value]
    return {key: encode(item, (*where, key)) for key, item in value.items()}


def world_values(world: World) -> dict[str, Any]:
    """The world's variables as ITF values (`second` is None while no second process lives)."""
    data = {"second": None, **world_json(world)}
    values: dict[str, Any] = {name: encode(data[name], (name,)) for name in WORLD_VARS}
    values["struck"] = {"#set": [encode(call) for call in data["struck"]]}
    keys = data["tracker"]["keys"]
    values["tracker"]["keys"] = {"#map": [[encode(k["key"]), encode(k["answer"])] for k in keys]}
    return values


def _state(index: int, world: World, path: dict[str, Any]) -> dict[str, Any]:
    return {"#meta": {"index": index}, **world_values(world), **path}


def trace(cx: Counterexample, *, program: Sequence[str] = PROGRAM) -> dict[str, Any]:
    """The ITF trace of `cx`: `#meta`, `vars` and one state per world, the initial one first."""
    command = replay_command(cx, program=program)
    what = f"counterexample to {cx.invariant}" if cx.invariant is not None else "replayed path"
    meta = {
        "format": "ITF",
        "format-description": FORMAT_DESCRIPTION,
        "source": f"crashsweep {cx.variant}",
        "description": f"{cx.variant}: {what} (job {cx.job}, tracker {cx.tracker}, depth {cx.depth}), "
        f"path {cx.code}: {cx.violation}",
        "crashsweep::variant": cx.variant,
        "crashsweep::invariant": cx.invariant,
        "crashsweep::violated": cx.violated,
        "crashsweep::path": cx.code,
        "crashsweep::replay": command,
    }
    start = {"mbt::actionTaken": INIT, "crashsweep::kind": INIT, "crashsweep::choice": bigint(0)}
    states = [_state(0, cx.initial, {**start, "crashsweep::point": NONE, "crashsweep::moves": bigint(0)})]
    for step in cx.steps:
        path = {
            "mbt::actionTaken": step.action,
            "crashsweep::kind": step.kind,
            "crashsweep::choice": bigint(step.choice),
            "crashsweep::point": NONE if step.point is None else some(step.point),
            "crashsweep::moves": bigint(step.crashes),
        }
        states.append(_state(step.index, step.state, path))
    return {"#meta": meta, "vars": list(VARS), "states": states}


def to_json(cx: Counterexample, *, program: Sequence[str] = PROGRAM) -> str:
    """The ITF trace as JSON text, indented, with a final newline."""
    return json.dumps(trace(cx, program=program), indent=2, ensure_ascii=False) + "\n"


def path_code(document: dict[str, Any]) -> str:
    """The path code an ITF trace of crashsweep's walks (from its states' choices), for `crashsweep replay --path`."""
    states = document["states"][1:]
    choices = [int(state["crashsweep::choice"]["#bigint"]) for state in states]
    turns = ",".join(f"{pos}={choice}" for pos, choice in enumerate(choices, start=1) if choice)
    return f"{len(states)}:{turns}"
