"""The two-step save (temp file, then rename) and the crash points it passes.

Section 3 of SEMANTICS.md: write the whole in-memory state to the temp file (crash point
`<what>: tmp written`), rename it over the checkpoint (`<what>: renamed`). Marker and result
saves pass one more crash point of their own on the same disk state.

The instructions are frozen values, so each save's tuple is made once and shared (a bounded
cache): equal programs then hold the same instruction objects, and compare by identity.
"""

from __future__ import annotations

from functools import lru_cache

from crashsweep.spec.ops import CHECKPOINT, LOCK, Ops, Point, Rename, WriteTmp


@lru_cache(maxsize=1 << 12)
def save(what: str, file: str = CHECKPOINT) -> Ops:
    """Save(what): write the temp file, rename it into place."""
    return (WriteTmp(file), Point(f"{what}: tmp written"), Rename(file), Point(f"{what}: renamed"))


@lru_cache(maxsize=1 << 12)
def save_marker(call: str) -> Ops:
    """The marker save before a write: Save(marker <call>), then `marker saved <call>`."""
    return (*save(f"marker {call}"), Point(f"marker saved {call}"))


@lru_cache(maxsize=1 << 12)
def save_result(call: str) -> Ops:
    """The result save after a call: Save(result <call>), then `result saved <call>`."""
    return (*save(f"result {call}"), Point(f"result saved {call}"))


@lru_cache(maxsize=1 << 12)
def take_lock() -> Ops:
    """Take the run's lock: a lock file written by temp file and rename."""
    return save("lock", LOCK)
