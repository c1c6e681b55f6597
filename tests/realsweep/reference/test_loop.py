"""The reference loop passes the model's crash points in the model's order, and restarts from disk."""

from __future__ import annotations

import fcntl
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from crashsweep.explorer.model import Action
from crashsweep.realsweep.reference import loop as reference_loop
from crashsweep.realsweep.reference.loop import DESIGNS
from crashsweep.realsweep.reference.parts import FLOCK_FILE
from crashsweep.realsweep.tracker.client import TrackerClient
from crashsweep.realsweep.tracker.service import ServiceProcess
from crashsweep.spec.design import Design
from crashsweep.spec.job import TRIAGE
from crashsweep.spec.tracker import TRACKERS
from crashsweep.variants import DESIGNS as MODULES
from crashsweep.variants import PRESETS, model
from tests.paths import ROOT
from tests.realsweep.helpers import child_env


def model_points(variant: str | Design, tracker: str = "keyed") -> list[str]:
    """The crash points of the model's uninterrupted run, in order."""
    loop = model(variant, TRIAGE, TRACKERS[tracker])
    state, points = loop.initial(), []
    while not loop.is_finished(state):
        action: Action = loop.actions(state)[0]  # start, then always continue
        state, _ = loop.step(state, action)
        point = loop.crash_point(state)
        if point is not None:
            points.append(point)
    return points


def run_loop(
    variant: str, workdir: Path, url: str, *, crash_at: int = 0, tracker: str = "keyed", **extra: str
) -> tuple[int, list[str], str]:
    """One real process of the loop (`extra`: more environment); its status, the points it passed, its output."""
    log = workdir / "points.log"
    log.unlink(missing_ok=True)
    env = child_env(
        CRASHSWEEP_TRACKER_URL=url, CRASHSWEEP_POINTS_LOG=str(log), CRASHSWEEP_CRASH_AT=str(crash_at), **extra
    )
    command = [
        sys.executable,
        "-S",
        "-m",
        "crashsweep.realsweep.reference.loop",
        "--variant",
        variant,
        "--tracker",
        tracker,
    ]
    done = subprocess.run(command, cwd=workdir, env=env, capture_output=True, text=True, check=False)
    points = log.read_text().splitlines() if log.exists() else []
    return done.returncode, points, done.stderr


@pytest.mark.parametrize("variant", list(DESIGNS))
def test_an_uninterrupted_run_passes_the_models_points_in_order(
    variant: str, keyed_service: ServiceProcess, tmp_path: Path
) -> None:
    """The real loop's points are the model's, name for name (18, 34 or 43 for the seed designs, 38 for agent-loop)."""
    status, points, errors = run_loop(variant, tmp_path, keyed_service.space_url(variant))
    assert status == 0, errors
    assert points == model_points(variant)
    records = TrackerClient(keyed_service.space_url(variant)).records()
    assert [r["call"] for r in records] == ["create_a", "create_b", "comment_a"]
    assert records[2]["issue"] == records[0]["number"]  # comment_a comments on the issue create_a filed


def test_a_finished_run_exits_at_once(keyed_service: ServiceProcess, tmp_path: Path) -> None:
    """A restart that finds the run done passes no point and sends nothing."""
    url = keyed_service.space_url("done")
    assert run_loop("agent-loop", tmp_path, url)[0] == 0
    status, points, _ = run_loop("agent-loop", tmp_path, url)
    assert (status, points) == (0, [])
    assert len(TrackerClient(url).records()) == 3


def test_a_temp_file_left_by_a_crash_is_ignored_by_the_restart(keyed_service: ServiceProcess, tmp_path: Path) -> None:
    """Killed at `start: tmp written`: the restart ignores the temp file's run ID and begins a fresh run."""
    url = keyed_service.space_url("tmp")
    status, points, _ = run_loop("save-once-per-turn", tmp_path, url, crash_at=1)
    assert status in (-9, 137)
    assert points == ["start: tmp written"]
    stale_run = json.loads((tmp_path / "checkpoint.json.tmp").read_text())["run"]
    assert not (tmp_path / "checkpoint.json").exists()
    assert run_loop("save-once-per-turn", tmp_path, url)[0] == 0
    run = json.loads((tmp_path / "checkpoint.json").read_text())["run"]
    assert run != stale_run
    assert {r["run"] for r in TrackerClient(url).records()} == {run}


