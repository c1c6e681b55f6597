"""A crash point does nothing in a normal run and, under a sweep, really kills the process."""

from __future__ import annotations

import sys
import textwrap
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from opentelemetry import trace
from opentelemetry.sdk.trace import SpanProcessor, TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

from crashsweep.realsweep.probe import crashpoint
from tests.realsweep.helpers import run_python

KILLED = (-9, crashpoint.KILLED_STATUS)


def test_without_a_sweep_a_crash_point_does_nothing(monkeypatch: pytest.MonkeyPatch) -> None:
    """No CRASHSWEEP_POINTS_LOG: the call returns and counts nothing."""
    monkeypatch.delenv(crashpoint.POINTS_LOG, raising=False)
    monkeypatch.delenv(crashpoint.COUNTERS_LOG, raising=False)
    crashpoint.reset()
    crashpoint.crashpoint("anything")
    crashpoint.count("model_calls")
    assert crashpoint.passed() == 0


def test_each_point_is_logged_and_the_process_dies_at_the_chosen_one(tmp_path: Path) -> None:
    """With CRASH_AT=2 the second point is logged, then the process is killed by SIGKILL."""
    code = textwrap.dedent(
        """
        from crashsweep.realsweep.probe.crashpoint import crashpoint, count
        count("model_calls")
        crashpoint("one")
        count("asks", 2)
        crashpoint("two")
        crashpoint("three")
        print("not reached")
        """
    )
    log = tmp_path / "points.log"
    counters = tmp_path / "counters.log"
    done = run_python(
        code,
        tmp_path,
        CRASHSWEEP_POINTS_LOG=str(log),
        CRASHSWEEP_CRASH_AT="2",
        CRASHSWEEP_COUNTERS_LOG=str(counters),
    )
    assert done.returncode in KILLED
    assert log.read_text().splitlines() == ["one", "two"]
    assert counters.read_text().splitlines() == ["model_calls", "asks", "asks"]
    assert "not reached" not in done.stdout


def test_a_crash_inside_try_finally_runs_no_finally_no_atexit_and_flushes_nothing(tmp_path: Path) -> None:
    """The crash is a real death: the finally block, the atexit handler and buffered output never run."""
    code = textwrap.dedent(
        """
        import atexit, sys
        from pathlib import Path
        from crashsweep.realsweep.probe.crashpoint import crashpoint
        atexit.register(lambda: Path("atexit-ran").write_text("yes"))
        sys.stdout.write("buffered, never flushed")
        handle = open("buffered.txt", "w")
        handle.write("in a Python buffer")
        try:
            crashpoint("inside try")
        finally:
            Path("finally-ran").write_text("yes")
        """
    )
    done = run_python(code, tmp_path, CRASHSWEEP_POINTS_LOG=str(tmp_path / "p.log"), CRASHSWEEP_CRASH_AT="1")
    assert done.returncode in KILLED
    assert not (tmp_path / "finally-ran").exists()
    assert not (tmp_path / "atexit-ran").exists()
    assert (tmp_path / "buffered.txt").read_text() == ""
    assert done.stdout == ""


def test_the_listing_run_passes_every_point(tmp_path: Path) -> None:
    """CRASH_AT unset: every point is logged and the process ends normally."""
    log = tmp_path / "points.log"
    code = "from crashsweep.realsweep.probe.crashpoint import crashpoint\nfor n in range(3): crashpoint(f'p{n}')"
    done = run_python(code, tmp_path, CRASHSWEEP_POINTS_LOG=str(log))
    assert done.returncode == 0
    assert log.read_text().splitlines() == ["p0", "p1", "p2"]


