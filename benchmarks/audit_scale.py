"""Benchmark: `crashsweep audit` of large recorded histories, time and memory against the events' count.

Writes a History JSONL (spec/HISTORY.md 2) of about N events for each N of --events: runs of
about 100 events each (16 tool turns: a conversation of tool calls and results, the tool
attempts, the receiver's effects; then the run's status), where every tenth run applied one
write twice after a crash (its first attempt left of unknown outcome), so the audit has
duplicates and unknown outcomes to find in every tenth run, like a production trace. Each file
is audited by the installed CLI as a user runs it (`crashsweep audit FILE --format json`, its
output counted, not kept), in a process of its own: wall seconds, and its peak memory (the
child's maximum resident set). The end says whether N = 1,000,000 took at most 30 s and 2 GB,
and, for each N after the first, the time's ratio to the one before against the events' ratio
(at most 1.2 times it: linear, not worse).

    .venv/bin/python benchmarks/audit_scale.py [--events 100000,1000000] [--keep DIR]

Figures depend on the machine and its load: run it on a quiet machine, and once.
"""

from __future__ import annotations

import argparse
import itertools
import json
import resource
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

TURNS = 16
TOOL = "create_issue"
TARGET_EVENTS = 1_000_000
TARGET_SECONDS = 30.0
TARGET_BYTES = 2 * 1024**3
SLACK = 1.2
"""Time may grow at most this much faster than the events (ten times the events: at most twelve times the time)."""


def turn_events(turn: int, incarnation: int) -> list[dict[str, object]]:
    """One tool turn as it begins: the model call, its tool call, the tool's attempt and the receiver's effect."""
    call, digest = f"call-{turn}", f"d{turn}"
    return [
        {"incarnation": incarnation, "type": "invoke", "f": "model_call"},
        {
            "incarnation": incarnation,
            "type": "invoke",
            "f": "tool_call",
            "call_id": call,
            "tool": TOOL,
            "args_digest": digest,
        },
        {
            "incarnation": incarnation,
            "type": "invoke",
            "f": "tool_run",
            "call_id": call,
            "tool": TOOL,
            "args_digest": digest,
        },
        {"incarnation": incarnation, "type": "ok", "f": "effect", "call": call, "effect_id": f"#{turn}.{incarnation}"},
    ]


def run_events(run: int) -> Iterator[dict[str, object]]:
    """The events of one run: TURNS tool turns of 6 events and its status (97); a doubled run 4 more (101).

    A doubled run (every tenth) dies in its first turn after the receiver applied the write and
    before the tool returned; its restart (incarnation 1) asks again and applies it again.
    """
    name, doubled = f"run-{run:07d}", run % 10 == 0
    incarnation = 0
    for turn in range(TURNS):
        events = turn_events(turn, incarnation)
        if doubled and turn == 0:
            incarnation = 1
            events += turn_events(turn, incarnation)[:4]
        call = f"call-{turn}"
        events += [
            {"incarnation": incarnation, "type": "ok", "f": "tool_run", "call_id": call},
            {"incarnation": incarnation, "type": "ok", "f": "result_saved", "call_id": call},
        ]
        yield from ({"run": name, **event} for event in events)
    yield {"run": name, "incarnation": incarnation, "type": "ok", "f": "run_status", "status": "finished"}


def write(path: Path, events: int) -> int:
    """A History JSONL of whole runs, until it holds `events` events or more; the number written."""
    header = {"crashsweep_history": 1, "expected": [], "gated": [], "facts": ["effects", "status", "transcript"]}
    written = 0
    with path.open("w", encoding="utf-8") as file:
        file.write(json.dumps(header) + "\n")
        run = 0
        while written < events:
            for event in run_events(run):
                written += 1
                file.write(json.dumps({"v": 1, "seq": written, **event}) + "\n")
            run += 1
    return written


def audit(path: Path) -> tuple[float, int, int]:
    """Wall seconds, the child's peak memory in bytes, and the exit status of `crashsweep audit FILE`."""
    program = Path(sys.executable).parent / "crashsweep"
    before = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
    start = time.perf_counter()
    done = subprocess.run(
        [str(program), "audit", str(path), "--format", "json"], stdout=subprocess.DEVNULL, check=False
    )
    seconds = time.perf_counter() - start
    peak = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
    return seconds, max(peak, before) * 1024, done.returncode


def main(argv: list[str] | None = None) -> int:
    """Write and audit each size; print the figures and the targets."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--events", default="100000,1000000", help="comma-separated event counts")
    parser.add_argument("--keep", type=Path, help="write the histories here instead of a temporary folder")
    args = parser.parse_args(argv)
    try:
        sizes = [int(n) for n in args.events.split(",")]
    except ValueError:
        parser.error(f"--events {args.events!r}: expected whole numbers separated by commas")
    folder = args.keep or Path(tempfile.mkdtemp(prefix="audit-scale-"))
    folder.mkdir(parents=True, exist_ok=True)
    rows: list[tuple[int, float, int]] = []
    print(f"{'events':>10}  {'seconds':>8}  {'peak MB':>8}  exit")
    for size in sizes:
        path = folder / f"history-{size}.jsonl"
        events = write(path, size)
        seconds, peak, status = audit(path)
        rows.append((events, seconds, peak))
        print(f"{events:>10,}  {seconds:>8.1f}  {peak / 1024**2:>8.0f}  {status}")
        if not args.keep:
            path.unlink()
    for events, seconds, peak in rows:
        if events == TARGET_EVENTS:
            met = seconds <= TARGET_SECONDS and peak <= TARGET_BYTES
            print(f"target: {events:,} events in at most 30 s and 2 GB: {'met' if met else 'NOT met'}")
    for (n0, s0, _), (n1, s1, _) in itertools.pairwise(rows):
        ratio, allowed = s1 / s0, SLACK * n1 / n0
        print(
            f"target: {n1 / n0:.1f}x the events in at most {allowed:.1f}x the time: {ratio:.1f}x, "
            f"{'met' if ratio <= allowed else 'NOT met'}"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
