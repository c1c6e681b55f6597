"""Tests of crashsweep.realsweep.reference.loading: what a start makes of the checkpoint it loaded.

Each expectation is spec/CONVERSATIONS.md read on one memory: a per-batch load forgets a
half-done batch's results and markers and keeps the rest of the turn (section 6); both-directions
takes a trimmed turn's results out of the conversation and keeps them in the loop's record
(section 7); the memory storage loads no approval (section 2).
"""

from __future__ import annotations

import copy
from dataclasses import replace
from typing import Any

import pytest

from crashsweep.realsweep.reference import loading
from crashsweep.spec.job import Call, Job
from crashsweep.spec.policy import Policy

JOB = Job("batch", tuple([tuple(Call(c, "create_issue", True) for c in ("create_a", "create_b", "create_c"))]))
POLICY = Policy(
    startup_save=True,
    reply_save="before-first-send",
    result_saves="each-call",
    markers="before-writes",
    keys="none",
    lock="none",
    ladder=("lookup", "person"),
)
HALF_DONE = {
    "index": 1,
    "results": {"create_a": "#1"},
    "marked": ["create_a", "create_b"],
    "complete": False,
    "approved": ["create_b@2#1"],
    "ids": {"create_a": "create_a.1"},
    "args": 2,
}


def _memory(*turns: dict[str, Any]) -> dict[str, Any]:
    return {"run": "r", "done": False, "turns": [copy.deepcopy(turn) for turn in turns]}


def test_a_half_done_batch_loses_its_results_and_markers_and_keeps_its_reply() -> None:
    memory = _memory(HALF_DONE)
    loading.loaded(memory, JOB, replace(POLICY, persist_granularity="per-batch"))
    assert memory["turns"] == [{**HALF_DONE, "results": {}, "marked": []}]


@pytest.mark.parametrize(
    "turn",
    [
        {**HALF_DONE, "results": {"create_a": "#1", "create_b": "#2", "create_c": "#3"}},  # every call has its result
        {**HALF_DONE, "complete": True},
    ],
)
def test_a_whole_batch_is_loaded_as_saved(turn: dict[str, Any]) -> None:
    memory = _memory(turn)
    loading.loaded(memory, JOB, replace(POLICY, persist_granularity="per-batch"))
    assert memory == _memory(turn)


def test_per_call_loads_a_half_done_batch_as_saved() -> None:
    memory = _memory(HALF_DONE)
    loading.loaded(memory, JOB, POLICY)
    assert memory == _memory(HALF_DONE)


def test_both_directions_takes_results_without_their_call_out_of_the_conversation() -> None:
    """A turn whose reply was trimmed (1) keeps nothing in the conversation (2); its results stay in the record."""
    whole = {**HALF_DONE, "results": {"create_a": "#1"}, "trimmed": 2}
    memory = _memory({**HALF_DONE, "trimmed": 1}, whole, {**HALF_DONE, "index": 2})
    loading.loaded(memory, JOB, replace(POLICY, transcript_repair="both-directions"))
    assert [turn.get(loading.TRIMMED) for turn in memory["turns"]] == [2, 2, None]
    assert [turn["results"] for turn in memory["turns"]] == [{"create_a": "#1"}] * 3
    untouched = _memory({**HALF_DONE, "trimmed": 1})
    loading.loaded(untouched, JOB, replace(POLICY, transcript_repair="add-missing-results"))
    assert untouched["turns"][0][loading.TRIMMED] == 1  # the other repair adds results after the start, no more


def test_the_memory_storage_loads_no_approval() -> None:
    memory = _memory(HALF_DONE)
    loading.loaded(memory, JOB, replace(POLICY, approval_storage="memory"))
    assert "approved" not in memory["turns"][0]


def test_a_new_run_has_nothing_to_load() -> None:
    memory: dict[str, Any] = {"run": "r", "done": False, "turns": []}
    loading.loaded(memory, JOB, replace(POLICY, persist_granularity="per-batch", transcript_repair="both-directions"))
    assert memory == {"run": "r", "done": False, "turns": []}
