"""A counterexample as a text trace (one line per step, a diff of each) and as JSON.

Text: a header (design, invariant, length, crashes, path code), the initial world, then one
line per step: its number, its action (CRASH, FAULT <kind> and RESTART stand out, and a rule
is drawn around each crash and fault), the crash point reached (or crashed at), and what
changed; the violation is stated at the end in words.

JSON (format "crashsweep-trace/1"; keys are stable, new keys may be added):
  format, variant, job, job_file (null for the built-in job), depth, tracker, with faults or
  fresh call IDs on: faults (the fault kinds enabled, a list) and call_ids ("stable" or "fresh"),
  invariant (null when the path violates nothing), invariant_kind ("always" or "at_end"),
  violated (bool), violation (words), path (the replay code), crashes, length (steps),
  replay (the command line), initial (a state), and steps[], each with
  index (from 1), kind ("step", "crash", "restart" or "fault"), action (its label: for a
  fault its kind, e.g. "lost-reply"), choice (its index
  among the enabled actions), point (for a crash the crash point it struck at, otherwise the
  crash point reached, null when the process exited or waits at a pause), crashes (moves so
  far: crashes and faults), counters (what the
  step incremented, e.g. model_calls), changes (the text diff, a list of strings) and state.
A state: checkpoint {file, tmp} (each null or a snapshot {run, done, turns[{index,
results[{call, answer}], marked[], approved[], failed[], complete}]}), lock {holder, tmp},
tracker {records[{number, call, run}], keys[{key, answer}]}, process (null or {point,
memory}), finished, runs, struck (calls whose one-time tool failure has happened), and, only
when a second process lives or a lease was taken (spec/FAULTS.md section 7), second {process
(null or {point, memory}), state ("paused" or "held"), token, other_token, fence}.

With a pause (spec/FAULTS.md section 7) the text trace has a column per lane of processes
(each crash point prefixed by its process, p1, p2, ...); the pause and the wake-up are ruled
off like a crash, and said in words. Their steps in JSON: a fault "pause", then a step with
action "wake" (and "held goes on" when the held process runs again).
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

from crashsweep.reports.counterexample import Counterexample, Step, moves_words
from crashsweep.reports.describe import changes, plural, world_json, world_text
from crashsweep.reports.lanes import HELD_GOES_ON, PAUSE, WAKE, Actor, actors, two_lanes
from crashsweep.reports.replay import PROGRAM, replay_command

FORMAT = "crashsweep-trace/1"
_RULE = "-" * 100
_TWO_PROCESS_ACTIONS = {WAKE: "WAKE", HELD_GOES_ON: "RESUME"}


def _action(step: Step) -> str:
    if step.action in _TWO_PROCESS_ACTIONS:
        return _TWO_PROCESS_ACTIONS[step.action]
    if step.kind == "crash":
        return "CRASH"
    if step.kind == "restart":
        return "RESTART"
    if step.kind == "fault":
        return f"FAULT {step.action}"
    if step.kind == "retry":
        return "RETRY"  # which layer, and on what, the step's words say (its label is long)
    return "" if step.action == "continue" else step.action


def _point(step: Step) -> str:
    stopped = step.kind == "fault" and step.state.process is None and not step.state.finished
    if step.kind == "crash" or stopped:
        return f"at {step.point}" if step.point else ""
    if step.point is None:
        return "(exited)" if step.state.finished else ""
    return step.point


def step_changes(step: Step) -> list[str]:
    """What `step` changed, item by item."""
    return changes(step.before, step.state, dict(step.counters))


def title(cx: Counterexample) -> str:
    """One line naming the design, the invariant and the scenario's size."""
    what = f"counterexample to {cx.invariant}" if cx.invariant is not None else "replayed path"
    environment = f", faults {','.join(cx.faults)}" if cx.faults else ""
    environment += ", fresh call IDs" if cx.fresh_ids else ""
    return (
        f"{cx.variant}: {what} (job {cx.job}, tracker {cx.tracker}, depth {cx.depth}{environment}): "
        f"{plural(len(cx.steps), 'step')}, {moves_words(cx)}, path {cx.code}"
    )


def conclusion(cx: Counterexample) -> str:
    """The last line: the violation in words, or that there is none."""
    if cx.violated:
        return f"VIOLATED {cx.invariant} after step {len(cx.steps)}: {cx.violation}"
    return f"no violation: {cx.violation}"


