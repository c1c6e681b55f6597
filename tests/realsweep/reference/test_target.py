"""Sweeping the reference loop: its target, its check, and the job options it refuses."""

from __future__ import annotations

from pathlib import Path

import pytest

from crashsweep.realsweep.probe.modes import Points
from crashsweep.realsweep.reference import parts
from crashsweep.realsweep.reference import target as reference
from crashsweep.realsweep.sweep import Scenario, SweepError, SweepOptions
from crashsweep.realsweep.tracker.client import TrackerClient
from crashsweep.realsweep.tracker.service import ServiceProcess
from crashsweep.realsweep.world import World
from crashsweep.spec.job import TRIAGE, Call, Job, load_job
from crashsweep.spec.policy import CONVERSATION
from tests.paths import ROOT


def test_the_target_runs_the_loop_without_site_and_can_be_forked() -> None:
    """Exec: python -S -m crashsweep.realsweep.reference.loop; fork: reference_loop:main with the same arguments."""
    target = reference.target("agent-loop", Path("job.toml"), "keyless")
    assert target.argv[1:4] == ("-S", "-m", "crashsweep.realsweep.reference.loop")
    assert target.fork == "crashsweep.realsweep.reference.loop:main"
    assert target.argv[4:] == target.fork_argv
    assert target.fork_argv[:4] == ("--variant", "agent-loop", "--tracker", "keyless")
    assert target.fork_argv[5] == str(Path("job.toml").resolve())


def test_an_unknown_variant_or_tracker_is_refused() -> None:
    """Bad names fail before any process starts."""
    with pytest.raises(ValueError, match="unknown variant"):
        reference.target("nope", None, "keyed")
    job = Job("j", ((Call("a", "create_issue", True),),))
    with pytest.raises(SweepError, match="unknown tracker"):
        reference.run("agent-loop", job, None, "sometimes", SweepOptions(depth=1))


def test_a_job_the_reference_loop_cannot_run_is_refused_before_any_process() -> None:
    """A comment with no issue before it: refused with the call named."""
    job = Job("j", ((Call("note", "comment", True),),))
    with pytest.raises(ValueError, match=r"calls\.note"):
        reference.run("agent-loop", job, None, "keyed", SweepOptions(depth=1))


def test_a_job_without_its_file_is_refused_before_any_process() -> None:
    """A job object with no path is refused: the loop would play triage while the check reads the job.

    The loop reads its job from a file and plays triage without one; triage itself needs no file.
    """
    one_write = load_job(ROOT / "examples" / "one-write.toml")
    with pytest.raises(SweepError, match="job 'one-write' has no file"):
        reference.run("agent-loop", one_write, None, "keyed", SweepOptions(depth=1))


def test_job_options_the_reference_loop_lacks_are_refused() -> None:
    """The built-in designs have no approval gate: refused by name instead of swept wrongly."""
    job = Job("j", ((Call("a", "create_issue", True, approval=True),),))
    with pytest.raises(SweepError, match="do not implement 'approval'"):
        reference.run("agent-loop", job, None, "keyed", SweepOptions(depth=1))


def test_the_reference_loop_carries_out_every_conversation_value_of_the_model() -> None:
    """Every value of every conversation field (spec/policy.py's registry) is carried out for real."""
    for field, values in CONVERSATION.items():
        assert set(values) == {values[0], *reference.CARRIED_OUT[field]}, field


