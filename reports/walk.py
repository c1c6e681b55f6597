"""A walk through the state graph on demand: the state a path code reaches, as the page of `view --serve` shows it.

Nothing is explored first: each request re-runs the model's own step function along the path
(`explorer.path.replay`), so a click costs the path's length, however large the state space,
and every state shown is a real run that `crashsweep replay --path CODE` reproduces. The view
of a state (`Walk.view`, a JSON-ready dict, the contract of the page in
crashsweep/reports/walk_page.py) holds its world, what the last step changed, the moves it
offers with why each is possible, each invariant's status there, and the path so far as
swim lanes (the rows of the counterexample's sequence diagram, crashsweep.reports.sequence)
and as a trace whose every step is a path code of its own.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, TypedDict

from crashsweep.explorer.model import Action, Model, Property
from crashsweep.explorer.path import Path, decode_path, replay
from crashsweep.explorer.search import enabled
from crashsweep.reports.counterexample import Counterexample, explain, from_path
from crashsweep.reports.describe import changes, world_json
from crashsweep.reports.replay import PROGRAM, replay_command
from crashsweep.reports.sequence import CHECKPOINT, LOCK, MODEL, PERSON, PROCESS, SECOND, TITLES, TRACKER, rows
from crashsweep.spec.faults import FAULTS
from crashsweep.spec.world import World

__all__ = ["Setting", "Walk", "child_code", "parent_code"]

_NUMBERED = re.compile(r"^(\d+)\. ")
_LANES = (PROCESS, SECOND, MODEL, CHECKPOINT, LOCK, TRACKER, PERSON)
_ALWAYS_SHOWN = frozenset({PROCESS, MODEL, CHECKPOINT, TRACKER, PERSON})


class Names(TypedDict):
    """The keywords that name a counterexample (`from_path`, `shortest`), as a Setting holds them."""

    variant: str
    job: str
    job_file: str | None
    tracker: str
    design_file: str | None
    upgrade: str | None


@dataclass(frozen=True, slots=True)
class Setting:
    """What the walk is of, as `replay` names it: design, job, tracker, depth and the files they came from."""

    variant: str
    job: str
    tracker: str
    depth: int
    job_file: str | None = None
    design_file: str | None = None
    upgrade: str | None = None
    program: tuple[str, ...] = PROGRAM

    def names(self) -> Names:
        """What a counterexample is named by (`from_path`'s and `shortest`'s keywords): design, job, tracker, files."""
        return {
            "variant": self.variant,
            "job": self.job,
            "job_file": self.job_file,
            "tracker": self.tracker,
            "design_file": self.design_file,
            "upgrade": self.upgrade,
        }


WhyNot = Callable[[Model[World], int, str, str], str]
"""(model, depth, code, message) -> the message a code that does not fit is refused with."""


def child_code(code: str, choice: int) -> str:
    """The path code of taking `choice` after the path `code` (whose code is valid)."""
    length, choices = decode_path(code)
    taken = {**choices, length + 1: choice} if choice else choices
    return _encode(length + 1, taken)


def parent_code(code: str) -> str | None:
    """The path code one step shorter than `code` (None for the start)."""
    length, choices = decode_path(code)
    if length == 0:
        return None
    return _encode(length - 1, {pos: choice for pos, choice in choices.items() if pos < length})


def _encode(length: int, choices: dict[int, int]) -> str:
    return f"{length}:" + ",".join(f"{pos}={choice}" for pos, choice in sorted(choices.items()) if choice)


class Walk:
    """The states of one model at one depth, each computed when asked for by its path code."""

    def __init__(self, model: Model[World], setting: Setting, why_not: WhyNot | None = None) -> None:
        self.model, self.setting, self.why_not = model, setting, why_not

    def path(self, code: str) -> Path[World]:
        """The path `code` names; ValueError (its message one line for the user) when it does not fit.

        `why_not` (the replay command's `explained`) may say more of a code that does not fit:
        what the step it leaves the model at offers.
        """
        try:
            return replay(self.model, self.setting.depth, code.strip())
        except ValueError as error:
            if self.why_not is None:
                raise
            raise ValueError(self.why_not(self.model, self.setting.depth, code.strip(), str(error))) from None

    def view(self, code: str) -> dict[str, Any]:
        """The view of the state path `code` reaches (ValueError as `path`)."""
        path = self.path(code)
        s = self.setting
        cx = from_path(self.model, path, depth=s.depth, **s.names())
        end, crashes = path.end, path.crashes
        finished = self.model.is_finished(end)
        actions = [] if finished else enabled(self.model, end, crashes, s.depth)
        world = world_json(end)
        before = world_json(path.steps[-2].state) if len(path.steps) > 1 else None
        seen = _witnesses_seen(self.model, path)
        return {
            "code": path.code,
            "parent": parent_code(path.code),
            "step": len(path.steps) - 1,
            "crashes": crashes,
            "depth": s.depth,
            "design": s.variant,
            "job": s.job,
            "tracker": s.tracker,
            "finished": finished,
            "stuck": not actions and not finished,
            "point": self.model.crash_point(end),
            "world": world,
            "changed": [] if before is None else _changed(cx),
            "changed_paths": [] if before is None else differing(before, world),
            "moves": [self._move(path, action, choice) for choice, action in enumerate(actions)],
            "invariants": [_status(prop, self.model, end, seen) for prop in self.model.properties],
            "lanes": lanes(cx),
            "trace": [
                {"index": step.index, "kind": step.kind, "action": step.action, "point": step.point, "code": code}
                for step, code in zip(cx.steps, _prefix_codes(path), strict=True)
            ],
            "replay": replay_command(cx, program=s.program),
        }

    def _move(self, path: Path[World], action: Action, choice: int) -> dict[str, Any]:
        """One move the path's end offers: its kind, label, why it is possible, and its path code."""
        return {
            "choice": choice,
            "kind": action.kind,
            "label": action.label,
            "why": self._why(path, action),
            "code": child_code(path.code, choice),
        }

    def _why(self, path: Path[World], action: Action) -> str:
        """Why `action` is possible at the path's end, in words."""
        left = self.setting.depth - path.crashes
        budget = f"{left} of {self.setting.depth} moves left"
        point = self.model.crash_point(path.end)
        if action.kind == "crash":
            return f"the process is at crash point {point!r}; {budget}"
        if action.kind == "fault":
            kind = FAULTS.get(action.label)
            if kind is None:
                return f"fault {action.label}; {budget}"
            when = (kind.enabled.__doc__ or "").strip().split("\n", 1)[0].rstrip(".")  # where it is enabled
            said = [f"fault {action.label}: {kind.summary}", *([f"possible here: {when}"] if when else []), budget]
            return "; ".join(said)
        if action.kind == "retry":
            return f"a retry layer gives up on this attempt and begins another; {budget}"
        if action.kind == "restart":
            return "no process is running: a new one starts from the checkpoint"
        after, _ = self.model.step(path.end, action)
        reached = self.model.crash_point(after)
        if reached is not None:
            return f"the run's own next step, to {reached!r}"
        return "the run's own next step" + (": it ends the run" if self.model.is_finished(after) else "")


def _changed(cx: Counterexample) -> list[str]:
    """What the path's last step changed, in words (the trace's lines for it)."""
    step = cx.steps[-1]
    return changes(step.before, step.state, dict(step.counters))


def differing(old: Any, new: Any, prefix: str = "") -> list[str]:
    """The dotted paths into two JSON values where they differ (a list or a leaf as a whole)."""
    if isinstance(old, dict) and isinstance(new, dict):
        found: list[str] = []
        for key in [*new, *(k for k in old if k not in new)]:
            if old.get(key) != new.get(key):
                found += differing(old.get(key), new.get(key), f"{prefix}{key}.")
        return found
    return [] if old == new else [prefix.rstrip(".")]


def _witnesses_seen(model: Model[World], path: Path[World]) -> dict[str, bool]:
    """Each witness (`sometimes` property): whether some state of `path` satisfies it."""
    witnesses = [p for p in model.properties if p.kind == "sometimes"]
    return {p.name: any(p.check(step.state) for step in path.steps) for p in witnesses}


def _status(prop: Property[Any], model: Model[World], end: World, seen: dict[str, bool]) -> dict[str, str]:
    """An invariant's status at the path's `end`: holds, violated, or not yet exercised (its witness unseen).

    A witness (`sometimes`) holds once some state of the path satisfies it (`seen`). An
    invariant checked at the end only, in a state that has not finished, is not yet exercised;
    so is one that holds while its witness has not been seen on the path (nothing it guards has
    happened).
    """
    status, detail = "holds", ""
    if prop.kind == "sometimes":
        status = "holds" if seen[prop.name] else "not yet exercised"
        detail = "seen on this path" if seen[prop.name] else "not seen on this path yet"
    elif prop.kind == "at_end" and not model.is_finished(end):
        status, detail = "not yet exercised", "checked when the run finishes"
    elif not prop.check(end):
        status, detail = "violated", explain(prop, end)
    elif prop.witness is not None and not seen.get(prop.witness, True):
        status, detail = "not yet exercised", f"its witness {prop.witness!r} is not seen on this path yet"
    return {"name": prop.name, "kind": prop.kind, "status": status, "detail": detail}


def lanes(cx: Counterexample) -> dict[str, Any]:
    """The path as swim lanes: the lanes used, their titles, and one row per message or note."""
    found = rows(cx)
    used = {row.source for row in found} | {row.target for row in found if row.target is not None}
    shown = [lane for lane in _LANES if lane in used or lane in _ALWAYS_SHOWN]
    return {
        "lanes": shown,
        "titles": {lane: TITLES[lane] for lane in shown},
        "rows": [
            {
                "step": int(match.group(1)) if (match := _NUMBERED.match(row.text)) else None,
                "source": row.source,
                "target": row.target,
                "text": row.text,
                "style": row.style,
            }
            for row in found
        ],
    }


def _prefix_codes(path: Path[World]) -> Sequence[str]:
    """The path code of each step's state along `path` (its first step's to its end's)."""
    codes, choices = [], {}
    for pos, step in enumerate(path.steps[1:], start=1):
        if step.choice:
            choices[pos] = step.choice
        codes.append(_encode(pos, choices))
    return codes
