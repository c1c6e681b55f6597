"""A small program whose restart cannot recover from some crashes: a JSON store written in place.

Each of its three writes is appended to `effects.log` (the receiver), then taken off the to-do
list in `store.json`, rewritten in place: the new text over the old (shorter, as the list
shrinks), an fsync, then a truncate. A crash between the fsync and the truncate (its point
`saved`) leaves the old text's tail after the new one ("Extra data"), which the restart cannot
load: it fails with json's JSONDecodeError, exit status 1, as tinydb does. With `$TORN_FIRST`
set, the uninterrupted run fails too (the program fails by itself, not after a crash); with
`$TORN_SLOW` (seconds), each process first sleeps that long (a sweep long enough to interrupt).
"""

from __future__ import annotations

import json
import os
import time
from pathlib import Path

from crashsweep.realsweep.probe.crashpoint import crashpoint
from crashsweep.realsweep.sweep import Outcome, Scenario

WRITES = ("alpha", "beta", "gamma")
STORE = Path("store.json")
EFFECTS = Path("effects.log")


def run() -> None:
    """Apply each write still to do, then take it off the list."""
    time.sleep(float(os.environ.get("TORN_SLOW", "0")))
    if os.environ.get("TORN_FIRST"):
        raise RuntimeError("the store's folder is read-only")
    todo = json.loads(STORE.read_text()) if STORE.exists() else {"todo": list(WRITES)}
    while todo["todo"]:
        crashpoint("apply")
        with EFFECTS.open("a") as log:
            log.write(todo["todo"][0] + "\n")
        todo = {"todo": todo["todo"][1:]}
        _save(todo)


def _save(todo: dict[str, list[str]]) -> None:
    """Write the store in place: the text, an fsync, then the truncate (the crash point between)."""
    text = json.dumps(todo).encode()
    fd = os.open(STORE, os.O_RDWR | os.O_CREAT, 0o644)
    try:
        os.write(fd, text)
        os.fsync(fd)
        crashpoint("saved")
        os.ftruncate(fd, len(text))
    finally:
        os.close(fd)


def check(scenario: Scenario) -> Outcome:
    """Each write applied exactly once, from the effects the program logged."""
    log = scenario.workdir / EFFECTS
    effects = log.read_text().split() if log.exists() else []
    return Outcome.of(effects, WRITES)
