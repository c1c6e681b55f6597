"""The Ray engine's actor: on its node, it runs the units of work of one sweep at a time.

A `Host` is a plain class that ray.py makes a Ray actor. For each sweep it unpickles
the sweep (target, check, options, nemesis) and makes a Runner of its own with runner.runner,
as the local engine does: a temporary folder, its own tracker service process and zygote on
this node. A unit of work comes with the world it starts from as a tar archive (`pack`); the
host lays it out, runs the leg (units.run_leg) and returns it with the archives of the worlds
it claimed, and the number of processes it ran. Nothing of a sweep outlives `end`.
"""

from __future__ import annotations

import io
import shutil
import sys
import tarfile
import tempfile
from contextlib import ExitStack
from dataclasses import replace
from pathlib import Path

from crashsweep.realsweep import world as worlds
from crashsweep.realsweep.faults.nemesis import Fault
from crashsweep.realsweep.process.runner import Runner
from crashsweep.realsweep.process.units import run_leg
from crashsweep.realsweep.values import Crash, Leg, ScenarioResult, Unit


class Host:
    """A Ray actor: runs units of work of one sweep at a time on its node, with its own runner."""

    def __init__(self) -> None:
        self.stack: ExitStack | None = None
        self.runner: Runner | None = None
        self.folder: Path | None = None

    def begin(self, setup: bytes, paths: list[str]) -> None:
        """Set up for a sweep: its own folder, runner and tracker service (`paths`: where the user's modules are)."""
        import ray

        from crashsweep.realsweep.process.runner import runner

        self.end()
        sys.path.extend(path for path in paths if path not in sys.path)
        target, check, options, nemesis = ray.cloudpickle.loads(setup)
        self.folder = Path(tempfile.mkdtemp(prefix="crashsweep-ray-"))
        self.stack = ExitStack()
        options = replace(options, root=self.folder / "sweep", workers=1)
        self.runner = self.stack.enter_context(runner(target, check, options, nemesis))
        self.runner.cuts.shared = False  # a cut's states go to any actor: one kill each, a count not set by placement

    def end(self) -> None:
        """Stop the sweep's runner and tracker service, remove its folder."""
        if self.stack is not None:
            self.stack.close()
        if self.folder is not None:
            shutil.rmtree(self.folder, ignore_errors=True)
        self.stack = self.runner = self.folder = None

    def leg(self, unit: Unit[bytes], world: bytes, known: frozenset[str]) -> tuple[Leg[bytes], int]:
        """One process from the world archived in `world` (units.run_leg); the archives of the worlds it claimed."""
        assert self.runner is not None, "begin() first"
        assert self.folder is not None
        folder = Path(tempfile.mkdtemp(dir=self.folder, prefix="world-"))
        unpack(world, folder)
        claimed: set[str] = set()

        def claim(key: str) -> bool:
            new = key not in known and key not in claimed
            claimed.add(key)
            return new

        def save(workdir: Path, space: Path | None, name: str) -> bytes:
            saved = Path(tempfile.mkdtemp(dir=self.folder, prefix="saved-")) / name
            try:
                worlds.save(workdir, space, saved)
                return pack(saved)
            finally:
                shutil.rmtree(saved.parent, ignore_errors=True)

        before = self.runner.processes
        try:
            leg = run_leg(self.runner, replace(unit, world=b""), folder, claim, save)
        finally:
            shutil.rmtree(folder, ignore_errors=True)
        return leg, self.runner.processes - before

    def scenario(self, crashes: tuple[Crash, ...], fault: Fault | None) -> tuple[ScenarioResult, int]:
        """One whole scenario from scratch (Runner.run)."""
        assert self.runner is not None, "begin() first"
        before = self.runner.processes
        result = self.runner.run(crashes, fault)
        return result, self.runner.processes - before


def pack(folder: Path) -> bytes:
    """A saved world's folder as an uncompressed tar archive (worlds are small; speed matters more)."""
    data = io.BytesIO()
    with tarfile.open(fileobj=data, mode="w") as archive:
        archive.add(folder, arcname=".")
    return data.getvalue()


def unpack(data: bytes, folder: Path) -> None:
    """Lay an archive from `pack` out in `folder` (tarfile's "data" filter: no path leaves the folder)."""
    with tarfile.open(fileobj=io.BytesIO(data), mode="r") as archive:
        archive.extractall(folder, filter="data")
