"""The reference loop's retry layers: which layer catches, how often, and the record that survives a crash."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from crashsweep.realsweep.reference.supervisor import SUPERVISOR_FILE, Supervisor
from crashsweep.spec.retries import Layer

CALL_TURN = (Layer("call", "error", 3), Layer("turn", "error", 2))


def test_the_innermost_layer_catches_until_its_attempts_are_spent(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """call x3 catches twice (3 attempts, the first included), then turn x2 once, then nobody.

    Each catch is counted (`retry.call`, `retry.turn`) in the process's counters log.
    """
    log = tmp_path / "counters.log"
    monkeypatch.setenv("CRASHSWEEP_COUNTERS_LOG", str(log))
    supervisor = Supervisor(CALL_TURN, tmp_path / SUPERVISOR_FILE)
    caught = [supervisor.catch("run-1", "create_a", 1) for _ in range(4)]
    assert caught == ["call", "call", "turn", None]
    assert log.read_text(encoding="utf-8").split() == ["retry.call", "retry.call", "retry.turn"]


def test_the_attempts_belong_to_the_instance_of_the_scope(tmp_path: Path) -> None:
    """Another call has its own `call` attempts; another run its own `call` and `turn` attempts."""
    supervisor = Supervisor(CALL_TURN, tmp_path / SUPERVISOR_FILE)
    for _ in range(2):
        supervisor.catch("run-1", "create_a", 1)
    assert supervisor.catching("run-1", "create_a", 1) == (1, CALL_TURN[1], "run-1/turn 1")
    assert supervisor.catching("run-1", "create_b", 1) == (0, CALL_TURN[0], "run-1/create_b")
    assert supervisor.catching("run-2", "create_a", 1) == (0, CALL_TURN[0], "run-2/create_a")


def test_the_record_is_a_file_of_the_world_that_a_new_process_reads(tmp_path: Path) -> None:
    """What one process spent, the next one (after a crash) finds spent: the supervisor's, not the process's."""
    path = tmp_path / SUPERVISOR_FILE
    Supervisor((Layer("run", "error", 2),), path).catch("run-1", "create_a", 1)
    assert json.loads(path.read_text(encoding="utf-8")) == ["retry 0 run"]
    assert Supervisor((Layer("run", "error", 2),), path).catching("run-2", "create_a", 1) is None
    assert sorted(p.name for p in tmp_path.iterdir()) == [SUPERVISOR_FILE]  # no temp file left behind


def test_a_timeout_layer_gives_up_where_its_trigger_and_scope_say(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """call x2 on error > turn x2 on timeout: a timeout only inside a turn under way; an error never times out.

    The new attempt records the retry (`timed_out`), so the layer has none left for that turn.
    """
    log = tmp_path / "counters.log"
    monkeypatch.setenv("CRASHSWEEP_COUNTERS_LOG", str(log))
    stack = (Layer("call", "error", 2), Layer("turn", "timeout", 2))
    supervisor = Supervisor(stack, tmp_path / SUPERVISOR_FILE)
    assert supervisor.times_out
    assert not Supervisor(stack[:1], tmp_path / "other.json").times_out
    assert supervisor.timing_out("run-1", "create_a", None) is None  # no turn under way
    assert supervisor.timing_out("run-1", None, 1) == (1, stack[1], "run-1/turn 1")
    supervisor.timed_out(1, "turn", "run-1/turn 1")
    assert supervisor.timing_out("run-1", None, 1) is None
    assert supervisor.timing_out("run-1", None, 2) == (1, stack[1], "run-1/turn 2")
    assert supervisor.catching("run-1", "create_a", 1) == (0, stack[0], "run-1/create_a")
    assert log.read_text(encoding="utf-8").split() == ["retry.turn"]


ONE_ATTEMPT = (Layer("call", "error", None, unset=True, one_attempt=True),)


def test_an_attempt_in_flight_is_recorded_until_it_answers(tmp_path: Path) -> None:
    """RETRIES.md 1.8: recorded before the request as the model's `attempt timed out RUN C`, cleared at the answer.

    A death in flight leaves the entry (the file is the world's), and that run's next start fails
    it; another run does not. Without a one-attempt layer nothing is recorded.
    """
    path = tmp_path / SUPERVISOR_FILE
    supervisor = Supervisor(ONE_ATTEMPT, path)
    supervisor.sending("run-1", "create_a")
    assert supervisor.spent() == ("attempt timed out run-1 create_a",)
    supervisor.answered("run-1", "create_a")
    assert (supervisor.spent(), supervisor.failed("run-1")) == ((), False)
    supervisor.sending("run-1", "create_b")
    dead = Supervisor(ONE_ATTEMPT, path)  # the next process reads what the one in flight left
    supervisor.answered("run-1", "other")  # no entry of that call: nothing changes
    assert dead.spent() == ("attempt timed out run-1 create_b",)
    plain = Supervisor(CALL_TURN, tmp_path / "plain.json")
    plain.sending("run-1", "create_a")
    assert (plain.spent(), plain.failed("run-1")) == ((), False)


def test_a_run_fails_only_when_the_process_in_flight_is_gone(tmp_path: Path) -> None:
    """An entry whose process still lives (held by a pause, FAULTS.md 7) is no timeout; once its lock is gone it is.

    Each Supervisor opens the lock file anew, so its flock is its own, as a second process's is.
    """
    path = tmp_path / SUPERVISOR_FILE
    held = Supervisor(ONE_ATTEMPT, path)
    held.sending("run-1", "create_a")
    beside = Supervisor(ONE_ATTEMPT, path)
    assert (beside.failed("run-1"), beside.failed("run-2")) == (False, False)
    os.close(held._flight[0])  # the kernel drops a dead process's lock so
    assert beside.failed("run-1")
    assert not beside.failed("run-2")
