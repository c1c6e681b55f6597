"""The real side's facade: everything the CLI uses of realsweep, under one name each.

crashsweep/cli/ imports the real side from this module only (an import-linter contract in
pyproject.toml checks it), so the subpackages behind it (probe, tracker, process, dedup,
engines, faults, reference, adapters) may move their code without touching the CLI: only the
lines below follow. What it offers:

- the sweep: `sweep`, `replay` and their values (`Target`, `Check`, `SweepOptions`,
  `SweepResult`, `ScenarioResult`, `Crash`, `Outcome`, `Progress`, `Engine`, the errors);
- a sweep's row (`sweep_summary`, `row_text`, `row_json`, `counterexamples`, `violates`);
- the reference loop (`reference_target`, `reference_check`, `reference_run`, `reference_retry_layers`,
  `REFERENCE_DESIGNS`, `SERVICE_MODES`) and its conformance with the model (`conform`,
  `render_conformance`, `Conformance`, the figures it compares `CONFORMANCE_FIELDS`);
- the built-in framework agents (`framework_target`, `framework_check`), the frameworks'
  records (`Framework`, `FRAMEWORK_REGISTRY`, `framework(name)`) and the views of them the
  CLI reads (`FRAMEWORKS`, `DURABILITY`, `FROM_SCRATCH_FRAMEWORKS`, `REPLAYING_FRAMEWORKS`),
  and what a user's script gets (`ARGS`, `CALL_IDS`);
- the faults (`Nemesis`, `NemesisError`, `Fault`), entry points (`parse_entry_point`,
  `load_entry_point`) and `StateKey`;
- `shared_zygotes()`: the sweeps within it keep their zygotes for the next sweep of the same
  program (process/zygotes.py).

Optional or heavy parts are functions that import on call: `ray_engine` (Ray, the optional
extra crashsweep[ray], slow to import), and `tracker_server` and `serve_tracker` (the tracker
service, which only `tracker serve` runs in the CLI's own process).
"""

from __future__ import annotations

import re as _re
from pathlib import Path
from typing import TYPE_CHECKING

from crashsweep.realsweep.adapters.builtin import check as framework_check
from crashsweep.realsweep.adapters.builtin import target as framework_target
from crashsweep.realsweep.adapters.frameworks import AGENTS as FRAMEWORKS
from crashsweep.realsweep.adapters.frameworks import DURABILITY, Framework
from crashsweep.realsweep.adapters.frameworks import FROM_SCRATCH as FROM_SCRATCH_FRAMEWORKS
from crashsweep.realsweep.adapters.frameworks import REGISTRY as FRAMEWORK_REGISTRY
from crashsweep.realsweep.adapters.frameworks import REPLAYING as REPLAYING_FRAMEWORKS
from crashsweep.realsweep.adapters.frameworks import extra_for as _extra_for
from crashsweep.realsweep.adapters.frameworks import named as framework
from crashsweep.realsweep.adapters.openai_agents_repair import REPAIRS as TRANSCRIPT_REPAIRS
from crashsweep.realsweep.adapters.script import ARGS, CALL_IDS
from crashsweep.realsweep.faults.nemesis import Fault, Nemesis, NemesisError
from crashsweep.realsweep.faults.power_loss import cut_words, split_state
from crashsweep.realsweep.probe.entry import load as load_entry_point
from crashsweep.realsweep.probe.entry import parse_entry_point
from crashsweep.realsweep.probe.modes import CHOICES as POINTS_CHOICES
from crashsweep.realsweep.probe.modes import Points
from crashsweep.realsweep.process.forked_check import ForkedCheck
from crashsweep.realsweep.process.lifeline import die_with_parent
from crashsweep.realsweep.process.zygotes import shared as shared_zygotes
from crashsweep.realsweep.reference.conformance import FIELDS as CONFORMANCE_FIELDS
from crashsweep.realsweep.reference.conformance import Conformance, conform
from crashsweep.realsweep.reference.conformance import render as render_conformance
from crashsweep.realsweep.reference.loop import DESIGNS as REFERENCE_DESIGNS
from crashsweep.realsweep.reference.target import SERVICE_MODES
from crashsweep.realsweep.reference.target import check as reference_check
from crashsweep.realsweep.reference.target import retry_layers as reference_retry_layers
from crashsweep.realsweep.reference.target import run as reference_run
from crashsweep.realsweep.reference.target import state_key as reference_state_key
from crashsweep.realsweep.reference.target import target as reference_target
from crashsweep.realsweep.rows import counterexamples, row_text, violates, violations
from crashsweep.realsweep.rows import summary as sweep_summary
from crashsweep.realsweep.rows import to_json as row_json
from crashsweep.realsweep.sweep import (
    Checked,
    Divergence,
    Passed,
    Run,
    determinism,
    determinism_runs,
    list_points,
    replay,
    sweep,
)
from crashsweep.realsweep.syscalls.persistence import MODELS as PERSISTENCE_MODELS
from crashsweep.realsweep.values import (
    Check,
    Crash,
    Engine,
    Outcome,
    Progress,
    ScenarioResult,
    SweepError,
    SweepOptions,
    SweepResult,
    Target,
    TargetFailed,
)
from crashsweep.realsweep.world import StateKey

