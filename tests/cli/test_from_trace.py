"""`crashsweep from-trace TRACE --out DIR`: the four files, the summary, and every refusal as one line, exit 2.

What the files hold is tests/fromtrace/'s; here the command: a usable trace writes the four files
and prints commands that run as printed; a trace or folder that cannot be used is one line on
stderr, exit 2, and nothing written.
"""

from __future__ import annotations

import os
import shlex
import subprocess
from pathlib import Path

import pytest

from crashsweep.cli.main import main
from crashsweep.spec.history import History, write
from tests.fromtrace.builder import Trace, triage
from tests.paths import ROOT


def _run(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    status = main(["from-trace", *args])
    out, err = capsys.readouterr()
    return status, out, err


def test_a_run_gives_four_files_and_commands_that_run_as_printed(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("CRASHSWEEP_PROG", str(ROOT / "bin" / "crashsweep"))  # as bin/crashsweep runs it
    trace = triage(keys=True).write(tmp_path / "run.jsonl")
    status, out, err = _run(capsys, str(trace), "--out", str(tmp_path / "derived"))
    assert (status, err) == (0, "")
    assert sorted(os.listdir(tmp_path / "derived")) == ["cassette.jsonl", "design.toml", "job.toml", "points.txt"]
    assert "job job: 2 turns, 4 calls, 3 writes, 0 gated" in out
    assert "points.txt      20 crash points passed" in out
    assert "cassette.jsonl  3 model replies" in out
    explore = next(line for line in out.splitlines() if line.startswith("explore the draft:  "))
    command = shlex.split(explore.removeprefix("explore the draft:  "))
    done = subprocess.run([*command, "--depth", "1"], cwd=ROOT, capture_output=True, text=True, check=False)
    assert done.returncode == 0, done.stdout + done.stderr  # save-after-reply with keys: holds at depth 1
    assert "sweep it for real:  " in out  # the tracker's tools: the reference loop plays the job


def test_a_folder_already_holding_the_files_is_refused_and_kept(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    trace = triage().write(tmp_path / "run.jsonl")
    (tmp_path / "out").mkdir()
    (tmp_path / "out" / "job.toml").write_text("mine", encoding="utf-8")
    status, out, err = _run(capsys, str(trace), "--out", str(tmp_path / "out"))
    assert (status, out) == (2, "")
    assert err.count("\n") == 1
    assert "already holds job.toml, not written by from-trace" in err
    assert os.listdir(tmp_path / "out") == ["job.toml"]
    assert (tmp_path / "out" / "job.toml").read_text(encoding="utf-8") == "mine"


def test_the_files_an_earlier_from_trace_wrote_are_written_over(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    _run(capsys, str(triage().write(tmp_path / "run.jsonl")), "--out", str(tmp_path / "out"))
    status, _, err = _run(capsys, str(triage(keys=True).write(tmp_path / "run.jsonl")), "--out", str(tmp_path / "out"))
    assert (status, err) == (0, "")
    assert 'keys = "run-call"' in (tmp_path / "out" / "design.toml").read_text(encoding="utf-8")
    (tmp_path / "out" / "job.toml").write_text("mine", encoding="utf-8")  # the cassette beside it is no longer ours
    status, _, err = _run(capsys, str(tmp_path / "run.jsonl"), "--out", str(tmp_path / "out"))
    assert status == 2
    assert "already holds job.toml, cassette.jsonl, not written by from-trace" in err


@pytest.mark.parametrize(
    ("make", "said"),
    [
        (lambda p: Trace().write(p), "no model spans"),
        (lambda p: p.write_text("{", encoding="utf-8"), "not JSON"),
        (lambda p: None, "no such file"),
        (lambda p: write(History(()), p), "a history record"),
    ],
)
def test_a_trace_that_cannot_be_used_is_one_line_and_nothing_written(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], make: object, said: str
) -> None:
    path = tmp_path / "run.jsonl"
    make(path)  # type: ignore[operator]
    status, out, err = _run(capsys, str(path), "--out", str(tmp_path / "out"))
    assert (status, out) == (2, "")
    assert err.count("\n") == 1, err
    assert said in err, err
    assert not (tmp_path / "out").exists()


def test_out_that_is_a_file_is_refused(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    trace = triage().write(tmp_path / "run.jsonl")
    (tmp_path / "out").write_text("x", encoding="utf-8")
    status, _, err = _run(capsys, str(trace), "--out", str(tmp_path / "out"))
    assert status == 2
    assert "not a folder" in err
