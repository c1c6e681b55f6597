"""`crashsweep audit`: recorded histories judged by the registry; a kept sweep's folder audited agrees with its row."""

from __future__ import annotations

import json
import xml.etree.ElementTree as ET
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


def _run(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    status = main(["audit", *args])
    out, err = capsys.readouterr()
    return status, out, err


def test_a_kept_sweep_of_every_scenario_is_audited_as_its_row_counts(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    """Every scenario's history.jsonl: no-duplicate is violated in exactly the scenarios the sweep saw duplicate."""
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
    assert out.startswith(f"audit of {histories} histories\n")
    assert f"no-duplicate            VIOLATED in {with_dups} of {histories}, first " in out
    assert "create_a has 2 records: #1 and #2 (events 1 (tracker #1), 2 (tracker #2))" in out
    assert f"no-loss                 holds in {histories} of {histories}" in out


def test_a_history_file_in_json_and_junit(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    file = tmp_path / "run.jsonl"
    write(TWICE, file)
    status, out, _ = _run(capsys, str(file), "--format", "json")
    assert status == 1
    verdicts = json.loads(out)["histories"][0]["verdicts"]
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
        (lambda d: (d / "folder").mkdir(), "folder: no history.jsonl in this folder"),
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