if TYPE_CHECKING:
    from crashsweep.realsweep.engines.ray import RayEngine
    from crashsweep.realsweep.tracker.server import TrackerServer

__all__ = [
    "ARGS",
    "CALL_IDS",
    "CONFORMANCE_FIELDS",
    "DURABILITY",
    "FRAMEWORKS",
    "FRAMEWORK_REGISTRY",
    "FROM_SCRATCH_FRAMEWORKS",
    "PERSISTENCE_MODELS",
    "POINTS_CHOICES",
    "REFERENCE_DESIGNS",
    "REPLAYING_FRAMEWORKS",
    "SERVICE_MODES",
    "TRANSCRIPT_REPAIRS",
    "Check",
    "Checked",
    "Conformance",
    "Crash",
    "Divergence",
    "Engine",
    "Fault",
    "ForkedCheck",
    "Framework",
    "Nemesis",
    "NemesisError",
    "Outcome",
    "Passed",
    "Points",
    "Progress",
    "Run",
    "ScenarioResult",
    "StateKey",
    "SweepError",
    "SweepOptions",
    "SweepResult",
    "Target",
    "TargetFailed",
    "conform",
    "counterexamples",
    "cut_words",
    "determinism",
    "determinism_runs",
    "die_with_parent",
    "framework",
    "framework_check",
    "framework_target",
    "list_points",
    "load_entry_point",
    "parse_entry_point",
    "ray_engine",
    "reference_check",
    "reference_retry_layers",
    "reference_run",
    "reference_state_key",
    "reference_target",
    "render_conformance",
    "replay",
    "row_json",
    "row_text",
    "serve_tracker",
    "shared_zygotes",
    "split_state",
    "sweep",
    "sweep_summary",
    "tracker_server",
    "violates",
    "violations",
    "with_extra",
]


def ray_engine(address: str | None, workers: int | None) -> RayEngine:
    """The Ray engine (a context manager that connects to `address`, or starts a local Ray).

    Ray is imported here, on first use: it is an optional extra and slow to import.
    """
    from crashsweep.realsweep.engines.ray import RayEngine

    return RayEngine(address, workers)


def tracker_server(root: Path, mode: str, host: str, port: int, *, quiet: bool) -> TrackerServer:
    """A tracker server on `host:port` over the databases in `root`, not yet serving (see `serve_tracker`)."""
    from crashsweep.realsweep.tracker import service

    return service.make_server(root, mode, host, port, quiet=quiet)


def serve_tracker(server: TrackerServer) -> None:
    """Serve until Ctrl-C or SIGTERM, then close every database."""
    from crashsweep.realsweep.tracker import service

    service.serve(server)


_MISSING = _re.compile(r"No module named '([\w.]+)'")


def with_extra(message: str) -> str:
    """`message`, and, when it says a module is missing that a framework's extra installs, which extra.

    A user's --target or --check on a framework that is not installed fails with Python's "No module
    named 'langchain_core'": the extra that brings it is named, as `--framework` names its own.
    """
    found = _MISSING.search(message)
    hint = _extra_for(found.group(1)) if found else None
    return message if hint is None else f"{message} ({hint})"