def test_a_conversation_value_the_reference_loop_does_not_carry_out_is_refused(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A value off the default that CARRIED_OUT does not list is refused before any process starts."""
    monkeypatch.setitem(reference.CARRIED_OUT, "transcript_on_restart", ("repair",))
    design = tmp_path / "as-is.toml"
    design.write_text(
        'name = "as-is"\nstartup_save = true\nreply_save = "before-first-send"\nresult_saves = "each-call"\n'
        'markers = "none"\nkeys = "none"\nlock = "none"\ntranscript_on_restart = "as-is"\n'
    )
    with pytest.raises(SweepError, match="does not carry out transcript_on_restart = 'as-is' yet"):
        reference.refuse(TRIAGE, "keyed", design, None)


def test_repair_on_a_job_with_a_comment_is_refused() -> None:
    """A repaired filing may have no issue; the reference loop's comment needs one, so it is refused up front."""
    design = ROOT / "examples" / "save-after-reply-repair.toml"
    with pytest.raises(SweepError, match=r"cannot comment \(comment_a\) on an issue a repair may have lost"):
        reference.refuse(TRIAGE, "keyed", design, None)
    reference.refuse(load_job(ROOT / "examples" / "one-write.toml"), "keyed", design, None)  # no comment: carried out


@pytest.mark.parametrize("repair", ["add-missing-results", "both-directions"])
def test_a_transcript_repair_of_as_is_on_a_job_with_a_comment_is_refused(repair: str, tmp_path: Path) -> None:
    """Under as-is either repair gives a loaded call without its result `outcome unknown`, as `repair` does.

    Under resume-pending the loop settles that call first: nothing to repair, nothing refused (CONVERSATIONS.md 7).
    """
    settling = tmp_path / "settling.toml"
    settling.write_text(
        (ROOT / "docs" / "designs" / "save-after-reply.toml").read_text() + f'transcript_repair = "{repair}"\n'
    )
    reference.refuse(TRIAGE, "keyed", settling, None)
    design = tmp_path / "repairing.toml"
    design.write_text(settling.read_text() + 'transcript_on_restart = "as-is"\n')
    with pytest.raises(SweepError, match=rf'a repair may have lost \(transcript_repair = "{repair}" with'):
        reference.refuse(TRIAGE, "keyed", design, None)
    reference.refuse(load_job(ROOT / "examples" / "one-write.toml"), "keyed", design, None)


def test_an_approval_job_needs_a_design_file() -> None:
    """The built-in designs of the reference loop have no gate; a design file's composed loop has one."""
    job = load_job(ROOT / "examples" / "triage-approval.toml")
    with pytest.raises(SweepError, match="built-in designs do not implement 'approval'; give a design file"):
        reference.refuse(job, "keyed", None, None)
    reference.refuse(job, "keyed", ROOT / "examples" / "attempt-markers-memory.toml", None)


def test_the_check_reads_the_saved_conversation_and_takes_an_unreadable_checkpoint_as_none(
    tmp_path: Path, keyed_service: ServiceProcess
) -> None:
    """The checkpoint's turns become the history's conversation; a power cut's torn checkpoint gives none."""
    tracker = TrackerClient(keyed_service.space_url("t"))
    scenario = Scenario((), tmp_path, tracker)
    checkpoint_file = tmp_path / "checkpoint.json"
    checkpoint_file.write_text('{"run": "r", "done": true, "turns": [{"index": 1, "results": {"create_a": "#1"}}]}')
    job = Job("j", ((Call("create_a", "create_issue", True), Call("create_b", "create_issue", True)),))
    history = reference.check(job)(scenario).history
    assert history is not None
    assert [(e.f, e.call) for e in history.events] == [
        ("model_call", ""),
        ("tool_call", "create_a"),
        ("result_saved", "create_a"),
        ("tool_call", "create_b"),
        ("model_call", ""),
    ]
    checkpoint_file.write_text(
        '{"run": "r", "done": false, "turns": [{"index": 1, "results": {"create_a": "#1"}, "trimmed": 2},'
        ' {"index": 1, "results": {"create_b": "#2"}, "trimmed": 1}]}'
    )  # trim-context: turn 1 left whole, then a turn whose reply left and whose result stayed
    trimmed = reference.check(job)(scenario).history
    assert trimmed is not None
    assert [(e.f, e.call) for e in trimmed.events] == [("result_saved", "create_b")]  # a result with no call
    checkpoint_file.write_bytes(b'{"run": "r", "do')
    torn = reference.check(job)(scenario).history
    assert torn is not None
    assert torn.events == ()


def test_the_state_key_blanks_a_lock_s_process_id_and_keeps_a_part_written_lock_as_it_is() -> None:
    """A kill between the lock file's open and its write (`--points syscalls`) leaves it empty or cut short."""
    lock = parts.LOCK_FILE
    whole = World(files=((lock, b'{"holder": "run-1", "pid": 4242}'),))
    assert reference.state_key(whole).file(lock) == b'{"holder": "run-1", "pid": 0}'
    for torn in (b"", b'{"holder": "ru', b"\xff"):
        assert reference.state_key(World(files=((lock, torn),))).file(lock) == torn


def test_the_reference_loop_is_swept_at_its_system_calls() -> None:
    """`sweep --variant agent-loop --points syscalls`: finer points than its marks (38), the same verdict.

    Its lock file is written at its system calls, so some kill leaves it part-written (the state key above).
    """
    options = SweepOptions(depth=1, workers=2, points=Points.parse("syscalls"))
    result = reference.run("agent-loop", TRIAGE, None, "keyed", options)
    assert len(result.baseline.points) > 20
    assert not any(s.outcome.dups or s.outcome.missing or s.outcome.exit_status for s in result.scenarios)
