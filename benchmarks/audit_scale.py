"""Benchmark: `crashsweep audit` of large recorded histories, time and memory against the events' count.

Writes a History JSONL (spec/HISTORY.md 2) of about N events for each N of --events: runs of
100 events each (a conversation of tool calls and results, the tool attempts, the receiver's
effects, the run's status), where every tenth run applied one write twice after a crash (its
attempt left of unknown outcome), so the audit has duplicates and unknown outcomes to find in
every tenth run, like a production trace. Each file is audited by the installed CLI as a user
runs it (`crashsweep audit FILE --format json`, its output counted, not kept), in a process of
its own: wall seconds, and its peak memory (the child's maximum resident set). The end says
whether N = 1,000,000 took at most 30 s and 2 GB, and, for each N after the first, the time's
ratio to the one before against the events' ratio (at most 1.2 times it: linear, not worse).

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

EVENTS_PER_RUN = 100
TARGET_EVENTS = 1_000_000
TARGET_SECONDS = 30.0
TARGET_BYTES = 2 * 1024**3
SLACK = 1.2
"""Time may grow at most this much faster than the events (ten times the events: at most twelve times the time)."""


def run_events(run: int) -> Iterator[dict[str, object]]:
    """The events of one run, 100 of them: 16 tool turns of 6 events, an effect each write, its status."""
    name = f"run-{run:07d}"
    doubled = run % 10 == 0
    turn = 0
    count = 0
    while count < EVENTS_PER_RUN - 1:
        call = f"call-{turn}"
        incarnation = 1 if doubled and turn > 0 else 0
        for event in (
            {"type": "invoke", "f": "model_call"},
            {"type": "invoke", "f": "tool_call", "call_id": call, "tool": "create_issue", "args_digest": f"d{turn}"},
            {"type": "invoke", "f": "tool_run", "call_id": call, "tool": "create_issue", "args_digest": f"d{turn}"},
            {"type": "ok", "f": "effect", "call": call, "effect_id": f"#{run}.{turn}", "src": "ledger"},
            {"type": "ok", "f": "tool_run", "call_id": call},
            {"type": "ok", "f": "result_saved", "call_id": call},
        )[: EVENTS_PER_RUN - 1 - count]:
            yield {"run": name, "incarnation": incarnation, **event}
            count += 1
        if doubled and turn == 0:  # the crash: the first attempt's outcome is unknown, the retry applies it again
            yield {"run": name, "incarnation": 1, "type": "ok", "f": "effect", "call": call, "effect_id": f"#{run}.x"}
            count += 1
        turn += 1
    yield {"run": name, "incarnation": 1 if doubled else 0, "type": "ok", "f": "run_status", "status": "finished"}


def write(path: Path, events: int) -> int:
    """A History JSONL of about `events` events (whole runs); the number written."""
    header = {"crashsweep_history": 1, "expected": [], "gated": [], "facts": ["effects", "status", "transcript"]}
    written = 0
    with path.open("w", encoding="utf-8") as file:
        file.write(json.dumps(header) + "\n")
        for run in range(max(1, events // EVENTS_PER_RUN)):
            for event in run_events(run):
                written += 1
                file.write(json.dumps({"v": 1, "seq": written, **event}) + "\n")
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
            f"target: {n1 / n0:.0f}x the events in at most {allowed:.0f}x the time: {ratio:.1f}x, "
            f"{'met' if ratio <= allowed else 'NOT met'}"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
