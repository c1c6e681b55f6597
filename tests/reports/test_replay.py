"""Tests of crashsweep.reports.replay: the replay command line and the pytest snippet, run for real."""

from __future__ import annotations

import os
import shlex
import subprocess
import sys
from collections.abc import Mapping
from dataclasses import replace
from pathlib import Path

from crashsweep.explorer.path import replay
from crashsweep.reports.counterexample import Counterexample, from_path
from crashsweep.reports.replay import function_name, pytest_snippet, replay_command
from crashsweep.spec.job import TRIAGE, load_job
from crashsweep.spec.tracker import KEYED
from crashsweep.variants import model
from crashsweep.variants.design_file import load_design
from tests.paths import ROOT

JOB = """\
name = "quoted"
turns = [["it's \\"new\\"", "read"]]

[calls]
"it's \\"new\\"" = { tool = "create_issue", writes = true }
read = { tool = "search_issues", writes = false }
"""


def run_pytest(
    tmp_path: Path, snippet: str | Mapping[str, str], name: str = "test_snippet.py"
) -> subprocess.CompletedProcess[str]:
    """Write `snippet` as a test module under tmp_path (or each of several, by name) and run pytest on it.

    With no plugin but pytest's own (PYTEST_DISABLE_PLUGIN_AUTOLOAD): a snippet needs none, and
    so shows it needs none; the installed ones (hypothesis's, xdist, crashsweep's) took about
    1.5 s of every run to import.
    """
    snippets = snippet if isinstance(snippet, Mapping) else {name: snippet}
    paths = [tmp_path / each for each in snippets]
    for path, text in zip(paths, snippets.values(), strict=True):
        path.write_text(text, encoding="utf-8")
    return subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", *map(str, paths)],
        cwd=tmp_path,
        env={**os.environ, "PYTEST_DISABLE_PLUGIN_AUTOLOAD": "1"},
        capture_output=True,
        text=True,
        check=False,
        timeout=120,
    )


def test_command_names_every_option_the_code_depends_on(sar_cx: Counterexample) -> None:
    """The command carries variant, depth, tracker and path; a job file is quoted for the shell."""
    assert replay_command(sar_cx) == (
        "crashsweep replay --variant save-after-reply --depth 2 --tracker keyed --path 10:7=1"
    )
    odd = replace(sar_cx, job_file="/tmp/my jobs/j.toml")
    words = shlex.split(replay_command(odd, pytest=True))
    assert words[words.index("--job") + 1] == "/tmp/my jobs/j.toml"
    assert words[-1] == "--pytest"


def test_function_name_is_an_identifier(sar_cx: Counterexample) -> None:
    """The test's name is a Python identifier that pytest collects."""
    name = function_name(sar_cx)
    assert name == "test_save_after_reply_violates_no_duplicate"
    assert name.isidentifier()


def test_snippet_passes_on_its_counterexample(tmp_path: Path, sar_cx: Counterexample) -> None:
    """The snippet is a runnable test module that passes."""
    done = run_pytest(tmp_path, pytest_snippet(sar_cx))
    assert done.returncode == 0, done.stdout + done.stderr
    assert "1 passed" in done.stdout


def test_snippet_fails_on_a_path_that_does_not_violate(tmp_path: Path, sar_cx: Counterexample) -> None:
    """The snippet's assertions can fail: on a path without a crash it does."""
    done = run_pytest(tmp_path, pytest_snippet(sar_cx).replace('"10:7=1"', '"10:"'))
    assert done.returncode == 1
    assert "1 failed" in done.stdout


def test_snippet_with_a_job_file_and_no_violation(tmp_path: Path) -> None:
    """A snippet loads the job file it names (odd IDs and all) and can assert that nothing is violated."""
    job_file = tmp_path / "odd job.toml"
    job_file.write_text(JOB, encoding="utf-8")
    loop = model("save-after-reply", load_job(job_file), KEYED)

    def along(code: str) -> Counterexample:
        path = replay(loop, 1, code)
        return from_path(
            loop, path, variant="save-after-reply", job="quoted", job_file=str(job_file), depth=1, tracker="keyed"
        )

    bad = along("10:7=1")
    assert bad.violated
    assert bad.violation == 'it\'s "new" has 2 records: #1 and #2'
    good = along("6:")
    assert not good.violated
    done = run_pytest(tmp_path, {"test_bad.py": pytest_snippet(bad), "test_good.py": pytest_snippet(good)})
    assert done.returncode == 0, done.stdout + done.stderr
    assert "2 passed" in done.stdout  # one pytest run for both modules


def test_the_command_starts_with_the_program_given(sar_cx: Counterexample) -> None:
    """`program` is the launcher, as words: a checkout's bin/crashsweep, an interpreter with -m, quoted when need be."""
    assert replay_command(sar_cx, program=("bin/crashsweep",)).startswith("bin/crashsweep replay --variant ")
    words = shlex.split(replay_command(sar_cx, pytest=True, program=("/opt/my py/python", "-m", "crashsweep")))
    assert words[:4] == ["/opt/my py/python", "-m", "crashsweep", "replay"]
    assert words[-1] == "--pytest"


def test_a_deploy_is_in_the_command_and_the_snippet(tmp_path: Path) -> None:
    """--upgrade-to (spec/RETRIES.md 2) rides along: a design's name, or a design file loaded by the snippet.

    save-after-reply's path 10:7=1 crashes at `tracker accepted create_a`; the restart, whether
    it runs idempotency-keys or keys-call-retry (keys on every send), sends create_a under a
    key for the first time, and the keyed tracker, with no record under it, files it again.
    """
    design_file = str(ROOT / "examples" / "keys-call-retry.toml")
    for then in ("idempotency-keys", design_file):
        upgrade = then if then == "idempotency-keys" else load_design(Path(then)).design
        loop = model("save-after-reply", TRIAGE, KEYED, upgrade=upgrade)
        cx = from_path(
            loop,
            replay(loop, 1, "10:7=1"),
            variant="save-after-reply",
            job="triage",
            job_file=None,
            depth=1,
            tracker="keyed",
            upgrade=then,
        )
        assert cx.violated
        assert shlex.split(replay_command(cx))[-4:-2] == ["--upgrade-to", then]
        snippet = pytest_snippet(cx)
        wanted = 'upgrade="idempotency-keys"' if then == "idempotency-keys" else "upgrade=load_design(Path("
        assert wanted in snippet
        done = run_pytest(tmp_path, snippet)
        assert done.returncode == 0, done.stdout + done.stderr
