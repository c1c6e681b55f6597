"""The ledger importer: tracker databases written by crashsweep's own tracker store, and CSV ledgers."""

from __future__ import annotations

import sqlite3
from contextlib import closing
from pathlib import Path

import pytest

from crashsweep.importers import ledger
from crashsweep.importers.base import HEAD, Unusable
from crashsweep.realsweep.tracker.store import Store
from crashsweep.spec.history import Event, History, args_digest


def tracker(path: Path, *, approvals: bool = True, close: bool = True) -> Store:
    """A tracker database with five records, written by the tracker's store (keys honoured, none sent).

    #1 issue create_a of r1; #2 issue create_b of r1, sent with arguments v2 under approval
    create_b@2#1 (when `approvals`); #3 comment comment_a of r2 on #1; #4 issue create_a of r1
    again (a duplicate); #5 issue create_c with no run.
    """
    store = Store(path, honours_keys=True)
    store.create_issue("A", "", "r1", "create_a", None)
    store.create_issue("B", "(arguments v2)", "r1", "create_b", None, "create_b@2#1" if approvals else None)
    store.comment(1, "seen", "r2", "comment_a", None)
    store.create_issue("A", "", "r1", "create_a", None)
    store.create_issue("C", "", "", "create_c", None)
    if close:
        store.close()
    return store


def rows(history: History) -> list[tuple[str, int, str, str, str, str, str, str]]:
    """Each event's run, seq, call, tool, effect ID, approval, arguments' version and src."""
    return [(e.run, e.seq, e.call, e.tool, e.effect_id, e.approval, e.args_digest, e.src) for e in history.events]


def test_each_record_is_an_effect_of_its_run_in_number_order(tmp_path: Path) -> None:
    """From tracker()'s docstring: r1 holds #1, #2, #4; r2 holds #3; run "" holds #5 (runs in first-seen order).

    A record with no approval has the digest of what it holds (an issue's title and body, a
    comment's issue and body): #1 and #4 hold the same, so they have one digest.
    """
    path = tmp_path / "space.sqlite3"
    tracker(path)
    found = ledger.histories(path)
    a, seen, c = args_digest({"title": "A", "body": ""}), args_digest({"issue": 1, "body": "seen"}), "C"
    assert [rows(history) for history in found] == [
        [
            ("r1", 1, "create_a", "create_issue", "#1", "", a, "space.sqlite3:records row 1"),
            ("r1", 2, "create_b", "create_issue", "#2", "create_b@2#1", "v2", "space.sqlite3:records row 2"),
            ("r1", 3, "create_a", "create_issue", "#4", "", a, "space.sqlite3:records row 4"),
        ],
        [("r2", 1, "comment_a", "comment", "#3", "", seen, "space.sqlite3:records row 3")],
        [
            (
                "",
                1,
                "create_c",
                "create_issue",
                "#5",
                "",
                args_digest({"title": c, "body": ""}),
                "space.sqlite3:records row 5",
            )
        ],
    ]
    assert {(e.type, e.f, e.incarnation, e.time) for h in found for e in h.events} == {("ok", "effect", 0, 0.0)}
    assert {h.facts for h in found} == {frozenset({"effects", "approvals"})}
    assert sorted(found[0].unseen) == ["status", "transcript"]


def test_a_tracker_whose_records_carry_no_approval_has_its_approvals_unseen(tmp_path: Path) -> None:
    path = tmp_path / "space.sqlite3"
    tracker(path, approvals=False)
    found = ledger.histories(path)
    assert {h.facts for h in found} == {frozenset({"effects"})}
    assert found[0].unseen["approvals"] == ledger.NO_APPROVALS.format(path="space.sqlite3")
    assert [e.args_digest for e in found[0].events] == [  # no approval: no version read, what the record holds
        args_digest({"title": title, "body": body}) for title, body in (("A", ""), ("B", "(arguments v2)"), ("A", ""))
    ]


