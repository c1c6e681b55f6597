"""crashsweep's reference loop's checkpoint (`checkpoint.json`): how its run ended, and the results it saved.

The reference loop (realsweep/reference/) saves one JSON object: its run ID, whether it is
`done` (the model gave its final answer), and each turn saved so far with the results it holds
(`{"index": 1, "results": {"create_a": "#1"}, ...}`). A run that is done ends `finished`; one
that is not says nothing of how it will end (it may be running, or stuck). Each saved result is
a `tool_call` and its `result_saved` after the turn's `model_call`, and a done run's final
answer one more `model_call`; the calls of a turn with no result saved are not in the file (the
job names them), so the conversation is unseen: a checkpoint cannot show an orphaned call.
`src` is "turn N" (the turn's index) or "done".
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from crashsweep.importers.base import Kind, Unusable, place
from crashsweep.spec.history import FINISHED, Event, History

UNSEEN = {
    "effects": "the loop's checkpoint holds no receiver's records",
    "transcript": "the loop's checkpoint keeps a turn's results, not the calls without one",
    "approvals": "the loop's checkpoint keeps no approvals",
}


def recognises(path: Path, head: bytes) -> bool:
    """A JSON object with the loop's keys `run`, `done` and `turns` (a checkpoint fits in HEAD)."""
    if not head.lstrip().startswith(b"{") or b'"turns"' not in head:
        return False
    try:
        data = json.loads(head)
    except ValueError:
        return False
    return isinstance(data, dict) and {"run", "done", "turns"} <= data.keys()


def read(path: Path) -> tuple[History, ...]:
    """The checkpoint's one run: its saved results, and `finished` when it is done."""
    try:
        data = json.loads(path.read_bytes())
    except (OSError, ValueError) as error:
        raise Unusable(f"{path}: not a checkpoint of the reference loop ({error})") from None
    if not isinstance(data, dict):
        raise Unusable(f"{path}: not a checkpoint of the reference loop (a JSON object)")
    run, turns = data.get("run"), data.get("turns")
    if not isinstance(run, str) or not isinstance(turns, list):
        raise Unusable(f"{path}: a checkpoint needs a run ID (a string) and a list of turns")
    events: list[Event] = []
    for number, turn in enumerate(turns, 1):
        events.extend(_turn(path, run, turn, number, len(events)))
    if data.get("done") is True:
        done = place(path, "done")
        events.append(Event(run, 0, len(events) + 1, "invoke", "model_call", src=done))
        events.append(Event(run, 0, len(events) + 1, "ok", "run_status", status=FINISHED, src=done))
    return (History(tuple(events), facts=frozenset({"status"}), unseen=UNSEEN),)


def _turn(path: Path, run: str, turn: Any, number: int, before: int) -> list[Event]:
    """The `number`-th saved turn's model call, then each saved result's call and result (events after `before`)."""
    results = turn.get("results") if isinstance(turn, dict) else None
    if not isinstance(results, dict):
        raise Unusable(f"{path}: turn {number}: expected an object with the turn's results")
    src = place(path, f"turn {turn.get('index', '?')}")
    events = [Event(run, 0, before + 1, "invoke", "model_call", src=src)]
    for call in results:
        events.append(Event(run, 0, before + len(events) + 1, "invoke", "tool_call", call=str(call), src=src))
        events.append(Event(run, 0, before + len(events) + 1, "ok", "result_saved", call=str(call), src=src))
    return events


KIND = Kind("reference", "crashsweep's reference loop's checkpoint.json", recognises, read)
