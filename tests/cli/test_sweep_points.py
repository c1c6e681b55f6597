"""crashsweep/cli/sweep_points.py: `sweep --list-points` and `--points from:FILE`.

--list-points: where a point is shown, the table, the refusals. from:FILE: the option, the points
kept, a bad file refused before any process (its real sweeps: tests/cli/test_sweep.py).
"""

from __future__ import annotations

import json
import shlex
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import click
import pytest

from crashsweep.cli import sweep_points
from crashsweep.cli.main import main
from crashsweep.cli.prog import ENV as PROG_ENV
from crashsweep.realsweep.api import Passed
from crashsweep.spec.points_file import parse

HOME = Path(sweep_points.__file__).resolve().parents[2]


def test_where_is_shown_from_the_current_folder_or_from_crashsweeps_home(tmp_path: Path) -> None:
    """The user's file relative to the folder the sweep runs in; an adapter's as crashsweep/...; else as is."""
    assert sweep_points.shown_where(f"{tmp_path}/agent/loop.py:12", here=tmp_path) == "agent/loop.py:12"
    adapter = HOME / "crashsweep" / "realsweep" / "adapters" / "langgraph.py"
    assert sweep_points.shown_where(f"{adapter}:106", here=tmp_path) == "crashsweep/realsweep/adapters/langgraph.py:106"
    assert sweep_points.shown_where("/elsewhere/x.py:3", here=tmp_path) == "/elsewhere/x.py:3"
    assert sweep_points.shown_where("nowhere", here=tmp_path) == "nowhere"
    assert sweep_points.shown_where("", here=tmp_path) == "-"  # a program without the probe


POINTS = (Passed("saved", 1, "/x/a.py:3"), Passed("filed w", 1, "/x/a.py:9"), Passed("saved", 2, "/x/a.py:3"))


def test_the_table_lists_each_pass_and_the_command_that_crashes_at_the_first() -> None:
    """One row per pass (a name passed twice has passes 1 and 2), then a --crash command for the first."""
    text = sweep_points.render("loop:run", POINTS, ["crashsweep", "sweep", "--target", "loop:run"], "text")
    lines = text.splitlines()
    assert lines[0] == "loop:run: 3 crash points in one uninterrupted run"
    assert lines[1].split() == ["#", "point", "pass", "where"]
    assert lines[2].split() == ["1", "saved", "1", "/x/a.py:3"]
    assert lines[4].split() == ["3", "saved", "2", "/x/a.py:3"]
    command = lines[5].removeprefix("crash at one of them (here the first): ")
    assert shlex.split(command) == ["crashsweep", "sweep", "--target", "loop:run", "--crash", "saved#1"]


def test_json_gives_every_pass_with_its_index() -> None:
    """--format json: the target and every point (index, name, occurrence, where)."""
    data = json.loads(sweep_points.render("loop:run", POINTS, [], "json"))
    assert data["target"] == "loop:run"
    assert [(p["index"], p["name"], p["occurrence"]) for p in data["points"]] == [
        (1, "saved", 1),
        (2, "filed w", 1),
        (3, "saved", 2),
    ]


@pytest.mark.parametrize(
    ("extra", "message"),
    [
        (["--list-points", "--determinism"], "give --list-points or --determinism, not both"),
        (["--list-points", "--engine", "ray"], "they take no --engine ray"),
        (["--determinism", "--engine", "ray"], "they take no --engine ray"),
        (["--list-points", "--crash", "x"], "takes no --crash, --scenarios or --keep"),
    ],
)
def test_the_command_refuses_before_any_process(
    extra: list[str], message: str, capsys: pytest.CaptureFixture[str]
) -> None:
    """The sweep command's own refusals of the two modes: one line on stderr, exit 2, nothing printed."""
    assert main(["sweep", "--variant", "agent-loop", *extra]) == 2
    out, err = capsys.readouterr()
    assert out == ""
    assert message in err
    assert err.count("\n") == 1


