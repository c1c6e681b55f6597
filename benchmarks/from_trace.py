"""Benchmark: `crashsweep from-trace` of one recorded run, time against the spans' count.

Writes an OTLP JSON trace (spec/FROM_TRACE.md) of one uninterrupted run of about N spans for
each N of --spans, shaped as the reference loop records one under $CRASHSWEEP_OTLP: a start
save, then turns of two calls (the model's reply, a reply save, each call's tool span and
result save, the turn's save; every save passing two crash points), then the final answer and
its save; 7 spans a turn, in batches of 64 spans a line, as the SDK's exporter writes. Each file
is derived by the CLI as a user runs it (`crashsweep from-trace FILE --out DIR`), in a process
of its own: wall seconds and CPU seconds (the child's user and system time). The end says
whether N = 500 took under 3 s, the issue's bound, and, for each N after the first, the time's
ratio to the one before against the spans' ratio.

    .venv/bin/python benchmarks/from_trace.py [--spans 500,5000]

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

TARGET_SPANS = 500
TARGET_SECONDS = 3.0
TRACE = "ab" * 16
PER_TURN = 7


def _attrs(**values: object) -> list[dict[str, object]]:
    return [{"key": k.replace("__", "."), "value": {"stringValue": str(v)}} for k, v in values.items()]


class _Spans:
    """Spans of one run, numbered and timed in the order made."""

    def __init__(self) -> None:
        self.count, self.clock = itertools.count(1), itertools.count(1_000_000, 1_000)

    def span(self, name: str, attributes: list[dict[str, object]], points: tuple[str, ...] = ()) -> dict[str, object]:
        start = next(self.clock)
        events = [
            {"name": "crashsweep.point", "timeUnixNano": str(next(self.clock)),
             "attributes": [{"key": "crashsweep.point.name", "value": {"stringValue": p}}]}
            for p in points
        ]  # fmt: skip
        number = next(self.count)
        return {"traceId": TRACE, "spanId": f"{number:016x}", "parentSpanId": f"{1:016x}" if number > 1 else "",
                "name": name, "startTimeUnixNano": str(start), "endTimeUnixNano": str(next(self.clock)),
                "attributes": attributes, "events": events}  # fmt: skip

    def save(self, what: str) -> dict[str, object]:
        return self.span(f"save {what}", _attrs(crashsweep__save=what), (f"{what}: tmp written", f"{what}: renamed"))

    def reply(self, calls: list[str]) -> dict[str, object]:
        parts = [{"type": "tool_call", "id": c, "name": "create_issue", "arguments": {"title": f"issue {c}"}}
                 for c in calls] or [{"type": "text", "content": "done"}]  # fmt: skip
        output = json.dumps([{"role": "assistant", "parts": parts}])
        return self.span("chat scripted", _attrs(gen_ai__operation__name="chat", gen_ai__output__messages=output))

    def tool(self, call: str) -> dict[str, object]:
        return self.span("execute_tool create_issue", _attrs(
            gen_ai__operation__name="execute_tool", gen_ai__tool__name="create_issue", gen_ai__tool__call__id=call,
            gen_ai__tool__call__arguments=json.dumps({"title": f"issue {call}"}), gen_ai__tool__call__result="filed",
        ))  # fmt: skip


def spans(turns: int) -> Iterator[dict[str, object]]:
    """The run's spans: the agent span, the start save, the turns, the final answer and its save."""
    made = _Spans()
    yield made.span("invoke_agent loop", _attrs(gen_ai__operation__name="invoke_agent", gen_ai__conversation__id="r"))
    yield made.save("start")
    for turn in range(1, turns + 1):
        calls = [f"c{turn}a", f"c{turn}b"]
        yield made.reply(calls)
        yield made.save(f"reply {turn}")
        for call in calls:
            yield made.tool(call)
            yield made.save(f"result {call}")
        yield made.save(f"turn {turn}")
    yield made.reply([])
    yield made.save("final")


def write(path: Path, turns: int) -> int:
    """The trace at `path`, 64 spans a line; the number of spans."""
    made = list(spans(turns))
    with path.open("w", encoding="utf-8") as handle:
        for start in range(0, len(made), 64):
            batch = made[start : start + 64]
            handle.write(json.dumps({"resourceSpans": [{"scopeSpans": [{"spans": batch}]}]}) + "\n")
    return len(made)


def derive(path: Path, out: Path) -> tuple[float, float]:
    """(wall seconds, CPU seconds) of `crashsweep from-trace` on `path`, in a process of its own."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    started = time.monotonic()
    done = subprocess.run([sys.executable, "-m", "crashsweep", "from-trace", str(path), "--out", str(out)],
                          capture_output=True, text=True, check=False)  # fmt: skip
    wall = time.monotonic() - started
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if done.returncode != 0:
        sys.exit(f"from-trace failed: {done.stderr.strip()}")
    return wall, (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def main(argv: list[str] | None = None) -> int:
    """Derive a trace of each size; print the figures and whether the bound holds."""
    parser = argparse.ArgumentParser(prog="benchmarks/from_trace.py")
    parser.add_argument("--spans", default=f"{TARGET_SPANS},5000", help="comma-separated span counts")
    args = parser.parse_args(argv)
    try:
        sizes = [int(n) for n in args.spans.split(",")]
    except ValueError:
        parser.error(f"--spans {args.spans!r}: expected comma-separated whole numbers")
    if not sizes or min(sizes) < PER_TURN * 2:
        parser.error(f"--spans: each at least {PER_TURN * 2}")
    rows: list[tuple[int, float, float]] = []
    with tempfile.TemporaryDirectory() as folder:
        for n in sizes:
            path = Path(folder) / f"run-{n}.jsonl"
            count = write(path, max(1, -(-(n - 4) // PER_TURN)))  # at least n spans
            wall, cpu = derive(path, Path(folder) / f"out-{n}")
            rows.append((count, wall, cpu))
            print(f"{count:>7} spans  {wall:6.2f} s wall  {cpu:6.2f} s CPU")
    for (n0, w0, _), (n1, w1, _) in itertools.pairwise(rows):
        print(f"{n0} -> {n1} spans: time x{w1 / w0:.2f} for spans x{n1 / n0:.2f}")
    at_target = [wall for count, wall, _ in rows if count >= TARGET_SPANS]
    if at_target:
        verdict = "met" if at_target[0] < TARGET_SECONDS else "NOT met"
        print(f"target: {TARGET_SPANS} spans in under {TARGET_SECONDS:.0f} s: {verdict}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
