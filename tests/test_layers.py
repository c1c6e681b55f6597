"""The house's shape: the import-linter contracts hold and can fail, and realsweep/ shows its folders.

The layers of docs/ARCHITECTURE.md are contracts in pyproject.toml, checked by `lint-imports`
(bin/check runs it too). A contract that cannot fail checks nothing, so tests break a copy of
the tree on purpose (a probe module importing the sweep, a module of each forbidden contract
importing what it may not, a new package placed in no layer) and expect lint-imports to refuse
it, naming the contract. The layers contracts are exhaustive: every module and folder directly
in crashsweep/ and in realsweep/ has its place, so a new one must be placed before it is
checked. The CLI's list of what it may not import of realsweep is written out (everything but
api), so a test keeps it whole. The probe runs inside every swept process: it may import the
standard library alone, which import-linter cannot say (it knows our modules, not the
interpreter's), so that is read here from the probe's own imports.
"""

from __future__ import annotations

import ast
import shutil
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

from crashsweep import MOVED
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


def copy_of_the_tree(tmp_path: Path) -> Path:
    """The crashsweep package and pyproject.toml copied under `tmp_path` (its folders, not links), for breaking."""
    tree = tmp_path / "tree"
    (tree / "crashsweep").mkdir(parents=True)
    shutil.copy(ROOT / "pyproject.toml", tree)
    for path in (ROOT / "crashsweep").iterdir():
        if path.suffix == ".py" or (path.is_dir() and not path.is_symlink() and (path / "__init__.py").exists()):
            ignore = shutil.ignore_patterns("__pycache__")
            if path.is_dir():
                shutil.copytree(path, tree / "crashsweep" / path.name, ignore=ignore)
            else:
                shutil.copy(path, tree / "crashsweep" / path.name)
    for name in PACKAGES:
        shutil.copytree(ROOT / name, tree / "crashsweep" / name, ignore=shutil.ignore_patterns("__pycache__"))
    return tree


def test_a_forbidden_import_breaks_a_contract(tmp_path: Path) -> None:
    """A copy of the tree whose probe imports the sweep: lint-imports fails and says which contracts."""
    tree = copy_of_the_tree(tmp_path)
    probe = tree / "crashsweep" / "realsweep" / "probe" / "entry.py"
    probe.write_text(probe.read_text() + "\nfrom crashsweep.realsweep import sweep  # noqa\n")
    done = lint_imports(tree)
    assert done.returncode == 1, done.stdout + done.stderr
    assert "the probe runs inside the swept program" in done.stdout
    assert "crashsweep.realsweep.probe.entry -> crashsweep.realsweep.sweep" in done.stdout


@pytest.mark.parametrize(
    ("importer", "imported", "contract"),
    [
        ("realsweep/probe/entry.py", "crashsweep.spec.job", "the probe runs inside the swept program"),
        ("realsweep/tracker/wire.py", "crashsweep.realsweep.syscalls.names", "the tracker imports nothing else"),
        ("cli/prog.py", "crashsweep.realsweep.syscalls.command", "the CLI reaches the real side through its facade"),
        ("spec/keys.py", "crashsweep.explorer.model", "spec/ and explorer/ import nothing of ours"),
        ("spec/keys.py", "crashsweep.testing", "spec/ and explorer/ import nothing of ours"),
    ],
)
def test_each_forbidden_contract_bites(tmp_path: Path, importer: str, imported: str, contract: str) -> None:
    """A copy of the tree with one import a forbidden contract refuses: lint-imports fails and names it.

    The contracts forbid by wildcards where they can (`crashsweep.realsweep.*`: every module and
    folder of realsweep but the importer's own), so these imports are of modules the old lists
    left out (syscalls) or that no list named (testing).
    """
    tree = copy_of_the_tree(tmp_path)
    path = tree / "crashsweep" / importer
    path.write_text(path.read_text() + f"\nimport {imported}  # noqa\n")
    done = lint_imports(tree)
    assert done.returncode == 1, done.stdout + done.stderr
    assert contract in done.stdout.replace("\n", " ")  # a long name is wrapped
    module = "crashsweep." + importer.removesuffix(".py").replace("/", ".")
    assert f"{module} -> {imported}" in done.stdout


@pytest.mark.parametrize("place", ["crashsweep/realsweep/extra", "crashsweep/extra"])
def test_an_unplaced_package_breaks_the_layers(tmp_path: Path, place: str) -> None:
    """A new package in realsweep/ or in crashsweep/ that no layer names: the exhaustive layers contract fails."""
    tree = copy_of_the_tree(tmp_path)
    (tree / place).mkdir()
    (tree / place / "__init__.py").write_text('"""A subsystem added without a place in the layers."""\n')
    done = lint_imports(tree)
    assert done.returncode == 1, done.stdout + done.stderr
    assert "The following modules are not listed as layers" in done.stdout
    assert f"- {place.replace('/', '.')}\n" in done.stdout


def _contract(source: str) -> dict[str, list[str]]:
    """The import-linter contract of pyproject.toml whose only source module is `source`."""
    with (ROOT / "pyproject.toml").open("rb") as file:
        contracts = tomllib.load(file)["tool"]["importlinter"]["contracts"]
    (found,) = [c for c in contracts if c.get("source_modules") == [source]]
    return dict(found)


def test_the_cli_may_import_nothing_of_realsweep_but_its_facade() -> None:
    """The CLI contract's written-out list names every module and folder of realsweep/ but api."""
    modules = {p.stem for p in REALSWEEP.glob("*.py") if p.name != "__init__.py"}
    folders = {p.name for p in REALSWEEP.iterdir() if (p / "__init__.py").exists()}
    expected = {f"crashsweep.realsweep.{name}" for name in (modules | folders) - {"api"}}
    assert set(_contract("crashsweep.cli")["forbidden_modules"]) == expected


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
    """At most seven modules directly in realsweep/, each subsystem a folder whose docstring says what it holds.

    Besides them, for one release, the paths of the last release that moved (crashsweep.MOVED):
    each a module of three lines that warns and hands over the module it became.
    """
    moved = {f"{name.rpartition('.')[2]}.py" for name in MOVED}
    modules = sorted(p.name for p in REALSWEEP.glob("*.py") if p.name not in moved)
    assert len(modules) <= 7, modules
    assert {path.name for path in REALSWEEP.glob("*.py")} >= moved
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
