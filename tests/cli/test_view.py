"""Tests of crashsweep.cli.view and explore --out: replay, view, written files.

The page in real headless Chromium: test_view_browser.py (slow tier).
"""

from __future__ import annotations

import json
import os
import shlex
import tempfile
import webbrowser
from pathlib import Path

import pytest

from crashsweep.cli.main import main
from crashsweep.variants import SEED_DESIGNS
from tests.paths import ROOT
from tests.reports.test_replay import run_pytest

needs_dot = pytest.mark.requires_tool("dot")
JOB = """\
name = "tiny"
turns = [["make <it>"]]

[calls]
"make <it>" = { tool = "create_issue", writes = true }
"""


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    """Run the CLI in-process; its exit status, stdout and stderr."""
    status = main(list(argv))
    out, err = capsys.readouterr()
    return status, out, err


def replay_lines(out: str) -> list[str]:
    """The replay command lines `explore` printed (without the --pytest ones)."""
    return [line.split("replay: ", 1)[1] for line in out.splitlines() if " replay: crashsweep replay " in line]


@needs_dot
def test_explore_out_writes_a_one_crash_counterexample(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    """explore --out writes the shortest no-duplicate counterexample (one crash), both SVGs and index.html."""
    out_dir = tmp_path / "out"
    status, out, _ = run(capsys, "explore", "--variant", "save-after-reply", "--depth", "2", "--out", str(out_dir))
    assert status == 1
    names = sorted(p.name for p in out_dir.iterdir())
    assert names == sorted(
        [
            "index.html",
            "no-duplicate.graph.dot",
            "no-duplicate.graph.svg",
            "no-duplicate.sequence.dot",
            "no-duplicate.sequence.svg",
            "no-duplicate.trace.json",
            "no-duplicate.trace.txt",
            "test_save_after_reply_violates_no_duplicate.py",
        ]
    )
    for name in names:
        assert f"wrote {out_dir / name}" in out
    data = json.loads((out_dir / "no-duplicate.trace.json").read_text(encoding="utf-8"))
    assert (data["invariant"], data["crashes"], data["length"], data["path"]) == ("no-duplicate", 1, 10, "10:7=1")
    assert [step["kind"] for step in data["steps"]].count("crash") == 1
    for name in ("no-duplicate.graph.svg", "no-duplicate.sequence.svg"):
        assert "<svg" in (out_dir / name).read_text(encoding="utf-8")
    assert (out_dir / "index.html").read_text(encoding="utf-8").count("<svg") == 2


@pytest.mark.parametrize("variant", [design.name for design in SEED_DESIGNS])
def test_every_printed_replay_command_reproduces_its_violation(
    capsys: pytest.CaptureFixture[str], variant: str
) -> None:
    """For each seed design, every replay command explore prints exits 1 and names the same violation."""
    status, out, _ = run(capsys, "explore", "--variant", variant, "--depth", "2")
    violated = [line.split()[0] for line in out.splitlines() if "VIOLATED" in line]
    commands = replay_lines(out)
    assert len(commands) == len(violated)
    assert status == (1 if violated else 0)
    for invariant, command in zip(violated, commands, strict=True):
        words = shlex.split(command)
        assert words[:2] == ["crashsweep", "replay"]
        replay_status, trace, _ = run(capsys, *words[1:])
        assert replay_status == 1
        assert f"VIOLATED {invariant} after step" in trace


def test_a_counterexample_that_ends_where_an_earlier_invariant_is_violated_too_replays_its_own(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    """save-after-reply-node on triage-approval, depth 2: approved-exactly's shortest path ends in a duplicate too.

    Replay judges the first invariant a path's end violates unless told (`--invariant`), so the
    command printed for approved-exactly names it, and the trace and its test are approved-exactly's.
    """
    files = ["--design", "examples/save-after-reply-node.toml", "--job", "examples/triage-approval.toml"]
    status, out, _ = run(capsys, "explore", *files, "--depth", "2")
    assert status == 1
    violated = [line.split()[0] for line in out.splitlines() if "VIOLATED" in line]
    assert violated == ["no-duplicate", "approved-exactly"]
    commands = replay_lines(out)
    assert ["--invariant" in shlex.split(command) for command in commands] == [False, True]
    for invariant, command in zip(violated, commands, strict=True):
        replay_status, trace, _ = run(capsys, *shlex.split(command)[1:])
        assert replay_status == 1
        assert f"VIOLATED {invariant} after step" in trace
        assert f": counterexample to {invariant} (" in trace.splitlines()[0]
    status, snippet, _ = run(capsys, *shlex.split(commands[1])[1:], "--pytest")
    assert status == 0
    assert "Replaying the path ends in a violation of approved-exactly." in snippet
    done = run_pytest(tmp_path, snippet, "test_approved.py")
    assert done.returncode == 0, done.stdout + done.stderr


def test_replay_judges_the_invariant_it_is_told(capsys: pytest.CaptureFixture[str]) -> None:
    """--invariant: one the end does not violate holds there (exit 0); a name of no invariant is one line, exit 2."""
    path = ["--variant", "save-after-reply", "--path", "10:7=1"]
    status, out, _ = run(capsys, "replay", *path, "--invariant", "no-loss")
    assert status == 0
    assert "no violation: no-loss holds at the end of this path" in out
    status, out, err = run(capsys, "replay", *path, "--invariant", "nope")
    assert (status, out) == (2, "")
    assert err.startswith("crashsweep: error: Invalid value for '--invariant': 'nope' is no invariant of this design")
    assert err.count("\n") == 1


def test_replay_bad_code_is_one_line_and_exit_2(capsys: pytest.CaptureFixture[str]) -> None:
    """A code that does not fit the model is a one-line error with exit status 2."""
    for code in ("10:7=5", "ten", "3:9=1"):
        status, out, err = run(capsys, "replay", "--variant", "save-after-reply", "--path", code)
        assert status == 2
        assert out == ""
        assert len(err.strip().splitlines()) == 1
        assert err.startswith("crashsweep: error:")
        assert "--path" in err


def test_replay_of_a_clean_path_exits_0(capsys: pytest.CaptureFixture[str]) -> None:
    """A path that violates nothing prints its trace and exits 0."""
    status, out, _ = run(capsys, "replay", "--variant", "idempotency-keys", "--path", "10:7=1")
    assert status == 0
    assert "no violation: no invariant is violated" in out


def test_replay_json(capsys: pytest.CaptureFixture[str]) -> None:
    """--format json prints the JSON trace."""
    status, out, _ = run(capsys, "replay", "--variant", "save-after-reply", "--path", "10:7=1", "--format", "json")
    assert status == 1
    data = json.loads(out)
    assert (data["variant"], data["invariant"], data["violated"]) == ("save-after-reply", "no-duplicate", True)


def test_replay_pytest_snippet_runs(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    """The printed pytest snippet, with a job file, is a test that passes."""
    job = tmp_path / "tiny job.toml"
    job.write_text(JOB, encoding="utf-8")
    status, out, _ = run(capsys, "explore", "--variant", "save-once-per-turn", "--depth", "1", "--job", str(job))
    assert status == 1
    (command,) = replay_lines(out)
    assert str(job.resolve()) in shlex.split(command)
    status, snippet, _ = run(capsys, *shlex.split(command)[1:], "--pytest")
    assert status == 0  # the test was made; the trace without --pytest exits 1 for the violation
    done = run_pytest(tmp_path, snippet, "test_replayed.py")
    assert done.returncode == 0, done.stdout + done.stderr
    assert "make <it> has 2 records" in snippet


def test_explore_without_dot_writes_dot_sources(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Without dot: DOT sources and the page are written, one line says how to install graphviz, exit 1."""
    monkeypatch.setenv("PATH", str(tmp_path / "empty"))
    out_dir = tmp_path / "out"
    status, out, err = run(capsys, "explore", "--variant", "save-after-reply", "--depth", "1", "--out", str(out_dir))
    assert status == 1
    assert (out_dir / "no-duplicate.graph.dot").exists()
    assert (out_dir / "no-duplicate.sequence.dot").exists()
    assert not list(out_dir.glob("*.svg"))
    assert err.count("\n") == 1
    assert "install graphviz" in err
    assert "Traceback" not in err
    assert "was not found" in (out_dir / "index.html").read_text(encoding="utf-8")
    assert "wrote" in out


def test_explore_json_with_out_keeps_stdout_json(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    """With --format json the list of written files goes to stderr, so stdout stays JSON."""
    status, out, err = run(
        capsys, "explore", "--variant", "save-after-reply", "--depth", "1", "--format", "json", "--out", str(tmp_path)
    )
    assert status == 1
    assert json.loads(out)["variant"] == "save-after-reply"
    assert f"wrote {tmp_path / 'index.html'}" in err


def test_view_without_opening(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    """view --no-open writes one page and prints where it is."""
    status, out, _ = run(
        capsys, "view", "--variant", "save-after-reply", "--depth", "1", "--out", str(tmp_path), "--no-open"
    )
    assert status == 1
    assert [p.name for p in tmp_path.iterdir()] == ["index.html"]
    assert (tmp_path / "index.html").as_uri() in out


def test_view_opens_a_browser_or_says_it_could_not(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """view opens the page's file URL; where no browser opens, it prints the path instead."""
    opened: list[str] = []

    def browser(url: str) -> bool:
        opened.append(url)
        return True

    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    monkeypatch.setattr(webbrowser, "open", browser)
    status, out, _ = run(capsys, "view", "--variant", "idempotency-keys", "--depth", "1")
    assert status == 0
    (url,) = opened
    assert url.startswith(tmp_path.as_uri())
    assert url.endswith("/index.html")
    assert "opened it in your browser" in out
    monkeypatch.setattr(webbrowser, "open", lambda url: False)
    status, out, _ = run(capsys, "view", "--variant", "idempotency-keys", "--depth", "1")
    assert "no browser could be opened here" in out


EXAMPLE = ROOT / "docs" / "my-design.toml"
SAVE_AFTER_REPLY = ROOT / "docs" / "designs" / "save-after-reply.toml"


def test_view_and_replay_take_a_design_file(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    """view --design writes the page; the page's replay command names the file and reproduces the violation."""
    status, out, _ = run(
        capsys, "view", "--design", str(SAVE_AFTER_REPLY), "--depth", "1", "--out", str(tmp_path), "--no-open"
    )
    assert status == 1
    page = (tmp_path / "index.html").read_text(encoding="utf-8")
    assert f"crashsweep replay --design {SAVE_AFTER_REPLY} --depth 1 --tracker keyed --path " in page
    status, out, _ = run(capsys, "replay", "--design", str(SAVE_AFTER_REPLY), "--depth", "1", "--path", "10:7=1")
    assert status == 1
    assert "VIOLATED no-duplicate" in out
    assert f"replay: crashsweep replay --design {SAVE_AFTER_REPLY} --depth 1" in out


def test_the_example_design_file_is_explored(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    """docs/my-design.toml keys every call and saves the reply first: on a keyed tracker both invariants hold."""
    status, _, _ = run(capsys, "view", "--design", str(EXAMPLE), "--out", str(tmp_path), "--no-open")
    assert status == 0
    assert "my-design" in (tmp_path / "index.html").read_text(encoding="utf-8")


def test_replay_pytest_snippet_of_a_design_file_runs(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    """The pytest snippet of a design file's counterexample loads the file and passes."""
    status, snippet, _ = run(
        capsys, "replay", "--design", str(SAVE_AFTER_REPLY), "--depth", "1", "--path", "10:7=1", "--pytest"
    )
    assert status == 0
    assert f"load_design(Path({json.dumps(str(SAVE_AFTER_REPLY))})).design" in snippet
    done = run_pytest(tmp_path, snippet, "test_replayed.py")
    assert done.returncode == 0, done.stdout + done.stderr


def test_replay_pytest_exits_0_and_writes_the_test_where_asked(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    """--pytest made the test: exit 0 for a violating path (the trace alone exits 1); --pytest FILE says where."""
    replay = ["replay", "--variant", "save-after-reply", "--path", "10:7=1"]
    assert run(capsys, *replay)[0] == 1
    status, snippet, err = run(capsys, *replay, "--pytest")
    assert (status, err) == (0, "")
    assert snippet.startswith('"""Replays crashsweep')
    target = tmp_path / "test made.py"
    status, out, err = run(
        capsys, "replay", "--variant", "save-after-reply", "--pytest", str(target), "--path", "10:7=1"
    )
    assert (status, err) == (0, "")
    assert target.read_text(encoding="utf-8") == snippet
    assert out == (
        f"wrote {target}: a pytest test that replays path 10:7=1 and asserts the violation of no-duplicate;"
        f" run: pytest {shlex.quote(str(target))}\n"
    )
    status, _, err = run(capsys, *replay, "--pytest", str(tmp_path / "missing" / "test.py"))
    assert status == 2
    assert err.count("\n") == 1


def test_replaying_past_the_end_of_the_run_says_so(capsys: pytest.CaptureFixture[str]) -> None:
    """A code longer than its run names the run's length: the last code that replays, and the first that does not."""
    status, out, err = run(capsys, "replay", "--variant", "save-after-reply", "--path", "99:7=1")
    assert (status, out) == (2, "")
    assert err.count("\n") == 1
    length = int(err.split("the path is longer than the run, which finishes after ", 1)[1].split()[0])
    status, out, _ = run(capsys, "replay", "--variant", "save-after-reply", "--path", f"{length}:7=1")
    assert status == 1
    assert f"{length} steps, 1 crash, path {length}:7=1" in out  # the run is exactly that long
    assert (
        "longer than the run"
        in run(capsys, "replay", "--variant", "save-after-reply", "--path", f"{length + 1}:7=1")[2]
    )


def test_view_reuses_one_directory_per_design_and_leaves_no_temp_directory(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Three views without --out make one private directory with one page per design, tracker and depth."""
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    for variant in ("idempotency-keys", "idempotency-keys", "save-after-reply"):
        run(capsys, "view", "--variant", variant, "--depth", "1", "--no-open")
    (base,) = tmp_path.iterdir()
    assert base.name.startswith("crashsweep-view-")
    assert oct(base.stat().st_mode & 0o777) == oct(0o700)
    assert sorted(p.name for p in base.iterdir()) == ["idempotency-keys-keyed-depth1", "save-after-reply-keyed-depth1"]
    assert [p.name for p in (base / "idempotency-keys-keyed-depth1").iterdir()] == ["index.html"]


def test_view_refuses_a_default_place_that_is_not_the_users(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A file (or another user's link) where the view directory goes: one line asking for --out, exit 2."""
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    (tmp_path / f"crashsweep-view-{os.getuid()}").symlink_to(tmp_path)
    status, out, err = run(capsys, "view", "--variant", "idempotency-keys", "--depth", "1", "--no-open")
    assert (status, out) == (2, "")
    assert "give --out" in err
    assert err.count("\n") == 1


def test_the_page_names_the_launcher_by_a_path_that_works_anywhere(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Run as bin/crashsweep, the terminal hint says bin/crashsweep; the page the absolute path of it."""
    monkeypatch.setenv("CRASHSWEEP_PROG", "bin/crashsweep")
    status, out, _ = run(
        capsys, "explore", "--variant", "save-after-reply", "--depth", "1", "--out", str(tmp_path / "o")
    )
    assert status == 1
    assert " replay: bin/crashsweep replay --variant save-after-reply " in out
    page = (tmp_path / "o" / "index.html").read_text(encoding="utf-8")
    absolute = str(Path.cwd() / "bin" / "crashsweep")
    assert f'<pre class="command">{absolute} replay --variant save-after-reply' in page
    assert f"replay: {absolute} replay " in (tmp_path / "o" / "no-duplicate.trace.txt").read_text(encoding="utf-8")


def test_a_design_files_hints_start_with_the_launcher_and_name_the_file(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Run as bin/crashsweep with --design: hints say bin/crashsweep and --design FILE; the page, the full path."""
    monkeypatch.setenv("CRASHSWEEP_PROG", "bin/crashsweep")
    status, out, _ = run(
        capsys, "explore", "--design", str(SAVE_AFTER_REPLY), "--depth", "1", "--out", str(tmp_path / "o")
    )
    assert status == 1
    assert f" replay: bin/crashsweep replay --design {SAVE_AFTER_REPLY} --depth 1 " in out
    assert f" pytest: bin/crashsweep replay --design {SAVE_AFTER_REPLY} --depth 1 " in out
    absolute = str(Path.cwd() / "bin" / "crashsweep")
    page = (tmp_path / "o" / "index.html").read_text(encoding="utf-8")
    assert f'<pre class="command">{absolute} replay --design {SAVE_AFTER_REPLY} --depth 1 ' in page
    trace_file = (tmp_path / "o" / "no-duplicate.trace.txt").read_text(encoding="utf-8")
    assert f"replay: {absolute} replay --design {SAVE_AFTER_REPLY} --depth 1 " in trace_file
    status, out, _ = run(capsys, "replay", "--design", str(SAVE_AFTER_REPLY), "--depth", "1", "--path", "10:7=1")
    assert status == 1
    assert f"replay: bin/crashsweep replay --design {SAVE_AFTER_REPLY} --depth 1 " in out


def test_view_of_a_design_file_gets_one_directory_whatever_its_name(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Without --out, a design file named with a slash and a space still gets one directory under the base."""
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path / "tmp"))
    (tmp_path / "tmp").mkdir()
    design = tmp_path / "odd.toml"
    design.write_text(
        SAVE_AFTER_REPLY.read_text(encoding="utf-8").replace('name = "save-after-reply"', 'name = "../a/b c"'),
        encoding="utf-8",
    )
    status, _, _ = run(capsys, "view", "--design", str(design), "--depth", "1", "--no-open")
    assert status == 1
    (base,) = (tmp_path / "tmp").iterdir()
    assert [p.name for p in base.iterdir()] == [".._a_b_c-keyed-depth1"]
    assert [p.name for p in (base / ".._a_b_c-keyed-depth1").iterdir()] == ["index.html"]


def test_explore_out_draws_two_lanes_for_a_paused_process(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    """agent-loop with `pause`: the page, the trace and the sequence diagram show both processes."""
    out_dir = tmp_path / "out"
    argv = ("explore", "--variant", "agent-loop", "--depth", "1", "--faults", "pause", "--out", str(out_dir))
    status, _, _ = run(capsys, *argv)
    assert status == 1
    trace_text = (out_dir / "no-duplicate.trace.txt").read_text(encoding="utf-8")
    assert "lane 2" in trace_text
    assert "process 1 WAKES with its stale memory" in trace_text
    assert "second process" in (out_dir / "no-duplicate.sequence.svg").read_text(encoding="utf-8")
    page = (out_dir / "index.html").read_text(encoding="utf-8")
    assert "second process" in page
    assert "WAKES with its stale memory" in page
    data = json.loads((out_dir / "no-duplicate.trace.json").read_text(encoding="utf-8"))
    assert [(s["kind"], s["action"]) for s in data["steps"] if s["kind"] == "fault" or s["action"] == "wake"] == [
        ("fault", "pause"),
        ("step", "wake"),
    ]
    assert data["length"] == 18


# --- issue 24: the view folder by everything that changes the page; path codes explained ---


def test_views_of_other_jobs_or_faults_keep_their_own_pages(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Without --out, the folder names the design, job, tracker, depth and faults: no page replaces another."""
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path / "tmp"))
    (tmp_path / "tmp").mkdir()
    job = tmp_path / "tiny.toml"
    job.write_text(JOB, encoding="utf-8")
    base_args = ["view", "--variant", "save-after-reply", "--depth", "1", "--no-open"]
    for extra in (
        [],
        ["--job", str(job)],
        ["--faults", "lost-reply"],
        ["--faults", "lost-reply", "--call-ids", "fresh"],
    ):
        assert run(capsys, *base_args, *extra)[0] == 1
    (base,) = (tmp_path / "tmp").iterdir()
    assert sorted(p.name for p in base.iterdir()) == [
        "save-after-reply-job-tiny-keyed-depth1",
        "save-after-reply-keyed-depth1",
        "save-after-reply-keyed-depth1-faults-lost-reply",
        "save-after-reply-keyed-depth1-faults-lost-reply-fresh-ids",
    ]


@pytest.mark.parametrize("name", ["x" * 300, "a/" * 150, "../" * 90, "é" * 200, "-" * 255])
def test_the_view_folder_is_one_short_name_whatever_the_design_is_called(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, name: str
) -> None:
    """Any design or job name: one folder under the base, at most 100 characters, distinct names kept apart."""
    from crashsweep.cli.view import view_dir

    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    folder = view_dir(name, "keyed", 2, job=name, faults=("pause",))
    assert folder.parent.parent == tmp_path
    assert len(folder.name) <= 100
    assert os.sep not in folder.name
    assert folder.name not in (".", "..")
    other = view_dir(name + "y", "keyed", 2, job=name, faults=("pause",))
    assert other != folder


def test_view_of_a_design_with_the_longest_name(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A design and a job named with 100 characters each: the page is written (no "file name too long")."""
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path / "tmp"))
    (tmp_path / "tmp").mkdir()
    long_name = "d" * 100
    design = tmp_path / "long.toml"
    design.write_text(
        SAVE_AFTER_REPLY.read_text(encoding="utf-8").replace('name = "save-after-reply"', f'name = "{long_name}"'),
        encoding="utf-8",
    )
    job = tmp_path / "job.toml"
    job.write_text(JOB.replace('name = "tiny"', f'name = "{"j" * 100}"'), encoding="utf-8")
    status, out, err = run(capsys, "view", "--design", str(design), "--job", str(job), "--depth", "1", "--no-open")
    assert (status, err) == (1, "")
    (base,) = (tmp_path / "tmp").iterdir()
    (folder,) = base.iterdir()
    assert [p.name for p in folder.iterdir()] == ["index.html"]
    assert out.startswith(f"wrote {folder / 'index.html'}")


def test_a_choice_past_the_enabled_actions_is_explained(capsys: pytest.CaptureFixture[str]) -> None:
    """replay --path 99:1=1: choices count from 0, and the message lists the ones offered at that step."""
    status, out, err = run(capsys, "replay", "--variant", "agent-loop", "--path", "99:1=1")
    assert (status, out, err.count("\n")) == (2, "", 1)
    assert "step 1 takes choice 1, but offers only choice 0 (start)" in err
    assert "choices count from 0: 0 is the run's own next step, then its crashes and faults" in err
    status, _, err = run(capsys, "replay", "--variant", "save-after-reply", "--path", "10:3=5")
    assert status == 2
    assert "step 3 takes choice 5, but offers only choices 0 to 1 (0 continue, 1 crash) at depth 2" in err
