"""Tests of benchmarks/audit_agreement.py: one stack swept and audited as a user runs it, and its parts."""

from __future__ import annotations

import importlib
import subprocess
import sys
from pathlib import Path
from typing import Any

from crashsweep.spec.history import Event, History

BENCHMARKS = Path(__file__).resolve().parents[2] / "benchmarks"
sys.path.insert(0, str(BENCHMARKS))  # the scripts are run by path, not installed: import them the same way
agreement: Any = importlib.import_module("audit_agreement")


def test_stripping_removes_every_call_name_and_keeps_the_rest() -> None:
    event = Event("r", 0, 1, "ok", "effect", call="create_a", call_id="c1", tool="create_issue", args_digest="d")
    (bare,) = agreement.stripped(History((event,))).events
    assert (bare.call, bare.call_id, bare.tool, bare.args_digest) == ("", "", "create_issue", "d")


def test_a_design_is_swept_by_its_preset_or_its_file() -> None:
    keep = Path("/k")
    preset = agreement.command("reference:save-after-reply", "-", 1, keep)
    assert preset[1:4] == ["sweep", "--variant", "save-after-reply"]
    assert preset[4:] == ["--tracker", "keyed", "--depth", "1", "--keep", "/k"]
    design = agreement.command("reference:examples/save-after-reply-repair.toml", "-", 1, keep)
    assert design[2:4] == ["--design", str(agreement.ROOT / "examples" / "save-after-reply-repair.toml")]
    framework = agreement.command("dbos", "off", 2, keep)
    assert framework[1:] == ["sweep", "--framework", "dbos", "--keys", "off", "--depth", "2", "--keep", "/k"]


def test_the_reference_loop_keyless_audits_as_its_sweep_counts(tmp_path: Path) -> None:
    """save-after-reply at depth 1: the audit of each kept world's records agrees with the sweep, IDs or not."""
    done = subprocess.run(
        [
            sys.executable,
            str(BENCHMARKS / "audit_agreement.py"),
            "--frameworks",
            "reference:save-after-reply",
            "--depth",
            "1",
            "--keep",
            str(tmp_path),
        ],
        capture_output=True,
        text=True,
        check=False,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    header, row, total = done.stdout.splitlines()
    assert header.split()[:3] == ["stack", "keys", "worlds"]
    words = row.split()
    assert words[:2] == ["reference:save-after-reply", "-"]
    sweep_dups, audit_dups = words[3].split("/")
    assert int(sweep_dups) > 0  # keyless: some crash duplicates a write
    assert sweep_dups == audit_dups
    assert words[5] == "0"  # disagreements
    assert words[6] == "100%"  # duplicates found again by tool and arguments alone
    assert total.startswith("disagreements in all: 0")
