"""The installed package: a wheel built from this tree holds crashsweep and nothing else at the top.

spec/, explorer/, variants/, reports/ and realsweep/ stay at the top of the checkout, but are
installed as crashsweep.spec, crashsweep.explorer, ... (pyproject.toml, docs/ARCHITECTURE.md):
generic top-level names such as `spec` would collide with other packages in a user's
environment. The wheel is built for real (pip, with setuptools in an isolated build
environment) from a copy of the tree, and compared with the tree's own folders.
"""

from __future__ import annotations

import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
FOLDERS = ("spec", "explorer", "variants", "reports", "realsweep")
NOT_SOURCES = shutil.ignore_patterns(
    ".venv", ".git", "build", "dist", "*.egg-info", "__pycache__", ".*_cache", ".hypothesis", "out"
)
pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def wheel(tmp_path_factory: pytest.TempPathFactory) -> zipfile.ZipFile:
    """A wheel built from a copy of this tree (links kept as links), as the user's pip builds it."""
    work = tmp_path_factory.mktemp("wheel")
    tree = work / "tree"
    shutil.copytree(ROOT, tree, symlinks=True, ignore=NOT_SOURCES)
    done = subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "-q", "--no-deps", "-w", str(work / "dist"), str(tree)],
        capture_output=True,
        text=True,
        check=False,
        timeout=600,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    (built,) = (work / "dist").glob("crashsweep-*.whl")
    return zipfile.ZipFile(built)


def test_only_crashsweep_is_installed_at_the_top(wheel: zipfile.ZipFile) -> None:
    tops = {name.split("/")[0] for name in wheel.namelist()}
    (info,) = (top for top in tops if top.endswith(".dist-info"))
    assert tops == {"crashsweep", info}
    assert wheel.read(f"{info}/top_level.txt").decode().split() == ["crashsweep"]


@pytest.mark.parametrize("folder", FOLDERS)
def test_each_folder_is_installed_whole_under_crashsweep(wheel: zipfile.ZipFile, folder: str) -> None:
    sources = sorted(p.relative_to(ROOT).as_posix() for p in (ROOT / folder).rglob("*.py"))
    assert f"{folder}/__init__.py" in sources
    prefix = f"crashsweep/{folder}/"
    installed = sorted(name.removeprefix("crashsweep/") for name in wheel.namelist() if name.startswith(prefix))
    assert [name for name in installed if name.endswith(".py")] == sources


def test_the_semantics_are_installed_beside_spec(wheel: zipfile.ZipFile) -> None:
    documents = sorted(f"crashsweep/spec/{p.name}" for p in (ROOT / "spec").glob("*.md"))
    assert "crashsweep/spec/SEMANTICS.md" in documents
    assert sorted(name for name in wheel.namelist() if name.endswith(".md")) == documents


def test_the_license_is_in_the_wheel(wheel: zipfile.ZipFile) -> None:
    """The metadata says MIT; the text of the license travels with it (PEP 639's licenses/ folder)."""
    (info,) = {name.split("/")[0] for name in wheel.namelist() if ".dist-info/" in name}
    assert wheel.read(f"{info}/licenses/LICENSE") == (ROOT / "LICENSE").read_bytes()
    metadata = wheel.read(f"{info}/METADATA").decode()
    assert "License-Expression: MIT" in metadata
    assert "License-File: LICENSE" in metadata
