"""Tests of crashsweep.cli: the commands, their formats, exit codes and one-line errors."""

from __future__ import annotations

import json
import shlex
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from crashsweep.cli import main


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
    assert "## The five designs (tracker keyed)" in out
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
    job = Path(__file__).resolve().parent.parent / "examples" / "forty-calls.toml"
    command = [sys.executable, "-m", "crashsweep", "explore", "--variant", "save-once-per-turn", "--depth", "5"]
    process = subprocess.Popen([*command, "--job", str(job)], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    # Depth 5 on this job runs for many minutes; three seconds puts the signal inside the search.
    time.sleep(3)
    process.send_signal(signal.SIGINT)
    out, err = process.communicate(timeout=60)
    assert process.returncode == 130
    assert out == ""
    assert err.startswith("crashsweep: save-once-per-turn: interrupted after ")
    assert err.count("\n") == 1


DESIGNS_DIR = Path(__file__).resolve().parents[1] / "docs" / "designs"


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
        (["explore", "--variant", "agent-loop", "--design", "x.toml"], "give either --variant NAME or --design FILE"),
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
    example = Path(__file__).resolve().parents[1] / "docs" / "my-design.toml"
    status, out, _ = _run(capsys, "explore", "--design", str(example), "--format", "json")
    data = json.loads(out)
    assert (status, data["variant"], data["crash_points"], data["with_dups"], data["missing"]) == (
        0,
        "my-design",
        31,
        0,
        0,
    )