def test_a_log_is_kept_open_reopened_for_another_file_and_closed_by_reset(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """One descriptor per log for the process's life; a variable naming another file gets its lines."""
    monkeypatch.delenv(crashpoint.CRASH_AT, raising=False)
    first, second = tmp_path / "first.log", tmp_path / "second.log"
    monkeypatch.setenv(crashpoint.POINTS_LOG, str(first))
    crashpoint.reset()
    crashpoint.crashpoint("a")
    crashpoint.crashpoint("b")
    assert list(crashpoint._logs) == [str(first)]
    monkeypatch.setenv(crashpoint.POINTS_LOG, str(second))
    crashpoint.crashpoint("c")
    assert first.read_text().splitlines() == ["a", "b"]
    assert second.read_text().splitlines() == ["c"]
    crashpoint.reset()
    assert crashpoint._logs == {}
    first.unlink()  # a new file of the same name gets the next line, not the removed one
    monkeypatch.setenv(crashpoint.POINTS_LOG, str(first))
    crashpoint.crashpoint("d")
    assert first.read_text().splitlines() == ["d"]
    crashpoint.reset()


@pytest.mark.parametrize("name", ["", "  ", "two\nlines"])
def test_a_name_is_one_non_empty_line(monkeypatch: pytest.MonkeyPatch, tmp_path: Path, name: str) -> None:
    """Names are lines of the log, so they cannot be empty or hold a newline."""
    monkeypatch.setenv(crashpoint.POINTS_LOG, str(tmp_path / "p.log"))
    monkeypatch.delenv(crashpoint.CRASH_AT, raising=False)
    crashpoint.reset()
    with pytest.raises(ValueError, match="one non-empty line"):
        crashpoint.crashpoint(name)


@pytest.mark.parametrize("raw", ["x", "-1"])
def test_a_bad_crash_index_is_refused(monkeypatch: pytest.MonkeyPatch, raw: str) -> None:
    """CRASHSWEEP_CRASH_AT must be a whole number, 0 or more."""
    monkeypatch.setenv(crashpoint.CRASH_AT, raw)
    with pytest.raises(ValueError, match="CRASHSWEEP_CRASH_AT"):
        crashpoint.crash_at()


def test_a_point_named_with_its_occurrence_is_the_one_to_die_at(tmp_path: Path) -> None:
    """CRASH_AT=2:b: the process passes a, b, a and dies at the second b, the fifth point in all."""
    code = "from crashsweep.realsweep.probe.crashpoint import crashpoint\nfor name in 'abab': crashpoint(name)\ncrashpoint('b')\n"  # noqa: E501
    log = tmp_path / "p.log"
    done = run_python(code, tmp_path, CRASHSWEEP_POINTS_LOG=str(log), CRASHSWEEP_CRASH_AT="2:b")
    assert done.returncode in (-9, 137)
    assert log.read_text().splitlines() == ["a", "b", "a", "b"]


def test_a_kill_from_another_thread_ends_the_process_and_nothing_is_logged_after_it(tmp_path: Path) -> None:
    """Four threads pass points t0..t3 twenty times each; at the 5th pass of t2 the whole process dies.

    The chosen point is the log's last line: no other thread logs a point between it and the kill.
    """
    code = (
        "import threading, time\nfrom crashsweep.realsweep.probe.crashpoint import crashpoint\n"
        "def work(i):\n    for _ in range(20):\n        crashpoint(f't{i}')\n"
        "threads = [threading.Thread(target=work, args=(i,)) for i in range(4)]\n"
        "[t.start() for t in threads]\n[t.join() for t in threads]\nprint('survived')\n"
    )
    log = tmp_path / "p.log"
    done = run_python(code, tmp_path, CRASHSWEEP_POINTS_LOG=str(log), CRASHSWEEP_CRASH_AT="5:t2")
    lines = log.read_text().splitlines()
    assert done.returncode in (-9, 137)
    assert "survived" not in done.stdout
    assert lines[-1] == "t2"
    assert lines.count("t2") == 5


@pytest.mark.parametrize("raw", ["0:a", "x:a", "2:"])
def test_a_bad_named_crash_point_is_refused(monkeypatch: pytest.MonkeyPatch, raw: str) -> None:
    """N:NAME needs N from 1 and a name."""
    monkeypatch.setenv(crashpoint.CRASH_AT, raw)
    with pytest.raises(ValueError, match="N:NAME"):
        crashpoint.crash_point()


def test_fresh_ids_are_random_outside_a_sweep(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(crashpoint.WORLD, raising=False)
    first, second = crashpoint.fresh_id(), crashpoint.fresh_id()
    assert first != second
    assert len(first) == 32
    int(first, 16)


def test_under_a_sweep_fresh_ids_follow_from_the_world_and_their_order(monkeypatch: pytest.MonkeyPatch) -> None:
    """Two processes from the same world get the same IDs in the same order; another world, others."""

    def ids(world: str) -> list[str]:
        monkeypatch.setenv(crashpoint.WORLD, world)
        crashpoint.reset()
        return [crashpoint.fresh_id() for _ in range(3)]

    try:
        first = ids("a" * 64)
        assert ids("a" * 64) == first
        assert len(set(first)) == 3
        assert all(len(i) == 32 for i in first)
        assert not set(ids("b" * 64)) & set(first)
    finally:
        crashpoint.reset()


def test_a_pause_is_logged_with_the_points_before_it_and_numbered_but_never_kills(tmp_path: Path) -> None:
    """A fault's chance that is no crash point (FAULTS.md 1): logged after the points passed, numbered from 1."""
    code = textwrap.dedent(
        """
        from crashsweep.realsweep.probe.crashpoint import crashpoint, pause
        crashpoint("one")
        print(pause("person answers create_a"))
        crashpoint("two")
        crashpoint("three")
        print(pause("person answers create_b"))
        """
    )
    pauses = tmp_path / "pauses.log"
    log = tmp_path / "points.log"
    done = run_python(code, tmp_path, CRASHSWEEP_POINTS_LOG=str(log), CRASHSWEEP_PAUSES_LOG=str(pauses))
    assert done.returncode == 0
    assert done.stdout.split() == ["1", "2"]
    assert log.read_text().splitlines() == ["one", "two", "three"]
    expected = ((1, "person answers create_a"), (3, "person answers create_b"))
    assert crashpoint.read_pauses(pauses.read_text()) == expected


def test_without_a_sweep_a_pause_only_counts(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(crashpoint.PAUSES_LOG, raising=False)
    crashpoint.reset()
    assert (crashpoint.pause("a"), crashpoint.pause("b")) == (1, 2)
    crashpoint.reset()


def test_the_where_log_names_the_code_that_passed_each_point(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """CRASHSWEEP_WHERE_LOG: each point's name and the caller's file:line, frames of the probe skipped."""
    points, where = tmp_path / "points.log", tmp_path / "where.log"
    monkeypatch.setenv(crashpoint.POINTS_LOG, str(points))
    monkeypatch.setenv(crashpoint.WHERE_LOG, str(where))
    monkeypatch.delenv(crashpoint.CRASH_AT, raising=False)
    crashpoint.reset()
    try:
        line = _line_of_the_next_call() + 1
        crashpoint.crashpoint("first")
        crashpoint.crashpoint("second")
    finally:
        crashpoint.reset()
    logged = crashpoint.read_where(where.read_text())
    assert [name for name, _ in logged] == ["first", "second"] == points.read_text().split()
    assert logged[0][1] == f"{Path(__file__).resolve()}:{line}"
    assert logged[1][1] == f"{Path(__file__).resolve()}:{line + 1}"


def test_a_helper_that_passes_a_point_for_its_caller_reports_the_caller(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """`where=call_site(1)` in a helper (the reference loop's `Loop.point`): the helper's caller is located."""
    where = tmp_path / "where.log"
    monkeypatch.setenv(crashpoint.POINTS_LOG, str(tmp_path / "points.log"))
    monkeypatch.setenv(crashpoint.WHERE_LOG, str(where))
    monkeypatch.delenv(crashpoint.CRASH_AT, raising=False)

    def helper(name: str) -> None:
        crashpoint.crashpoint(name, where=crashpoint.call_site(1))

    crashpoint.reset()
    try:
        line = _line_of_the_next_call() + 1
        helper("passed for me")
    finally:
        crashpoint.reset()
    assert crashpoint.read_where(where.read_text()) == (("passed for me", f"{Path(__file__).resolve()}:{line}"),)


def test_without_the_where_log_nothing_is_located(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A sweep's processes (no CRASHSWEEP_WHERE_LOG) write the points log only."""
    monkeypatch.setenv(crashpoint.POINTS_LOG, str(tmp_path / "points.log"))
    monkeypatch.delenv(crashpoint.WHERE_LOG, raising=False)
    monkeypatch.delenv(crashpoint.CRASH_AT, raising=False)
    crashpoint.reset()
    try:
        crashpoint.crashpoint("only")
    finally:
        crashpoint.reset()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["points.log"]


def _line_of_the_next_call() -> int:
    """The caller's line number (the line of this call)."""
    return sys._getframe(1).f_lineno


class FailingStart(SpanProcessor):
    """A span processor whose every span start raises: a tracer that fails under the probe."""

    def on_start(self, span: Any, parent_context: Any = None) -> None:
        raise RuntimeError("the tracer broke")


@pytest.fixture
def traced(monkeypatch: pytest.MonkeyPatch) -> Iterator[tuple[TracerProvider, InMemorySpanExporter]]:
    """A real SDK provider, global for the test only (its spans kept in memory); no sweep, the count reset.

    The global provider is set by hand and put back after: `trace.set_tracer_provider` can be
    called once per process, and other tests share this one.
    """
    exporter = InMemorySpanExporter()
    provider = TracerProvider(shutdown_on_exit=False)
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    monkeypatch.setattr(trace, "_TRACER_PROVIDER", provider)
    monkeypatch.delenv(crashpoint.POINTS_LOG, raising=False)
    crashpoint.reset()
    yield provider, exporter
    provider.shutdown()
    crashpoint.reset()


def _points(events: Any) -> list[tuple[str, object, object]]:
    return [(e.name, e.attributes["crashsweep.point.name"], e.attributes["crashsweep.point.seq"]) for e in events]


def test_points_passed_inside_a_span_are_its_events_numbered_from_one(
    traced: tuple[TracerProvider, InMemorySpanExporter],
) -> None:
    """Outside a sweep too: a mark and an auto point, each an event `crashsweep.point` with its name and seq."""
    provider, exporter = traced
    with provider.get_tracer("test").start_as_current_span("save start"):
        crashpoint.crashpoint("start: tmp written")
        crashpoint.auto_point("before write state.json @ loop.py:3", "loop.py:3")
        crashpoint.crashpoint("start: renamed")
    (span,) = exporter.get_finished_spans()
    assert span.name == "save start"
    assert _points(span.events) == [
        ("crashsweep.point", "start: tmp written", 1),
        ("crashsweep.point", "before write state.json @ loop.py:3", 2),
        ("crashsweep.point", "start: renamed", 3),
    ]
    assert crashpoint.passed() == 0  # no sweep: nothing logged, the trace alone counts


def test_a_point_outside_any_span_is_a_span_of_its_own(
    traced: tuple[TracerProvider, InMemorySpanExporter], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """No span open: a span `crashsweep.point` of the tracer "crashsweep", begun and ended at once (under a sweep)."""
    _, exporter = traced
    log = tmp_path / "points.log"
    monkeypatch.setenv(crashpoint.POINTS_LOG, str(log))
    monkeypatch.setenv(crashpoint.CRASH_AT, "0")
    crashpoint.crashpoint("alone")
    crashpoint.crashpoint("again")
    spans = exporter.get_finished_spans()
    assert [(s.name, dict(s.attributes or {})) for s in spans] == [
        ("crashsweep.point", {"crashsweep.point.name": "alone", "crashsweep.point.seq": 1}),
        ("crashsweep.point", {"crashsweep.point.name": "again", "crashsweep.point.seq": 2}),
    ]
    assert all(s.instrumentation_scope is not None and s.instrumentation_scope.name == "crashsweep" for s in spans)
    assert all(s.parent is None and s.end_time is not None for s in spans)
    assert log.read_text().splitlines() == ["alone", "again"]  # the sweep's log as ever


def test_a_tracer_that_raises_changes_nothing(
    traced: tuple[TracerProvider, InMemorySpanExporter], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The span's start raises inside the probe: swallowed, and the point is logged as ever."""
    provider, _ = traced
    provider.add_span_processor(FailingStart())
    with pytest.raises(RuntimeError, match="the tracer broke"):  # the tracer does raise
        provider.get_tracer("test").start_span("any")
    log = tmp_path / "points.log"
    monkeypatch.setenv(crashpoint.POINTS_LOG, str(log))
    monkeypatch.setenv(crashpoint.CRASH_AT, "0")
    crashpoint.crashpoint("through a broken tracer")
    assert log.read_text().splitlines() == ["through a broken tracer"]
    assert crashpoint.passed() == 1


def test_without_opentelemetry_imported_the_probe_records_nothing_and_imports_nothing(tmp_path: Path) -> None:
    """A program that never imports opentelemetry.trace: the points are logged, and no module of it is loaded."""
    code = textwrap.dedent(
        """
        import sys
        from crashsweep.realsweep.probe.crashpoint import crashpoint
        crashpoint("one")
        crashpoint("two")
        print(sorted(name for name in sys.modules if name.startswith("opentelemetry")))
        """
    )
    log = tmp_path / "points.log"
    done = run_python(code, tmp_path, CRASHSWEEP_POINTS_LOG=str(log))
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "[]"
    assert log.read_text().splitlines() == ["one", "two"]