def text(cx: Counterexample, *, program: Sequence[str] = PROGRAM) -> str:
    """The text trace: header, initial world, one line per step, the violation in words.

    It ends with the replay commands, run by `program` (see crashsweep.reports.replay.replay_command).
    """
    if two_lanes(cx.steps):
        return _two_process_text(cx, program)
    width = max([len(_point(step)) for step in cx.steps] + [20])
    lines = [title(cx), f"initial: {world_text(cx.initial)}", ""]
    lines.append(f"{'step':>4}  {'action':<8} {'crash point':<{width}}  what changed")
    for step in cx.steps:
        said = [step.action, *step_changes(step)] if step.kind == "retry" else step_changes(step)
        row = f"{step.index:>4}  {_action(step):<8} {_point(step):<{width}}  {'; '.join(said)}"
        if step.kind in ("crash", "fault", "retry"):
            lines += [_RULE, row, _RULE]
        else:
            lines.append(row)
    lines += ["", conclusion(cx), f"replay: {replay_command(cx, program=program)}"]
    lines.append(f"pytest: {replay_command(cx, pytest=True, program=program)}")
    return "\n".join(line.rstrip() for line in lines) + "\n"


# --- Two live processes (spec/FAULTS.md section 6): one column per process ---


def _lane_note(step: Step, actor: Actor) -> str:
    """What a pause, a wake-up or a hand-back did to the two processes, in words."""
    if step.kind == "fault" and step.action == PAUSE:
        return f"process {actor.paused} PAUSED (alive, not running); process {actor.number} starts beside it"
    if step.kind == "retry" and actor.paused:
        return (
            f"{step.action}: process {actor.paused} TIMED OUT (alive, not running); "
            f"process {actor.number}, its retry, starts beside it"
        )
    if step.action == WAKE:
        held = f"; process {actor.held} held where it is" if actor.held else ""
        return f"process {actor.number} WAKES with its stale memory{held}"
    if step.action == HELD_GOES_ON:
        return f"process {actor.number} goes on from where it was held"
    if step.before.process is not None and step.state.process is None and not step.state.finished:
        return f"process {actor.number} stops" if step.kind != "crash" else ""
    return ""


def _two_process_text(cx: Counterexample, program: Sequence[str]) -> str:
    """The text trace with two lanes: each process's crash points in a column of their own."""
    who = actors(cx.steps)
    width = max([len(_point(step)) + 4 for step in cx.steps] + [20])
    lines = [title(cx), f"initial: {world_text(cx.initial)}", ""]
    lines.append(f"{'step':>4}  {'action':<11} {'lane 1':<{width}}  {'lane 2':<{width}}  what changed")
    for step, actor in zip(cx.steps, who, strict=True):
        cells = ["", ""]
        cells[actor.lane] = f"p{actor.number} {_point(step)}".rstrip() if actor.number else _point(step)
        said = [note for note in (_lane_note(step, actor),) if note] + step_changes(step)
        row = f"{step.index:>4}  {_action(step):<11} {cells[0]:<{width}}  {cells[1]:<{width}}  {'; '.join(said)}"
        lines += [_RULE, row, _RULE] if step.kind in ("crash", "fault", "retry") or step.action == WAKE else [row]
    lines += ["", conclusion(cx), f"replay: {replay_command(cx, program=program)}"]
    lines.append(f"pytest: {replay_command(cx, pytest=True, program=program)}")
    return "\n".join(line.rstrip() for line in lines) + "\n"


def _environment(cx: Counterexample) -> dict[str, Any]:
    """The keys faults and call_ids, present only when faults or fresh call IDs were on."""
    if not cx.faults and not cx.fresh_ids:
        return {}
    return {"faults": list(cx.faults), "call_ids": "fresh" if cx.fresh_ids else "stable"}


def to_dict(cx: Counterexample, *, program: Sequence[str] = PROGRAM) -> dict[str, Any]:
    """The counterexample as a JSON-ready object with the documented keys (`replay` run by `program`)."""
    return {
        "format": FORMAT,
        "variant": cx.variant,
        "job": cx.job,
        "job_file": cx.job_file,
        "depth": cx.depth,
        "tracker": cx.tracker,
        **_environment(cx),
        "invariant": cx.invariant,
        "invariant_kind": cx.invariant_kind,
        "violated": cx.violated,
        "violation": cx.violation,
        "path": cx.code,
        "crashes": cx.crashes,
        "length": len(cx.steps),
        "replay": replay_command(cx, program=program),
        "initial": world_json(cx.initial),
        "steps": [
            {
                "index": step.index,
                "kind": step.kind,
                "action": step.action,
                "choice": step.choice,
                "point": step.point,
                "crashes": step.crashes,
                "counters": dict(step.counters),
                "changes": step_changes(step),
                "state": world_json(step.state),
            }
            for step in cx.steps
        ],
    }


def to_json(cx: Counterexample, *, program: Sequence[str] = PROGRAM) -> str:
    """The JSON trace, indented, with a final newline."""
    return json.dumps(to_dict(cx, program=program), indent=2, ensure_ascii=False) + "\n"
