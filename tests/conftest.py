"""Suite-wide settings: hypothesis profiles, and tests that need a program on PATH.

Hypothesis profiles, "ci" (the default) and "thorough":
- ci: quick and reproducible. Hypothesis's usual 100 examples, derandomized (the same
  examples on every run and machine), no example database, no deadline.
- thorough: ten times the examples, random, with the local example database (.hypothesis/)
  so that a failure found once is replayed first next time.

Choose with `pytest --hypothesis-profile=thorough` or `HYPOTHESIS_PROFILE=thorough pytest`
(the option wins). Costly tests size their work from `settings().max_examples` (the
stateful ones run a quarter of it: each of their examples is hundreds of model steps).

Tiers, by place (as Hypothesis splits cover/ from nocover/): every test in a folder or module
of SLOW is marked `slow` at collection; `bin/check --fast` (`-m "not slow"`) leaves them out,
plain `bin/check` runs everything. The places in SLOW start real processes in numbers
(sweeps, trackers, frameworks, Ray, the documented and printed commands, pip), and the full
frontier's 512 designs; what stays in the fast tier is the rest of the model side (spec,
explorer, variants, reports, the CLI on the model) and the real side's unit tests (probe,
tracker, faults, the values and rows). A test joins the slow tier by its place, not by a mark
of its own (tests/test_conftest.py checks).

Programs: a test marked `@pytest.mark.requires_tool("dot")` (or calling `require_tool`) is
skipped where the program is not installed, but fails under CI=true, so that CI cannot pass
by skipping it. bin/bootstrap --system installs the programs the marks name. Under CI=true
any other skip fails too, with its reason: whatever a test needs, CI must have.

Zygotes: within each test process, a sweep keeps its zygote for the next sweep of the same
program (crashsweep.realsweep.process.zygotes.shared, for the whole session), as the sweep
and conform commands do for their own sweeps: the reference loop and each framework's agent
are imported once per worker instead of once per sweep.
"""

from __future__ import annotations

import asyncio
import os
import shutil
import warnings
from collections.abc import Generator, Iterator
from pathlib import Path

import pytest
from hypothesis import settings

from crashsweep.realsweep.process import zygotes

# The pytest processes tests start (printed snippets, the conftest's own checks) skip langsmith's
# plugin as this suite does (pyproject.toml's addopts): 1.6 s of imports each, used by none.
os.environ["PYTEST_ADDOPTS"] = " ".join((os.environ.get("PYTEST_ADDOPTS", ""), "-p no:langsmith_plugin")).strip()

settings.register_profile("ci", max_examples=100, derandomize=True, database=None, deadline=None)
settings.register_profile("thorough", max_examples=1000, deadline=None)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "ci"))

TESTS = Path(__file__).resolve().parent
"""The folder of the test suite: SLOW's places are relative to it."""

SLOW = (
    "at_scale",  # the model side at sizes past the fast tier's: full graphs of 200-call jobs beside merged ones
    "realsweep/process",  # runners, zygotes, pause sweeps: a process per scenario
    "realsweep/dedup",  # merged worlds swept for real at depth 2
    "realsweep/engines",  # the local engine's hosts, a Ray instance and a `ray start` cluster
    "realsweep/reference",  # conformance: every design's real sweep beside its model's
    "realsweep/adapters",  # LangGraph and DBOS agents, swept and run as processes
    "realsweep/syscalls/test_my_loop_c.py",  # the C loop swept under the tracer: crashes, keys, power loss
    "realsweep/syscalls/test_sqlite_exit.py",  # SQLite's last commit under a cut at exit, swept for real
    "realsweep/syscalls/test_persistence_sweeps.py",  # a C program swept under each persistence model
    "cli/test_sweep.py",  # `crashsweep sweep` end to end: sweeps and tracker services
    "cli/test_frontier.py",  # the full frontier: 512 designs explored, merged and not, on one worker and two
    "cli/test_prog.py",  # every printed command run as printed, by each launcher
    "cli/test_view_browser.py",  # explore --out's page in real headless Chromium
    "cli/test_serve_browser.py",  # view --serve's page clicked through in real headless Chromium (Selenium)
    "docs",  # every command block of the docs run, the stateful example under pytest
    "benchmarks",  # the benchmark scripts, run as a user runs them
    "importers/real",  # importers of records that real frameworks and a Temporal dev server wrote in a sweep
    "fromtrace/real",  # runs of the reference loop and the frameworks recorded for real, derived, swept, conformed
    "test_packaging.py",  # a wheel built by pip from a copy of the tree
)
"""The slow tier: folders and modules under tests/ whose every test is marked `slow` (see above)."""


