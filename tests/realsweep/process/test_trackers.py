"""Tracker services shared by a process's sweeps (process/trackers.py), within zygotes.shared()."""

from __future__ import annotations

import os
import signal
import textwrap
from pathlib import Path

import pytest

from crashsweep.realsweep.process import trackers, zygotes
from crashsweep.realsweep.tracker.client import TrackerClient
from tests.realsweep.helpers import run_python


def _alive(pid: int) -> bool:
    """Whether the process is there and no zombie (a stopped service is waited for: gone)."""
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0] != "Z"
    except OSError:
        return False


def test_one_service_serves_two_sweeps_each_in_its_own_folder(tmp_path: Path) -> None:
    """The second sweep takes the first's service, moved to its folder; another mode has a service of its own."""
    with zygotes.shared():
        with trackers.service(tmp_path / "one", "keyed") as first:
            TrackerClient(first.space_url("s")).create_issue("one", run="r1", call="a")
            pid = first.pid
        assert _alive(pid)  # kept, its databases closed
        with trackers.service(tmp_path / "two", "keyed") as second:
            assert second is first
            assert second.root == tmp_path / "two"
            client = TrackerClient(second.space_url("s"))
            assert [record["title"] for record in client.records()] == []  # the first folder's records stay there
            client.create_issue("two", run="r1", call="a")
        with trackers.service(tmp_path / "three", "keyless") as other:
            assert other.pid != pid  # another mode: another service
    assert (tmp_path / "one" / "s.sqlite3").exists()
    assert (tmp_path / "two" / "s.sqlite3").exists()


def test_the_end_of_the_last_block_that_shares_stops_the_kept_service(tmp_path: Path) -> None:
    """In a process of its own (this one's session shares): kept while a block is open, stopped when the last ends."""
    code = textwrap.dedent(
        f"""
        from pathlib import Path
        from crashsweep.realsweep.process import trackers, zygotes
        with zygotes.shared():
            with zygotes.shared():
                with trackers.service(Path({str(tmp_path / "one")!r}), "keyed") as kept:
                    pass
            print(kept._process.poll() is None)
        print(kept._process is None)
        """
    )
    done = run_python(code, tmp_path)
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == ["True", "True"]


def test_without_sharing_each_sweep_starts_and_stops_its_own(tmp_path: Path) -> None:
    """Outside shared() (or in shared(False)): a service per sweep, without a control channel, stopped at its end."""
    with zygotes.shared(), zygotes.shared(False):
        with trackers.service(tmp_path / "one", "keyed") as first:
            assert not first.control
            pid = first.pid
        assert not _alive(pid)
        with trackers.service(tmp_path / "two", "keyed") as second:
            assert second.pid != pid


def test_a_kept_service_that_died_is_replaced(tmp_path: Path) -> None:
    """A kept service killed meanwhile does not answer the move: it is stopped, and a new one started."""
    with zygotes.shared():
        with trackers.service(tmp_path / "one", "keyed") as first:
            pid = first.pid
        os.kill(pid, signal.SIGKILL)
        with trackers.service(tmp_path / "two", "keyed") as second:
            assert second.pid != pid
            assert TrackerClient(second.space_url("s")).create_issue("two", run="r1", call="a") == 1


def test_a_kept_service_counts_against_its_own_kind_s_bound_not_the_zygotes(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """IDLE 1: a kept service and a kept zygote wait side by side; a second service stops the first, not the zygote."""
    monkeypatch.setattr(zygotes, "IDLE", 1)
    (tmp_path / "kmod.py").write_text("def main():\n    pass\n")
    env = dict(os.environ, PYTHONPATH=f"{tmp_path}{os.pathsep}{os.environ.get('PYTHONPATH', '')}")
    with zygotes.shared():
        zygote = zygotes.started("kmod:main", env, tmp_path / "z.log")
        zygotes.ended(zygote)
        with trackers.service(tmp_path / "one", "keyed") as keyed:
            pass
        assert zygote in zygotes._idle
        assert keyed in zygotes._idle
        with trackers.service(tmp_path / "two", "keyless") as keyless:
            pass
        assert zygotes._idle == [zygote, keyless]  # the keyed service stopped: one service kept at most
        assert keyed._process is None
