"""Tests of crashsweep.cli.main: the commands, their formats, exit codes and one-line errors."""

from __future__ import annotations

import contextlib
import functools
import io
import json
import os
import re
import shlex
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import click
import pytest
from click.shell_completion import ShellComplete
from hypothesis import given
from hypothesis import strategies as st

import crashsweep
from crashsweep.cli import colour, runs
from crashsweep.cli.main import cli, main
from crashsweep.explorer import search
from crashsweep.spec.tracker import TRACKERS
from crashsweep.variants import DESIGNS
from tests.paths import ROOT


def _run(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    status = main(list(args))
    out, err = capsys.readouterr()
    return status, out, err


def test_explore_text_exits_1_on_violation(capsys: pytest.CaptureFixture[str]) -> None:
    """save-after-reply violates no-duplicate: the row is printed and the exit status is 1."""
    status, out, _ = _run(capsys, "explore", "--variant", "save-after-reply", "--depth", "2")
    assert status == 1
    assert "crash points  34" in out
    assert "1 crash: 34   2 crashes: 654" in out
    assert "no-duplicate  VIOLATED" in out


def test_explore_json_exits_0_when_everything_holds(capsys: pytest.CaptureFixture[str]) -> None:
    """keys-and-markers holds: JSON with the seed's figures, exit 0."""
    status, out, _ = _run(capsys, "explore", "--variant", "keys-and-markers", "--format", "json")
    assert status == 0
    data = json.loads(out)
    assert data["scenarios"] == {"1": 43, "2": 1014}
    assert data["invariants"]["no-duplicate"] == {**data["invariants"]["no-duplicate"], "holds": True}


@pytest.mark.parametrize("command", ["explore", "compare"])
def test_no_projection_explores_the_full_graph_with_the_same_figures(
    capsys: pytest.CaptureFixture[str], command: str
) -> None:
    """--no-projection: the seed's 752 states of save-after-reply at depth 2, every other figure as merged."""
    base = [command, "--variant" if command == "explore" else "--variants", "save-after-reply", "--format", "json"]
    merged = json.loads(_run(capsys, *base)[1])
    full = json.loads(_run(capsys, *base, "--no-projection")[1])
    if command == "compare":
        [merged], [full] = merged, full
    assert (merged["projection"], full["projection"]) == (True, False)
    assert full["states"] == 752  # the full graph, as before the state key (tests/reports/conftest.py's sar)
    assert merged["states"] < full["states"]
    unmerged = ("states", "edges", "projection")
    assert {k: v for k, v in merged.items() if k not in unmerged} == {
        k: v for k, v in full.items() if k not in unmerged
    }


def test_compare_prints_the_seed_table(capsys: pytest.CaptureFixture[str]) -> None:
    """compare --format json lists the five seed designs in order."""
    status, out, _ = _run(capsys, "compare", "--depth", "2", "--format", "json")
    rows = json.loads(out)
    assert [r["variant"] for r in rows][:2] == ["save-once-per-turn", "save-after-reply"]
    assert len(rows) == 5
    assert status == 1


def test_compare_with_chosen_variants_and_tracker(capsys: pytest.CaptureFixture[str]) -> None:
    """--variants picks the rows; --tracker applies to all of them."""
    status, out, _ = _run(capsys, "compare", "--variants", "agent-loop", "--tracker", "keyless", "--format", "markdown")
    assert status == 0
    assert "| agent-loop | 38 | 854 | 0 | 0 | 0 | 624 |" in out


def test_variants_lists_every_design(capsys: pytest.CaptureFixture[str]) -> None:
    """Each design appears with its one-line description."""
    status, out, _ = _run(capsys, "variants")
    assert status == 0
    assert out.splitlines()[0].startswith("save-once-per-turn  ")
    assert "agent-loop" in out


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["explore", "--variant", "nope"], "unknown variant 'nope' (known: save-once-per-turn"),
        (["explore", "--variant", "save-after-reply", "--depth", "0"], "--depth"),
        (["explore", "--variant", "save-after-reply", "--depth", "x"], "--depth"),
        (["explore", "--variant", "save-after-reply", "--job", "/nonexistent/job.toml"], "cannot read job file"),
        (["explore", "--variant", "save-after-reply", "--tracker", "odd"], "--tracker"),
        (["compare", "--variants", "save-after-reply,nope"], "unknown variant 'nope'"),
        (["explore", "--variant", "keys-and-markers", "--max-states", "50"], "state limit reached: 50 states"),
        (["frobnicate"], "No such command"),
    ],
)
def test_bad_input_is_one_line_and_exit_2(capsys: pytest.CaptureFixture[str], args: list[str], message: str) -> None:
    """Bad input: one line on stderr naming the problem, exit status 2, nothing on stdout."""
    status, out, err = _run(capsys, *args)
    assert status == 2
    assert out == ""
    assert err.count("\n") == 1
    assert message in err


