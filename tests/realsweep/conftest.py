"""Fixtures of the realsweep tests: tracker services in their own processes (`logged`: stderr kept empty)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from crashsweep.realsweep.tracker.service import ServiceProcess
from tests.realsweep.tracker_process import Service, idle, service


@pytest.fixture
def keyed_service(tmp_path: Path) -> Iterator[ServiceProcess]:
    """A tracker service that honours idempotency keys, in a process of its own."""
    with ServiceProcess(tmp_path / "tracker", "keyed") as service:
        yield service


@pytest.fixture
def keyless_service(tmp_path: Path) -> Iterator[ServiceProcess]:
    """A tracker service that ignores idempotency keys, in a process of its own."""
    with ServiceProcess(tmp_path / "tracker-keyless", "keyless") as service:
        yield service


@pytest.fixture
def logged(tmp_path: Path) -> Iterator[Service]:
    """A keyed service whose stderr is kept; the test fails if it wrote anything there (a traceback above all)."""
    with service(tmp_path / "db") as tracker:
        yield tracker
        idle(tracker)
        assert tracker.log() == ""
