"""The `sweep` command: of a design, of your own loop, of a framework."""

from __future__ import annotations

import json
import os
import shlex
import signal
import subprocess
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import pytest

from crashsweep.cli.main import main
from crashsweep.cli.prog import ENV as PROG_ENV
from tests.docs.shown import printed
from tests.paths import ROOT
from tests.realsweep.helpers import child_env

EXAMPLES = ROOT / "docs" / "examples"
CRASHSWEEP = str(Path(sys.executable).with_name("crashsweep"))
EXAMPLE = ["sweep", "--target", "my_loop:run", "--check", "my_loop_check:check"]
SHOWN = "cd docs/examples && ../../bin/crashsweep " + " ".join(EXAMPLE)
"""How docs/guide/sweep.md shows the example's sweep; tests/docs/test_blocks.py runs each block that shows one."""


@dataclass(frozen=True, slots=True)
class Ran:
    """What a command run in this process gave: its exit status and what it wrote."""

    returncode: int
    stdout: str
    stderr: str


Run = Callable[..., Ran]


@pytest.fixture
def run(monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> Run:
    """Run a crashsweep command line (without `crashsweep`) in this process, from a folder (docs/examples by default).

    As the `crashsweep` script does (it calls main), with the example's modules found in that
    folder (the command puts it on sys.path, which is restored after the test) and the printed
    commands starting with `crashsweep`. The processes swept are real, started by the sweep; a
    test that needs crashsweep's own process (a signal to it) starts it with CRASHSWEEP.
    """
    monkeypatch.setattr(sys, "path", list(sys.path))
    monkeypatch.delenv(PROG_ENV, raising=False)

    def ran(args: list[str], cwd: Path = EXAMPLES) -> Ran:
        monkeypatch.chdir(cwd)
        capsys.readouterr()
        status = main(args)
        out, err = capsys.readouterr()
        return Ran(status, out, err)

    return ran


def test_sweep_of_a_design_prints_the_explorers_columns(capsys: pytest.CaptureFixture[str]) -> None:
    """save-after-reply at depth 1: 34 scenarios, 9 with a duplicate, exit 1 (no-duplicate violated)."""
    status = main(["sweep", "--variant", "save-after-reply", "--depth", "1", "--format", "json", "--workers", "2"])
    data = json.loads(capsys.readouterr().out)
    assert status == 1
    assert (data["crash_points"], data["scenarios"], data["with_dups"], data["dups"]) == (34, {"1": 34}, 9, 9)
    assert data["invariants"]["no-duplicate"]["holds"] is False


MY_DESIGN = ROOT / "docs" / "my-design.toml"


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["sweep"], "give either --variant"),
        (["sweep", "--variant", "nope"], "unknown variant 'nope'"),
        (["sweep", "--target", "my_loop:run"], "--target needs --check"),
        (["sweep", "--variant", "agent-loop", "--target", "x:y"], "give either --variant"),
        (["sweep", "--target", "my_loop:run", "--check", "nothing"], "expected module:function"),
        (["sweep", "--variant", "agent-loop", "--design", str(MY_DESIGN)], "give either --variant or --design"),
        (["sweep", "--design", "/nonexistent.toml"], "cannot read design file"),
        (["sweep", "--framework", "langgraph", "--variant", "agent-loop"], "give either --variant"),
        (["sweep", "--variant", "agent-loop", "--keys", "off"], "go with --framework"),
        (["sweep", "--framework", "dbos", "--durability", "sync"], "--durability goes with --framework langgraph"),
        (["sweep", "--framework", "ray"], "'ray' is not one of"),
        (["sweep", "--framework", "dbos", "--arg", "a=1"], "--check and --arg go with --target"),
        (["sweep", "--target", "my_loop:run", "--check", "my_loop_check:check", "--arg", "x"], "expected key=value"),
        (["sweep", "--framework", "dbos", "--scenarios", "/no/such/folder/s.jsonl"], "no such folder"),
        (["sweep", "--framework", "dbos", "--crash", "x", "--format", "json"], "--crash re-runs one scenario"),
        (["sweep", "--variant", "agent-loop", "--state-key", "no_such_module:key"], "cannot import"),
        (["sweep", "--variant", "agent-loop", "--state-key", "nocolon"], "expected module:function"),
        (["sweep", "--variant", "agent-loop", "--no-dedup", "--kill"], "go with dedup"),
    ],
)
def test_bad_input_is_one_line_and_exit_2(
    args: list[str], message: str, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    """Usage errors (sources, design files, framework, scenario and dedup options): exit 2, one line, no traceback."""
    assert main(args) == 2
    err = capsys.readouterr().err
    assert message in err
    assert err.count("\n") == 1


def test_the_readme_example_sweeps_clean_against_a_keyed_tracker() -> None:
    """docs/examples/my_loop.py at depth 2 through the real command: no duplicate, nothing missing, exit 0.

    The command is docs/guide/sweep.md's (and the README's), which tests/docs/test_blocks.py runs
    and compares with what the page shows: the figures are read off the page (no verdict
    violated: exit 0).
    """
    shown = printed("docs/guide/sweep.md", f"{SHOWN} --depth 2")
    assert "crash points  5" in shown
    assert "1 crash: 5   2 crashes: 12   (17 in all)" in shown
    assert "with_dups 0   dups 0   missing 0" in shown
    assert "no-duplicate  holds" in shown
    assert "VIOLATED" not in shown


def test_the_example_against_a_keyless_tracker_finds_the_duplicate(run: Run) -> None:
    """The same loop against a tracker that ignores keys: a crash after `filed` files the issue twice."""
    done = run([*EXAMPLE, "--depth", "1", "--tracker", "keyless"])
    assert done.returncode == 1, done.stderr
    assert "no-duplicate  VIOLATED  first in scenario 2: crash at point 2 'filed disk full on db-1'" in done.stdout


def test_the_example_design_file_is_swept_for_real() -> None:
    """sweep --design docs/my-design.toml: real processes, the explorer's crash points, nothing duplicated.

    docs/guide/designs.md shows the explorer's row and the sweep's, and tests/docs/test_blocks.py
    runs both commands and compares what they print with the page: the figures are read off it.
    """
    modelled = printed("docs/guide/designs.md", "bin/crashsweep explore --design docs/my-design.toml")
    swept = printed("docs/guide/designs.md", "bin/crashsweep sweep --design docs/my-design.toml --depth 1")
    assert swept.startswith("my-design  (real sweep; ")
    points = [next(line for line in text.splitlines() if "crash points" in line) for text in (modelled, swept)]
    assert points[0] == points[1]
    assert "with_dups 0   dups 0   missing 0" in swept
    assert "VIOLATED" not in swept  # exit 0


def test_keep_holds_every_scenario_as_json_lines_and_the_row_names_the_args(tmp_path: Path, run: Run) -> None:
    """The README example with --arg: the row names it, and --keep holds scenarios.jsonl.

    The example's 5 crash points give 5 one-crash scenarios: 6 lines with the uninterrupted run.
    """
    keep = tmp_path / "kept"
    args = [*EXAMPLE, "--depth", "1", "--arg", "keys=on", "--keep", str(keep), "--workers", "2"]
    done = run(args)
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith("my_loop:run keys=on  (real sweep")
    lines = (keep / "scenarios.jsonl").read_text().splitlines()
    assert len(lines) == 6
    assert json.loads(lines[0])["crashes"] == []


def test_dedup_and_every_scenario_print_the_same_row(capsys: pytest.CaptureFixture[str]) -> None:
    """sweep merges worlds by default (snapshots); --kill kills for real; --no-dedup runs every scenario."""
    base = ["sweep", "--variant", "save-once-per-turn", "--depth", "1", "--format", "json", "--workers", "2"]
    rows = []
    for extra in ([], ["--kill"], ["--no-dedup"]):
        assert main([*base, *extra]) == 1  # save-once-per-turn duplicates: exit 1
        rows.append(json.loads(capsys.readouterr().out))
    assert rows[0]["crashed_worlds"] == "snapshots"
    assert rows[1]["crashed_worlds"] == "killed"
    assert "worlds" not in rows[2]
    assert rows[0]["worlds"] == rows[1]["worlds"]
    assert rows[0]["processes"] < rows[1]["processes"] < rows[2]["processes"]
    same = [
        {k: v for k, v in row.items() if k not in ("processes", "seconds", "worlds", "crashed_worlds")} for row in rows
    ]
    assert same[0] == same[1] == same[2]
    assert same[0]["scenarios"] == {"1": 18}  # the published table: save-once-per-turn, depth 1


def test_sweep_of_a_design_under_a_lost_reply_counts_moves_of_each_kind(capsys: pytest.CaptureFixture[str]) -> None:
    """idempotency-keys: 34 crash points and 3 writes whose reply may be lost; the key keeps it clean."""
    args = ["sweep", "--variant", "idempotency-keys", "--faults", "lost-reply", "--depth", "1", "--workers", "2"]
    assert main(args) == 0
    out = capsys.readouterr().out
    assert "depth 1, faults lost-reply)" in out
    assert "1 move: 37 (their 37 moves: crash 34, lost-reply 3)" in out
    assert "with_dups 0" in out


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--variant", "agent-loop", "--faults", "lost-reply", "--depth", "2", "--no-dedup"], "use depth 1, not 2"),
        (["--variant", "agent-loop", "--faults", "lost-reply", "--crash", "x"], "takes no other --faults"),
        (["--framework", "dbos", "--faults", "lost-reply", "--depth", "1"], "--faults goes with --variant"),
        (["--target", "m:f", "--check", "m:g", "--call-ids", "fresh"], "--call-ids goes with"),
    ],
)
def test_sweep_refuses_faults_it_cannot_inject_before_sweeping(
    capsys: pytest.CaptureFixture[str], args: list[str], message: str
) -> None:
    assert main(["sweep", *args]) == 2
    out, err = capsys.readouterr()
    assert out == ""
    assert err.count("\n") == 1
    assert message in err


