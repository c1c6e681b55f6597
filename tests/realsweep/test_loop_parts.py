"""The loop's parts: which issue a comment goes to, and what each tracker kind offers."""

from __future__ import annotations

import pytest

from crashsweep.realsweep.loop_parts import OFFERS, issue_target
from crashsweep.spec.job import TRIAGE, Call, Job, JobError
from crashsweep.spec.tracker import TRACKERS


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
