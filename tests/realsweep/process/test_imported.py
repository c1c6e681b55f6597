"""The files a process imported, and which changed since: what ends a kept zygote's reuse."""

from __future__ import annotations

import importlib
import os
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from crashsweep.realsweep.process.imported import Imported


@pytest.fixture
def module(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """A module of tmp_path's, importable while the test runs, unimported after."""
    path = tmp_path / "noted_mod.py"
    path.write_text("VALUE = 1\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    yield path
    sys.modules.pop("noted_mod", None)


def test_a_module_imported_then_edited_is_named(module: Path) -> None:
    """Noted when first seen; an edit (another size, another time) names its file; nothing else changed."""
    imported = Imported()
    imported.note()
    assert str(module) not in imported.files
    importlib.import_module("noted_mod")
    assert imported.changed() is None  # the look that notes it finds it as it is
    assert str(module) in imported.files
    module.write_text("VALUE = 22\n")
    assert imported.changed() == str(module)


def test_an_edit_that_keeps_the_size_is_seen_by_its_time(module: Path) -> None:
    """The same size, a later modification time: changed."""
    imported = Imported()
    importlib.import_module("noted_mod")
    imported.note()
    stat = module.stat()
    module.write_text("VALUE = 2\n")  # the same length
    os.utime(module, ns=(stat.st_atime_ns, stat.st_mtime_ns + 1_000_000))
    assert imported.changed() == str(module)


def test_a_file_removed_is_a_change_and_a_module_without_a_file_is_none(module: Path) -> None:
    """A removed file cannot be what was imported; built-in modules have no file to compare."""
    imported = Imported()
    importlib.import_module("noted_mod")
    imported.note()
    assert getattr(sys, "__file__", None) is None  # built in: in sys.modules, with no file
    assert imported.changed() is None
    module.unlink()
    assert imported.changed() == str(module)
