"""The check of record_upgrade.c: the upgrade is done when the record is version 2, whole."""

from __future__ import annotations

from pathlib import Path

from crashsweep import Outcome, Scenario

SIZE = 4096


def fnv1a(data: bytes) -> int:
    """The 64-bit FNV-1a hash, as record_upgrade.c computes it."""
    value = 14695981039346656037
    for byte in data:
        value = ((value ^ byte) * 1099511628211) % 2**64
    return value


def record(version: int) -> bytes:
    """The record of `version`, byte for byte as record_upgrade.c writes it."""
    body = f"version {version}\n".encode().ljust(SIZE - 8, b"." if version == 1 else b"#")
    return fnv1a(body).to_bytes(8, "little") + body


def check(scenario: Scenario) -> Outcome:
    """One write expected, the upgrade: applied when the work folder's record is version 2, whole."""
    path = Path(scenario.workdir) / "record"
    done = path.exists() and path.read_bytes() == record(2)
    return Outcome.of(["upgrade"] if done else [], ["upgrade"])
