"""Fixtures of the realsweep tests: a tracker service in its own process."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from crashsweep.realsweep.tracker_service import ServiceProcess


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
