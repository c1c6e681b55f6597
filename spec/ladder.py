"""The resolution ladder: how a restarted loop settles a call that has a marker but no result.

The marker says the call may have gone out; the missing result says nobody heard back. The
loop cannot tell whether the call took effect, so it climbs (section 6 of SEMANTICS.md):

1. run it again when a repeat is harmless: the call only reads, or it carries a key the
   tracker honours;
2. ask the other side whether it happened, when the tracker offers a lookup;
3. ask a person, who answers truthfully whether the tracker holds the call's effect.
"""

from __future__ import annotations

from crashsweep.spec.job import Call
from crashsweep.spec.ops import AskPerson, Lookup, Ops, Send
from crashsweep.spec.tracker import TrackerKind


def harmless_to_repeat(call: Call, keyed: bool, tracker: TrackerKind) -> bool:
    """Rung 1's test: a read, or a write whose key the tracker honours."""
    return not call.writes or (keyed and tracker.honours_keys)


def settle(call: Call, keyed: bool, tracker: TrackerKind) -> Ops:
    """The instructions that settle `call` on the lowest rung open to it."""
    if harmless_to_repeat(call, keyed, tracker):
        return (Send(call.id, keyed, rerun=True),)
    if tracker.lookup:
        return (Lookup(call.id, keyed),)
    return (AskPerson(call.id, keyed),)
