"""A counterexample as a sequence diagram in DOT: swim lanes, one message per row.

Lanes, left to right: the process, the model, the checkpoint file (and the lock file when the
design takes one), the tracker, and the person. Each row is one message between two lanes,
or a note on one lane; every message is numbered by the step it belongs to and labelled
with the crash point it reaches or the request it makes. A crash is a red note across the
process lane, a restart a blue one; the violation is stated in a red note at the bottom.
Labels that come from job files are escaped (see crashsweep.reports.dot.label).

Every label but the title is wrapped to WRAP characters a line and the lanes sit close, so
that seven lanes (two processes and a lock file: a pause) fit a page at the labels' own size;
a fault that pauses a process is drawn on that process's lane.
"""

from __future__ import annotations

import itertools
import textwrap
from dataclasses import dataclass

import graphviz

from crashsweep.reports.counterexample import Counterexample, Step
from crashsweep.reports.describe import ASKS, MODEL_CALLS, plural, snapshot_text
from crashsweep.reports.dot import FONT, label
from crashsweep.reports.lanes import HELD_GOES_ON, PAUSE, WAKE, actors, two_lanes
from crashsweep.spec.faults import FAULTS

PROCESS, MODEL, CHECKPOINT, LOCK, TRACKER, PERSON = "process", "model", "checkpoint", "lock", "tracker", "person"
SECOND = "second"
"""The second lane of processes, when two are alive at once (a pause, spec/FAULTS.md section 7)."""
TITLES = {
    PROCESS: "process",
    SECOND: "second process",
    MODEL: "model",
    CHECKPOINT: "checkpoint file",
    LOCK: "lock file",
    TRACKER: "tracker",
    PERSON: "person",
}
WRAP = 24
"""The longest line of a label (the title's excepted), in characters."""
_COLOURS = {"crash": "#d62728", "restart": "#1f77b4", "exit": "#2ca02c", "violation": "#d62728", "note": "#555555"}


@dataclass(frozen=True)
class Row:
    """One row: a message from `source` to `target`, or a note on `source` when target is None."""

    source: str
    target: str | None
    text: str
    style: str = "message"


def _uses_lock(cx: Counterexample) -> bool:
    return any((step.point or "").startswith("lock: ") for step in cx.steps)


def _asked_about(step: Step) -> str:
    memory = step.before.process.memory if step.before.process is not None else step.before.checkpoint.committed
    turn = memory.last if memory is not None else None
    if turn is not None:
        for call in turn.marked:
            if turn.result(call) is None:
                return call
    return "a call"


def _reached(step: Step, number: str) -> list[Row]:
    """The messages that lead to the crash point `step` reached."""
    point = step.point
    rows: list[Row] = []
    if step.counter(ASKS):
        call = _asked_about(step)
        sent = point is not None and point in (f"tracker accepted {call}", f"tool returned {call}")
        answer = "no: send it now" if sent else "yes: take its result"
        rows += [Row(PROCESS, PERSON, f"{number}did {call} happen?"), Row(PERSON, PROCESS, f"{number}{answer}")]
    if point is None:
        if step.state.finished:
            rows.append(Row(PROCESS, None, f"{number}exit: run done", "exit"))
        return rows
    if point.startswith("lock: "):
        return [*rows, Row(PROCESS, LOCK, f"{number}{point}")]
    if point.endswith((": tmp written", ": renamed")) or point.startswith(("marker saved ", "result saved ")):
        return [*rows, Row(PROCESS, CHECKPOINT, f"{number}{point}")]
    if point.startswith("retry reply arrived "):
        call = point.removeprefix("retry reply arrived ")
        asked = Row(PROCESS, MODEL, f"{number}tell the model {call} failed")
        return [*rows, asked, Row(MODEL, PROCESS, f"{number}{point}")]
    if point.endswith("arrived"):
        return [*rows, Row(PROCESS, MODEL, f"{number}call the model"), Row(MODEL, PROCESS, f"{number}{point}")]
    if point.startswith("approval requested "):
        return [*rows, Row(PROCESS, PERSON, f"{number}{point}")]
    if point.startswith("approved "):
        return [*rows, Row(PERSON, PROCESS, f"{number}{point}")]
    if point.startswith("tool failed "):
        return [*rows, Row(TRACKER, PROCESS, f"{number}{point}")]
    if point.startswith("tracker accepted "):
        call = point.removeprefix("tracker accepted ")
        old, new = step.before.tracker.records, step.state.tracker.records
        outcome = f"record #{len(new)}" if len(new) > len(old) else "key known: nothing applied"
        return [
            *rows,
            Row(PROCESS, TRACKER, f"{number}send {call}"),
            Row(TRACKER, None, f"{number}{point} ({outcome})", "note"),
        ]
    if point.startswith("tool returned "):
        call = point.removeprefix("tool returned ")
        if step.before.process is None or step.before.process.point != f"tracker accepted {call}":
            rows.append(Row(PROCESS, TRACKER, f"{number}send {call}"))
        return [*rows, Row(TRACKER, PROCESS, f"{number}{point}")]
    if point.startswith("lookup answered "):
        call = point.removeprefix("lookup answered ")
        return [*rows, Row(PROCESS, TRACKER, f"{number}did {call} happen?"), Row(TRACKER, PROCESS, f"{number}{point}")]
    return [*rows, Row(PROCESS, None, f"{number}{point}", "note")]


