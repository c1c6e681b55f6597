"""crashsweep: crash a durable agent loop at every point, up to N crashes, and count what it does.

The public API is the names below, imported from `crashsweep` itself (docs/guide/sweep.md,
"The public API"): what a program swept by `crashsweep sweep --target` and its `--check`
use. Where each is defined inside the packages may move from release to release; this path
stays. Each name is imported on first use (the module `__getattr__`): every swept process
imports this package on its way to the probe, some with `python -S`, so `import crashsweep`
itself loads nothing more.

The paths of the last release that moved (crashsweep.realsweep.crashpoint, .checkpoint,
.tracker_client, .engine) still work for one release, with a DeprecationWarning: each is a
small module of realsweep/ that calls `moved` (the table MOVED).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # for type checkers only; at run time each name is imported on first use
    from crashsweep.realsweep.adapters.script import target_args
    from crashsweep.realsweep.probe import checkpoint
    from crashsweep.realsweep.probe.crashpoint import STUCK_STATUS, count, crashpoint, fresh_id, pause
    from crashsweep.realsweep.tracker.client import TrackerClient
    from crashsweep.realsweep.values import Outcome, Scenario
    from crashsweep.spec.job import TRIAGE, Call, Job, load_job
    from crashsweep.spec.keys import key as idempotency_key

__version__ = "0.1.0"

PUBLIC: dict[str, tuple[str, str]] = {
    # A swept program: its crash points, counters and pauses, IDs, atomic saves, the tracker, its --arg values.
    "crashpoint": ("crashsweep.realsweep.probe.crashpoint", "crashpoint"),
    "count": ("crashsweep.realsweep.probe.crashpoint", "count"),
    "pause": ("crashsweep.realsweep.probe.crashpoint", "pause"),
    "fresh_id": ("crashsweep.realsweep.probe.crashpoint", "fresh_id"),
    "STUCK_STATUS": ("crashsweep.realsweep.probe.crashpoint", "STUCK_STATUS"),
    "checkpoint": ("crashsweep.realsweep.probe.checkpoint", ""),
    "TrackerClient": ("crashsweep.realsweep.tracker.client", "TrackerClient"),
    "target_args": ("crashsweep.realsweep.adapters.script", "target_args"),
    "idempotency_key": ("crashsweep.spec.keys", "key"),
    # Its check: a scenario in, an outcome out; the job its records map to.
    "Scenario": ("crashsweep.realsweep.values", "Scenario"),
    "Outcome": ("crashsweep.realsweep.values", "Outcome"),
    "Job": ("crashsweep.spec.job", "Job"),
    "Call": ("crashsweep.spec.job", "Call"),
    "TRIAGE": ("crashsweep.spec.job", "TRIAGE"),
    "load_job": ("crashsweep.spec.job", "load_job"),
}
"""Each public name: the module that defines it and its name there ("": the module itself)."""

__all__ = [  # the public names and this module's own (a test holds them equal to PUBLIC and these)
    "MOVED",
    "PUBLIC",
    "STUCK_STATUS",
    "TRIAGE",
    "Call",
    "Job",
    "Outcome",
    "Scenario",
    "TrackerClient",
    "__version__",
    "checkpoint",
    "count",
    "crashpoint",
    "fresh_id",
    "idempotency_key",
    "load_job",
    "moved",
    "pause",
    "target_args",
]

MOVED: dict[str, tuple[str, str]] = {
    "crashsweep.realsweep.crashpoint": ("crashsweep.realsweep.probe.crashpoint", "crashpoint, count, fresh_id"),
    "crashsweep.realsweep.checkpoint": ("crashsweep.realsweep.probe.checkpoint", "checkpoint"),
    "crashsweep.realsweep.tracker_client": ("crashsweep.realsweep.tracker.client", "TrackerClient"),
    "crashsweep.realsweep.engine": ("crashsweep.realsweep.sweep", "Outcome, Scenario"),
}
"""Each module path of the last release that moved: where it went, and what to import from crashsweep instead."""


def __getattr__(name: str) -> Any:
    """A public name, imported on first use and kept; AttributeError for any other (a submodule is then imported)."""
    if name not in PUBLIC:
        raise AttributeError(f"module 'crashsweep' has no attribute {name!r}")
    import importlib

    home, attribute = PUBLIC[name]
    module = importlib.import_module(home)
    value = getattr(module, attribute) if attribute else module
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    """The module's names, the public ones included before their first use."""
    return sorted({*globals(), *PUBLIC})


def moved(old: str) -> None:
    """Make the module `old` (a path of the last release) the module it became, warning that the path goes.

    Called by the small module left at `old`. The warning names the code that imported it
    (stacklevel 3: this function, that module, then its importer, the frames of the import
    system not counted), so that Python's default filters show it to a script's author.
    `sys.modules[old]` becomes the new module itself: both paths give the same objects.
    """
    import importlib
    import sys
    import warnings

    new, names = MOVED[old]
    message = f"{old} moved and goes in the next release: `from crashsweep import {names}` ({new})"
    warnings.warn(message, DeprecationWarning, stacklevel=3)
    sys.modules[old] = importlib.import_module(new)
