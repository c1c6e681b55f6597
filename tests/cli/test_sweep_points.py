"""`sweep --list-points` (crashsweep/cli/sweep_points.py): where a point is shown, the table, the refusals."""

from __future__ import annotations

import json
import shlex
from pathlib import Path

import pytest

from crashsweep.cli import sweep_points
from crashsweep.cli.main import main
from crashsweep.realsweep.api import Passed

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