# --points from:FILE (spec/POINTS.md section 6): the option, the listing, the refusals before any process
# (its real sweeps: tests/cli/test_sweep.py).

SAVE_AFTER_REPLY = ["sweep", "--variant", "save-after-reply", "--depth", "1"]


@pytest.fixture
def here(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> Callable[..., Ran]:
    """Run a crashsweep command line in this process from `tmp_path` (the printed commands start with `crashsweep`)."""
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv(PROG_ENV, raising=False)

    def ran(*args: str) -> Ran:
        capsys.readouterr()
        status = main(list(args))
        out, err = capsys.readouterr()
        return Ran(status, out, err)

    return ran


@dataclass(frozen=True, slots=True)
class Ran:
    returncode: int
    stdout: str
    stderr: str


def test_points_takes_a_mode_or_a_file() -> None:
    """A mode as before, or from:FILE as given (read later, by the plan); from: alone or another word is refused."""
    choice = sweep_points.PointsChoice()
    assert choice.convert("marked,auto", None, None) == "marked,auto"
    assert choice.convert("from:../points.txt", None, None) == "from:../points.txt"
    for bad in ("from:", "bogus"):
        with pytest.raises(click.BadParameter):
            choice.convert(bad, None, None)


def test_the_table_lists_the_points_kept_under_their_numbers_in_the_run() -> None:
    """With a points file: the kept passes only, each under its number in the run; JSON says from and of how many."""
    listed = parse("saved#2\n", "p.txt")
    text = sweep_points.render("loop:run", POINTS, ["crashsweep", "sweep"], "text", listed)
    lines = text.splitlines()
    assert lines[0] == "loop:run: 1 of 3 crash points kept (from p.txt) in one uninterrupted run"
    assert lines[2].split() == ["3", "saved", "2", "/x/a.py:3"]
    assert lines[3].endswith("crashsweep sweep --crash 'saved#2'")
    data = json.loads(sweep_points.render("loop:run", POINTS, [], "json", listed))
    assert (data["from"], data["passed"], [p["index"] for p in data["points"]]) == ("p.txt", 3, [3])


@pytest.mark.parametrize(
    ("text", "extra", "line"),
    [
        ("tracker accepted create_a\n", [], "p.txt:1: 'tracker accepted create_a': expected NAME#PASS (PASS: which"),
        ("x#1\n#\nx#0\n", [], "p.txt:3: 'x#0': passes count from 1 (x#1 is the first)"),
        ("x#1\ny#1\nx#1\n", [], "p.txt:3: 'x#1' is listed already, on line 1"),
        (b"x#1\n\xe9#1\n", [], "p.txt:2: not UTF-8 text"),
        (None, [], "p.txt: cannot read points file: No such file or directory"),
        ("x#1\n", ["--crash", "x", "--crash", "y#2"], "--crash 'y#2': p.txt does not list it (--points from:FILE)"),
    ],
)
def test_a_bad_points_file_is_one_line_before_any_process(
    text: str | bytes | None, extra: list[str], line: str, here: Callable[..., Ran], monkeypatch: pytest.MonkeyPatch
) -> None:
    """FILE is read and checked before anything runs: one line on stderr naming FILE:LINE, exit 2, nothing run."""
    from crashsweep.realsweep import api

    for name in ("sweep", "replay", "list_points", "determinism_runs"):
        monkeypatch.setattr(api, name, lambda *_, **__: pytest.fail("a real run started"))
    if text is not None:
        Path("p.txt").write_bytes(text.encode() if isinstance(text, str) else text)
    done = here(*SAVE_AFTER_REPLY, "--points", "from:p.txt", *extra)
    assert (done.returncode, done.stdout, done.stderr.count("\n")) == (2, "", 1)
    assert done.stderr.startswith(f"crashsweep: error: {line}")
