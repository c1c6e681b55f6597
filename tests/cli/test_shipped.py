"""Tests of crashsweep.cli.shipped: a shipped job or design found by name, and named so again (issue 41, item 18)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from crashsweep.cli import shipped
from crashsweep.cli.main import cli

EXPLORE = ["explore", "--design", "dbos", "--job", "one-write", "--depth", "2"]
"""A shipped design and job by name; dbos duplicates the write at depth 2, so a replay line is printed."""


def test_a_shipped_name_is_printed_as_typed_in_every_replay_line(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Text and JUnit name `dbos` and `one-write`, never the install path they resolved to."""
    monkeypatch.chdir(tmp_path)
    for fmt in ("text", "junit"):
        out = CliRunner().invoke(cli, [*EXPLORE, "--format", fmt]).output
        assert "replay --design dbos --depth 2 --job one-write --tracker keyed" in out, out
        assert "shipped-files" not in out


def test_the_files_of_an_out_directory_name_it_as_typed(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Traces, the HTML page and the pytest files of --out name the shipped files; the pytest file runs."""
    monkeypatch.chdir(tmp_path)
    CliRunner().invoke(cli, [*EXPLORE, "--out", "o"])
    written = {path.name: path.read_text(encoding="utf-8") for path in (tmp_path / "o").iterdir() if path.is_file()}
    assert "index.html" in written
    assert "no-duplicate.trace.json" in written
    assert not [name for name, text in written.items() if "shipped-files" in text]
    assert json.loads(written["no-duplicate.trace.json"])["job_file"] == "one-write"
    test = next(name for name in written if name.startswith("test_") and name.endswith(".py"))
    ran = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", f"o/{test}"], check=False)
    assert ran.returncode == 0


def test_typed_names_a_shipped_file_as_given_and_another_path_as_given_or_absolute(tmp_path: Path) -> None:
    """`typed`: the name or docs path given for a shipped file; a user's path as given, or absolute on request."""
    assert shipped.typed(shipped.find("one-write", "job")) == "one-write"
    assert shipped.typed(shipped.find("dbos.toml", "design")) == "dbos.toml"
    assert shipped.find("dbos", "design").is_relative_to(shipped.ROOT)
    assert shipped.typed(Path("mine.toml")) == "mine.toml"
    assert shipped.typed(Path("mine.toml"), absolute=True) == str(Path("mine.toml").resolve())
    assert shipped.typed(shipped.find("dbos", "design").resolve()) == str(shipped.find("dbos", "design").resolve())


@pytest.mark.parametrize(
    ("option", "given", "said"),
    [
        ("--job", "one-wirte", "no file or shipped job named 'one-wirte'; did you mean 'one-write'?"),
        ("--design", "dbo", "no file or shipped design named 'dbo'; did you mean 'dbos'?"),
    ],
)
def test_a_mistyped_name_or_file_says_so_with_a_close_name(
    option: str, given: str, said: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A --job or --design that names nothing is one line, exit 2, with the closest shipped name."""
    monkeypatch.chdir(tmp_path)
    chosen = ["--variant", "dbos"] if option == "--job" else []
    done = CliRunner().invoke(cli, ["explore", *chosen, option, given])
    assert done.exit_code == 2
    assert said in done.output
