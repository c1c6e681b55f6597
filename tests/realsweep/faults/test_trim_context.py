"""trim-context for real: a restart's move, no process is told, the saved world's checkpoint loses its oldest messages.

The memories below are the reference loop's (reference/parts.py); what each strike leaves is
derived by hand from spec/CONVERSATIONS.md 7: the oldest turn whose reply is still in the
conversation and that has a result loses its reply (1), every turn before it all of it (2).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from crashsweep.realsweep import world as worlds
from crashsweep.realsweep.faults import trim_context
from crashsweep.realsweep.faults.key_expiry import KEY_EXPIRY
from crashsweep.realsweep.faults.kind import RESTART
from crashsweep.realsweep.faults.nemesis import Nemesis, restart_fault
from crashsweep.realsweep.faults.trim_context import CHECKPOINT, TRIM_CONTEXT, TRIMMED, oldest_whole, trimmed
from crashsweep.realsweep.reference import loading
from crashsweep.realsweep.reference.parts import CHECKPOINT_FILE
from crashsweep.realsweep.tracker.store import KEYS_TABLE
from tests.realsweep.faults.points import PAUSES, POINTS


def _turn(index: int, results: dict[str, str], *, complete: bool = True, **more: Any) -> dict[str, Any]:
    return {"index": index, "results": results, "marked": [], "complete": complete, **more}


TWO_TURNS: dict[str, Any] = {
    "run": "r",
    "done": False,
    "turns": [_turn(1, {"create_a": "#1", "create_b": "#2"}), _turn(2, {"search": "2 issues"}, complete=False)],
}


def _world(memory: object | None, keys: bool = False) -> worlds.World:
    files = () if memory is None else ((CHECKPOINT, json.dumps(memory).encode()),)
    return worlds.World(files, ((KEYS_TABLE, ('["k"]',) if keys else ()),))


def test_the_move_at_a_restart_is_named_as_the_model_names_it() -> None:
    trim = TRIM_CONTEXT.restart()
    assert (trim.point, trim.label, trim.counter, trim.code) == (
        RESTART,
        "trim-context at restart",
        "fault.trim-context",
        "trim-context-0",
    )
    assert trim.env() == {}  # no process is told anything
    assert restart_fault(TRIM_CONTEXT.name) == trim
    assert restart_fault() == KEY_EXPIRY.restart()  # the default stays key-expiry's


def test_it_has_no_chance_inside_a_process_and_trims_the_reference_loop_s_checkpoint() -> None:
    assert TRIM_CONTEXT.chances(POINTS, PAUSES, (0, 0)) == []
    assert (TRIM_CONTEXT.at_restart, TRIM_CONTEXT.in_process) == (True, False)
    assert (CHECKPOINT, TRIMMED) == (CHECKPOINT_FILE, loading.TRIMMED)


@pytest.mark.parametrize(
    ("memory", "position"),
    [
        (None, None),  # no checkpoint: the first start, or a crash before the first save
        ({"run": "r", "done": False, "turns": []}, None),
        ({"run": "r", "done": False, "turns": [_turn(1, {}, complete=False)]}, None),  # a reply with no result yet
        (TWO_TURNS, 0),
        ({**TWO_TURNS, "done": True}, None),  # the run is done: no restart is due
        ({**TWO_TURNS, "turns": [_turn(1, {"create_a": "#1"}, trimmed=1), TWO_TURNS["turns"][1]]}, 1),
        ({**TWO_TURNS, "turns": [_turn(1, {"a": "#1"}, trimmed=2), _turn(2, {"s": "x"}, trimmed=1)]}, None),
        ({"checkpoint": "of another program"}, None),
    ],
)
def test_its_chance_is_a_turn_whose_reply_is_in_the_conversation_and_that_has_a_result(
    memory: object | None, position: int | None
) -> None:
    assert oldest_whole(memory) == position
    assert TRIM_CONTEXT.restart_chance(_world(memory)) is (position is not None)


def test_a_torn_checkpoint_gives_no_chance() -> None:
    assert not TRIM_CONTEXT.restart_chance(worlds.World(((CHECKPOINT, b'{"run": "r", "do'),)))


def test_each_strike_cuts_the_next_turn_and_every_turn_keeps_its_results() -> None:
    """First strike: reply 1 leaves. Second: turn 1 leaves whole, reply 2 leaves. Then no turn is left to cut."""
    once = trimmed(TWO_TURNS)
    assert [turn.get(TRIMMED) for turn in once["turns"]] == [1, None]
    twice = trimmed(once)
    assert [turn.get(TRIMMED) for turn in twice["turns"]] == [2, 1]
    assert [turn["results"] for turn in twice["turns"]] == [turn["results"] for turn in TWO_TURNS["turns"]]
    assert oldest_whole(twice) is None
    assert TWO_TURNS["turns"][0].get(TRIMMED) is None  # the memory it was given is left alone


def test_before_a_restart_the_checkpoint_file_is_cut_and_written_as_the_loop_writes_it(tmp_path: Path) -> None:
    path = tmp_path / CHECKPOINT
    path.write_text(json.dumps(TWO_TURNS))
    TRIM_CONTEXT.restart().before_restart(None, tmp_path)
    assert json.loads(path.read_text()) == trimmed(TWO_TURNS)
    assert path.read_bytes() == json.dumps(trimmed(TWO_TURNS), separators=(",", ":")).encode()


def test_the_nemesis_names_the_faults_at_a_restart_open_in_a_world() -> None:
    """Only enabled kinds, in the registry's order: keys remembered for key-expiry, a turn to cut for trim-context."""
    both = Nemesis(("trim-context", "key-expiry"))
    assert both.restart_chances(_world(TWO_TURNS, keys=True)) == ("key-expiry", "trim-context")
    assert both.restart_chances(_world(TWO_TURNS)) == ("trim-context",)
    assert both.restart_chances(_world(None, keys=True)) == ("key-expiry",)
    assert Nemesis(("lost-reply",)).restart_chances(_world(TWO_TURNS, keys=True)) == ()
    assert both.expires_keys


def test_key_expiry_takes_a_world_without_a_tracker(tmp_path: Path) -> None:
    """A restart's fault is handed the tracker's space and the files; key-expiry has nothing to forget without one."""
    KEY_EXPIRY.restart().before_restart(None, tmp_path)
    assert not KEY_EXPIRY.restart_chance(_world(TWO_TURNS))


def test_an_adapter_hands_the_kind_another_program_s_conversation(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A framework's session (which faults/ cannot import) is cut by the chance and cut its adapter registered."""
    monkeypatch.setattr(trim_context, "OTHERS", [])
    cuts: list[Path] = []

    def chance(world: worlds.World) -> bool:
        return world.file("session.db") is not None

    def cut(files: Path) -> bool:
        cuts.append(files)
        return True

    session = worlds.World((("session.db", b"x"),))
    assert not TRIM_CONTEXT.restart_chance(session)
    trim_context.register(chance, cut)
    trim_context.register(chance, cut)  # once
    assert [(chance, cut)] == trim_context.OTHERS
    assert TRIM_CONTEXT.restart_chance(session)
    TRIM_CONTEXT.restart().before_restart(None, tmp_path)
    assert cuts == [tmp_path]
    (tmp_path / CHECKPOINT).write_text(json.dumps(TWO_TURNS))  # the reference loop's checkpoint comes first
    TRIM_CONTEXT.restart().before_restart(None, tmp_path)
    assert cuts == [tmp_path]
    assert json.loads((tmp_path / CHECKPOINT).read_text()) == trimmed(TWO_TURNS)