def rows(cx: Counterexample) -> list[Row]:
    """The diagram's rows, top to bottom."""
    if two_lanes(cx.steps):
        return _two_process_rows(cx)
    result: list[Row] = []
    for step in cx.steps:
        result += _step_rows(step)
    if cx.invariant is not None:
        verdict = f"{cx.invariant} VIOLATED: {cx.violation}" if cx.violated else cx.violation
        result.append(Row(TRACKER, None, verdict, "violation" if cx.violated else "note"))
    return result


def _fault(step: Step, lane: str) -> Row:
    """A fault's note on `lane`, as plain as a crash's."""
    return Row(lane, None, f"{step.index}. FAULT {step.action}: {FAULTS[step.action].summary}", "crash")


def _step_rows(step: Step, *, fault_note: bool = True) -> list[Row]:
    """The rows of one step, on the lane PROCESS (a fault's note on the tracker's, unless `fault_note` is off)."""
    result: list[Row] = []
    number = f"{step.index}. "
    if step.kind == "crash":
        return [Row(PROCESS, None, f"{number}CRASH at {step.point}: memory lost", "crash")]
    if step.kind == "fault" and fault_note:
        result.append(_fault(step, TRACKER))  # what the fault led to follows as usual
    if step.before.process is None or (step.kind == "fault" and step.action == PAUSE):
        result += _load_rows(step, number)
    if step.counter(MODEL_CALLS) and "arrived" not in (step.point or ""):
        result.append(Row(PROCESS, MODEL, f"{number}call the model"))
    return result + _reached(step, number)


def _load_rows(step: Step, number: str) -> list[Row]:
    """A (re)start: what it loads (a wake-up or a hand-back loads nothing)."""
    if step.action in (WAKE, HELD_GOES_ON):
        return []
    committed = step.before.checkpoint.committed
    if committed is None:
        loaded = "no checkpoint: new run"
    elif committed.done:
        loaded = "run done: exit at once"
    else:
        loaded = snapshot_text(committed)
    restarted = step.kind == "restart" or (step.kind == "fault" and step.action == PAUSE)
    restart = [Row(PROCESS, None, f"{number}RESTART", "restart")] if restarted else []
    return [*restart, Row(CHECKPOINT, PROCESS, f"{number}load: {loaded}")]


# --- Two live processes (spec/FAULTS.md section 6): a lane for each ---