def test_a_running_trackers_database_is_read_as_it_stands_and_left_unchanged(tmp_path: Path) -> None:
    """The store still open (its WAL not checkpointed): every record is read, and the file's bytes stay."""
    path = tmp_path / "space.sqlite3"
    store = tracker(path, close=False)
    try:
        before = path.read_bytes()
        assert sum(len(h.events) for h in ledger.histories(path)) == 5
        assert path.read_bytes() == before
    finally:
        store.close()


def test_recognised_by_the_trackers_tables_or_a_csv_ledgers_header(tmp_path: Path) -> None:
    space = tmp_path / "space.sqlite3"
    tracker(space)
    other = tmp_path / "other.sqlite3"
    with closing(sqlite3.connect(other)) as db:
        db.execute("CREATE TABLE records (number INTEGER)")
    assert ledger.recognises(space, space.read_bytes()[:HEAD])
    assert not ledger.recognises(other, other.read_bytes()[:HEAD])
    csv, text = tmp_path / "effects.csv", tmp_path / "effects.txt"
    assert ledger.recognises(csv, b"key,effect_id,call,args_digest,time\nk1,#1,create_a,,\n")
    assert ledger.recognises(csv, b"\xef\xbb\xbfcall,time\n")  # a ledger's names, refused when read (no effect_id)
    assert ledger.recognises(csv, b"effect_id,amount\n")  # effect_id names it a ledger, refused when read
    assert not ledger.recognises(csv, b"time,value\n1,2\n")  # some program's data
    assert not ledger.recognises(text, b"key,effect_id,call,args_digest,time\n")
    assert ledger.KIND.name == "ledger"


def written(tmp_path: Path, text: str, name: str = "effects.csv") -> Path:
    path = tmp_path / name
    path.write_bytes(text.encode("utf-8"))
    return path


def test_each_line_of_a_csv_is_an_effect(tmp_path: Path) -> None:
    """Times: 2025-01-01T00:00:00Z is 1735689600 s; "+01:00" an hour earlier in UTC; a naive time is UTC.

    Line 2 has no run; lines 3 and 5 are r1's; line 4 is quoted across two lines, so line 5
    starts on line 6; the blank line 7 is skipped; line 8 has no time.
    """
    text = (
        "effect_id,call,args_digest,time,run,tool,approval,key\n"
        "#1,create_a,,1735689600.5,,create_issue,,k-a\n"
        "#2,create_b,v2,2025-01-01T00:00:01Z,r1,create_issue,create_b@2#1,\n"
        '#3,,sha-9,2025-01-01T01:00:02+01:00,r2,"comment\non #1",,\n'
        "#4,create_a,,2025-01-01T00:00:03,r1,create_issue,,k-a\n"
        "\n"
        "#5,create_c,,,r1,,,\n"
    )
    found = ledger.histories(written(tmp_path, text))
    effects = [(e.run, e.seq, e.effect_id, e.call, e.args_digest, e.tool, e.approval, e.key, e.src) for h in found
               for e in h.events]  # fmt: skip
    assert effects == [
        ("", 1, "#1", "create_a", "", "create_issue", "", "k-a", "effects.csv:line 2"),
        ("r1", 1, "#2", "create_b", "v2", "create_issue", "create_b@2#1", "", "effects.csv:line 3"),
        ("r1", 2, "#4", "create_a", "", "create_issue", "", "k-a", "effects.csv:line 6"),
        ("r1", 3, "#5", "create_c", "", "", "", "", "effects.csv:line 8"),
        ("r2", 1, "#3", "", "sha-9", "comment\non #1", "", "", "effects.csv:line 4"),
    ]
    times = {e.effect_id: e.time for h in found for e in h.events}
    assert times == {"#1": 1735689600.5, "#2": 1735689601.0, "#3": 1735689602.0, "#4": 1735689603.0, "#5": 0.0}
    assert {h.facts for h in found} == {frozenset({"effects", "approvals"})}


