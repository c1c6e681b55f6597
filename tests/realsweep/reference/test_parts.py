"""The loop's parts: which issue a comment goes to, what each tracker kind offers, and the lock policies."""

from __future__ import annotations

import subprocess
import sys
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

from crashsweep.realsweep.probe.crashpoint import STOPPED_STATUS
from crashsweep.realsweep.process.snapshots import Snapshots
from crashsweep.realsweep.reference import parts
from crashsweep.realsweep.reference.parts import (
    CHECKPOINT_FILE,
    LEASE_FILE,
    OFFERS,
    OUTCOME_UNKNOWN,
    Loop,
    StuckError,
    issue_target,
)
from crashsweep.realsweep.tracker.client import TrackerClient
from crashsweep.realsweep.tracker.service import ServiceProcess
from crashsweep.spec import process
from crashsweep.spec.job import TRIAGE, Call, Job, JobError
from crashsweep.spec.tracker import TRACKERS
from tests.paths import ROOT
from tests.realsweep.helpers import child_env


def test_a_comment_goes_to_the_first_issue_the_job_files() -> None:
    """In the triage job comment_a comments on the issue create_a filed."""
    target = issue_target(TRIAGE, TRIAGE.call("comment_a"))
    assert target is not None
    assert target.id == "create_a"
    assert issue_target(TRIAGE, TRIAGE.call("create_a")) is None
    assert issue_target(TRIAGE, TRIAGE.call("search")) is None


def test_a_comment_with_no_issue_before_it_is_refused() -> None:
    """A job whose first write is a comment cannot be run against an issue tracker."""
    job = Job("bad", ((Call("note", "comment", True),),))
    with pytest.raises(JobError, match=r"calls\.note"):
        issue_target(job, job.call("note"))


def test_the_offers_match_the_models_tracker_kinds() -> None:
    """Each tracker kind of the model has an offer with the same keys and lookup."""
    assert set(OFFERS) == set(TRACKERS)
    for name, kind in TRACKERS.items():
        assert (OFFERS[name].honours_keys, OFFERS[name].lookup) == (kind.honours_keys, kind.lookup)


# -- the lock policies in a real two-process run (spec/FAULTS.md 7.1) -------------------------

EXAMPLES = ROOT / "examples"
DESIGN_OF: dict[str, list[str]] = {
    "file": ["--variant", "agent-loop"],
    "none": ["--design", str(EXAMPLES / "agent-loop-none.toml")],
    "os-lock": ["--design", str(EXAMPLES / "agent-loop-os-lock.toml")],
    "lease+fencing": ["--design", str(EXAMPLES / "agent-loop-lease.toml")],
}
Ended = tuple[int, list[str], str]


def command(lock: str) -> list[str]:
    """One process of agent-loop with `lock` on the one-write job (create_a only)."""
    job = ["--job", str(EXAMPLES / "one-write.toml"), "--tracker", "keyed"]
    return [sys.executable, "-S", "-m", "crashsweep.realsweep.reference.loop", *DESIGN_OF[lock], *job]


def second(lock: str, tmp_path: Path, url: str) -> Ended:
    """Process 2, on the same work directory and tracker, run until it stops: status, points, errors."""
    log = tmp_path / "points-2.log"
    env = child_env(CRASHSWEEP_TRACKER_URL=url, CRASHSWEEP_POINTS_LOG=str(log))
    done = subprocess.run(command(lock), cwd=tmp_path / "work", env=env, capture_output=True, text=True, check=False)
    return done.returncode, log.read_text().splitlines() if log.exists() else [], done.stderr


@contextmanager
def first_held(lock: str, tmp_path: Path, url: str, point: str) -> Iterator[Callable[[], Ended]]:
    """Process 1, held at the first pass of `point`: waiting on the snapshot FIFOs and stopped (SIGSTOP).

    Yields a function that lets it go on and returns its end (status, points, errors).
    """
    (tmp_path / "work").mkdir()
    log = tmp_path / "points-1.log"
    held, release = threading.Event(), threading.Event()

    def hold(index: int) -> None:
        if log.read_text().splitlines()[index - 1] == point and not held.is_set():
            held.set()
            release.wait()

    snapshots = Snapshots(tmp_path / "hold", hold)
    env = child_env(
        CRASHSWEEP_TRACKER_URL=url, CRASHSWEEP_POINTS_LOG=str(log), CRASHSWEEP_SNAPSHOT=str(snapshots.folder)
    )
    process = subprocess.Popen(command(lock), cwd=tmp_path / "work", env=env, stderr=subprocess.PIPE, text=True)

    def go_on() -> Ended:
        release.set()
        _, errors = process.communicate(timeout=60)
        return process.returncode, log.read_text().splitlines(), errors

    try:
        assert held.wait(60), f"process 1 never reached {point!r}"
        yield go_on
    finally:
        release.set()
        if process.poll() is None:
            process.kill()
            process.communicate()
        snapshots.close()


def creates(url: str) -> list[str]:
    """The runs of the tracker's create_a records, in order."""
    return [r["run"] for r in TrackerClient(url).records() if r["call"] == "create_a"]


