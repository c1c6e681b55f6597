"""`crashsweep audit`: recorded runs judged by the invariants and anomaly rules; a kept sweep agrees with its row.

The importers' readings are their own modules' tests (tests/importers/); here the command: how
paths become units, --job, the exit status, the formats, and bad input as one line, exit 2,
before any verdict.
"""

from __future__ import annotations

import json
import re
import sqlite3
import xml.etree.ElementTree as ET
from contextlib import closing
from pathlib import Path

import pytest

from crashsweep.cli.main import main
from crashsweep.realsweep.reference import target as reference
from crashsweep.realsweep.sweep import SweepOptions
from crashsweep.spec.history import Event, History, write
from crashsweep.spec.job import load_job
from tests.paths import ROOT

EFFECTS = tuple(Event("r", 0, n, "ok", "effect", call="create_a", effect_id=f"#{n}", src="tracker") for n in (1, 2))
TWICE = History(
    (*EFFECTS, Event("r", 0, 3, "ok", "run_status", status="finished", src="sweep")),
    ("create_a",),
    (),
    frozenset({"effects", "status"}),
    {"transcript": "no session", "approvals": "none kept"},
)


HEADER = '{"crashsweep_history": 1}\n'
EVENT = '{"v": 1, "run": "r", "incarnation": 0, "seq": 1, "type": "ok", "f": "effect", "call": "a"}\n'


def _long_line(path: Path) -> None:
    """A history whose second line is 17 MiB: refused by its length, not read into memory."""
    with path.open("w") as file:
        file.write(HEADER + '{"v": 1, "detail": "' + "x" * (17 * 1024 * 1024) + '"}\n')


def _other_database(path: Path) -> None:
    with closing(sqlite3.connect(path)) as db:
        db.execute("CREATE TABLE notes (text TEXT)")
        db.commit()


