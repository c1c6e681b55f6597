"""crashsweep's pytest plugin: the `crashsweep` marker and fixture (entry point `pytest11`).

pytest loads this module in every test session of an environment where crashsweep is
installed, so it imports nothing of crashsweep until a test uses the marker or the fixture:
the work is crashsweep/testing.py's (explore a design, or sweep a target, and fail the test
with the shortest counterexample and the command that replays it).

- `@pytest.mark.crashsweep(VARIANT, design=FILE, job=FILE, tracker=..., depth=..., faults=(...),
  call_ids=...)` explores the design before the test body runs and fails the test when an
  invariant is violated or never exercised;
- the fixture `crashsweep` offers `explore`, `check`, `sweep` and `check_sweep` (testing.py),
  whose sweeps share their zygotes until the session ends (`pytest_unconfigure` stops them).

Both take the command line's options and defaults (depth 2) and refuse what it refuses: a bad
argument is one line, crashsweep.testing.UsageError from a call, a failed test for a marker.
"""

from __future__ import annotations

import sys
from typing import TYPE_CHECKING, Any

import pytest

if TYPE_CHECKING:
    from crashsweep.testing import Explored, Swept

MARKER = "crashsweep"
MARKER_HELP = (
    "crashsweep(variant=None, *, design=None, job=None, tracker='keyed', depth=2, faults=(), "
    "call_ids='stable'): explore the design before the test; fail it with the shortest counterexample"
)


class Crashsweep:
    """What the `crashsweep` fixture gives a test: crashsweep.testing's explore, check, sweep and check_sweep."""

    @staticmethod
    def explore(variant: str | None = None, **options: Any) -> Explored:
        """Explore a design (crashsweep.testing.explore): its row and counterexamples, to assert on."""
        from crashsweep import testing

        return testing.explore(variant, **options)

    @staticmethod
    def check(variant: str | None = None, **options: Any) -> Explored:
        """Explore and fail the test unless every invariant holds (crashsweep.testing.check)."""
        from crashsweep import testing

        return testing.check(variant, **options)

    @staticmethod
    def sweep(variant: str | None = None, **options: Any) -> Swept:
        """Sweep for real (crashsweep.testing.sweep): the verdicts of `crashsweep sweep`."""
        from crashsweep import testing

        return testing.sweep(variant, **options)

    @staticmethod
    def check_sweep(variant: str | None = None, **options: Any) -> Swept:
        """Sweep and fail the test unless every invariant it decides held (crashsweep.testing.check_sweep)."""
        from crashsweep import testing

        return testing.check_sweep(variant, **options)


@pytest.fixture(name="crashsweep")
def crashsweep_fixture() -> Crashsweep:
    """Explore a design or sweep a target; `check` and `check_sweep` fail the test with the counterexample."""
    return Crashsweep()


def pytest_configure(config: pytest.Config) -> None:
    """Register the marker, so that --strict-markers accepts it."""
    config.addinivalue_line("markers", MARKER_HELP)


def pytest_unconfigure(config: pytest.Config) -> None:
    """The session ends: stop the zygotes its sweeps kept (crashsweep.testing.session_ended), if it swept."""
    testing = sys.modules.get("crashsweep.testing")
    if testing is not None:
        testing.session_ended()


@pytest.hookimpl(tryfirst=True)
def pytest_runtest_call(item: pytest.Item) -> None:
    """A test marked `crashsweep(...)`: explore its design first and fail the test unless every invariant holds."""
    marker = item.get_closest_marker(MARKER)
    if marker is not None:
        from crashsweep import testing

        try:
            testing.check(*marker.args, **marker.kwargs)
        except testing.UsageError as error:  # the marker's own arguments: one line, no traceback of ours
            pytest.fail(f"@pytest.mark.{MARKER}(...): {error}", pytrace=False)
