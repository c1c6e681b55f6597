"""Every real fault kind, in the order of spec/faults.py's registry: what the nemesis reads.

A fault is one module of this package (a `Kind` value, kind.py) and its model value in
spec/faults.py; it is carried out for real once it is listed here. A model kind the real
sweep does not carry out is listed in `MODEL_ONLY` with the reason; a test holds the two
registries together (same names, same order).
"""

from __future__ import annotations

from collections.abc import Mapping

from crashsweep.realsweep.faults.changed_args import CHANGED_ARGS
from crashsweep.realsweep.faults.key_expiry import KEY_EXPIRY
from crashsweep.realsweep.faults.kind import FaultKind
from crashsweep.realsweep.faults.lost_reply import LOST_REPLY
from crashsweep.realsweep.faults.pause import PAUSE
from crashsweep.realsweep.faults.power_loss import POWER_LOSS
from crashsweep.realsweep.faults.trim_context import TRIM_CONTEXT
from crashsweep.realsweep.faults.wrong_answer import WRONG_ANSWER

KINDS: tuple[FaultKind, ...] = (LOST_REPLY, KEY_EXPIRY, WRONG_ANSWER, POWER_LOSS, PAUSE, CHANGED_ARGS, TRIM_CONTEXT)
"""The fault kinds the real sweep carries out, in spec/faults.py's order."""
BY_NAME: Mapping[str, FaultKind] = {kind.name: kind for kind in KINDS}
"""The same, by name."""
MODEL_ONLY: Mapping[str, str] = {}
"""Model kinds the real sweep does not carry out, by name, with the reason."""


def kind_of(label: str) -> str:
    """The name of the kind of a fault move's label ("lost-reply at tracker accepted create_a")."""
    return label.split(" ", 1)[0]