def test_a_csv_without_an_approval_column_has_its_approvals_unseen(tmp_path: Path) -> None:
    (history,) = ledger.histories(written(tmp_path, "\ufeffkey,effect_id,call,args_digest,time\nk1,#1,create_a,,\n"))
    assert [(e.key, e.effect_id, e.call) for e in history.events] == [("k1", "#1", "create_a")]
    assert history.facts == frozenset({"effects"})
    assert history.unseen["approvals"] == "effects.csv has no approval column"


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("call,time\na,1\n", "1: no effect_id column (the header names call, time)"),
        ("effect_id,time\n#1,1\n", "1: no call or args_digest column: an effect must name its call or its arguments"),
        ("effect_id,call,amount\n", "1: unknown column 'amount' (the columns: key, effect_id, call, args_digest, "),
        ("effect_id,call,call\n", "1: column 'call' named twice"),
        ("effect_id,call,time\n#1,a,1\n#2,b,noon\n", "3: time 'noon': expected ISO 8601 or seconds since the epoch"),
        ("effect_id,call,time\n#1,a,-5\n", "2: time '-5': expected ISO 8601 or seconds since the epoch, 0 or more"),
        ("effect_id,call\n#1,a\n#2,b,extra\n", "3: 3 fields, the header names 2"),
        ("effect_id,call\n#1\n", "2: 1 fields, the header names 2"),
        ("effect_id,call\n,a\n", "2: effect_id is empty"),
        ("effect_id,call,args_digest\n#1,,\n", "2: neither call nor args_digest is given"),
        ('effect_id,call\n#1,"a\n', "2: not CSV (unexpected end of data)"),
    ],
)
def test_a_bad_csv_is_refused_naming_its_line(tmp_path: Path, text: str, message: str) -> None:
    path = written(tmp_path, text)
    with pytest.raises(Unusable) as refused:
        ledger.histories(path)
    assert str(refused.value).startswith(f"{path}:{message}")


def test_a_csv_that_is_not_utf8_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "effects.csv"
    path.write_bytes(b"effect_id,call\n#1,caf\xe9\n")
    with pytest.raises(Unusable, match=r"effects\.csv: cannot be read as UTF-8 text"):
        ledger.histories(path)


def test_a_tracker_row_the_store_would_never_write_is_refused_with_its_row(tmp_path: Path) -> None:
    """A records table without the store's CHECK on kind (a database edited by hand)."""
    path = tmp_path / "space.sqlite3"
    with closing(sqlite3.connect(path)) as db:
        db.executescript(
            "CREATE TABLE records (number INTEGER PRIMARY KEY, kind TEXT, issue INTEGER, title TEXT, body TEXT,"
            " run TEXT, call TEXT, approval TEXT);"
            "CREATE TABLE idempotency_keys (key TEXT PRIMARY KEY);"
            "INSERT INTO records VALUES (1, 'issue', NULL, 't', '', 'r1', 'a', NULL);"
            "INSERT INTO records VALUES (2, 'label', NULL, 't', '', 'r1', 'b', NULL);"
        )
    with pytest.raises(Unusable) as refused:
        ledger.histories(path)
    assert str(refused.value) == f"{path}: table records row 2: kind 'label': expected issue or comment"


def test_events_are_plain_effects(tmp_path: Path) -> None:
    """What the reader gives is what the History JSONL can hold: each event survives its JSON form."""
    path = tmp_path / "space.sqlite3"
    tracker(path)
    for history in ledger.histories(path):
        assert [Event.from_json(e.to_json()) for e in history.events] == list(history.events)


def test_a_ledger_with_no_record_says_the_receiver_applied_nothing(tmp_path: Path) -> None:
    """An empty tracker and a CSV of its header alone: one History, no event, the effects seen (a loss's evidence)."""
    Store(tmp_path / "empty.sqlite3", honours_keys=True).close()
    (tmp_path / "empty.csv").write_text("run,call,effect_id\n")
    for path in (tmp_path / "empty.sqlite3", tmp_path / "empty.csv"):
        (history,) = ledger.histories(path)
        assert history.events == ()
        assert "effects" in history.facts