def test_without_keys_a_resent_write_is_a_duplicate(keyed_service: ServiceProcess, tmp_path: Path) -> None:
    """save-after-reply killed after the tracker accepted create_a: the restart files it again."""
    url = keyed_service.space_url("dup")
    expected = model_points("save-after-reply")
    index = expected.index("tracker accepted create_a") + 1
    assert run_loop("save-after-reply", tmp_path, url, crash_at=index)[0] in (-9, 137)
    assert run_loop("save-after-reply", tmp_path, url)[0] == 0
    assert [r["call"] for r in TrackerClient(url).records()].count("create_a") == 2


def test_the_lookup_rung_settles_a_marked_write_without_a_person(
    keyless_service: ServiceProcess, tmp_path: Path
) -> None:
    """agent-loop against keyless-lookup, killed after create_a was accepted: the restart asks the tracker."""
    url = keyless_service.space_url("lookup")
    expected = model_points("agent-loop", "keyless-lookup")
    index = expected.index("tracker accepted create_a") + 1
    assert run_loop("agent-loop", tmp_path, url, crash_at=index, tracker="keyless-lookup")[0] in (-9, 137)
    status, points, _ = run_loop("agent-loop", tmp_path, url, tracker="keyless-lookup")
    assert status == 0
    assert "lookup answered create_a" in points
    assert "tracker accepted create_a" not in points
    assert [r["call"] for r in TrackerClient(url).records()] == ["create_a", "create_b", "comment_a"]


def test_agent_loops_lock_file_is_no_os_lock(keyed_service: ServiceProcess, tmp_path: Path) -> None:
    """agent-loop's lock is `file` (FAULTS.md 7.1): an OS lock another process holds does not stop it.

    The OS lock is the `os-lock` policy's (tests/realsweep/reference/test_parts.py: its refusal, in a real
    two-process run).
    """
    fd = os.open(tmp_path / FLOCK_FILE, os.O_RDWR | os.O_CREAT)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        status, points, errors = run_loop("agent-loop", tmp_path, keyed_service.space_url("lock"))
    finally:
        os.close(fd)
    assert status == 0, errors
    assert points[:2] == ["lock: tmp written", "lock: renamed"]
    assert [r["call"] for r in TrackerClient(keyed_service.space_url("lock")).records()] == [
        "create_a",
        "create_b",
        "comment_a",
    ]


DESIGN_FILES = ROOT / "docs" / "designs"


def run_design(design: Path, workdir: Path, url: str, tracker: str = "keyed") -> tuple[int, list[str], str]:
    """One real, uninterrupted process of the loop composed from a design file."""
    log = workdir / "points.log"
    env = child_env(CRASHSWEEP_TRACKER_URL=url, CRASHSWEEP_POINTS_LOG=str(log), CRASHSWEEP_CRASH_AT="0")
    command = [
        sys.executable,
        "-S",
        "-m",
        "crashsweep.realsweep.reference.loop",
        "--design",
        str(design),
        "--tracker",
        tracker,
    ]
    done = subprocess.run(command, cwd=workdir, env=env, capture_output=True, text=True, check=False)
    points = log.read_text().splitlines() if log.exists() else []
    return done.returncode, points, done.stderr


@pytest.mark.parametrize("name", sorted(path.stem for path in DESIGN_FILES.glob("*.toml")))
def test_a_composed_design_passes_the_models_points_in_order(
    name: str, keyed_service: ServiceProcess, tmp_path: Path
) -> None:
    """The loop composed from docs/designs/NAME.toml passes the model's points (hand-written if any), name for name."""
    url = keyed_service.space_url(f"composed-{name}")
    status, points, errors = run_design(DESIGN_FILES / f"{name}.toml", tmp_path, url)
    assert status == 0, errors
    assert points == model_points(name if name in MODULES else PRESETS[name].design)
    assert [r["call"] for r in TrackerClient(url).records()] == ["create_a", "create_b", "comment_a"]


def test_a_design_with_no_saves_but_the_final_one(keyed_service: ServiceProcess, tmp_path: Path) -> None:
    """No startup, reply, result or turn save (POLICIES.md 1.1): replies, sends, then the final save only."""
    design = tmp_path / "bare.toml"
    design.write_text(
        'name = "bare"\nstartup_save = false\nreply_save = "never"\nresult_saves = "none"\n'
        'markers = "none"\nkeys = "none"\nlock = "none"\n'
    )
    status, points, errors = run_design(design, tmp_path, keyed_service.space_url("bare"))
    assert status == 0, errors
    assert points == [
        "reply 1 arrived",
        "tracker accepted create_a", "tool returned create_a",
        "tracker accepted create_b", "tool returned create_b",
        "reply 2 arrived",
        "tool returned search",
        "tracker accepted comment_a", "tool returned comment_a",
        "final reply arrived", "final: tmp written", "final: renamed",
    ]  # fmt: skip


