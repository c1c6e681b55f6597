"""Zygotes shared by the sweeps of one process: kept, matched, declined, bounded, stopped.

The suite's own session shares zygotes (tests/conftest.py), so each test here opens the blocks
it needs inside that one; the end of the last block that shares is checked in a process of
its own.
"""

from __future__ import annotations

import os
import textwrap
from pathlib import Path
from typing import Any

import pytest

from crashsweep.realsweep.process import zygotes
from crashsweep.realsweep.process.zygote import MOMENTARY, Zygote
from crashsweep.realsweep.reference import conformance
from crashsweep.realsweep.values import SweepOptions
from crashsweep.spec.job import TRIAGE
from tests.realsweep.helpers import child_env, run_python

MODULE = textwrap.dedent(
    """
    import os
    CALLS = []

    def main():
        CALLS.append(1)
        print(len(CALLS), os.getpid())
    """
)


def program(tmp_path: Path) -> dict[str, str]:
    """A program `kmod:main` in tmp_path; the environment its zygote imports it with."""
    (tmp_path / "kmod.py").write_text(MODULE)
    return child_env(PYTHONPATH=f"{tmp_path}{os.pathsep}{child_env()['PYTHONPATH']}")


def alive(zygote: Zygote) -> bool:
    return zygote._process.poll() is None


def kept(env: dict[str, str], log: Path) -> Zygote:
    """A zygote of kmod:main started and ended by a sweep within the open block that shares: it waits."""
    zygote = zygotes.started("kmod:main", env, log)
    zygotes.ended(zygote)
    return zygote


def test_a_kept_zygote_serves_the_next_sweep_of_its_program_and_no_other(tmp_path: Path) -> None:
    """Ended within a block that shares, kept; the same program and environment take it; another does not."""
    env = program(tmp_path)
    with zygotes.shared():
        first = zygotes.started("kmod:main", env, tmp_path / "one.log")
        assert first.run([], tmp_path, {}, tmp_path / "a.txt", 30) == 0
        zygotes.ended(first)
        assert alive(first)
        other = zygotes.started("kmod:main", {**env, "COLOUR": "red"}, tmp_path / "other.log")
        assert other is not first  # another environment: another program, as far as a zygote knows
        again = zygotes.started("kmod:main", env, tmp_path / "two.log")
        assert again is first
        assert again.log == tmp_path / "two.log"
        assert again.run([], tmp_path, {}, tmp_path / "b.txt", 30) == 0
        assert (tmp_path / "b.txt").read_text().split()[0] == "1"  # a fresh fork: it never saw the last process
        zygotes.ended(other)
        zygotes.ended(again)


def test_not_sharing_a_sweep_has_a_zygote_of_its_own_stopped_at_its_end(tmp_path: Path) -> None:
    """shared(False) within a block that shares: a new zygote, stopped by ended(); the kept ones wait."""
    env = program(tmp_path)
    with zygotes.shared():
        waiting = kept(env, tmp_path / "kept.log")
        with zygotes.shared(False):
            own = zygotes.started("kmod:main", env, tmp_path / "own.log")
            assert own is not waiting
            zygotes.ended(own)
            assert not alive(own)
        assert alive(waiting)
        assert zygotes.started("kmod:main", env, tmp_path / "again.log") is waiting
        zygotes.ended(waiting)


def test_an_edited_program_is_imported_again_by_a_new_zygote(tmp_path: Path) -> None:
    """The kept zygote imported the program before the edit: it declines, is stopped, and a new one starts."""
    env = program(tmp_path)
    with zygotes.shared():
        old = kept(env, tmp_path / "one.log")
        (tmp_path / "kmod.py").write_text(MODULE.replace("len(CALLS)", "'edited'"))
        new = zygotes.started("kmod:main", env, tmp_path / "two.log")
        assert new is not old
        assert not alive(old)
        assert new.run([], tmp_path, {}, tmp_path / "out.txt", 30) == 0
        assert (tmp_path / "out.txt").read_text().split()[0] == "edited"
        zygotes.ended(new)


