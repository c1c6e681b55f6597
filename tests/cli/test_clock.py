"""When a command began: the process's start (read from /proc), or when main() was called."""

from __future__ import annotations

import time

import pytest

from crashsweep.cli import clock

IMPORTED = time.monotonic()


def test_the_process_started_before_its_modules_were_imported() -> None:
    """Read from /proc/self/stat: earlier than the import of this module, in this process's monotonic clock."""
    assert clock.process_started() < IMPORTED


def test_seconds_count_from_when_the_command_began(monkeypatch: pytest.MonkeyPatch) -> None:
    """begin(at) sets the start; begin() is now; seconds() counts from it (a fake clock: no duration is measured)."""
    now = iter([12.5, 20.0, 20.25])
    monkeypatch.setattr(time, "monotonic", lambda: next(now))
    clock.begin(10.0)
    assert clock.seconds() == 2.5
    clock.begin()
    assert clock.seconds() == 0.25


def test_without_proc_the_process_starts_now(monkeypatch: pytest.MonkeyPatch) -> None:
    """Where /proc cannot be read, the command begins when asked."""

    def unreadable(*args: object, **kwargs: object) -> None:
        raise OSError("no /proc")

    monkeypatch.setattr("builtins.open", unreadable)
    monkeypatch.setattr(time, "monotonic", lambda: 7.0)
    assert clock.process_started() == 7.0