def in_slow_tier(path: Path) -> bool:
    """Whether the test file at `path` is in one of SLOW's places (a file outside tests/ is not)."""
    path = path.resolve()
    if not path.is_relative_to(TESTS):
        return False
    parts = path.relative_to(TESTS).parts
    return any(parts[: len(place)] == place for place in (tuple(entry.split("/")) for entry in SLOW))


def pytest_ignore_collect(collection_path: Path, config: pytest.Config) -> bool | None:
    """Under `-m "not slow"` (bin/check --fast) the places of SLOW are not even imported.

    Every test there is marked slow, so that expression deselects them all after collection
    anyway; collecting them first would import LangGraph, DBOS and Ray for nothing (about 6 s
    in each xdist worker). None: pytest's own rules decide.
    """
    if config.getoption("markexpr", "").strip() == "not slow" and in_slow_tier(collection_path):
        return True
    return None


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Mark `slow` every test collected from a place of SLOW."""
    for item in items:
        if in_slow_tier(item.path):
            item.add_marker(pytest.mark.slow)


INSTALL = {
    "dot": "graphviz",
    "chromium": "chromium",
    "chromium-browser": "chromium",
    "chromedriver": "chromium-driver",
    "strace": "strace",
    "cc": "gcc",
}
"""The Debian package of each program a test may require (bin/bootstrap --system installs them)."""


def in_ci() -> bool:
    """Whether this run is CI's: the CI variable is set to true (as CI services set it)."""
    return os.environ.get("CI", "").strip().lower() in {"true", "1", "yes"}


def require_tool(*names: str) -> str:
    """The path of the first of `names` found on PATH; without any, skip the test, or fail it under CI=true."""
    for name in names:
        found = shutil.which(name)
        if found:
            return found
    packages = sorted({INSTALL.get(name, name) for name in names})
    missing = f"{' or '.join(names)} is not installed (apt-get install {' '.join(packages)}, or bin/bootstrap --system)"
    if in_ci():
        pytest.fail(f"CI=true and {missing}", pytrace=False)
    pytest.skip(missing)


@pytest.fixture(scope="session", autouse=True)
def shared_zygotes() -> Iterator[None]:
    """The session's sweeps share their zygotes (the module docstring); the idle ones stop at the end."""
    with zygotes.shared():
        yield


@pytest.fixture
def no_event_loop_left() -> Iterator[None]:
    """Close the event loop a test left as the thread's current one (pydantic-ai's `run_sync` leaves its own).

    pydantic-ai runs `run_sync` on the thread's current loop, made and set if there is none, and
    leaves it open (pydantic_ai._utils.get_event_loop). A later `asyncio.run` in the same worker
    unsets it, and when it is collected it warns (ResourceWarning: an unclosed event loop and its
    sockets) in whichever test is running then, which fails under warnings as errors. Modules
    that call `run_sync` in this process use this fixture (`pytestmark`).
    """
    yield
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        try:
            loop = asyncio.get_event_loop_policy().get_event_loop()
        except RuntimeError:  # none is current (one was unset before): nothing left
            return
    if not loop.is_running():
        loop.close()
        asyncio.set_event_loop(None)


def pytest_configure(config: pytest.Config) -> None:
    """Register the requires_tool mark (the suite runs with --strict-markers)."""
    config.addinivalue_line(
        "markers", "requires_tool(*names): needs one of these programs on PATH; skipped without, failed under CI=true"
    )


def pytest_runtest_setup(item: pytest.Item) -> None:
    """Apply each requires_tool mark of the test before it runs."""
    for mark in item.iter_markers(name="requires_tool"):
        require_tool(*mark.args)


@pytest.hookimpl(wrapper=True)
def pytest_runtest_makereport(
    item: pytest.Item, call: pytest.CallInfo[None]
) -> Generator[None, pytest.TestReport, pytest.TestReport]:
    """Under CI=true, a skipped test is a failed one (an expected failure, xfail, stays as it is)."""
    report = yield
    if in_ci() and report.skipped and not hasattr(report, "wasxfail"):
        reason = report.longrepr[2] if isinstance(report.longrepr, tuple) else str(report.longrepr)
        report.outcome = "failed"
        report.longrepr = f"CI=true and the test skipped: {reason}"
    return report
