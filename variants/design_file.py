"""Design files: a loop design written by a user as TOML, read into a named policy.

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
checks the values and refuses combinations that mean nothing).
"""

from __future__ import annotations

import tomllib
from pathlib import Path

from spec.policy import PolicyError, policy_from_mapping
from variants.presets import Preset

NAMING_KEYS = ("name", "summary")


def preset_from_mapping(data: dict[str, object], source: str) -> Preset:
    """A named policy from parsed TOML; `source` fills in a missing summary."""
    name = data.get("name")
    if not isinstance(name, str) or not name.strip():
        raise PolicyError("name: expected a non-empty string")
    summary = data.get("summary", f"the design in {source}")
    if not isinstance(summary, str):
        raise PolicyError("summary: expected a string")
    policy = policy_from_mapping({key: value for key, value in data.items() if key not in NAMING_KEYS})
    return Preset(name, summary, policy)


def load_design(path: Path) -> Preset:
    """Read a design file; any problem becomes a one-line `PolicyError` naming the file."""
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except OSError as error:
        raise PolicyError(f"{path}: cannot read design file: {error.strerror or error}") from None
    except UnicodeDecodeError:
        raise PolicyError(f"{path}: not UTF-8 text") from None
    except tomllib.TOMLDecodeError as error:
        raise PolicyError(f"{path}: not valid TOML: {error}") from None
    try:
        return preset_from_mapping(data, str(path))
    except PolicyError as error:
        raise PolicyError(f"{path}: {error}") from None
