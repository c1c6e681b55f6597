"""Tests of crashsweep.cli.examples: the shipped files copied out, laid out as in a checkout."""

from __future__ import annotations

from pathlib import Path

import pytest

from crashsweep.cli.main import main
from tests.paths import ROOT


def test_examples_copies_every_shipped_file_as_in_the_checkout(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    assert main(["examples", str(tmp_path / "mine")]) == 0
    out = capsys.readouterr().out
    copied = sorted(p.relative_to(tmp_path / "mine").as_posix() for p in (tmp_path / "mine").rglob("*") if p.is_file())
    wanted = [*(ROOT / "examples").glob("*.toml"), *(ROOT / "docs" / "designs").glob("*.toml")]
    wanted += [*(ROOT / "docs" / "examples").glob("*.py"), *(ROOT / "docs" / "examples").glob("*.toml")]
    wanted += [ROOT / "docs" / "my-design.toml"]
    assert copied == sorted(p.relative_to(ROOT).as_posix() for p in wanted)
    assert all((tmp_path / "mine" / name).read_bytes() == (ROOT / name).read_bytes() for name in copied)
    assert out.startswith(f"copied {len(copied)} files into {tmp_path / 'mine'} ")
    assert "crashsweep sweep --target my_loop:run --check my_loop_check:check" in out
    assert not [p for p in tmp_path.iterdir() if p.name != "mine"]  # no staging folder left behind


def test_an_empty_folder_is_filled(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    assert main(["examples", str(tmp_path)]) == 0
    assert (tmp_path / "examples" / "one-write.toml").is_file()


@pytest.mark.parametrize("kind", ["non-empty", "file"])
def test_anything_of_the_users_is_refused_and_left_as_it_was(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, kind: str
) -> None:
    target = tmp_path / "taken"
    if kind == "file":
        target.write_text("mine")
    else:
        target.mkdir()
        (target / "notes.txt").write_text("mine")
    assert main(["examples", str(target)]) == 2
    _, err = capsys.readouterr()
    assert err.count("\n") == 1
    assert "exists and is not an empty directory" in err
    assert sorted(p.name for p in tmp_path.rglob("*")) == (["taken"] if kind == "file" else ["notes.txt", "taken"])


@pytest.mark.parametrize("where", ["/proc/x", "/proc/self/x"])
def test_a_place_where_nothing_can_be_created_is_refused_in_one_line(
    capsys: pytest.CaptureFixture[str], where: str
) -> None:
    """/proc takes no new folder: one line and exit 2 (it was an internal error, exit 3)."""
    assert main(["examples", where]) == 2
    out, err = capsys.readouterr()
    assert out == ""
    assert err.count("\n") == 1
    assert err.startswith(f"crashsweep: error: Invalid value for 'DIR': {where}: cannot create anything in /proc")
