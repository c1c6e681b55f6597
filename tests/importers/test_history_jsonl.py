"""The History JSONL kind (importers/history_jsonl.py): told by its header line, read by the spec's reader."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from crashsweep.importers import history_jsonl
from crashsweep.importers.base import HEAD, Unusable
from crashsweep.spec.history import Event, History

TWO_RUNS = History(
    (
        Event("r1", 0, 1, "ok", "effect", call="create_a", effect_id="#1", src="tracker"),
        Event("r2", 1, 2, "invoke", "model_call", src="checkpoint"),
        Event("", 0, 3, "ok", "run_status", status="finished", src="sweep"),
    ),
    expected=("create_a",),
    facts=frozenset({"effects", "status"}),
    unseen={"transcript": "not recorded", "approvals": "not recorded"},
)


def recognised(path: Path, text: str) -> bool:
    """Whether the kind recognises a file holding `text`, given its first bytes as the registry gives them."""
    path.write_text(text, encoding="utf-8")
    return history_jsonl.recognises(path, path.read_bytes()[:HEAD])


def test_a_file_is_one_history_whatever_runs_it_holds(tmp_path: Path) -> None:
    """Two runs and a status of run "": one History, as written (the audit splits it by run)."""
    path = tmp_path / "history.jsonl"
    assert recognised(path, TWO_RUNS.to_jsonl())
    assert history_jsonl.histories(path) == (TWO_RUNS,)


@pytest.mark.parametrize(
    "first",
    [
        '{"crashsweep_history": 1}',
        '{"crashsweep_history": 7, "expected": []}',  # another version: recognised, the reader refuses it
        '  {"facts": [], "crashsweep_history": 1}  ',
    ],
)
def test_recognised_by_a_first_line_with_crashsweep_history(tmp_path: Path, first: str) -> None:
    assert recognised(tmp_path / "h.jsonl", first + "\n")


@pytest.mark.parametrize(
    "text",
    [
        '{"run": "r1", "done": true, "turns": []}\n',  # an object without the key
        '{"note": "crashsweep_history"}\n',  # the word as a value, not a key
        '["crashsweep_history", 1]\n',  # not an object
        '{"v": 1}\n{"crashsweep_history": 1}\n',  # the key on the second line only
        "",
    ],
)
def test_not_recognised_without_it_on_the_first_line(tmp_path: Path, text: str) -> None:
    assert not recognised(tmp_path / "h.jsonl", text)


def test_a_broken_header_line_is_recognised_so_that_the_reader_names_the_line(tmp_path: Path) -> None:
    path = tmp_path / "h.jsonl"
    assert recognised(path, '{"crashsweep_history": 1, "expected": [\n')
    with pytest.raises(Unusable) as refused:
        history_jsonl.histories(path)
    assert str(refused.value).startswith(f"{path}:1: not JSON (")


def test_a_header_longer_than_the_head_is_recognised(tmp_path: Path) -> None:
    """A header whose expected calls run past HEAD bytes: its first line is cut, still this kind's."""
    header = {"crashsweep_history": 1, "expected": [f"call_{n}" for n in range(HEAD // 8)]}
    path = tmp_path / "h.jsonl"
    assert recognised(path, json.dumps(header) + "\n")
    assert len(history_jsonl.histories(path)[0].expected) == HEAD // 8


def test_a_bad_event_is_unusable_naming_file_and_line(tmp_path: Path) -> None:
    """Line 3 (the second event) has an `f` no history knows."""
    path = tmp_path / "h.jsonl"
    lines = [
        {"crashsweep_history": 1},
        {"v": 1, "run": "r1", "incarnation": 0, "seq": 1, "type": "ok", "f": "effect"},
        {"v": 1, "run": "r1", "incarnation": 0, "seq": 2, "type": "ok", "f": "launch"},
    ]
    path.write_text("".join(json.dumps(line) + "\n" for line in lines), encoding="utf-8")
    with pytest.raises(Unusable) as refused:
        history_jsonl.histories(path)
    assert str(refused.value).startswith(f"{path}:3: f 'launch': expected one of model_call, ")


def test_a_file_that_cannot_be_read_is_unusable(tmp_path: Path) -> None:
    path = tmp_path / "gone.jsonl"
    with pytest.raises(Unusable) as refused:
        history_jsonl.histories(path)
    assert str(refused.value).startswith(f"{path}: cannot be read (")
