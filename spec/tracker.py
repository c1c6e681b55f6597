"""The tracker's side of a request: how a write is applied, remembered and looked up.

The tracker is the outside world (an issue tracker, a mail server): it never crashes, and its
records outlive every crash of the loop. A `TrackerKind` says what it offers: honouring
idempotency keys, and answering a lookup "did call C of run R happen?".
"""

from __future__ import annotations

from dataclasses import dataclass

from crashsweep.spec.keys import key
from crashsweep.spec.records import Record, Tracker


@dataclass(frozen=True, slots=True)
class TrackerKind:
    """What a tracker offers to the loop."""

    name: str
    honours_keys: bool
    lookup: bool
    summary: str


KEYED = TrackerKind("keyed", True, False, "honours idempotency keys")
KEYLESS = TrackerKind("keyless", False, False, "ignores idempotency keys")
KEYLESS_LOOKUP = TrackerKind("keyless-lookup", False, True, "ignores keys, answers 'did call C of run R happen?'")
TRACKERS = {kind.name: kind for kind in (KEYED, KEYLESS, KEYLESS_LOOKUP)}

READ_ANSWER = "read ok"


def apply_write(
    tracker: Tracker, kind: TrackerKind, call: str, run: str, keyed: bool, key_as: str | None = None
) -> tuple[Tracker, str]:
    """Apply one write request; return the tracker after it and the answer it sends back.

    A request with a key the tracker honours and already holds gets the first answer and
    changes nothing. Otherwise the write is applied as a new record, and the key (if the
    request carried one and the tracker honours keys) is remembered with its answer. The key
    is Key(run, key_as or call): a retry under a new call ID carries a new key.
    """
    answer = f"#{tracker.size + 1}"
    if not (keyed and kind.honours_keys):
        return tracker.appended(Record(call, run)), answer
    # The key is derived only where the tracker reads it (a digest costs more than the rest).
    request_key = key(run, key_as or call)
    first = tracker.answer_for(request_key)
    if first is not None:
        return tracker, first
    return tracker.appended(Record(call, run), request_key, answer), answer