def test_sweep_under_faults_merges_worlds_or_runs_every_scenario(capsys: pytest.CaptureFixture[str]) -> None:
    """A sweep with --faults merges worlds by default (the row has worlds); --no-dedup runs every scenario."""
    args = ["sweep", "--variant", "idempotency-keys", "--faults", "lost-reply", "--depth", "1", "--workers", "2"]
    assert main([*args, "--format", "json", "--no-dedup"]) == 0
    row = json.loads(capsys.readouterr().out)
    assert "worlds" not in row
    assert row["scenarios"] == {"1": 37}
    assert row["with_dups"] == 0
    assert main([*args, "--format", "json"]) == 0
    merged = json.loads(capsys.readouterr().out)
    assert "worlds" in merged
    assert (merged["scenarios"], merged["with_dups"], merged["moves"]) == (row["scenarios"], 0, row["moves"])


def test_sweep_under_pause_lists_each_scenario_with_where_it_paused_and_woke(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    """agent-loop-os-lock on one-write: the restart is refused, one pause scenario per crash point (FAULTS.md 7.1)."""
    root = EXAMPLES.parents[1] / "examples"
    listing = tmp_path / "scenarios.jsonl"
    args = ["sweep", "--design", str(root / "agent-loop-os-lock.toml"), "--job", str(root / "one-write.toml")]
    assert main([*args, "--faults", "pause", "--depth", "1", "--workers", "2", "--scenarios", str(listing)]) == 0
    out = capsys.readouterr().out
    points = int(next(line for line in out.splitlines() if "crash points" in line).split()[-1])
    assert f"1 move: {2 * points} (their {2 * points} moves: crash {points}, pause {points})" in out
    records = [json.loads(line) for line in listing.read_text().splitlines()]
    paused = [r for r in records if r.get("faults")]
    assert len(paused) == points
    assert ["pause at start: tmp written, wake at p2 stopped"] in [r["faults"] for r in paused]
    assert {r["processes"] for r in paused} == {2}  # the refused restart, then process 1 finishes the run


def test_ctrl_c_with_keep_says_where_the_work_folders_stay(tmp_path: Path) -> None:
    """SIGINT during `sweep --keep`: one line naming the folder (not "nothing was written"), exit 130."""
    keep = tmp_path / "kept"
    command = [CRASHSWEEP, "sweep", "--variant", "keys-and-markers", "--depth", "3", "--no-dedup", "--keep", str(keep)]
    process = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=child_env())
    try:
        # Depth 3 with every scenario from scratch runs for many minutes; the first kept folder
        # says the sweep is under way.
        deadline = 120
        for _ in range(deadline * 10):
            if keep.is_dir() and any(keep.iterdir()):
                break
            if process.poll() is not None:
                break
            time.sleep(0.1)
        assert process.poll() is None, process.communicate()
        process.send_signal(signal.SIGINT)
        out, err = process.communicate(timeout=60)
    finally:
        if process.poll() is None:  # a failed wait leaves no depth-3 sweep running: this test's own process
            process.kill()
            process.communicate()
    assert process.returncode == 130
    assert out == ""
    assert err == f"crashsweep: interrupted; the work folders swept so far stay in {keep}\n"
    assert any(keep.iterdir())