def test_os_lock_refuses_a_second_live_start(keyed_service: ServiceProcess, tmp_path: Path) -> None:
    """While process 1 lives (paused) the restart stops at once: no point, no save, no request."""
    url = keyed_service.space_url("os-lock")
    with first_held("os-lock", tmp_path, url, "start: tmp written") as go_on:
        status, points, errors = second("os-lock", tmp_path, url)
        assert (status, points) == (STOPPED_STATUS, [])
        assert "another live process holds the run's OS lock" in errors
        assert creates(url) == []
        assert go_on()[0] == 0  # process 1 wakes and finishes alone
    assert len(creates(url)) == 1


def test_lease_fencing_refuses_the_stale_process_at_the_tracker(keyed_service: ServiceProcess, tmp_path: Path) -> None:
    """Paused after its marker save, process 1's next act is its send: the tracker refuses token 1 (409)."""
    url = keyed_service.space_url("lease-tracker")
    with first_held("lease+fencing", tmp_path, url, "marker saved create_a") as go_on:
        assert second("lease+fencing", tmp_path, url)[0] == 0  # token 2: one record
        status, points, errors = go_on()
    assert status == STOPPED_STATUS
    assert points[-1] == "marker saved create_a"
    assert "409" in errors
    assert "fencing token 1" in errors
    assert len(creates(url)) == 1


def test_lease_fencing_refuses_the_stale_process_on_disk(keyed_service: ServiceProcess, tmp_path: Path) -> None:
    """Paused at its startup temp file, process 1's next act is the rename: the lease file names token 2."""
    url = keyed_service.space_url("lease-disk")
    with first_held("lease+fencing", tmp_path, url, "start: tmp written") as go_on:
        assert second("lease+fencing", tmp_path, url)[0] == 0
        done = (tmp_path / "work" / CHECKPOINT_FILE).read_text()
        status, points, errors = go_on()
    assert status == STOPPED_STATUS
    assert points == ["start: tmp written"]
    assert "the disk refuses it" in errors
    assert (tmp_path / "work" / CHECKPOINT_FILE).read_text() == done  # the restart's finished run stays
    assert (tmp_path / "work" / LEASE_FILE).read_text() == "2"


def test_a_lock_file_stops_nobody(keyed_service: ServiceProcess, tmp_path: Path) -> None:
    """Paused with its lock file renamed (run 1 not yet on disk): the restart begins run 2, and both send."""
    url = keyed_service.space_url("file")
    with first_held("file", tmp_path, url, "lock: renamed") as go_on:
        assert second("file", tmp_path, url)[0] == 0
        assert go_on()[0] == 0
    assert len(set(creates(url))) == 2  # two runs, two keys: a duplicate


def test_a_rename_whose_temp_file_is_gone_stops_the_process(keyed_service: ServiceProcess, tmp_path: Path) -> None:
    """No lock: paused at its startup temp file, process 1 wakes after the restart renamed its last one."""
    url = keyed_service.space_url("none")
    with first_held("none", tmp_path, url, "start: tmp written") as go_on:
        assert second("none", tmp_path, url)[0] == 0
        status, points, errors = go_on()
    assert (status, points) == (STOPPED_STATUS, ["start: tmp written"])
    assert "gone before the rename" in errors
    assert "Traceback" not in errors


def test_repair_gives_an_orphaned_call_an_unknown_outcome(tmp_path: Path) -> None:
    """The last turn's calls without a result get "outcome unknown" (the model's words); a complete turn is left."""
    loop = Loop(tmp_path, TRIAGE, None, OFFERS["keyed"])  # type: ignore[arg-type]  # no request is made
    loop.memory = {"run": "r", "done": False, "turns": [{"index": 1, "results": {"create_a": "#1"}, "marked": [],
                                                          "complete": False}]}  # fmt: skip
    loop.repair()
    assert loop.memory["turns"][0]["results"] == {"create_a": "#1", "create_b": OUTCOME_UNKNOWN}
    assert OUTCOME_UNKNOWN == process.OUTCOME_UNKNOWN


def test_words_of_arguments_and_the_version_a_record_was_sent_with() -> None:
    """Only a later version is written into the body; the record gives it back (1 for none)."""
    assert parts.arguments_words(1) == ""
    assert parts.arguments_words(3) == " (arguments v3)"
    assert parts.record_version({"body": "triage: comment_a" + parts.arguments_words(3)}) == 3
    assert parts.record_version({"body": parts.arguments_words(2).strip()}) == 2
    assert parts.record_version({"body": ""}) == parts.record_version({"body": None}) == 1


def test_the_provider_refuses_a_result_without_its_call_and_not_a_turn_trimmed_away(tmp_path: Path) -> None:
    """CONVERSATIONS.md 7: a turn whose reply was trimmed (1) sends its results alone; one trimmed away (2) nothing."""
    loop = Loop(tmp_path, TRIAGE, None, OFFERS["keyed"])  # type: ignore[arg-type]  # no request is made
    turn = {"index": 1, "results": {"create_a": "#1", "create_b": "#2"}, "marked": [], "complete": True}
    loop.memory = {"run": "r", "done": False, "turns": [{**turn, "trimmed": 1}]}
    with pytest.raises(
        StuckError, match=r"^the provider refuses the conversation: the result of create_a has no call$"
    ):
        loop.ask_model()
    loop.memory["turns"] = [{**turn, "trimmed": 2}, {**turn, "index": 2, "results": {}, "trimmed": 1}]
    loop.ask_model()  # nothing malformed: turn 1 left whole, turn 2's reply left with no result
