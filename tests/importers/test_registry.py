"""The registry of kinds (importers/registry.py): their names and order, and which kind a file is.

The spans log is written by crashsweep.otel's processor from real OpenTelemetry SDK spans (as
tests/test_otel.py does); the other files are written small, each in its kind's own shape.
"""

from __future__ import annotations

import json
import sqlite3
from contextlib import closing
from pathlib import Path

import pytest
from opentelemetry.sdk.trace import TracerProvider

from crashsweep.importers import history_jsonl, registry, spans
from crashsweep.importers.base import Unusable
from crashsweep.otel import CrashsweepSpanProcessor
from crashsweep.realsweep.probe import checkpoint
from crashsweep.spec.history import Event, History, write

ORDER = ("spans", "history", "otlp", "openai-session", "langgraph", "dbos", "temporal", "reference", "ledger")
"""By hand from registry.py's docstring: crashsweep.otel's log first (a History JSONL the plain
reader would refuse when torn), then History JSONL, OTLP, the three databases told by their
tables, Temporal's JSON, the reference loop's checkpoint, and the ledger last (a CSV is told by
its header row only)."""


def kind(path: Path) -> str | None:
    """The name of the kind the registry reads the file with, or None."""
    found = registry.kind_of(path)
    return None if found is None else found.name


def test_every_kind_has_a_name_of_its_own() -> None:
    assert len({k.name for k in registry.KINDS}) == len(registry.KINDS) == len(ORDER)


def test_names_are_in_the_order_files_are_offered() -> None:
    assert registry.names() == ORDER
    assert tuple(k.name for k in registry.KINDS) == ORDER


def test_the_processors_log_is_spans_though_the_history_kind_recognises_it_too(tmp_path: Path) -> None:
    """A log of one ended tool span: a History JSONL (header, invoke, ok) both kinds recognise; spans wins."""
    log = tmp_path / "tool-spans.jsonl"
    provider = TracerProvider()
    provider.add_span_processor(CrashsweepSpanProcessor(log))
    attributes = {"gen_ai.operation.name": "execute_tool", "gen_ai.tool.name": "create_issue"}
    with provider.get_tracer("t").start_as_current_span("execute_tool create_issue", attributes=attributes):
        pass
    provider.shutdown()
    head = log.read_bytes()
    assert len(head.splitlines()) == 3
    assert history_jsonl.recognises(log, head)  # the order is what decides
    assert kind(log) == "spans"


def test_a_plain_history_is_history_not_spans(tmp_path: Path) -> None:
    """A History JSONL of an effect (no span's `src`): only the history kind takes it."""
    path = tmp_path / "history.jsonl"
    write(History((Event("r1", 0, 1, "ok", "effect", call="create_a", effect_id="#1", src="tracker"),)), path)
    assert not spans.recognises(path, path.read_bytes())
    assert kind(path) == "history"


def test_a_ledger_csv_is_ledger(tmp_path: Path) -> None:
    path = tmp_path / "effects.csv"
    path.write_text("key,effect_id,call\nk-1,#1,create_a\n", encoding="utf-8")
    assert kind(path) == "ledger"


def test_the_reference_loops_checkpoint_is_reference(tmp_path: Path) -> None:
    """Saved by the loop's own save (compact JSON, realsweep/probe/checkpoint.py)."""
    path = tmp_path / "checkpoint.json"
    checkpoint.save(path, {"run": "r1", "done": False, "turns": []})
    assert kind(path) == "reference"


def test_no_kind_recognises_random_bytes(tmp_path: Path) -> None:
    """Every byte value, shuffled by a fixed rule (7 is prime to 256): no header, no JSON, no SQLite."""
    path = tmp_path / "blob.bin"
    path.write_bytes(bytes((7 * n + 3) % 256 for n in range(4096)))
    assert kind(path) is None


def test_no_kind_recognises_a_json_array(tmp_path: Path) -> None:
    """An array whose one object holds every key some JSON kind looks for: still no kind's file."""
    path = tmp_path / "checkpoint.json"
    tempting = {"crashsweep_history": 1, "resourceSpans": [], "events": [{"eventType": "x"}]}
    path.write_text(json.dumps([tempting | {"run": "r1", "done": True, "turns": []}]) + "\n", encoding="utf-8")
    assert kind(path) is None
    assert str(registry.unrecognised(path)) == f"{path}: not a record audit reads (the kinds: {', '.join(ORDER)})"


def test_an_sqlite_database_with_no_table_says_none(tmp_path: Path) -> None:
    """A database whose one table was dropped: its header stays, its tables are none."""
    path = tmp_path / "app.db"
    with closing(sqlite3.connect(path)) as db:
        db.execute("CREATE TABLE t (x)")
        db.execute("DROP TABLE t")
        db.commit()
    assert kind(path) is None
    assert str(registry.unrecognised(path)) == f"{path}: an SQLite database of no kind audit reads (its tables: none)"


def test_a_file_that_cannot_be_read_is_unusable(tmp_path: Path) -> None:
    """A folder given where a file is expected cannot be opened for reading."""
    with pytest.raises(Unusable) as refused:
        registry.kind_of(tmp_path)
    assert str(refused.value).startswith(f"{tmp_path}: cannot be read (")
