"""The reference loop's checkpoint (importers/reference_checkpoint.py), on checkpoints saved as the loop saves them.

Each checkpoint is the loop's memory (realsweep/reference/parts.py: {"run", "done", "turns":
[{"index", "results", "marked", "complete"}]}) saved by the loop's own two-step save
(realsweep/probe/checkpoint.py, compact JSON). Expected events are counted by hand: a turn
gives its model call, then a call and a result for each result it holds; a done run one more
model call (its final answer) and `finished`.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from crashsweep.importers import reference_checkpoint
from crashsweep.importers.base import HEAD, Unusable
from crashsweep.realsweep.probe import checkpoint
from crashsweep.spec.history import Event, History

TURN_1 = "checkpoint.json:turn 1"
TURN_2 = "checkpoint.json:turn 2"
DONE = "checkpoint.json:done"


def turn(index: int, results: dict[str, str], *, complete: bool = True, marked: tuple[str, ...] = ()) -> dict[str, Any]:
    """One saved turn, as parts.py holds it in memory."""
    return {"index": index, "results": results, "marked": list(marked), "complete": complete}


def saved(tmp_path: Path, memory: Any) -> Path:
    """`memory` saved as the loop saves its checkpoint."""
    path = tmp_path / "checkpoint.json"
    checkpoint.save(path, memory)
    return path


def test_a_done_run_is_its_saved_results_then_its_answer_and_finished(tmp_path: Path) -> None:
    """Turn 1 saved create_a and create_b, turn 2 comment_a (marked before it went out); the run is done.

    By hand: turn 1 is 1 model call + 2 x (call, result) = 5 events, turn 2 is 1 + 2 = 3, the
    end 2 (the final answer's model call, `finished`): 10, numbered 1 to 10 in that order.
    """
    turns = [turn(1, {"create_a": "#1", "create_b": "#2"}), turn(2, {"comment_a": "#3"}, marked=("comment_a",))]
    path = saved(tmp_path, {"run": "r-7", "done": True, "turns": turns})
    assert reference_checkpoint.recognises(path, path.read_bytes()[:HEAD])
    (history,) = reference_checkpoint.read(path)
    assert history.events == (
        Event("r-7", 0, 1, "invoke", "model_call", src=TURN_1),
        Event("r-7", 0, 2, "invoke", "tool_call", call="create_a", src=TURN_1),
        Event("r-7", 0, 3, "ok", "result_saved", call="create_a", src=TURN_1),
        Event("r-7", 0, 4, "invoke", "tool_call", call="create_b", src=TURN_1),
        Event("r-7", 0, 5, "ok", "result_saved", call="create_b", src=TURN_1),
        Event("r-7", 0, 6, "invoke", "model_call", src=TURN_2),
        Event("r-7", 0, 7, "invoke", "tool_call", call="comment_a", src=TURN_2),
        Event("r-7", 0, 8, "ok", "result_saved", call="comment_a", src=TURN_2),
        Event("r-7", 0, 9, "invoke", "model_call", src=DONE),
        Event("r-7", 0, 10, "ok", "run_status", status="finished", src=DONE),
    )
    # Only how the run ended is decided from a checkpoint; the rest is unseen, each with its reason.
    assert history.facts == frozenset({"status"})
    assert sorted(history.unseen) == ["approvals", "effects", "transcript"]
    assert (history.expected, history.gated) == ((), ())


def test_a_run_not_done_says_nothing_of_how_it_ends(tmp_path: Path) -> None:
    """A last turn not complete, with one result of its two calls saved: model call, call, result; no status."""
    path = saved(tmp_path, {"run": "r-8", "done": False, "turns": [turn(1, {"create_a": "#1"}, complete=False)]})
    (history,) = reference_checkpoint.read(path)
    assert history.events == (
        Event("r-8", 0, 1, "invoke", "model_call", src=TURN_1),
        Event("r-8", 0, 2, "invoke", "tool_call", call="create_a", src=TURN_1),
        Event("r-8", 0, 3, "ok", "result_saved", call="create_a", src=TURN_1),
    )


def test_a_new_run_has_no_event_and_a_done_one_with_no_turn_only_its_end(tmp_path: Path) -> None:
    """A run just begun (no turn, not done): nothing; a job with no tool turn, done: the answer, finished."""
    (new,) = reference_checkpoint.read(saved(tmp_path, {"run": "r-9", "done": False, "turns": []}))
    assert new == History((), facts=frozenset({"status"}), unseen=reference_checkpoint.UNSEEN)
    (done,) = reference_checkpoint.read(saved(tmp_path, {"run": "r-9", "done": True, "turns": []}))
    assert [(e.seq, e.type, e.f, e.status, e.src) for e in done.events] == [
        (1, "invoke", "model_call", "", DONE),
        (2, "ok", "run_status", "finished", DONE),
    ]


def test_a_file_that_is_not_json_is_unusable(tmp_path: Path) -> None:
    path = tmp_path / "checkpoint.json"
    path.write_text('{"run": "r-1", "done": tr', encoding="utf-8")  # a save cut short
    with pytest.raises(Unusable) as refused:
        reference_checkpoint.read(path)
    assert str(refused.value).startswith(f"{path}: not a checkpoint of the reference loop (")


@pytest.mark.parametrize(
    "memory",
    [
        {"run": 7, "done": False, "turns": []},  # a run ID that is no string
        {"done": False, "turns": []},  # no run ID
        {"run": "r-1", "done": False, "turns": {"1": {}}},  # turns not a list
    ],
)
def test_a_checkpoint_without_a_run_id_or_a_list_of_turns_is_unusable(tmp_path: Path, memory: Any) -> None:
    path = saved(tmp_path, memory)
    with pytest.raises(Unusable) as refused:
        reference_checkpoint.read(path)
    assert str(refused.value) == f"{path}: a checkpoint needs a run ID (a string) and a list of turns"


@pytest.mark.parametrize("memory", [[], ["r-1", True, []], None, "r-1"])
def test_json_that_is_no_object_is_unusable(tmp_path: Path, memory: Any) -> None:
    """An array, null, a string: no checkpoint (read refuses it as Unusable, whatever recognised it)."""
    path = saved(tmp_path, memory)
    assert not reference_checkpoint.recognises(path, path.read_bytes())
    with pytest.raises(Unusable) as refused:
        reference_checkpoint.read(path)
    assert str(refused.value).startswith(f"{path}: ")


@pytest.mark.parametrize("second", [{"index": 2, "results": ["comment_a"]}, {"index": 2}, "turn 2"])
def test_a_turn_without_an_object_of_results_is_unusable_naming_the_turn(tmp_path: Path, second: Any) -> None:
    """Turn 1 is good (one result: three events before turn 2); the second turn is refused as turn 2."""
    path = saved(tmp_path, {"run": "r-1", "done": False, "turns": [turn(1, {"create_a": "#1"}), second]})
    with pytest.raises(Unusable) as refused:
        reference_checkpoint.read(path)
    assert str(refused.value) == f"{path}: turn 2: expected an object with the turn's results"


def test_recognised_only_by_an_object_with_run_done_and_turns(tmp_path: Path) -> None:
    """The loop's three keys are all needed; a checkpoint of another program is not this kind."""
    for memory, expected in [
        ({"run": "r-1", "done": False, "turns": []}, True),
        ({"run": "r-1", "turns": []}, False),
        ({"thread": "t", "done": False, "turns": []}, False),
        ({"run": "r-1", "done": False, "steps": []}, False),
    ]:
        path = saved(tmp_path, memory)
        assert reference_checkpoint.recognises(path, path.read_bytes()[:HEAD]) is expected, memory
