"""The house's shape: the import-linter contracts hold and can fail, and realsweep/ shows its folders.

The layers of docs/ARCHITECTURE.md are contracts in pyproject.toml, checked by `lint-imports`
(bin/check runs it too). A contract that cannot fail checks nothing, so one test breaks a copy
of the tree on purpose (a probe module importing the sweep) and expects lint-imports to refuse
it, naming the contract. The probe runs inside every swept process: it may import the standard
library alone, which import-linter cannot say (it knows our modules, not the interpreter's), so
that is read here from the probe's own imports.
"""

from __future__ import annotations

import ast
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.paths import ROOT

LINT_IMPORTS = Path(sys.executable).with_name("lint-imports")
PACKAGES = ("spec", "explorer", "variants", "reports", "realsweep")
REALSWEEP = ROOT / "realsweep"
SUBSYSTEMS = ("probe", "tracker", "process", "dedup", "engines", "faults", "reference", "adapters", "syscalls")


def lint_imports(top: Path) -> subprocess.CompletedProcess[str]:
    """`lint-imports` over the crashsweep package found at `top` (its pyproject.toml's contracts)."""
    return subprocess.run(
        [str(LINT_IMPORTS), "--no-cache"],
        cwd=top,
        env={"PYTHONPATH": str(top), "PATH": "/usr/bin:/bin"},
        capture_output=True,
        text=True,
        check=False,
        timeout=120,
    )


def test_the_contracts_hold_on_this_tree() -> None:
    done = lint_imports(ROOT)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "0 broken" in done.stdout


def test_a_forbidden_import_breaks_a_contract(tmp_path: Path) -> None:
    """A copy of the tree whose probe imports the sweep: lint-imports fails and says which contracts."""
    tree = tmp_path / "tree"
    (tree / "crashsweep").mkdir(parents=True)
    shutil.copy(ROOT / "pyproject.toml", tree)
    for path in (ROOT / "crashsweep").iterdir():
        if path.suffix == ".py" or (path.is_dir() and path.name == "cli"):
            (shutil.copytree if path.is_dir() else shutil.copy)(path, tree / "crashsweep" / path.name)
    for name in PACKAGES:
        shutil.copytree(ROOT / name, tree / "crashsweep" / name, ignore=shutil.ignore_patterns("__pycache__"))
    probe = tree / "crashsweep" / "realsweep" / "probe" / "entry.py"
    probe.write_text(probe.read_text() + "\nfrom crashsweep.realsweep import sweep  # noqa\n")
    done = lint_imports(tree)
    assert done.returncode == 1, done.stdout + done.stderr
    assert "the probe runs inside the swept program" in done.stdout
    assert "crashsweep.realsweep.probe.entry -> crashsweep.realsweep.sweep" in done.stdout


def _imports(path: Path) -> set[str]:
    """The modules a source file imports (absolute names; relative imports are refused elsewhere by ruff)."""
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module is not None:
            found.add(node.module)
    return found


@pytest.mark.parametrize("path", sorted((REALSWEEP / "probe").glob("*.py")), ids=lambda p: p.name)
def test_the_probe_imports_the_standard_library_alone(path: Path) -> None:
    for name in _imports(path):
        top = name.split(".")[0]
        assert top in sys.stdlib_module_names or name.startswith("crashsweep.realsweep.probe"), name


def test_realsweep_shows_its_folders() -> None:
    """At most six modules directly in realsweep/, each subsystem a folder whose docstring says what it holds."""
    modules = sorted(p.name for p in REALSWEEP.glob("*.py"))
    assert len(modules) <= 6, modules
    folders = sorted(p.name for p in REALSWEEP.iterdir() if (p / "__init__.py").exists())
    assert folders == sorted(SUBSYSTEMS)
    for name in SUBSYSTEMS:
        init = REALSWEEP / name / "__init__.py"
        tree = ast.parse(init.read_text(encoding="utf-8"))
        assert ast.get_docstring(tree), f"{name}/__init__.py says nothing of what it holds"


@pytest.mark.parametrize("name", ["", *SUBSYSTEMS])
def test_a_package_file_imports_nothing(name: str) -> None:
    """A swept process imports realsweep's packages on its way to its modules: their __init__ costs nothing."""
    init = REALSWEEP / name / "__init__.py"
    assert _imports(init) == set(), init
