"""`crashsweep sweep --determinism`: does the program do the same thing twice from the same world?

A sweep takes a program that starts from the same disk and tracker state to pass the same
crash points and send the same effects: that is what lets a crash at a point stand for every
run that reaches it. A run ID taken from a clock, a cache, an interceptor that changes state
breaks this, and durable engines that replay history break on it hours later. The check
(crashsweep.realsweep.sweep.determinism) runs the program twice from each start world of a
depth-1 sweep and compares; this module prints its verdict, `deterministic`. A framework
whose engine replays its history (api.REPLAYING_FRAMEWORKS) has it checked by default before
its depth-1 sweep (`first`): a divergence is printed instead of the sweep, and the sweep's row
says the check held.
"""

from __future__ import annotations

import json
import shlex

from crashsweep.realsweep import api


def render(label: str, checked: int, divergence: api.Divergence | None, command: list[str], fmt: str) -> str:
    """The verdict; on a divergence, its start world, both runs' points and effects, and the command again."""
    again = shlex.join([*command, "--determinism"])
    if fmt == "json":
        data: dict[str, object] = {"target": label, "deterministic": divergence is None, "start_worlds": checked}
        if divergence is not None:
            data["divergence"] = {
                "start": [{"point": c.point, "occurrence": c.occurrence} for c in divergence.crashes],
                "first": {"points": list(divergence.first.points), "effects": list(divergence.first.effects)},
                "second": {"points": list(divergence.second.points), "effects": list(divergence.second.effects)},
            }
        return json.dumps(data, indent=2) + "\n"
    if divergence is None:
        return (
            f"{label}: deterministic holds ({checked} start worlds, each run twice: "
            "the same crash points and the same effects)\n"
        )
    lines = [f"{label}: deterministic VIOLATED from {_start(divergence.crashes)}"]
    for name, run in (("first run", divergence.first), ("second run", divergence.second)):
        lines.append(f"  {name}, crash points of its last process ({len(run.points)}):")
        lines += [f"    {n}. {point}" for n, point in enumerate(run.points, start=1)]
        lines.append(f"  {name}, effects at the tracker ({len(run.effects)}):")
        lines += [f"    {n}. {effect}" for n, effect in enumerate(run.effects, start=1)]
    lines.append(f"  re-run: {again}")
    return "\n".join(lines) + "\n"


def _start(crashes: tuple[api.Crash, ...]) -> str:
    """The start world in words."""
    if not crashes:
        return "the empty world (two uninterrupted runs)"
    crash = crashes[0]
    return f"the world a crash at '{crash.point}' (pass {crash.occurrence}) leaves"


def first(framework: str | None, depth: int, skip: bool, *other_jobs: object) -> bool:
    """Whether a sweep checks determinism before it sweeps: a replaying framework at depth 1.

    Not with --no-determinism (`skip`), nor beside --crash, --list-points or --determinism
    (`other_jobs`: any of them given), which run one job of their own.
    """
    return framework in api.REPLAYING_FRAMEWORKS and depth == 1 and not skip and not any(other_jobs)


def held_line(checked: int) -> str:
    """The row's line when the check before the sweep held."""
    return f"  deterministic holds   ({checked} start worlds, each run twice: the same crash points and effects)\n"