def _refused_before_any_process(monkeypatch: pytest.MonkeyPatch) -> None:
    """Make starting a sweep an error of the test: a refusal must come before any process."""
    from crashsweep.realsweep import api

    def no_sweep(*_: object, **__: object) -> None:
        raise AssertionError("a sweep started")

    for name in ("sweep", "replay", "reference_run"):
        monkeypatch.setattr(api, name, no_sweep)


@pytest.mark.parametrize(
    ("given", "message"),
    [
        ("fifo", "fifo exists and is not a regular file"),
        ("/proc/version", "/proc/version: cannot create a file in /proc"),
        ("", "expected a file name, got nothing"),
        (".", ". exists and is not a regular file"),
        ("folder", "folder exists and is not a regular file"),
        ("link.jsonl", "link.jsonl is a symbolic link: name the file itself"),
    ],
)
def test_scenarios_must_be_a_regular_file_or_a_new_name_in_a_writable_folder(
    given: str, message: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """--scenarios on a device, a folder, a link or in /proc: one line, exit 2, before any process."""
    monkeypatch.chdir(tmp_path)
    (tmp_path / "folder").mkdir()
    (tmp_path / "target.jsonl").write_text("mine\n")
    (tmp_path / "link.jsonl").symlink_to(tmp_path / "target.jsonl")
    os.mkfifo(tmp_path / "fifo")  # not a regular file, and not one of the machine's devices
    _refused_before_any_process(monkeypatch)
    assert main(["sweep", "--variant", "save-after-reply", "--depth", "1", "--scenarios", given]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1
    assert message in err
    assert (tmp_path / "fifo").is_fifo()
    assert (tmp_path / "target.jsonl").read_text() == "mine\n"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["fifo", "folder", "link.jsonl", "target.jsonl"]


@pytest.mark.parametrize(
    ("given", "message"),
    [
        ("/dev/null", "/dev/null exists and is not a folder"),
        ("/proc/x", "/proc/x: cannot create a folder in /proc"),
        ("", "expected a folder name, got nothing"),
        ("file", "file exists and is not a folder"),
        ("full", "full is not empty: give a new or empty folder"),
    ],
)
def test_keep_must_be_a_new_or_empty_folder_where_one_can_be_made(
    given: str, message: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """--keep on a device, in /proc, on a file or a full folder: one line, exit 2, before any process."""
    monkeypatch.chdir(tmp_path)
    (tmp_path / "file").write_text("mine\n")
    (tmp_path / "full").mkdir()
    (tmp_path / "full" / "x").write_text("x")
    _refused_before_any_process(monkeypatch)
    assert main(["sweep", "--variant", "save-after-reply", "--depth", "1", "--keep", given]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1
    assert message in err
    assert not Path("/proc/x").exists()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["file", "full"]


@pytest.mark.parametrize("point", ["#0", "#-1", "#abc", "#"])
def test_a_crash_that_can_never_match_is_refused_before_any_process(
    point: str, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    _refused_before_any_process(monkeypatch)
    assert main(["sweep", "--variant", "save-after-reply", "--crash", point]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1
    assert "has no name before '#'" in err


def test_a_crash_point_the_program_never_passes_is_refused_with_the_known_ones(
    capsys: pytest.CaptureFixture[str],
) -> None:
    """An unknown name: exit 2, one line that names the points the first process passed."""
    assert main(["sweep", "--variant", "save-after-reply", "--crash", "nosuch"]) == 2
    out, err = capsys.readouterr()
    assert out == ""
    assert err.count("\n") == 1
    assert "--crash 'nosuch': the program passes no such point" in err
    assert "'tracker accepted create_a'" in err


def test_sigterm_stops_the_tracker_service_and_the_zygote_and_removes_the_scratch_folder(tmp_path: Path) -> None:
    """SIGTERM to a running sweep: its service and zygote end, its scratch folder goes, its pipes close; exit 130."""
    from tests.realsweep.process.kin import alive, children, wait_until

    scratch = tmp_path / "tmp"
    scratch.mkdir()
    command = [CRASHSWEEP, "sweep", "--variant", "keys-and-markers", "--depth", "3", "--no-dedup"]
    env = child_env(TMPDIR=str(scratch))
    process = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)
    try:
        wait_until(lambda: len(children(process.pid)) >= 2 or process.poll() is not None, 120, "service and zygote")
        helpers = children(process.pid)
        assert len(helpers) >= 2, process.communicate()
        assert [path.name[:11] for path in scratch.iterdir()] == ["crashsweep-"]
        process.send_signal(signal.SIGTERM)
        out, err = process.communicate(timeout=60)  # returns only once no one holds its pipes
        assert out == ""
    finally:
        if process.poll() is None:
            process.kill()
            process.communicate()
    assert process.returncode == 130, err
    assert err.strip() == "crashsweep: interrupted; nothing was written"  # (click writes an empty line first)
    wait_until(lambda: not any(alive(pid) for pid in helpers), 10, "the sweep's children")
    assert list(scratch.iterdir()) == []


def test_the_example_without_keys_duplicates_where_a_crash_follows_a_filing() -> None:
    """--arg keys=off (my_loop declares it): duplicates exactly where the hand count puts them.

    my_loop files two issues, saving after each. A crash at `filed <title>` (points 2 and 4)
    comes after the tracker filed it and before the save: the restart files it again, and
    without a key the tracker keeps both. At `run started` and at `saved <title>` the disk
    already holds what was done. So at depth 1: 2 of 5 scenarios with one duplicate each.
    The figures are read off docs/guide/sweep.md, whose block of this command
    tests/docs/test_blocks.py runs (no-duplicate violated: exit 1).
    """
    shown = printed("docs/guide/sweep.md", f"{SHOWN} --depth 1 --arg keys=off")
    assert "crash points  5\n" in shown
    assert "with_dups 2   dups 2   missing 0" in shown
    assert "no-duplicate  VIOLATED  first in scenario 2: crash at point 2 'filed disk full on db-1'" in shown


def test_an_undeclared_arg_or_value_is_refused_before_any_process(run: Run) -> None:
    """A typo in --arg is one line and exit 2, with no sweep (the module's CRASHSWEEP_ARGS)."""
    for arg, message in (
        ("kes=off", "--arg kes: my_loop takes keys (CRASHSWEEP_ARGS)"),
        ("keys=of", "--arg keys=of: my_loop allows on, off"),
    ):
        done = run([*EXAMPLE, "--arg", arg])
        assert (done.returncode, done.stdout, done.stderr) == (2, "", f"crashsweep: error: {message}\n")


def test_list_points_names_each_point_where_the_program_passes_it(run: Run) -> None:
    """--list-points on my_loop: its 5 points in order, each at a line of my_loop.py that calls crashpoint."""
    done = run([*EXAMPLE, "--list-points", "--format", "json"])
    assert done.returncode == 0, done.stderr
    points = json.loads(done.stdout)["points"]
    source = (EXAMPLES / "my_loop.py").read_text().splitlines()
    marked = {n for n, line in enumerate(source, start=1) if line.strip().startswith("crashpoint(")}
    assert [p["name"] for p in points] == [
        "run started",
        "filed disk full on db-1",
        "saved disk full on db-1",
        "filed fan noise on db-2",
        "saved fan noise on db-2",
    ]
    assert [p["occurrence"] for p in points] == [1, 1, 1, 1, 1]
    files = {p["where"].rpartition(":")[0] for p in points}
    assert files == {"my_loop.py"}
    assert {int(p["where"].rpartition(":")[2]) for p in points} == marked


def test_list_points_of_a_framework_agent_are_its_sweeps_points(capsys: pytest.CaptureFixture[str]) -> None:
    """The built-in LangGraph agent (durability sync): the 29 crash points of its sweep (docs/performance.md).

    Each is passed in the adapter (the saver's put and put_writes, the tracker tools), so each
    is shown as a line of crashsweep/realsweep/adapters/.
    """
    assert main(["sweep", "--framework", "langgraph", "--durability", "sync", "--list-points", "--format", "json"]) == 0
    points = json.loads(capsys.readouterr().out)["points"]
    assert len(points) == 29
    assert all(p["where"].startswith("crashsweep/realsweep/adapters/") for p in points)
    assert sum(p["name"].startswith("tracker ") for p in points) == 3  # the job's three writes


def test_list_points_of_a_command_that_logs_its_own_points(tmp_path: Path, run: Run) -> None:
    """A program in any language appends its points to $CRASHSWEEP_POINTS_LOG: listed, with no place known."""
    program = tmp_path / "agent.sh"
    program.write_text('#!/bin/sh\necho "sent" >> "$CRASHSWEEP_POINTS_LOG"\necho "saved" >> "$CRASHSWEEP_POINTS_LOG"\n')
    program.chmod(0o755)
    command = ["sweep", "--target", str(program), "--check", "my_loop_check:check", "--list-points"]
    done = run(command)
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert lines[0] == f"{program}: 2 crash points in one uninterrupted run"
    assert [line.split() for line in lines[2:4]] == [["1", "sent", "1", "-"], ["2", "saved", "1", "-"]]


def test_determinism_holds_for_the_example_and_the_reference_loop(capsys: pytest.CaptureFixture[str]) -> None:
    """my_loop: 6 start worlds (the empty one and one per crash point); agent-loop: one more than its model's points.

    Both take their run IDs from fresh_id(), which derives them from the start world, so two
    runs from one world send the same effects. The count of start worlds comes from elsewhere:
    my_loop's 5 points (test_list_points...), agent-loop's from the model (explore on triage).
    my_loop's check is docs/guide/sweep.md's block, which tests/docs/test_blocks.py runs: read off the page.
    """
    shown = printed("docs/guide/sweep.md", f"{SHOWN} --determinism")
    assert shown.startswith("my_loop:run: deterministic holds (6 start worlds, each run twice: ")
    assert shown.count("\n") == 1
    assert main(["explore", "--variant", "agent-loop", "--depth", "1", "--format", "json"]) == 0
    points = json.loads(capsys.readouterr().out)["crash_points"]
    assert main(["sweep", "--variant", "agent-loop", "--determinism", "--format", "json"]) == 0
    assert json.loads(capsys.readouterr().out) == {
        "target": "agent-loop",
        "deterministic": True,
        "start_worlds": points + 1,
    }


def test_a_run_id_from_the_clock_is_not_deterministic(tmp_path: Path, run: Run) -> None:
    """my_loop with its run ID from time.time_ns(): the same points, but each run files under another run ID.

    The first start world, the empty one, already differs: exit 1, both runs printed, and the
    command that checks again.
    """
    source = (EXAMPLES / "my_loop.py").read_text()
    clocked = source.replace(
        'state = {"run": fresh_id(), "filed": {}}', 'state = {"run": str(time.time_ns()), "filed": {}}'
    )
    assert clocked != source
    (tmp_path / "my_loop.py").write_text(clocked.replace("import os\n", "import os\nimport time\n", 1))  # by its name
    (tmp_path / "my_loop_check.py").write_text((EXAMPLES / "my_loop_check.py").read_text())
    command = [*EXAMPLE, "--determinism"]
    done = run(command, cwd=tmp_path)
    assert done.returncode == 1, done.stderr
    lines = done.stdout.splitlines()
    assert lines[0] == "my_loop:run: deterministic VIOLATED from the empty world (two uninterrupted runs)"
    first = lines[lines.index("  first run, crash points of its last process (5):") + 1 :][:5]
    second = lines[lines.index("  second run, crash points of its last process (5):") + 1 :][:5]
    assert first == second
    runs = {json.loads(line.split(". ", 1)[1])["run"] for line in lines if line.startswith("    ") and '"run"' in line}
    assert len(runs) == 2
    assert lines[-1].endswith("--determinism")


def _unmarked_example(folder: Path) -> Path:
    """docs/examples' my_loop with every `crashpoint(...)` line removed, and its check, in `folder`."""
    source = (EXAMPLES / "my_loop.py").read_text().splitlines(keepends=True)
    kept = [line for line in source if not line.strip().startswith("crashpoint(")]
    assert len(source) - len(kept) == 3  # its marks: run started, filed <title>, saved <title>
    (folder / "my_loop.py").write_text("".join(kept))
    (folder / "my_loop_check.py").write_text((EXAMPLES / "my_loop_check.py").read_text())
    return folder


def test_auto_points_find_the_unmarked_examples_duplicates(tmp_path: Path, run: Run) -> None:
    """my_loop without its marks, --points auto, keyless, keys off, depth 1: the marked verdicts, more duplicates.

    By hand, from the program and spec/POINTS.md section 2: each checkpoint save passes 7 points
    (write of the temp file, fsync before and after, rename before and after, the folder's fsync
    before and after) and each filing 3 (connect, send, reply): 7 + 2 x (3 + 7) = 27. A crash
    duplicates a filing when it comes after the tracker's reply and before the save's rename is
    done: after reply, before write, before and after fsync, before rename, 5 points per
    filing, 10 in all, one duplicate each (the marked sweep: 2, at `filed <title>`).
    """
    unmarked = _unmarked_example(tmp_path)
    common = ["--depth", "1", "--arg", "keys=off", "--tracker", "keyless", "--format", "json", "--workers", "2"]
    marked = run([*EXAMPLE, *common])
    auto = run([*EXAMPLE, *common, "--points", "auto"], cwd=unmarked)
    assert (marked.returncode, auto.returncode) == (1, 1), auto.stderr
    before, after = json.loads(marked.stdout), json.loads(auto.stdout)
    verdicts = {name: v["holds"] for name, v in before["invariants"].items()}
    assert {name: v["holds"] for name, v in after["invariants"].items()} == verdicts
    assert (after["crash_points"], after["with_dups"], after["dups"], after["points"]) == (27, 10, 10, "auto")
    assert after["dups"] >= before["dups"] == 2


def test_auto_points_have_the_same_names_over_two_runs(tmp_path: Path, run: Run) -> None:
    unmarked = _unmarked_example(tmp_path)
    runs = [run([*EXAMPLE, "--points", "auto", "--list-points", "--format", "json"], cwd=unmarked) for _ in range(2)]
    names = [[(p["name"], p["occurrence"]) for p in json.loads(done.stdout)["points"]] for done in runs]
    assert names[0] == names[1]
    assert len(names[0]) == 27
    source = (unmarked / "my_loop.py").read_text().splitlines()
    effects = {n for n, line in enumerate(source, start=1) if "checkpoint.save(" in line or "create_issue(" in line}
    assert {int(name.rpartition(":")[2]) for name, _ in names[0]} == effects  # the loop's own lines, no others


def test_auto_points_of_the_reference_loop_judge_its_designs(capsys: pytest.CaptureFixture[str]) -> None:
    """The reference loop with its marks passed silently: save-after-reply duplicates, idempotency-keys does not.

    triage's three writes, by hand: after the tracker's reply and before the checkpoint's rename
    (after reply, before write, before rename: fsync policy none) a crash re-sends the write,
    3 points per write; idempotency keys make each re-send a no-op. save-after-reply's figures
    are read off docs/guide/points.md's block, which tests/docs/test_blocks.py runs.
    """
    shown = printed("docs/guide/points.md", "bin/crashsweep sweep --variant save-after-reply --depth 1 --points auto")
    assert "with_dups 9   dups 9   missing 0" in shown
    assert "no-duplicate  VIOLATED" in shown
    args = ["sweep", "--variant", "idempotency-keys", "--depth", "1", "--points", "auto", "--format", "json"]
    assert main([*args, "--workers", "2"]) == 0
    row = json.loads(capsys.readouterr().out)
    assert row["invariants"]["no-duplicate"]["holds"] is True
    assert row["with_dups"] == 0


@pytest.mark.parametrize(
    ("extra", "message"),
    [
        (["--target", "python3 agent.py", "--points", "auto"], "--points auto finds the effects of a Python entry"),
        (["--target", "my_loop:run", "--points-include", "fsync"], "--points-include and --points-exclude filter"),
    ],
)
def test_points_a_target_cannot_give_are_refused_in_one_line(extra: list[str], message: str, run: Run) -> None:
    done = run(["sweep", *extra, "--check", "my_loop_check:check"])
    assert (done.returncode, done.stdout) == (2, "")
    assert message in done.stderr
    assert len(done.stderr.splitlines()) == 1


def test_auto_points_sweep_at_depth_2(capsys: pytest.CaptureFixture[str]) -> None:
    """Depth 2 under auto points: every restart's own effects are crash points too; keys still hold.

    Every one-crash scenario is extended at each point of its restart: the depth-2 scenarios
    number at least the depth-1 ones (each restart passes a point before it ends).
    """
    args = ["sweep", "--variant", "idempotency-keys", "--depth", "2", "--points", "auto", "--format", "json"]
    assert main([*args, "--workers", "2"]) == 0
    row = json.loads(capsys.readouterr().out)
    assert row["points"] == "auto"
    assert row["scenarios"]["2"] >= row["scenarios"]["1"] == row["crash_points"]
    assert (row["with_dups"], row["missing"]) == (0, 0)


def test_a_rerun_of_a_scenario_that_breaks_approved_exactly_exits_1(capsys: pytest.CaptureFixture[str]) -> None:
    """attempt-markers with approvals in memory: the ladder sends comment_a with no approval (CONVERSATIONS.md 2)."""
    args = ["--design", str(ROOT / "examples" / "attempt-markers-memory.toml")]
    args += ["--job", str(ROOT / "examples" / "triage-approval.toml"), "--tracker", "keyless-lookup"]
    assert main(["sweep", *args, "--crash", "marker comment_a: renamed"]) == 1
    assert "approved-exactly: comment_a@1 was applied with no approval that matches it" in capsys.readouterr().out


# --points from:FILE (spec/POINTS.md section 6), swept for real.

SAVE_AFTER_REPLY = ["sweep", "--variant", "save-after-reply", "--depth", "1"]
TWO = "# two of save-after-reply's points\ntracker accepted create_a#1\n\ntool returned create_a#1\n"
"""The points 6 and 7 of save-after-reply's 34 (its --list-points): the tracker took create_a, no result saved."""


@pytest.mark.parametrize("mode", [[], ["--no-dedup"], ["--list-points"]])
def test_a_listed_point_the_run_does_not_pass_is_refused_after_its_uninterrupted_run(
    mode: list[str], run: Run, tmp_path: Path
) -> None:
    """As --crash says a pass the program does not make, with how many points the run passes and how to list them."""
    tmp_path.joinpath("p.txt").write_text(
        "tracker accepted create_a#1\ntracker accepted create_a#2\n", encoding="utf-8"
    )
    done = run([*SAVE_AFTER_REPLY, "--points", "from:p.txt", *mode], tmp_path)
    assert (done.returncode, done.stdout) == (2, "")
    assert done.stderr == (
        "crashsweep: error: p.txt:2: 'tracker accepted create_a#2': the program passes 'tracker accepted create_a'"
        " once (tracker accepted create_a#1); the uninterrupted run passes 34 crash points: list them with"
        " --points marked --list-points\n"
    )


def test_a_file_of_every_point_gives_the_row_of_the_whole_sweep(run: Run, tmp_path: Path) -> None:
    """Every point --list-points shows, listed: the same row as without the file (only its points key says so)."""
    listing = json.loads(run([*SAVE_AFTER_REPLY, "--list-points", "--format", "json"], tmp_path).stdout)
    tmp_path.joinpath("all.txt").write_text(
        "".join(f"{p['name']}#{p['occurrence']}\n" for p in listing["points"]), "utf-8"
    )
    whole = json.loads(run([*SAVE_AFTER_REPLY, "--format", "json"], tmp_path).stdout)
    listed = json.loads(run([*SAVE_AFTER_REPLY, "--format", "json", "--points", "from:all.txt"], tmp_path).stdout)
    assert (listed.pop("points"), listed.pop("points_passed"), whole.pop("points")) == ("from:all.txt", 34, "marked")
    for row in (whole, listed):
        del row["seconds"]
    assert listed == whole


@pytest.mark.parametrize("how", [[], ["--no-dedup"], ["--kill"]], ids=["snapshots", "every-scenario", "killed"])
def test_two_listed_points_are_two_crash_points_and_two_scenarios(how: list[str], run: Run, tmp_path: Path) -> None:
    """save-after-reply at depth 1 from TWO: 2 of its 34 points, 2 scenarios, each a duplicate of create_a.

    By hand, from `--list-points` (34 points; 6 'tracker accepted create_a', 7 'tool returned
    create_a', each passed once) and the loop: a crash at either leaves create_a filed at the
    tracker and the checkpoint at "reply 1" (the result is saved at points 8-10), so the restart
    files create_a again, without a key (this design sends none): 1 duplicate each. The other 32
    points are passed without a crash, so depth 1 has 2 scenarios, 2 with duplicates, 2 in all.
    Alike whether the crashed worlds are snapshots, every scenario is run, or each is killed.
    """
    tmp_path.joinpath("two.txt").write_text(TWO, encoding="utf-8")
    done = run([*SAVE_AFTER_REPLY, "--points", "from:two.txt", *how], tmp_path)
    assert done.returncode == 1
    lines = done.stdout.splitlines()
    assert lines[1:4] == [
        "  crash points  2 of 34 kept  (from two.txt)",
        "  scenarios     1 crash: 2   (2 in all)",
        "  with_dups 2   dups 2   missing 0   asks 0   calls+ 0",
    ]
    assert "first in scenario 6: crash at point 6 'tracker accepted create_a'" in done.stdout


def test_the_rerun_line_works_as_printed_and_list_points_lists_the_kept(run: Run, tmp_path: Path) -> None:
    """The re-run line keeps --points from:two.txt (FILE as given); run as printed, it re-runs scenario 6."""
    tmp_path.joinpath("two.txt").write_text(TWO, encoding="utf-8")
    rerun = run([*SAVE_AFTER_REPLY, "--points", "from:two.txt"], tmp_path).stdout.splitlines()[-1]
    command = shlex.split(rerun.partition(":  ")[2])
    assert command[:2] == ["crashsweep", "sweep"]
    assert command[-4:] == ["--points", "from:two.txt", "--crash", "tracker accepted create_a"]
    done = subprocess.run(
        [CRASHSWEEP, *command[1:]], cwd=tmp_path, env=child_env(), capture_output=True, text=True, check=False
    )
    assert (done.returncode, done.stderr) == (1, "")
    assert "crash at 'tracker accepted create_a', restart to the end" in done.stdout
    listed = run([*SAVE_AFTER_REPLY, "--points", "from:two.txt", "--list-points"], tmp_path).stdout.splitlines()
    assert listed[0] == "save-after-reply: 2 of 34 crash points kept (from two.txt) in one uninterrupted run"
    assert [line.split()[0] for line in listed[2:4]] == ["6", "7"]


def test_a_framework_agent_is_swept_at_the_points_a_file_lists(run: Run, tmp_path: Path) -> None:
    """pydantic-ai, keys off, depth 1, from 2 of its 12 points: 1 duplicate; its determinism check from 3 start worlds.

    By hand, from `--list-points` (12 points: 3 'after recording step 1', DBOS's record of the
    model's first reply; 4 'tracker filed issue create_a', passed once each): after a crash at 3
    the restart replays the recorded reply and runs its tools once, nothing twice; after a
    crash at 4 create_a is filed but no tool result is recorded (DBOS records the model's
    replies, never the tool results), so the replayed reply files it again: 1 duplicate. The
    determinism check a replaying framework's depth-1 sweep runs first starts from the empty
    world and the 2 worlds the kept crashes leave: 3.
    """
    tmp_path.joinpath("p.txt").write_text(
        "after recording step 1#1\ntracker filed issue create_a#1\n", encoding="utf-8"
    )
    done = run(
        ["sweep", "--framework", "pydantic-ai", "--keys", "off", "--depth", "1", "--points", "from:p.txt"], tmp_path
    )
    assert done.returncode == 1
    lines = done.stdout.splitlines()
    assert lines[1:4] == [
        "  crash points  2 of 12 kept  (from p.txt)",
        "  scenarios     1 crash: 2   (2 in all)",
        "  with_dups 1   dups 1   missing 0   asks 0   calls+ 0",
    ]
    assert "  deterministic holds   (3 start worlds, each run twice: the same crash points and effects)" in lines
    assert lines[-1].endswith("--points from:p.txt --crash 'tracker filed issue create_a'")
