"""The crash states of one power cut share one killed process (spec/PERSISTENCE.md; issue #43).

Under a persistence model other than strict a cut has several crash states, each a scenario
of its own. Every one of them starts the same way: from a fresh work folder, the program
runs up to the cut and is killed there. The program is deterministic (its points depend only
on what is on disk and at the tracker: the sweep checks it), so those kills are one kill.
What it leaves is all a state needs: the scenario folder (the journal with the work folder's
start copy beside it, the points, pauses, counters and output logs of the killed process)
and the tracker space as the process left it.

`Cuts.once` runs the kill for the first state of a cut that reaches the runner and keeps
those leftovers (the folder copied, the space copied with SQLite's backup API, as a saved
world's is); each later state of the same cut copies them into its own fresh scenario folder
and tracker space, and no process runs before its restart. The strike then lays out the
state's own disk from the kept journal, exactly as after a kill of its own. The leftovers are
removed once as many states as the journal has (`states`, what the shim counted) took them.

Threads of the local engine may take states of one cut at once: the first kills while the
others wait on the cut's lock (a lock held by no thread that holds a process slot, so no
deadlock), then each goes on to its own restart. The count of processes is the same with 1
or 2 workers: one kill a cut. The Ray engine sends each scenario to the least loaded actor,
each with a runner of its own, so how many kills its actors could share would depend on where
the states land: its hosts turn the sharing off (engines/host.py), one kill a state, and a
count of processes that placement does not change.

`unshared()` turns the sharing off for the runners made inside it: an internal switch for
benchmarks/persistence_states.py and the tests, which compare the two.
"""

from __future__ import annotations

import shutil
import threading
from collections.abc import Callable, Hashable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from crashsweep.realsweep import world as worlds

WORK = "work"
"""The scenario folder's work directory: not kept (the strike lays the state's disk out afresh)."""

_shared = [True]
"""Whether runners made now share a cut's kill among its states (`unshared` sets it False for a while)."""


@contextmanager
def unshared() -> Iterator[None]:
    """Runners made inside it kill once per crash state, as before the sharing (benchmarks and tests only)."""
    _shared[0] = False
    try:
        yield
    finally:
        _shared[0] = True


def sharing() -> bool:
    """Whether a runner made now shares kills (False inside `unshared`)."""
    return _shared[0]


@dataclass
class _Cut:
    """One cut's kept leftovers: where, how many states have still to take them, whether they are gone."""

    lock: threading.Lock
    folder: Path
    kept: bool = False
    left: int = 0
    gone: bool = False


class Cuts:
    """The kills kept for the crash states still to come, by cut, in folders under `root`."""

    def __init__(self, root: Path, shared: bool = True) -> None:
        self.root, self.shared = root, shared
        self._lock = threading.Lock()
        self._cuts: dict[Hashable, _Cut] = {}
        self._made = 0

    def once(
        self, cut: Hashable, folder: Path, space: Path | None, end: Callable[[], None], states: Callable[[], int]
    ) -> None:
        """Leave in `folder` and `space` what the kill of `cut` leaves: run `end` (the kill), or copy its leftovers.

        `states()`, read once the kill has run, is how many states the cut has: how many times
        its leftovers are taken, the first state's included, before they are removed.
        """
        if not self.shared:
            end()
            return
        while True:
            one = self._cut(cut)
            with one.lock:
                if one.gone:  # its last state took it meanwhile: a state past the count kills again
                    continue
                if not one.kept:
                    end()
                    one.left = states()
                    if one.left > 1:
                        worlds.save(folder, space, one.folder)  # the folder's files and a copy of the space
                    one.kept = True
                else:
                    _take(one.folder, folder, space)
                one.left -= 1
                if one.left <= 0:
                    self._forget(cut, one)
                return

    def close(self) -> None:
        """Remove every leftover still kept (a sweep stopped, or states run on other runners)."""
        with self._lock:
            kept, self._cuts = list(self._cuts.values()), {}
        for one in kept:
            shutil.rmtree(one.folder, ignore_errors=True)

    def _cut(self, cut: Hashable) -> _Cut:
        with self._lock:
            one = self._cuts.get(cut)
            if one is None:
                self._made += 1
                one = self._cuts[cut] = _Cut(threading.Lock(), self.root / f"cut-{self._made}")
            return one

    def _forget(self, cut: Hashable, one: _Cut) -> None:
        one.gone = True
        with self._lock:
            if self._cuts.get(cut) is one:
                del self._cuts[cut]
        shutil.rmtree(one.folder, ignore_errors=True)


def _take(kept: Path, folder: Path, space: Path | None) -> None:
    """Copy a kill's kept scenario files (not its work directory) into `folder`, and its space to `space`."""
    files = kept / worlds.FILES
    for entry in files.iterdir():
        if entry.name == WORK:
            continue
        if entry.is_dir() and not entry.is_symlink():
            worlds.copy_files(entry, folder / entry.name)
        else:
            shutil.copyfile(entry, folder / entry.name)
    saved = kept / worlds.TRACKER_FILE
    if space is not None and saved.exists():
        shutil.copyfile(saved, space)