def _two_process_rows(cx: Counterexample) -> list[Row]:
    """The rows with two process lanes: each step's rows on the lane of the process that acts in it."""
    result: list[Row] = []
    for step, actor in zip(cx.steps, actors(cx.steps), strict=True):
        lane = (PROCESS, SECOND)[actor.lane]
        number = f"{step.index}. "
        paused = step.kind == "fault" and step.action == PAUSE
        if paused:  # the fault's note on the lane of the process it pauses, then what became of it
            other = (PROCESS, SECOND)[1 - actor.lane]
            at = step.before.process.point if step.before.process is not None else "?"
            text = f"{number}PAUSED at {at}: alive, not running"
            result += [_fault(step, other), Row(other, None, text, "crash")]
        elif step.action == WAKE:
            text = f"{number}WAKES with its stale memory" + (" (the other is held)" if actor.held else "")
            result.append(Row(lane, None, text, "crash"))
        elif step.action == HELD_GOES_ON:
            result.append(Row(lane, None, f"{number}goes on from where it was held", "restart"))
        result += [_on(row, lane) for row in _step_rows(step, fault_note=not paused)]
        if step.kind == "step" and step.before.process is not None and _stopped(step):
            result.append(Row(lane, None, f"{number}stops (refused, fenced, or a failed rename)", "crash"))
    if cx.invariant is not None:
        verdict = f"{cx.invariant} VIOLATED: {cx.violation}" if cx.violated else cx.violation
        result.append(Row(TRACKER, None, verdict, "violation" if cx.violated else "note"))
    return result


def sequence_diagram(cx: Counterexample) -> str:
    """The DOT source of `cx`'s sequence diagram."""
    second = [SECOND] if two_lanes(cx.steps) else []
    lanes = [PROCESS, *second, MODEL, CHECKPOINT, *([LOCK] if _uses_lock(cx) else []), TRACKER, PERSON]
    order = {lane: i for i, lane in enumerate(lanes)}
    body = rows(cx)
    g = graphviz.Digraph("sequence")
    moves = plural(cx.crashes, "move" if second else "crash")
    title = f"{cx.variant}: {cx.invariant or 'replayed path'} (path {cx.code}, {moves})"
    g.attr(
        label=label(title),
        labelloc="t",
        fontname=FONT,
        fontsize="13",
        rankdir="TB",
        nodesep="0.3",
        ranksep="0.3",
        splines="line",
    )
    g.attr("node", fontname=FONT, fontsize="10")
    g.attr("edge", fontname=FONT, fontsize="10")
    with g.subgraph() as heads:
        heads.attr(rank="same")
        for lane in lanes:
            heads.node(
                f"{lane}_0", label(TITLES[lane]), shape="box", style="filled,rounded", fillcolor="#eeeeee", group=lane
            )
        for a, b in itertools.pairwise(lanes):
            heads.edge(f"{a}_0", f"{b}_0", style="invis")
    for number, row in enumerate(body, start=1):
        with g.subgraph() as line:
            line.attr(rank="same")
            for lane in lanes:
                if row.target is None and lane == row.source:
                    colour = _COLOURS.get(row.style, "#555555")
                    strong = row.style in ("crash", "restart", "violation")
                    line.node(
                        f"{lane}_{number}",
                        label(*wrapped(row.text)),
                        shape="box",
                        color=colour,
                        fontcolor=colour,
                        penwidth="2" if strong else "1",
                        style="filled" if strong else "solid",
                        fillcolor="#fff0f0" if row.style in ("crash", "violation") else "#f0f6ff",
                    )
                else:
                    line.node(f"{lane}_{number}", "", shape="point", width="0.02", color="#999999")
            if row.target is not None:
                left, right = sorted((row.source, row.target), key=order.__getitem__)
                line.edge(
                    f"{left}_{number}",
                    f"{right}_{number}",
                    label=label(*wrapped(row.text)),
                    dir="forward" if left == row.source else "back",
                    color="#333333",
                )
    for lane in lanes:
        for number in range(len(body)):
            g.edge(
                f"{lane}_{number}",
                f"{lane}_{number + 1}",
                arrowhead="none",
                color="#cccccc",
                style="dashed",
                weight="1000",
            )
    return str(g.source)


def wrapped(text: str) -> list[str]:
    """`text` in lines of at most WRAP characters, broken between words where it can be."""
    return textwrap.wrap(text, WRAP, break_on_hyphens=False) or [text]


def _on(row: Row, lane: str) -> Row:
    """`row` with the process lane replaced by `lane`."""
    source = lane if row.source == PROCESS else row.source
    target = lane if row.target == PROCESS else row.target
    return Row(source, target, row.text, row.style)


def _stopped(step: Step) -> bool:
    """The process stopped in this step without ending the run (no crash: the step went on)."""
    return step.state.process is None and not step.state.finished and step.point is None