def test_at_most_idle_zygotes_wait_the_least_recently_kept_stopped_first(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """IDLE 2, three ended: the first is stopped, the two others wait, in the order they were kept."""
    monkeypatch.setattr(zygotes, "IDLE", 2)
    env = program(tmp_path)
    with zygotes.shared():
        made = [zygotes.started("kmod:main", {**env, "N": str(n)}, tmp_path / f"{n}.log") for n in range(3)]
        for zygote in made:
            zygotes.ended(zygote)
        assert [alive(zygote) for zygote in made] == [False, True, True]
        assert [kept for kept in zygotes._idle if isinstance(kept, Zygote)] == made[1:]  # a service may wait too
        for n in (1, 2):
            zygotes.ended(zygotes.started("kmod:main", {**env, "N": str(n)}, tmp_path / f"again{n}.log"))


def test_the_end_of_the_last_block_that_shares_stops_the_kept_zygotes(tmp_path: Path) -> None:
    """In a process of its own: kept while a block is open, stopped when the last one ends."""
    program(tmp_path)
    code = textwrap.dedent(
        f"""
        import os, sys
        from pathlib import Path
        from crashsweep.realsweep.process import zygotes
        sys.path.insert(0, {str(tmp_path)!r})
        env = dict(os.environ, PYTHONPATH={str(tmp_path)!r} + os.pathsep + os.environ["PYTHONPATH"])
        with zygotes.shared():
            with zygotes.shared():
                zygote = zygotes.started("kmod:main", env, Path({str(tmp_path / "z.log")!r}))
                zygotes.ended(zygote)
            print(zygote._process.poll() is None)
        print(zygote._process.poll() is None)
        """
    )
    done = run_python(code, tmp_path)
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == ["True", "False"]


def test_conform_over_designs_forks_every_process_from_one_zygote(tmp_path: Path) -> None:
    """Three designs of the reference loop within a block: one zygote, and each row what its own zygote gives."""
    options = SweepOptions(depth=1, workers=2, dedup=True, snapshots=True)
    designs = ("save-after-reply", "agent-loop", "idempotency-keys")
    with zygotes.shared(False):
        alone = [conformance.conform(name, TRIAGE, None, "keyed", options) for name in designs]
        started: list[Zygote] = []

        class Counted(Zygote):
            def __init__(self, *args: Any, **kwargs: Any) -> None:
                super().__init__(*args, **kwargs)
                started.append(self)

        with pytest.MonkeyPatch.context() as patch, zygotes.shared():
            patch.setattr(zygotes, "Zygote", Counted)
            together = [conformance.conform(name, TRIAGE, None, "keyed", options) for name in designs]
    assert len(started) == 1
    assert [c.real for c in together] == [c.real for c in alone]
    assert all(c.differences == [] for c in together)


def test_a_variable_that_names_the_moment_does_not_part_zygotes(tmp_path: Path) -> None:
    """PYTEST_CURRENT_TEST (MOMENTARY) differs from test to test: one zygote, and each child sees its own value."""
    assert "PYTEST_CURRENT_TEST" in MOMENTARY
    env = program(tmp_path)
    (tmp_path / "kmod.py").write_text(MODULE.replace("print(len(CALLS), os.getpid())", TOLD))
    with zygotes.shared():
        first = kept({**env, "PYTEST_CURRENT_TEST": "a"}, tmp_path / "a.log")
        second = zygotes.started("kmod:main", {**env, "PYTEST_CURRENT_TEST": "b"}, tmp_path / "b.log")
        assert second is first
        assert second.run([], tmp_path, {**env, "PYTEST_CURRENT_TEST": "b"}, tmp_path / "out.txt", 30) == 0
        assert (tmp_path / "out.txt").read_text().strip() == "b"
        zygotes.ended(second)


TOLD = 'print(os.environ["PYTEST_CURRENT_TEST"])'