def test_a_bad_design_file_is_one_line_and_exit_2(keyed_service: ServiceProcess, tmp_path: Path) -> None:
    design = tmp_path / "bad.toml"
    design.write_text('name = "bad"\n')
    status, points, errors = run_design(design, tmp_path, keyed_service.space_url("bad"))
    assert (status, points) == (2, [])
    assert errors.splitlines()[-1].endswith(f"{design}: startup_save: missing (true or false)")


@pytest.mark.parametrize(
    ("crash", "calls", "commented"),
    [
        ("marker saved create_a", ["create_b", "comment_a"], 0),  # a wrong "yes": create_a is never filed
        ("tool returned create_a", ["create_a", "create_a", "create_b", "comment_a"], 1),  # a wrong "no": twice
    ],
)
def test_a_person_told_to_err_answers_wrongly_both_ways(
    keyed_service: ServiceProcess, tmp_path: Path, crash: str, calls: list[str], commented: int
) -> None:
    """FAULTS.md section 4's worked example, for real: attempt-markers, a crash, then the first question is wrong.

    A wrong "no" sends create_a again at once, and comment_a goes to the issue that second
    send answered. After a wrong "yes" the result names no issue, so comment_a goes to the
    job's first issue the tracker holds (create_b's).
    """
    url = keyed_service.space_url("wrong")
    index = model_points("attempt-markers").index(crash) + 1
    assert run_loop("attempt-markers", tmp_path, url, crash_at=index)[0] in (-9, 137)
    pauses = tmp_path / "pauses.log"
    status, _, err = run_loop(
        "attempt-markers", tmp_path, url, CRASHSWEEP_WRONG_ANSWER="1", CRASHSWEEP_PAUSES_LOG=str(pauses)
    )
    assert status == 0, err
    assert pauses.read_text().split("\n")[0].endswith(" person answers create_a")
    records = TrackerClient(url).records()
    assert [r["call"] for r in records] == calls
    assert records[-1]["issue"] == records[commented]["number"]


def test_the_zygotes_warm_parse_is_the_one_main_uses_and_a_refused_line_is_left_to_the_process(
    capsys: pytest.CaptureFixture[str],
) -> None:
    """zygote_warm parses and keeps a command line (main parses it no more); a bad one prints and keeps nothing."""
    argv = ["--variant", "agent-loop", "--tracker", "keyless"]
    reference_loop.PARSED.clear()
    reference_loop.zygote_warm(argv)
    parsed = reference_loop.PARSED[tuple(argv)]
    assert (parsed.variant, parsed.tracker) == ("agent-loop", "keyless")
    assert reference_loop._arguments(tuple(argv)) is parsed
    with pytest.raises(SystemExit):
        reference_loop.zygote_warm(["--variant", "no-such-design"])
    assert capsys.readouterr().err == ""
    assert list(reference_loop.PARSED) == [tuple(argv)]