def _run(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    status = main(["audit", *args])
    out, err = capsys.readouterr()
    return status, out, err


def test_a_kept_sweep_of_every_scenario_is_audited_as_its_row_counts(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    """Every scenario's records: no-duplicate is violated in exactly the scenarios the sweep saw duplicate."""
    path = ROOT / "examples" / "one-write.toml"
    kept = tmp_path / "kept"
    result = reference.run(
        "save-after-reply", load_job(path), path, "keyless", SweepOptions(depth=1, keep=True, root=kept)
    )
    with_dups = sum(1 for s in result.scenarios if s.outcome.dups)
    assert with_dups > 0
    status, out, _ = _run(capsys, str(kept))
    histories = len(result.scenarios) + 1
    assert status == 1
    assert out.startswith(f"audit of {histories} runs\n")
    assert f"no-duplicate            VIOLATED in {with_dups} of {histories}, first " in out
    # The records of each kept world (the loop's checkpoint, the tracker's database), not the sweep's history.
    assert re.search(r"create_a has 2 records: #1 and #2 \(events \d+ \([\w-]+\.sqlite3:records row 1 #1\), ", out)
    assert f"no-loss                 holds in {histories} of {histories}" in out


def test_a_history_file_in_json_and_junit(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    file = tmp_path / "run.jsonl"
    write(TWICE, file)
    status, out, _ = _run(capsys, str(file), "--format", "json")
    assert status == 1
    run = json.loads(out)["runs"][0]
    assert [(a["name"], a["definite"], [w["seq"] for w in a["witness"]]) for a in run["anomalies"]] == [
        ("duplicate-effect", True, [1, 2])
    ]
    verdicts = run["verdicts"]
    why = "create_a has 2 records: #1 and #2"
    assert verdicts["no-duplicate"] == {
        "decided": True,
        "holds": False,
        "witnessed": True,
        "why": why,
        "evidence": [1, 2],
    }
    assert verdicts["well-formed-transcript"]["why"] == "no session"
    status, out, _ = _run(capsys, str(file), "--format", "junit")
    cases = {c.get("name"): c for c in ET.fromstring(out.split("\n", 1)[1]).iter("testcase")}
    assert cases["no-duplicate"].find("failure") is not None
    assert cases["approved-exactly"].find("skipped") is not None
    assert cases["no-loss"].find("failure") is None
    assert cases["duplicate-effect 1"].find("failure") is not None


def test_a_history_that_holds_exits_0(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    once = History((TWICE.events[0], TWICE.events[2]), ("create_a",), (), TWICE.facts, TWICE.unseen)
    write(once, tmp_path / "run.jsonl")
    status, out, _ = _run(capsys, str(tmp_path / "run.jsonl"))
    assert status == 0
    assert "  no-duplicate            holds in 1 of 1\n" in out
    assert "  well-formed-transcript  not decided (no session)\n" in out


@pytest.mark.parametrize(
    ("make", "says"),
    [
        (lambda d: (d / "h.jsonl").write_text('{"crashsweep_history": 1}\n{"v": 1}\nnot json\n'), "h.jsonl:2: missing"),
        (lambda d: (d / "h.jsonl").write_text('{"crashsweep_history": 9}\n'), "h.jsonl:1: expected the header"),
        (lambda d: (d / "folder").mkdir(), "folder: no record audit reads in this folder"),
        (
            lambda d: (d / "h.jsonl").write_text('{"crashsweep_history": 1}\n{"v": 1, "run": "r", "incarnation": 0'),
            "h.jsonl:2: not JSON",
        ),
        (lambda d: (d / "h.jsonl").write_text(HEADER + EVENT.replace('"seq": 1', '"seq": "1"')), "h.jsonl:2: seq '1'"),
        (lambda d: (d / "h.jsonl").write_text(HEADER + EVENT.replace('"v": 1', '"v": 2')), "h.jsonl:2: version 2"),
        (lambda d: (d / "h.jsonl").write_text(HEADER + EVENT + EVENT), "h.jsonl:3: seq 1 after seq 1"),
        (lambda d: _long_line(d / "h.jsonl"), "h.jsonl:2: a line longer than 16 MiB"),
        (lambda d: _other_database(d / "h.jsonl"), "an SQLite database of no kind audit reads (its tables: notes)"),
        (lambda d: (d / "h.jsonl").write_text("hello\n"), "h.jsonl: not a record audit reads (the kinds: "),
        (lambda d: None, "h.jsonl: no such file or folder"),
    ],
)
def test_unusable_input_is_one_line_and_exit_2_before_any_verdict(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, make: object, says: str
) -> None:
    assert callable(make)
    make(tmp_path)
    target = tmp_path / ("folder" if "folder:" in says else "h.jsonl")
    good = tmp_path / "good.jsonl"
    write(TWICE, good)
    status, out, err = _run(capsys, str(good), str(target))
    assert (status, out) == (2, "")
    assert err.startswith("crashsweep: error: ")
    assert says in err
    assert len(err.splitlines()) == 1


RUN_ENDED = (
    '{"crashsweep_history": 1, "facts": ["status", "transcript"]}\n'
    '{"v": 1, "run": "r", "incarnation": 0, "seq": 1, "type": "invoke", "f": "tool_call", "call_id": "create_a", '
    '"tool": "create_issue", "time": 100}\n'
    '{"v": 1, "run": "r", "incarnation": 1, "seq": 2, "type": "ok", "f": "run_status", "status": "finished", '
    '"time": 300}\n'
)
LEDGER = "run,call,effect_id,time\nr,create_a,#7,200\nr,create_a,#8,250\n"


def test_files_named_together_are_one_unit_merged_by_time(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    """A run's conversation and status from one file, the receiver's ledger from another: one run, one duplicate."""
    (tmp_path / "run.jsonl").write_text(RUN_ENDED)
    (tmp_path / "payments.csv").write_text(LEDGER)
    status, out, _ = _run(capsys, str(tmp_path / "run.jsonl"), str(tmp_path / "payments.csv"), "--format", "json")
    assert status == 1
    (run,) = json.loads(out)["runs"]
    # Merged by time: the call (100), the effects #7 (200) and #8 (250), the status (300).
    duplicate = next(a for a in run["anomalies"] if a["name"] == "duplicate-effect")
    assert duplicate["witness"] == [{"seq": 2, "src": "payments.csv:line 2"}, {"seq": 3, "src": "payments.csv:line 3"}]
    assert run["run"] == "r"
    assert run["joined"] == {"runtime key": 2, "call ID": 1, "tool and arguments": 0}


def test_the_job_says_what_the_run_had_to_write(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    """Without --job a ledger and a status name no expected write; with it, the writes the ledger lacks are lost."""
    (tmp_path / "run.jsonl").write_text(RUN_ENDED)
    (tmp_path / "payments.csv").write_text(LEDGER)
    files = (str(tmp_path / "run.jsonl"), str(tmp_path / "payments.csv"))
    _, out, _ = _run(capsys, *files, "--format", "json")
    assert [a["name"] for a in json.loads(out)["runs"][0]["anomalies"]] == ["duplicate-effect"]
    job = str(ROOT / "examples" / "triage-fails.toml")  # writes create_a, create_b, comment_a
    _, out, _ = _run(capsys, *files, "--job", job, "--format", "json")
    lost = [a["call"] for a in json.loads(out)["runs"][0]["anomalies"] if a["name"] == "lost-effect"]
    assert lost == ["create_b", "comment_a"]


def test_a_folder_of_records_is_a_unit_per_folder(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    """Without kept histories, each folder of recognised records is one unit; a program's other files are none."""
    for name in ("one", "two"):
        (tmp_path / name).mkdir()
        (tmp_path / name / "run.jsonl").write_text(RUN_ENDED)
        (tmp_path / name / "output.txt").write_text("a program's log\n")
    (tmp_path / "two" / "payments.csv").write_text(LEDGER)
    status, out, _ = _run(capsys, str(tmp_path), "--format", "json")
    assert status == 1
    runs = json.loads(out)["runs"]
    assert [(Path(r["unit"]).name, [a["name"] for a in r["anomalies"]]) for r in runs] == [
        ("one", []),
        ("two", ["duplicate-effect"]),
    ]


def test_help_names_every_kind_of_record(capsys: pytest.CaptureFixture[str]) -> None:
    """`audit --help` lists the registry's kinds: a new kind is named there without a word changed here."""
    from crashsweep.importers.registry import names

    assert main(["audit", "--help"]) == 0
    said = "".join(capsys.readouterr().out.split())  # click wraps the words, even inside a hyphenated name
    assert f"oneofthesekinds:{','.join(names())};" in said
