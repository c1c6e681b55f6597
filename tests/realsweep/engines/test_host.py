"""The Ray engine's actor as a plain object: a sweep set up, a leg from an archived world, nothing left after.

The program is process/test_units.py's (by hand: from the empty world it passes "saved 1", "saved 2",
"saved 3"; the world at point k holds done = k).
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from crashsweep.realsweep import world
from crashsweep.realsweep.engines.host import Host, pack, unpack
from crashsweep.realsweep.sweep import SweepOptions, Target
from crashsweep.realsweep.values import Crash, Unit
from tests.realsweep.process.test_units import PROGRAM, finished


def test_a_world_travels_as_an_archive_unchanged(tmp_path: Path) -> None:
    """pack then unpack gives the same files and bytes (a saved world: files/ and the tracker's copy)."""
    saved = tmp_path / "saved"
    (saved / "files" / "sub").mkdir(parents=True)
    (saved / "files" / "sub" / "state.json").write_bytes(b'{"done": 2}')
    (saved / "tracker.sqlite3").write_bytes(bytes(range(256)))
    unpack(pack(saved), tmp_path / "back")
    back = tmp_path / "back"
    found = {p.relative_to(back).as_posix(): p.read_bytes() for p in back.rglob("*") if p.is_file()}
    assert found == {"files/sub/state.json": b'{"done": 2}', "tracker.sqlite3": bytes(range(256))}


def test_an_archive_cannot_write_outside_its_folder(tmp_path: Path) -> None:
    """tarfile's "data" filter refuses a member whose path climbs out of the folder."""
    import io
    import tarfile

    data = io.BytesIO()
    with tarfile.open(fileobj=data, mode="w") as archive:
        member = tarfile.TarInfo("../escaped")
        archive.addfile(member, io.BytesIO(b""))
    with pytest.raises(tarfile.OutsideDestinationError):
        unpack(data.getvalue(), tmp_path / "inside")
    assert not (tmp_path / "escaped").exists()


def test_a_host_runs_a_leg_from_an_archive_and_cleans_up(tmp_path: Path) -> None:
    """begin, a run to the end with snapshots from the empty world, end: three new worlds come back archived."""
    ray = pytest.importorskip("ray", reason="Ray is not installed (pip install 'crashsweep[ray]')")
    (tmp_path / "prog.py").write_text(PROGRAM)
    target = Target.entry_point("prog:main", path=[str(tmp_path)])
    host = Host()
    host.begin(ray.cloudpickle.dumps((target, finished, SweepOptions(tracker=None), None)), [str(tmp_path)])
    folder = host.folder
    assert folder is not None
    empty = tmp_path / "empty"
    (empty / world.FILES).mkdir(parents=True)
    try:
        unit: Unit[bytes] = Unit(0, "root", (), b"", None, snapshots=True)
        leg, processes = host.leg(unit, pack(empty), frozenset())
        assert processes == 1
        assert [c.crash for c in leg.children] == [Crash(1, "saved 1"), Crash(2, "saved 2"), Crash(3, "saved 3")]
        for k, child in enumerate(leg.children, start=1):
            assert child.world is not None
            unpack(child.world, tmp_path / f"back{k}")
            assert json.loads((tmp_path / f"back{k}" / world.FILES / "state.json").read_text()) == {"done": k}
        known = frozenset(c.digest for c in leg.children[:2])
        again, _ = host.leg(unit, pack(empty), known)
        assert [c.world is None for c in again.children] == [True, True, False]  # only the unknown one travels
    finally:
        host.end()
    assert not folder.exists()
