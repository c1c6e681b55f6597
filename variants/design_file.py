"""Design files: a loop design written by a user as TOML, read into a named policy (a preset).

    name = "my-loop"                       # required: how tables and traces call it
    summary = "what the loop does"         # optional
    startup_save = true
    reply_save = "before-first-send"       # or "never"
    result_saves = "writes-only"           # "each-call", "writes-only", "whole-turn", "none"
    markers = "before-writes"              # or "none"
    keys = "run-call"                      # or "none"
    lock = "none"                          # or "file"
    ladder = ["rerun-when-harmless", "person"]   # only with markers
    on_tool_error = "retry"                # or "model"

Any problem is a one-line `PolicyError` that names the file and the field (spec/policy.py
reads the file, checks the values and refuses combinations that mean nothing).
"""

from __future__ import annotations

from pathlib import Path

from crashsweep.spec.policy import read_design_file
from crashsweep.variants.presets import Preset


def load_design(path: Path) -> Preset:
    """Read a design file into a preset (PolicyError on any problem)."""
    return Preset(*read_design_file(path))
