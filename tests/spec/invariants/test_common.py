"""The model checks' shared reads: the job's writes and gated calls, kept per job; a stuck process."""

from crashsweep.spec.invariants.common import job_gated, job_writes, stuck
from crashsweep.spec.job import TRIAGE
from crashsweep.spec.world import World


def test_the_jobs_writes_and_gates_are_its_own() -> None:
    assert job_writes(TRIAGE) == TRIAGE.writes
    assert job_writes(TRIAGE) is job_writes(TRIAGE)
    assert job_gated(TRIAGE) == ()
    assert stuck(World()) is None
