"""The runner's scenario under way, as a fault kind acts on it (faults/kind.py's `Stage`).

faults/ sits below process/, so a kind that ends a process of a scenario (power loss: killed
at its point, then the disk cut) cannot call the runner; the runner hands it this stage,
which runs the scenario's next process for it. The crash states of one cut share the kill of
that process (`shared`: cuts.py).
"""

from __future__ import annotations

from collections.abc import Callable, Hashable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from crashsweep.realsweep.values import Crash

if TYPE_CHECKING:
    from crashsweep.realsweep.process.runner import Runner


@dataclass(frozen=True)
class FaultStage:
    """Process `number` of the scenario reached by `crashes`, in `folder` and `workdir`, started with `env`."""

    runner: Runner
    folder: Path
    workdir: Path
    env: Mapping[str, str]
    number: int
    crashes: tuple[Crash, ...]
    space: Path | None = None
    """The scenario's tracker space (its database), None without a tracker service."""

    def kill(self, crash_at: str, env: Mapping[str, str]) -> None:
        """Run the process with `env` added, killed at `crash_at` ("k:<point>"), as the runner checks a crash."""
        self.runner.ended(self.folder, self.workdir, {**self.env, **env}, self.number, crash_at, self.crashes)

    def run(self, env: Mapping[str, str]) -> None:
        """Run the process with `env` added, to its end (a power cut once it has exited)."""
        self.runner.ended(self.folder, self.workdir, {**self.env, **env}, self.number, 0, self.crashes)

    def passed(self) -> list[str]:
        """The points the process passed, as the runner reads them."""
        return self.runner.passed(self.folder, self.number)

    def shared(self, cut: Hashable, end: Callable[[], None], states: Callable[[], int]) -> None:
        """Run `end` (the kill of `cut`) once for its `states()` crash states; the others copy what it left.

        The scenarios before the kill (its crashes) are part of the cut: only a scenario that
        reached the same process the same way shares it (cuts.Cuts.once).
        """
        self.runner.cuts.once((self.crashes, cut), self.folder, self.space, end, states)