def _retrying(stack: str, tmp_path: Path, url: str) -> tuple[list[str], list[str]]:
    """idempotency-keys under the retry layers `stack` (TOML) on triage-fails, one uninterrupted process.

    Its points, and the calls of the tracker's records in order. It works in a folder of its
    own under `tmp_path`, named by the tracker space of `url`.
    """
    tmp_path = tmp_path / url.rstrip("/").rsplit("/", 1)[-1]
    tmp_path.mkdir()
    design = tmp_path / "retrying.toml"
    keys = (DESIGN_FILES / "idempotency-keys.toml").read_text(encoding="utf-8")
    design.write_text(f"{keys}\nretries = {stack}\n", encoding="utf-8")
    log = tmp_path / "points.log"
    env = child_env(CRASHSWEEP_TRACKER_URL=url, CRASHSWEEP_POINTS_LOG=str(log), CRASHSWEEP_CRASH_AT="0")
    job = ROOT / "examples" / "triage-fails.toml"
    command = [sys.executable, "-S", "-m", "crashsweep.realsweep.reference.loop", "--design", str(design)]
    done = subprocess.run([*command, "--job", str(job)], cwd=tmp_path, env=env, capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    return log.read_text().splitlines(), [r["call"] for r in TrackerClient(url).records()]


def test_a_run_layer_begins_a_new_run_in_the_same_process(keyed_service: ServiceProcess, tmp_path: Path) -> None:
    """RETRIES.md 1.2, `run`: create_a fails after accept; the layer begins run-2 from its start.

    Run-1 passes 7 points (start: 2, reply 1 arrived, reply 1: 2, tracker accepted and tool
    failed create_a); run-2 is idempotency-keys' triage run, 34 points. Its new key files
    create_a again: two records of create_a (tests/spec/test_retrying.py, item 1).
    """
    points, calls = _retrying('[{ scope = "run", on = "error", attempts = 2 }]', tmp_path, keyed_service.space_url("r"))
    assert points[:7] == [
        "start: tmp written", "start: renamed", "reply 1 arrived", "reply 1: tmp written", "reply 1: renamed",
        "tracker accepted create_a", "tool failed create_a",
    ]  # fmt: skip
    assert points[7:] == model_points("idempotency-keys")
    assert calls == ["create_a", "create_a", "create_b", "comment_a"]
    assert json.loads((tmp_path / "r" / "supervisor.json").read_text()) == ["retry 0 run"]


def test_a_turn_layer_asks_the_model_again_and_a_call_layer_resends(
    keyed_service: ServiceProcess, tmp_path: Path
) -> None:
    """Two layers' re-runs, each under the same key as the failed attempt: one record of create_a.

    `turn`: reply 1 arrives twice; `call`: create_a is resent at once, with no second model call.
    """
    turn, calls = _retrying('[{ scope = "turn", on = "error", attempts = 2 }]', tmp_path, keyed_service.space_url("t"))
    assert turn.count("reply 1 arrived") == 2
    assert turn[turn.index("tool failed create_a") + 1] == "reply 1 arrived"
    assert calls == ["create_a", "create_b", "comment_a"]
    call, calls = _retrying('[{ scope = "call", on = "error", attempts = 3 }]', tmp_path, keyed_service.space_url("c"))
    assert call.count("reply 1 arrived") == 1
    at = call.index("tool failed create_a")
    assert call[at + 1 : at + 3] == ["tracker accepted create_a", "tool returned create_a"]
    assert calls == ["create_a", "create_b", "comment_a"]


def _restart(design: Path, job: Path, workdir: Path, url: str, memory: dict[str, object]) -> tuple[int, list[str], str]:
    """A real restart of the composed loop on `job` from a checkpoint holding `memory`: status, points, output."""
    (workdir / "checkpoint.json").write_text(json.dumps(memory))
    log = workdir / "points.log"
    env = child_env(CRASHSWEEP_TRACKER_URL=url, CRASHSWEEP_POINTS_LOG=str(log), CRASHSWEEP_CRASH_AT="0")
    command = [sys.executable, "-S", "-m", "crashsweep.realsweep.reference.loop", "--design", str(design)]
    command += ["--job", str(job), "--tracker", "keyless-lookup"]
    done = subprocess.run(command, cwd=workdir, env=env, capture_output=True, text=True, check=False)
    return done.returncode, log.read_text().splitlines() if log.exists() else [], done.stderr


def _with(tmp_path: Path, preset: str, line: str) -> Path:
    design = tmp_path / f"{preset}-changed.toml"
    text = (DESIGN_FILES / f"{preset}.toml").read_text().replace(f'name = "{preset}"', f'name = "{preset}-changed"')
    design.write_text(text + line + "\n")
    return design


@pytest.mark.parametrize(("granularity", "sent"), [("per-batch", 3), ("per-call", 2)])
def test_a_restart_runs_a_half_done_batch_again_under_per_batch(
    granularity: str, sent: int, keyed_service: ServiceProcess, tmp_path: Path
) -> None:
    """CONVERSATIONS.md 6 on parallel-batch: create_a's saved result is dropped at the load and create_a sent again.

    Per call, create_a keeps its result, create_b's marker goes up the ladder (the lookup finds
    nothing, so it is sent) and create_c is sent: two records.
    """
    design = _with(tmp_path, "attempt-markers", f'persist_granularity = "{granularity}"')
    turn = {"index": 1, "results": {"create_a": "#9"}, "marked": ["create_a", "create_b"], "complete": False}
    url = keyed_service.space_url(f"batch-{granularity}")
    job = ROOT / "examples" / "parallel-batch.toml"
    status, points, errors = _restart(design, job, tmp_path, url, {"run": "r", "done": False, "turns": [turn]})
    assert status == 0, errors
    assert len(TrackerClient(url).records()) == sent
    assert ("marker create_a: renamed" in points) is (granularity == "per-batch")


@pytest.mark.parametrize(("repair", "status"), [("none", 76), ("both-directions", 0)])
def test_a_restart_that_loads_a_trimmed_reply_is_refused_unless_it_repairs_both_ways(
    repair: str, status: int, keyed_service: ServiceProcess, tmp_path: Path
) -> None:
    """CONVERSATIONS.md 7: turn 1's results without its calls; the final answer's request is refused, for good."""
    design = _with(tmp_path, "save-after-reply", f'transcript_repair = "{repair}"')
    results = {"create_a": "#1", "create_b": "#2", "create_c": "#3"}
    turn = {"index": 1, "results": results, "marked": [], "complete": True, "trimmed": 1}
    job = ROOT / "examples" / "parallel-batch.toml"
    url = keyed_service.space_url(f"trim-{repair}")
    done, points, errors = _restart(design, job, tmp_path, url, {"run": "r", "done": False, "turns": [turn]})
    assert done == status, errors
    if status:
        assert (
            errors.splitlines()[-1]
            == "stuck: the provider refuses the conversation: the result of create_a has no call"
        )
        assert "final reply arrived" not in points
    else:
        saved = json.loads((tmp_path / "checkpoint.json").read_text())
        assert (saved["done"], saved["turns"][0]["trimmed"], saved["turns"][0]["results"]) == (True, 2, results)


def test_a_gate_whose_request_was_consumed_before_the_resume_is_stuck(
    keyed_service: ServiceProcess, tmp_path: Path
) -> None:
    """CONVERSATIONS.md 5: the person answered (the ledger), the checkpoint lacks the approval: no request, stuck."""
    design = _with(tmp_path, "save-after-reply", 'approval_consume = "before-resume"')
    (tmp_path / "approvals.json").write_text(json.dumps([["r", "comment_a@1#1"]]))
    turns = [
        {"index": 1, "results": {"create_a": "#1", "create_b": "#2"}, "marked": [], "complete": True},
        {"index": 2, "results": {"search": "2 issues"}, "marked": [], "complete": False},
    ]
    url = keyed_service.space_url("consumed")
    job = ROOT / "examples" / "triage-approval.toml"
    status, points, errors = _restart(design, job, tmp_path, url, {"run": "r", "done": False, "turns": turns})
    assert status == 76, errors
    assert (
        errors.splitlines()[-1] == "stuck: the approval of comment_a (v1) was consumed before the resumed run kept it"
    )
    assert not any(point.startswith("approval requested") for point in points)
    assert TrackerClient(url).records() == []


@pytest.mark.parametrize(("run", "fails"), [("r", True), ("other", False)])
def test_a_restart_of_a_run_whose_attempt_died_under_a_one_attempt_budget_fails_it(
    run: str, fails: bool, keyed_service: ServiceProcess, tmp_path: Path
) -> None:
    """RETRIES.md 1.8, rule 3: the supervisor's record holds `attempt timed out r create_a`, left by a death in flight.

    A restart that loads run r ends it at once (exit 0, as a done run: no point, no request, the
    record kept); a checkpoint of another run goes on, sends create_a and clears its attempt.
    """
    budget = '{ scope = "call", on = "error", retry_policy = "unset", schedule_to_close = "one-attempt" }'
    design = _with(tmp_path, "idempotency-keys", f"retries = [{budget}]")
    (tmp_path / "supervisor.json").write_text(json.dumps(["attempt timed out r create_a"]))
    turn = {"index": 1, "results": {}, "marked": [], "complete": False}
    url = keyed_service.space_url(f"budget-{run}")
    memory = {"run": run, "done": False, "turns": [turn]}
    status, points, errors = _restart(design, ROOT / "examples" / "triage.toml", tmp_path, url, memory)
    assert status == 0, errors
    assert (points == [], TrackerClient(url).records() == []) == (fails, fails)
    assert json.loads((tmp_path / "supervisor.json").read_text()) == ["attempt timed out r create_a"]