def test_malformed_job_file_names_the_field(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    """A job file with an unknown call key is refused with the field's name."""
    job = tmp_path / "job.toml"
    job.write_text('name = "x"\nturns = [["w"]]\n[calls]\nw = { tool = "t", writes = true, colour = "red" }\n')
    status, _, err = _run(capsys, "explore", "--variant", "save-after-reply", "--job", str(job))
    assert status == 2
    assert "calls.w: unknown key 'colour'" in err


def test_job_file_is_explored(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    """A one-write job under save-once-per-turn: 2+1+2+2+1+2 = 10 points, a crash after accept duplicates."""
    job = tmp_path / "job.toml"
    job.write_text('name = "one"\nturns = [["w"]]\n[calls]\nw = { tool = "t", writes = true }\n')
    status, out, _ = _run(
        capsys, "explore", "--variant", "save-once-per-turn", "--job", str(job), "--depth", "1", "--format", "json"
    )
    data = json.loads(out)
    assert data["job"] == "one"
    assert data["crash_points"] == 10
    assert status == 1


def test_console_script_runs_without_traceback() -> None:
    """`python -m crashsweep` with a bad variant prints one line and exits 2."""
    done = subprocess.run(
        [sys.executable, "-m", "crashsweep", "explore", "--variant", "nope"],
        capture_output=True,
        text=True,
        check=False,
    )
    assert done.returncode == 2
    assert "Traceback" not in done.stderr
    assert done.stderr.startswith("crashsweep: error: ")


def test_seed_table_prints_both_published_tables(capsys: pytest.CaptureFixture[str]) -> None:
    """--seed-table: the five designs, then agent-loop keyed (38/872) and keyless (38/854, 624 asks)."""
    status, out, _ = _run(capsys, "compare", "--seed-table", "--format", "markdown")
    assert "## The five designs (job triage, tracker keyed, depth 2)" in out
    assert "## The agent's own loop (job triage, depth 2)" in out
    assert "| keys-and-markers | 43 | 1014 | 0 | 0 | 0 | 0 | 288 | holds |" in out
    assert "| agent-loop (keyed) | 38 | 872 | 0 | 0 | 0 | 0 |" in out
    assert "| agent-loop (keyless) | 38 | 854 | 0 | 0 | 0 | 624 |" in out
    assert status == 1


def test_variant_at_tracker_rows(capsys: pytest.CaptureFixture[str]) -> None:
    """NAME@TRACKER picks a row's own tracker; the JSON rows say which."""
    status, out, _ = _run(capsys, "compare", "--variants", "agent-loop@keyless-lookup,agent-loop", "--format", "json")
    rows = json.loads(out)
    assert [(r["tracker"], r["asks"]) for r in rows] == [("keyless-lookup", 0), ("keyed", 0)]
    assert rows[0]["ladder"]["lookup"] > 0
    assert status == 0


def test_seed_table_and_variants_exclude_each_other(capsys: pytest.CaptureFixture[str]) -> None:
    """Choosing rows two ways at once is a usage error."""
    status, _, err = _run(capsys, "compare", "--seed-table", "--variants", "agent-loop")
    assert status == 2
    assert "give one of them" in err


def test_ctrl_c_prints_how_far_it_got() -> None:
    """SIGINT during a long exploration: one line with the states explored, exit 130, no traceback."""
    job = ROOT / "examples" / "forty-calls.toml"
    command = [sys.executable, "-m", "crashsweep", "explore", "--variant", "save-once-per-turn", "--depth", "6"]
    process = subprocess.Popen(
        [*command, "--no-projection", "--job", str(job), "--progress"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    # Depth 6 on this job's full graph (no state key) runs for many minutes. The first --progress
    # line says the search has started (it comes with the explorer's first report), so the
    # signal lands inside it.
    assert process.stderr is not None
    ready = process.stderr.readline()
    assert ready.startswith("crashsweep: save-once-per-turn: "), ready
    assert " to visit, up to " in ready
    process.send_signal(signal.SIGINT)
    out, err = process.communicate(timeout=60)
    assert process.returncode == 130
    assert out == ""
    assert err.startswith("crashsweep: save-once-per-turn: interrupted after ")
    assert err.count("\n") == 1


DESIGNS_DIR = ROOT / "docs" / "designs"


@pytest.mark.parametrize(
    "name",
    [
        "save-once-per-turn",
        "save-after-reply",
        "idempotency-keys",
        "attempt-markers",
        "keys-and-markers",
        "agent-loop",
        "error-to-model",
    ],
)
def test_design_file_of_a_built_in_explores_as_the_variant(capsys: pytest.CaptureFixture[str], name: str) -> None:
    """--design docs/designs/NAME.toml prints exactly what --variant NAME prints (JSON, depth 2)."""
    by_name = _run(capsys, "explore", "--variant", name, "--format", "json", "--tracker", "keyless-lookup")
    by_file = _run(
        capsys,
        "explore",
        "--design",
        str(DESIGNS_DIR / f"{name}.toml"),
        "--format",
        "json",
        "--tracker",
        "keyless-lookup",
    )
    assert by_file == by_name


def test_design_file_replay_command_works_as_printed(capsys: pytest.CaptureFixture[str]) -> None:
    """save-after-reply's design file: 34 and 654 scenarios (the seed's row), and a replay line naming the file."""
    status, out, _ = _run(capsys, "explore", "--design", str(DESIGNS_DIR / "save-after-reply.toml"))
    assert status == 1
    assert "1 crash: 34   2 crashes: 654" in out
    line = next(line for line in out.splitlines() if "replay: " in line).split("replay: ", 1)[1]
    words = shlex.split(line)
    assert words[:4] == ["crashsweep", "replay", "--design", str(DESIGNS_DIR / "save-after-reply.toml")]
    status, replayed, _ = _run(capsys, *words[1:])
    assert status == 1
    assert "VIOLATED no-duplicate" in replayed


def test_compare_adds_design_file_rows(capsys: pytest.CaptureFixture[str]) -> None:
    """compare --variants A --design FILE: A's row, then the file's row under the file's name."""
    status, out, _ = _run(
        capsys,
        "compare",
        "--variants",
        "idempotency-keys",
        "--design",
        str(DESIGNS_DIR / "save-after-reply.toml"),
        "--format",
        "json",
    )
    rows = json.loads(out)
    assert [row["variant"] for row in rows] == ["idempotency-keys", "save-after-reply"]
    assert rows[1]["scenarios"] == {"1": 34, "2": 654}
    assert status == 1


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["explore"], "give either --variant NAME or --design FILE"),
        (
            ["explore", "--variant", "agent-loop", "--design", "x.toml"],
            "give --variant NAME or --design FILE, not both",
        ),
        (["explore", "--design", "/nonexistent/design.toml"], "cannot read design file"),
        (["compare", "--design", "/nonexistent/design.toml"], "cannot read design file"),
        (["compare", "--seed-table", "--design", "x.toml"], "choose the rows two ways"),
    ],
)
def test_bad_design_input_is_one_line_and_exit_2(
    capsys: pytest.CaptureFixture[str], args: list[str], message: str
) -> None:
    status, out, err = _run(capsys, *args)
    assert (status, out) == (2, "")
    assert err.count("\n") == 1
    assert message in err


def test_bad_design_file_names_the_field(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    design = tmp_path / "d.toml"
    design.write_text((DESIGNS_DIR / "agent-loop.toml").read_text().replace('"writes-only"', '"sometimes"'))
    status, _, err = _run(capsys, "explore", "--design", str(design))
    assert status == 2
    assert err == f"crashsweep: error: {design}: result_saves: expected one of " + (
        '"each-call", "writes-only", "whole-turn", "none", not \'sometimes\'\n'
    )


def test_the_example_design_file_has_its_hand_counted_points(capsys: pytest.CaptureFixture[str]) -> None:
    """docs/my-design.toml on triage: 31 crash points, and with keys honoured it holds.

    Start 2, reply 1 (1 + save 2), create_a and create_b (2 + result save 3 each), turn 1 (2),
    reply 2 (1 + 2), search (1: no result save after a read), comment_a (2 + 3), turn 2 (2),
    final reply (1), final (2) = 31.
    """
    example = ROOT / "docs" / "my-design.toml"
    status, out, _ = _run(capsys, "explore", "--design", str(example), "--format", "json")
    data = json.loads(out)
    assert (status, data["variant"], data["crash_points"], data["with_dups"], data["missing"]) == (
        0,
        "my-design",
        31,
        0,
        0,
    )


@pytest.mark.parametrize(
    ("where", "message"),
    [
        ("{tmp}/file/out", "is not a directory"),
        ("{tmp}/file", "exists and is not a directory"),
        ("/dev/null", "exists and is not a directory"),
        ("/dev/null/out", "/dev/null is not a directory"),
        ("/proc/x", "cannot create anything in /proc"),
        ("{tmp}/foreign", "is not empty and crashsweep did not write it"),
    ],
)
def test_an_unusable_out_is_refused_before_the_search(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, where: str, message: str
) -> None:
    """--out under a file, /dev/null, /proc, or over someone's files: exit 2 and one line, and no row printed."""
    (tmp_path / "file").write_text("mine", encoding="utf-8")
    (tmp_path / "foreign").mkdir()
    (tmp_path / "foreign" / "thesis.tex").write_text("mine", encoding="utf-8")
    args = ["explore", "--variant", "save-after-reply", "--depth", "1", "--out", where.format(tmp=tmp_path)]
    status, out, err = _run(capsys, *args)
    assert (status, out) == (2, "")
    assert err.count("\n") == 1
    assert err.startswith("crashsweep: error: Invalid value for '--out': ")
    assert message in err
    assert (tmp_path / "foreign" / "thesis.tex").read_text(encoding="utf-8") == "mine"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["file", "foreign"]


def test_reusing_out_leaves_no_stale_file_of_the_earlier_run(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    """A design that violates no-duplicate, then one that holds, into the same --out: only the second's page."""
    out_dir = tmp_path / "out"
    status, _, _ = _run(capsys, "explore", "--variant", "save-after-reply", "--depth", "1", "--out", str(out_dir))
    assert status == 1
    assert (out_dir / "no-duplicate.trace.txt").exists()
    status, out, _ = _run(capsys, "explore", "--variant", "idempotency-keys", "--depth", "1", "--out", str(out_dir))
    assert status == 0
    assert [p.name for p in out_dir.iterdir()] == ["index.html"]
    assert "idempotency-keys" in (out_dir / "index.html").read_text(encoding="utf-8")
    assert f"wrote {out_dir / 'index.html'}" in out
    assert sorted(p.name for p in tmp_path.iterdir()) == ["out"]


@pytest.mark.parametrize(
    ("names", "message"),
    [
        ("", "expected comma-separated names, got nothing"),
        (" ", "expected comma-separated names, got nothing"),
        (",,,", "has an empty name (at position 1)"),
        ("agent-loop,", "has an empty name (at position 2)"),
        ("save-after-reply@", "no tracker after '@' in 'save-after-reply@'"),
        ("save-after-reply@psychic", "unknown tracker 'psychic'"),
        ("agent-loop,agent-loop", "agent-loop (keyed) is named twice"),
        ("agent-loop@keyless,agent-loop,agent-loop@keyed", "agent-loop (keyed) is named twice"),
        ("@keyed", "unknown variant ''"),
    ],
)
def test_bad_variants_lists_are_one_line_and_exit_2(
    capsys: pytest.CaptureFixture[str], names: str, message: str
) -> None:
    """Empty lists and names, a bare '@', duplicated rows: refused before any row is explored."""
    status, out, err = _run(capsys, "compare", "--variants", names, "--depth", "1")
    assert (status, out) == (2, "")
    assert err.count("\n") == 1
    assert message in err


def test_a_design_may_appear_once_per_tracker(capsys: pytest.CaptureFixture[str]) -> None:
    """The same design under two trackers is two rows, not a duplicate."""
    status, out, _ = _run(capsys, "compare", "--variants", "agent-loop,agent-loop@keyless", "--depth", "1")
    assert status == 0
    table = out.split("\n\n")[1]  # the rows' table, after its heading; the cost table follows after a blank line
    assert [line.split()[0] for line in table.splitlines()[2:]] == ["agent-loop", "agent-loop"]


def test_control_characters_in_messages_stay_on_one_line(capsys: pytest.CaptureFixture[str]) -> None:
    """Whatever the user typed, the error is one line: control characters are shown escaped."""
    status, _, err = _run(capsys, "explore", "--variant", "save-after-reply", "--out", "/dev/null/a\nb")
    assert status == 2
    assert err.count("\n") == 1
    assert "a\\nb" in err


SLOW_DOT = """#!/bin/sh
# A stand-in for graphviz's dot: the first call renders a minimal SVG; the second marks itself
# as running (the test's readiness signal) and waits to be killed. crashsweep is then inside
# the writing of its --out directory, with the first files written.
cat >/dev/null
if [ -e "$DOT_FIRST" ]; then
  touch "$DOT_READY"
  exec sleep 120
fi
touch "$DOT_FIRST"
echo '<svg xmlns="http://www.w3.org/2000/svg" width="10" height="10"></svg>'
"""


@pytest.mark.parametrize("earlier", [False, True])
def test_ctrl_c_while_writing_out_leaves_no_partial_directory(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch, earlier: bool
) -> None:
    """SIGINT while --out is being written: no partial directory, no *.tmp, an earlier report intact, a true line."""
    tools, work = tmp_path / "tools", tmp_path / "work"
    tools.mkdir()
    work.mkdir()
    (tools / "dot").write_text(SLOW_DOT, encoding="utf-8")
    (tools / "dot").chmod(0o755)
    out_dir = work / "out"
    if earlier:  # an earlier report in the same place (written without dot: the page alone)
        monkeypatch.setenv("PATH", str(tmp_path / "no-tools"))
        assert _run(capsys, "explore", "--variant", "idempotency-keys", "--depth", "1", "--out", str(out_dir))[0] == 0
        monkeypatch.undo()
    before = {p.name: p.read_bytes() for p in out_dir.iterdir()} if earlier else None
    env = {**os.environ, "PATH": f"{tools}{os.pathsep}{os.environ['PATH']}"}
    env |= {"DOT_FIRST": str(tools / "first"), "DOT_READY": str(tools / "ready")}
    command = [sys.executable, "-m", "crashsweep", "explore", "--variant", "save-after-reply", "--depth", "1"]
    process = subprocess.Popen(
        [*command, "--out", str(out_dir)], cwd=ROOT, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
    )
    try:
        deadline = time.monotonic() + 120
        while not (tools / "ready").exists():  # the readiness signal: the second dot call has started
            assert process.poll() is None, process.communicate()
            assert time.monotonic() < deadline, "the stand-in dot was never called twice"
            time.sleep(0.05)
        (staging,) = [p for p in work.iterdir() if p.name.startswith(".out.") and p.name.endswith(".tmp")]
        assert len(list(staging.iterdir())) >= 5  # traces, DOT sources and the first SVG: mid-write
        process.send_signal(signal.SIGINT)
        out, err = process.communicate(timeout=60)
    finally:
        process.kill()
    assert process.returncode == 130
    assert err == f"crashsweep: interrupted while writing {out_dir}; it was left as it was\n"
    assert "wrote" not in out
    assert [p.name for p in work.iterdir()] == (["out"] if earlier else [])
    if before is not None:
        assert {p.name: p.read_bytes() for p in out_dir.iterdir()} == before
    assert not [p for p in work.rglob("*") if p.name.endswith(".tmp") or p.name.startswith(".")]


def test_progress_lines_only_when_asked_where_stderr_is_not_a_terminal(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """--progress on a non-terminal: a line with the explorer's first report, then one per PROGRESS_EVERY s."""
    monkeypatch.setattr(runs, "explore", functools.partial(search.explore, progress_every=100))  # reports sooner
    args = ["explore", "--variant", "save-after-reply", "--depth", "2", "--format", "json"]
    status, out, err = _run(capsys, *args)
    assert json.loads(out)["states"] > 200  # so the explorer reports at least twice
    assert (status, err) == (1, "")
    status, _, err = _run(capsys, *args, "--progress")
    assert err.startswith("crashsweep: save-after-reply: 100 states, ")
    assert " to visit, up to " in err
    assert err.count("\n") == 1  # the later reports came within PROGRESS_EVERY seconds of the first
    monkeypatch.setattr(runs, "PROGRESS_EVERY", 0.0)
    status, _, err = _run(capsys, *args, "--progress")
    assert [line.split(" states")[0] for line in err.splitlines()][:2] == [
        "crashsweep: save-after-reply: 100",
        "crashsweep: save-after-reply: 200",
    ]


# Hostile input, generated: malformed job files (as bytes and as TOML structures) and argument
# sets with one bad value each. Every one must be refused with exit 2 and exactly one line on
# stderr: never a traceback, never an internal error (exit 3), never a search.


def _toml(value: object) -> str:
    """A TOML value: JSON's string escapes are TOML's (ensure_ascii off: no surrogate pairs)."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int | str):
        return json.dumps(value, ensure_ascii=False)
    if isinstance(value, list):
        return "[" + ", ".join(_toml(item) for item in value) + "]"
    assert isinstance(value, dict)
    return "{ " + ", ".join(f"{_toml(str(k))} = {_toml(v)}" for k, v in value.items()) + " }"


def _document(data: dict[str, object]) -> str:
    return "".join(f"{_toml(key)} = {_toml(value)}\n" for key, value in data.items())


CONTROL = st.characters(codec="utf-8", categories=["Cc"])
NOT_A_STRING = st.one_of(st.integers(-5, 5), st.booleans(), st.lists(st.integers(0, 3), max_size=2))
NOT_A_BOOL = st.one_of(st.integers(-5, 5), st.text(max_size=3), st.lists(st.booleans(), max_size=2))
NAMES = st.text(st.characters(codec="utf-8", exclude_categories=["Cc", "Cs"]), min_size=1, max_size=8)


@st.composite
def malformed_jobs(draw: st.DrawFn) -> bytes:
    """A job file that is wrong in one way: a good job with one field broken, or not a job at all."""
    ids = draw(st.lists(NAMES, min_size=1, max_size=3, unique=True))
    calls: dict[str, dict[str, object]] = {i: {"tool": "create_issue", "writes": True} for i in ids}
    job: dict[str, object] = {"name": "job", "turns": [list(ids)], "calls": calls}
    first = ids[0]
    fault = draw(st.sampled_from(range(17)))
    if fault == 0:
        job["name"] = draw(st.one_of(NOT_A_STRING, st.just("")))
    elif fault == 1:
        job["name"] = draw(NAMES) + draw(CONTROL)
    elif fault == 2:
        job[draw(NAMES.filter(lambda k: k not in ("name", "turns", "calls")))] = 1
    elif fault == 3:
        job["turns"] = draw(st.one_of(st.integers(), NAMES, st.just({"a": 1})))
    elif fault == 4:
        job["turns"] = [list(ids), []]
    elif fault == 5:
        job["turns"] = [[*ids, draw(NAMES.filter(lambda n: n not in ids))]]
    elif fault == 6:
        job["turns"] = [list(ids), [first]]
    elif fault == 7:
        calls[draw(NAMES.filter(lambda n: n not in ids))] = {"tool": "t", "writes": False}
    elif fault == 8:
        calls[first] = draw(st.one_of(NOT_A_STRING, NAMES))
    elif fault == 9:
        calls[first][draw(NAMES.filter(lambda k: k not in ("tool", "writes", "fails_after_accept", "approval")))] = 1
    elif fault == 10:
        calls[first]["tool"] = draw(st.one_of(NOT_A_STRING, st.just(""), NAMES.map(lambda n: n + "\x00")))
    elif fault == 11:
        calls[first]["writes"] = draw(NOT_A_BOOL)
    elif fault == 12:
        calls[first] |= {"writes": False, draw(st.sampled_from(["fails_after_accept", "approval"])): True}
    elif fault == 13:
        bad = draw(NAMES) + draw(CONTROL) + draw(NAMES)
        job["turns"], job["calls"] = [[bad]], {bad: {"tool": "t", "writes": True}}
    elif fault == 14:
        deep = draw(st.integers(1_000, 20_000))
        return b'name = "x"\nturns = ' + b"[" * deep + b"]" * deep + b"\n"
    elif fault == 15:
        return draw(st.binary(max_size=300))
    else:  # a broken byte, or text that is not TOML, after a good job
        return _document(job).encode("utf-8") + draw(st.sampled_from([b"\xff\xfe", b"name =\n", b"[[\n", b"= 1\n"]))
    return _document(job).encode("utf-8")


def _not_an_int(text: str) -> bool:
    try:
        int(text)
    except ValueError:
        return True
    return False


BAD_INTS = st.one_of(st.integers(max_value=0).map(str), st.text(max_size=6).filter(_not_an_int))
EXPLORE = ["explore", "--variant", "save-after-reply", "--depth", "1"]
FUZZ = ["fuzz", "--variant", "save-after-reply", "--examples", "1"]
REPLAY = ["replay", "--variant", "save-after-reply", "--depth", "1"]


@st.composite
def bad_arguments(draw: st.DrawFn) -> list[str]:
    """A command line with exactly one bad value, whatever else it holds."""
    return draw(
        st.one_of(
            st.tuples(NAMES.filter(lambda n: n not in DESIGNS)).map(lambda n: ["explore", "--variant", *n]),
            BAD_INTS.map(lambda d: [*EXPLORE, "--depth", d]),
            BAD_INTS.map(lambda m: [*EXPLORE, "--max-states", m]),
            NAMES.filter(lambda t: t not in TRACKERS).map(lambda t: [*EXPLORE, "--tracker", t]),
            NAMES.filter(lambda f: f not in ("text", "json", "markdown")).map(lambda f: [*EXPLORE, "--format", f]),
            st.sampled_from(["/dev/null", "/dev/null/x", "/proc/x", "/proc/self/status/x"]).map(
                lambda o: [*EXPLORE, "--out", o]
            ),
            st.sampled_from(["", " ", ",", ",,,", "agent-loop@", "agent-loop,agent-loop", "a,,b"]).map(
                lambda v: ["compare", "--depth", "1", "--variants", v]
            ),
            NAMES.map(lambda v: ["compare", "--depth", "1", "--variants", f"agent-loop,{v}\x00"]),
            st.text(max_size=12)
            .filter(lambda c: not re.fullmatch(r"\s*\d+:(\d+=\d+(,\d+=\d+)*)?\s*", c))
            .map(lambda c: [*REPLAY, "--path", c]),
            st.integers(100, 10**6).map(lambda n: [*REPLAY, "--path", f"{n}:"]),
            st.integers(1, 9).map(lambda p: [*REPLAY, "--path", f"10:{p}=9"]),
            st.sampled_from(["--steps", "--examples", "--crashes"]).flatmap(
                lambda o: st.integers(-3, 1 if o == "--steps" else 0).map(lambda v: [*FUZZ, o, str(v)])
            ),
            NAMES.map(lambda o: [*EXPLORE, f"--{o.lstrip('-')}x"]),
        )
    )


def _in_process(argv: list[str]) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        status = main(argv)
    return status, out.getvalue(), err.getvalue()


def _refused(status: int, out: str, err: str) -> None:
    assert status == 2, (status, out, err)
    assert out == ""
    assert err.startswith("crashsweep: error: ")
    assert err.endswith("\n")
    assert err.count("\n") == 1, err
    assert "Traceback" not in err


@given(content=malformed_jobs())
def test_malformed_job_files_are_refused_in_one_line(content: bytes) -> None:
    """Any job file broken in one way: exit 2, one line naming the file, never exit 3."""
    with tempfile.TemporaryDirectory() as folder:
        job = Path(folder) / "job.toml"
        job.write_bytes(content)
        status, out, err = _in_process([*EXPLORE, "--job", str(job)])
    _refused(status, out, err)
    assert str(job) in err


@given(argv=bad_arguments())
def test_bad_arguments_are_refused_in_one_line(argv: list[str]) -> None:
    """Any command line with one bad value: exit 2, one line, never exit 3, nothing on stdout."""
    _refused(*_in_process(argv))


@pytest.mark.parametrize(
    ("job", "message"),
    [
        ("/dev/zero", "not a regular file"),
        ("{tmp}/fifo", "not a regular file"),
        ("{tmp}", "is a directory"),
        ("{tmp}/nul.toml", "U+0000"),
        ("{tmp}/deep.toml", "nested too deeply"),
    ],
)
def test_hostile_job_files_in_a_real_process(tmp_path: Path, job: str, message: str) -> None:
    """The same refusals from `python -m crashsweep`: quickly (a FIFO with no writer does not block)."""
    os.mkfifo(tmp_path / "fifo")
    (tmp_path / "nul.toml").write_text(
        'name = "x"\nturns = [["a\\u0000"]]\n[calls]\n"a\\u0000" = { tool = "t", writes = true }\n', encoding="utf-8"
    )
    (tmp_path / "deep.toml").write_text('name = "x"\nturns = ' + "[" * 5000 + "]" * 5000 + "\n", encoding="utf-8")
    done = subprocess.run(
        [sys.executable, "-m", "crashsweep", *EXPLORE, "--job", job.format(tmp=tmp_path)],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    _refused(done.returncode, done.stdout, done.stderr)
    assert message in done.stderr


def test_a_job_file_with_a_byte_order_mark_is_explored(tmp_path: Path) -> None:
    """A UTF-8 BOM at the start of the file is accepted: the output is the same as without it.

    The one-write job under save-once-per-turn has 2+1+2+2+1+2 = 10 crash points (counted by
    hand in test_job_file_is_explored above).
    """
    text = b'name = "one"\nturns = [["w"]]\n[calls]\nw = { tool = "t", writes = true }\n'
    (tmp_path / "bom.toml").write_bytes(b"\xef\xbb\xbf" + text)
    (tmp_path / "plain.toml").write_bytes(text)
    outputs = []
    command = [sys.executable, "-m", "crashsweep", "explore", "--variant", "save-once-per-turn", "--depth", "1"]
    for name in ("bom.toml", "plain.toml"):
        done = subprocess.run(
            [*command, "--job", str(tmp_path / name), "--format", "json"],
            capture_output=True,
            text=True,
            timeout=120,
            check=False,
        )
        assert (done.returncode, done.stderr) == (1, "")
        outputs.append(json.loads(done.stdout))
    assert outputs[0] == outputs[1]
    assert outputs[0]["crash_points"] == 10


def test_a_design_file_given_twice_is_refused(capsys: pytest.CaptureFixture[str]) -> None:
    """The same design file twice (as written or by another path to it) would be the same row twice: exit 2."""
    design = DESIGNS_DIR / "save-after-reply.toml"
    other = DESIGNS_DIR / ".." / "designs" / "save-after-reply.toml"
    for second in (design, other):
        status, out, err = _run(capsys, "compare", "--design", str(design), "--design", str(second), "--depth", "1")
        assert (status, out) == (2, "")
        assert err.count("\n") == 1
        assert f"{second} is named twice" in err


def test_compare_gives_every_row_the_fsync_policy_and_names_it(capsys: pytest.CaptureFixture[str]) -> None:
    """--fsync full under power loss: save-after-reply keeps its crash-only verdict (figures: test_power_loss.py)."""
    args = ["compare", "--depth", "1", "--faults", "power-loss", "--fsync", "full", "--variants", "save-after-reply"]
    assert main([*args, "--format", "json"]) == 1
    (row,) = json.loads(capsys.readouterr().out)
    assert (row["fsync"], row["scenarios"]["1"], row["with_dups"], row["missing"]) == ("full", 74, 18, 0)
    assert main(args) == 1
    assert capsys.readouterr().out.startswith("Job triage, tracker keyed, depth 1; faults power-loss; fsync full\n")


def test_compare_refuses_fresh_run_where_no_checkpoint_can_be_unreadable(capsys: pytest.CaptureFixture[str]) -> None:
    """--unreadable fresh-run with --fsync full: one line, exit 2, before any exploring."""
    assert main(["compare", "--fsync", "full", "--unreadable", "fresh-run"]) == 2
    err = capsys.readouterr().err
    assert len(err.strip().splitlines()) == 1
    assert "only --fsync none can leave the checkpoint unreadable" in err


# --- The first hour (issue 24): help, exit statuses, completion, colour, names, compare's context ---


@pytest.mark.parametrize("args", [[], ["tracker"]])
def test_a_bare_group_prints_its_help_on_lines_and_exits_2(capsys: pytest.CaptureFixture[str], args: list[str]) -> None:
    """`crashsweep` or `crashsweep tracker` alone: the help as written, line by line; exit 2, no error line."""
    status, out, err = _run(capsys, *args)
    assert (status, err) == (2, "")
    assert out.startswith("Usage: ")
    assert "\\n" not in out
    assert "\nCommands:\n" in out


def test_the_top_level_help_documents_every_exit_status_and_completion(capsys: pytest.CaptureFixture[str]) -> None:
    """--help's epilog: each exit status crashsweep uses (0, 1, 2, 3, 130), and how to turn on shell completion."""
    status, out, _ = _run(capsys, "--help")
    assert status == 0
    statuses = re.findall(r"^ +(\d+) ", out.split("Exit status:", 1)[1], flags=re.MULTILINE)
    assert statuses[:5] == ["0", "1", "2", "3", "130"]
    for shell in ("bash", "zsh", "fish"):
        assert f"_CRASHSWEEP_COMPLETE={shell}_source crashsweep" in out


def _helps(command: click.Command, path: tuple[str, ...] = ()) -> list[tuple[tuple[str, ...], str]]:
    """The --help text of `command` and of every command beneath it."""
    with click.Context(command, info_name=" ".join(("crashsweep", *path))) as ctx:
        found = [(path, command.get_help(ctx))]
    if isinstance(command, click.Group):
        for name, sub in command.commands.items():
            found += _helps(sub, (*path, name))
    return found


def test_no_help_points_to_a_file_an_install_does_not_have() -> None:
    """The wheel installs no README: no --help names one."""
    helps = _helps(cli)
    assert len(helps) > 10
    assert [path for path, text in helps if "README" in text] == []


def test_variant_names_complete_in_the_shell() -> None:
    """Shell completion offers the designs' names after --variant (and in --variants lists)."""
    complete = ShellComplete(cli, {}, "crashsweep", "_CRASHSWEEP_COMPLETE")
    for command in ("explore", "view", "replay"):
        offered = [item.value for item in complete.get_completions([command, "--variant"], "save-")]
        assert offered == ["save-once-per-turn", "save-after-reply"], command
    offered = [item.value for item in complete.get_completions(["compare", "--variants"], "agent-loop,key")]
    assert offered == ["agent-loop,keys-and-markers"]


def test_the_shell_completion_script_is_printed(monkeypatch: pytest.MonkeyPatch) -> None:
    """The line the epilog documents prints a bash completion script for crashsweep, from any launcher."""
    done = subprocess.run(
        [sys.executable, "-m", "crashsweep"],
        capture_output=True,
        text=True,
        check=False,
        env={**os.environ, "_CRASHSWEEP_COMPLETE": "bash_source"},
    )
    assert (done.returncode, done.stderr) == (0, "")
    assert "_CRASHSWEEP_COMPLETE=bash_complete" in done.stdout


def test_version_names_the_program_not_the_interpreter(capsys: pytest.CaptureFixture[str]) -> None:
    """`python -m crashsweep --version` says crashsweep, not the interpreter's path."""
    assert main(["--version"], module="/usr/bin/python3") == 0
    assert capsys.readouterr().out == f"crashsweep, version {crashsweep.__version__}\n"


_ANSI = re.compile(r"\x1b\[[0-9;]*m")


@pytest.mark.parametrize(
    ("args", "environ", "terminal", "coloured"),
    [
        ([], {}, False, False),
        ([], {}, True, True),
        ([], {"NO_COLOR": "1"}, True, False),
        (["--color", "always"], {"NO_COLOR": "1"}, False, True),
        (["--color", "never"], {}, True, False),
        (["--color", "auto"], {}, True, True),
    ],
)
def test_verdicts_are_coloured_on_a_terminal(
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
    args: list[str],
    environ: dict[str, str],
    terminal: bool,
    coloured: bool,
) -> None:
    """Colour when stdout is a terminal, unless NO_COLOR is set; --color always|never overrides both."""
    monkeypatch.delenv("NO_COLOR", raising=False)
    for name, value in environ.items():
        monkeypatch.setenv(name, value)
    monkeypatch.setattr(colour, "_is_terminal", lambda: terminal)
    status, out, _ = _run(capsys, *args, "explore", "--variant", "save-after-reply", "--depth", "1")
    assert status == 1
    assert bool(_ANSI.search(out)) is coloured
    plain = _ANSI.sub("", out)
    assert "no-duplicate  VIOLATED  shortest counterexample" in plain
    if coloured:
        assert re.search(r"\x1b\[[0-9;]*31[0-9;]*mVIOLATED\x1b\[0m", out)
        assert re.search(r"\x1b\[[0-9;]*32[0-9;]*mholds\x1b\[0m", out)
    _run(capsys, *args, "explore", "--variant", "save-after-reply", "--depth", "1", "--format", "json")
    status, out, _ = _run(capsys, *args, "explore", "--variant", "save-after-reply", "--depth", "1", "--format", "json")
    assert not _ANSI.search(out)  # never in a format for programs


def test_color_is_taken_after_the_command_too(capsys: pytest.CaptureFixture[str]) -> None:
    """--color after the command decides as before it, and over it; every command and subcommand takes it."""
    from crashsweep.cli.main import cli

    args = ["explore", "--variant", "save-after-reply", "--depth", "1"]
    assert _ANSI.search(_run(capsys, *args, "--color", "always")[1])
    assert not _ANSI.search(_run(capsys, "--color", "always", *args, "--color", "never")[1])
    paths = [[name] for name in cli.commands]
    paths += [[name, sub] for name, group in cli.commands.items() for sub in getattr(group, "commands", {})]
    for path in paths:
        status, out, err = _run(capsys, *path, "--color", "never", "--help")
        assert (status, err) == (0, ""), path
        assert "--color" in out, path


def test_compare_colours_its_verdict_column(capsys: pytest.CaptureFixture[str]) -> None:
    """The table's verdicts are coloured too, and the columns stay aligned."""
    args = ["compare", "--variants", "save-after-reply,idempotency-keys", "--depth", "1"]
    status, plain, _ = _run(capsys, *args)
    status, out, _ = _run(capsys, "--color", "always", *args)
    assert status == 1
    assert _ANSI.sub("", out) == plain
    assert "\x1b[1;31mno-duplicate violated\x1b[0m" in out.splitlines()[4]


def test_a_mistyped_variant_name_gets_a_suggestion(capsys: pytest.CaptureFixture[str]) -> None:
    """As click does for options and commands: did you mean ...? (for --variant and in --variants)."""
    status, _, err = _run(capsys, "explore", "--variant", "save-after-rely")
    assert status == 2
    assert err.count("\n") == 1
    assert "unknown variant 'save-after-rely'" in err
    assert "did you mean 'save-after-reply'?" in err
    status, _, err = _run(capsys, "compare", "--variants", "agent-loop,keys-and-marker@keyless")
    assert (status, err.count("\n")) == (2, 1)
    assert "did you mean 'keys-and-markers'?" in err
    status, _, err = _run(capsys, "explore", "--variant", "zzzz")
    assert "did you mean" not in err


def test_variant_and_design_together_say_not_both(capsys: pytest.CaptureFixture[str]) -> None:
    """Both --variant and --design: the message says to give one, not both; neither: either one."""
    status, _, err = _run(capsys, "explore", "--variant", "agent-loop", "--design", "x.toml")
    assert (status, err) == (2, "crashsweep: error: give --variant NAME or --design FILE, not both\n")


def test_compare_says_the_job_tracker_and_depth_it_ran_on(capsys: pytest.CaptureFixture[str]) -> None:
    """A one-tracker table names its tracker (NAME@keyless keeps its tracker in sight), its job and its depth."""
    status, out, _ = _run(capsys, "compare", "--variants", "agent-loop@keyless", "--depth", "1")
    assert status == 0
    assert out.splitlines()[0] == "Job triage, tracker keyless, depth 1"
    status, out, _ = _run(capsys, "compare", "--variants", "agent-loop@keyless", "--depth", "1", "--format", "markdown")
    assert out.splitlines()[0] == "## Job triage, tracker keyless, depth 1"
    status, out, _ = _run(capsys, "compare", "--variants", "agent-loop@keyless,agent-loop", "--depth", "1")
    assert out.splitlines()[0] == "Job triage, depth 1"
    assert "agent-loop (keyless)" in out


def test_compare_headers_count_crashes_one_way(capsys: pytest.CaptureFixture[str]) -> None:
    """--depth 3: 1 crash, 2 crashes, 3 crashes (not "3 crashes" beside "once" and "twice")."""
    _, out, _ = _run(capsys, "compare", "--variants", "idempotency-keys", "--depth", "3", "--format", "markdown")
    assert "| variant | 1 crash | 2 crashes | 3 crashes | with_dups |" in out


def _commands(group: click.Group, words: tuple[str, ...] = ()) -> list[tuple[tuple[str, ...], click.Command]]:
    """Every command under `group`, with the words that name it."""
    found: list[tuple[tuple[str, ...], click.Command]] = []
    for name, command in group.commands.items():
        found.append(((*words, name), command))
        if isinstance(command, click.Group):
            found += _commands(command, (*words, name))
    return found


def test_every_design_name_option_completes_in_the_shell() -> None:
    """Whatever command takes --variant or --variants, the shell completes design names there (read off the CLI)."""
    complete = ShellComplete(cli, {}, "crashsweep", "_CRASHSWEEP_COMPLETE")
    checked = []
    for words, command in _commands(cli):
        for param in command.params:
            for option in set(param.opts) & {"--variant", "--variants"}:
                offered = [item.value for item in complete.get_completions([*words, option], "save-")]
                assert offered == ["save-once-per-turn", "save-after-reply"], (words, option)
                checked.append(words[-1])
    assert {"explore", "view", "replay", "fuzz", "sweep", "compare", "conform"} <= set(checked)
