"""The invariants every producer of histories is judged by, in the order reports show them.

A new invariant is one module (a value like no_duplicate.INVARIANT) and one line in
`INVARIANTS`; the explorer's model (variants/loop_model.py), the real sweep's row
(realsweep/rows.py), the reports and every output format read `registered()`. `extra` adds one
for a while (a test's, a plugin's), after the built-in ones.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

from crashsweep.spec.invariants import approved_exactly, can_finish, no_duplicate, no_loss, well_formed_transcript
from crashsweep.spec.invariants.value import Invariant

INVARIANTS: tuple[Invariant, ...] = (
    no_duplicate.INVARIANT,
    no_loss.INVARIANT,
    well_formed_transcript.INVARIANT,
    approved_exactly.INVARIANT,
    can_finish.INVARIANT,
)
_extra: list[Invariant] = []


def registered() -> tuple[Invariant, ...]:
    """Every invariant in force: the built-in ones, then any added by `extra`."""
    return (*INVARIANTS, *_extra)


def by_name(name: str) -> Invariant:
    """The registered invariant named `name` (KeyError for none)."""
    for invariant in registered():
        if invariant.name == name:
            return invariant
    raise KeyError(name)


def witnesses() -> tuple[str, ...]:
    """The witnesses' names, each once, in the order their invariants come."""
    return tuple(dict.fromkeys(invariant.witness for invariant in registered()))


@contextmanager
def extra(invariant: Invariant) -> Iterator[Invariant]:
    """Judge by `invariant` too while the block runs (its name must be new)."""
    if any(known.name == invariant.name for known in registered()):
        raise ValueError(f"invariant {invariant.name!r} is registered already")
    _extra.append(invariant)
    try:
        yield invariant
    finally:
        _extra.remove(invariant)
