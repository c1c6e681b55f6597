"""The installed package: a wheel built from this tree holds crashsweep and nothing else at the top.

spec/, explorer/, variants/, reports/ and realsweep/ stay at the top of the checkout, but are
installed as crashsweep.spec, crashsweep.explorer, ... (pyproject.toml, docs/ARCHITECTURE.md):
generic top-level names such as `spec` would collide with other packages in a user's
environment. The wheel is built for real (pip, with setuptools in an isolated build
environment) from a copy of the tree, and compared with the tree's own folders.
"""

from __future__ import annotations

import json
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


# Every design, preset and example by name from an installed wheel (issue 24, item 15): the wheel
# is installed into a fresh venv in another folder, with no checkout anywhere on its path.


@pytest.fixture(scope="module")
def installed(wheel: zipfile.ZipFile, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A fresh venv with the wheel installed; its dependencies are this venv's (no checkout on the path)."""
    venv = tmp_path_factory.mktemp("venv")
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True, timeout=120)
    (purelib,) = venv.glob("lib/python3*/site-packages")
    deps = Path(
        subprocess.check_output(
            [sys.executable, "-c", "import click, os; print(os.path.dirname(click.__path__[0]))"], text=True
        ).strip()
    )
    (purelib / "deps.pth").write_text(f"{deps}\n")  # a plain path line: the dev venv's .pth files are not read
    assert wheel.filename is not None
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "pip",
            "--python",
            str(venv / "bin" / "python"),
            "install",
            "-q",
            "--no-deps",
            "--no-compile",
            wheel.filename,
        ],
        capture_output=True,
        text=True,
        check=False,
        timeout=300,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    return venv


def _crashsweep(venv: Path, cwd: Path, script: str) -> subprocess.CompletedProcess[str]:
    """Run `script` (lines of crashsweep commands) in bash from `cwd`, with the venv's crashsweep first on PATH."""
    env = {"PATH": f"{venv / 'bin'}:/usr/bin:/bin", "HOME": str(cwd)}
    return subprocess.run(
        ["bash", "-euo", "pipefail", "-c", script],
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )


IN_ONE_PROCESS = """
import contextlib, io, json, sys
from crashsweep.cli.main import main
done = []
for args in json.loads(sys.argv[1]):
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        status = main(args)
    done.append([status, out.getvalue() if status in (0, 1) else err.getvalue()])
print(json.dumps(done))
"""


def _in_one_process(venv: Path, cwd: Path, commands: list[list[str]]) -> list[tuple[int, str]]:
    """Run crashsweep commands in one process of the venv's Python (its `main`, as the console script calls it).

    Each command's exit status, and its stdout (its stderr when it failed with exit 2 or more).
    One interpreter for all: the package is still the installed wheel, with no checkout on its
    path, and the suite starts dozens fewer processes.
    """
    env = {"PATH": f"{venv / 'bin'}:/usr/bin:/bin", "HOME": str(cwd)}
    argv = [str(venv / "bin" / "python"), "-c", IN_ONE_PROCESS, json.dumps(commands)]
    done = subprocess.run(argv, cwd=cwd, env=env, capture_output=True, text=True, timeout=600, check=False)
    assert done.returncode == 0, done.stderr
    return [(status, text) for status, text in json.loads(done.stdout)]


def test_the_installed_crashsweep_is_the_wheel(installed: Path, tmp_path: Path) -> None:
    done = _crashsweep(installed, tmp_path, "python -c 'import crashsweep; print(crashsweep.__file__)'")
    assert done.stdout.startswith(str(installed)), done.stdout + done.stderr


def test_every_design_and_preset_explores_by_name_from_the_wheel(installed: Path, tmp_path: Path) -> None:
    from crashsweep.variants import names

    shows = _in_one_process(installed, tmp_path, [["design", "show", name] for name in names()])
    for name, (status, toml) in zip(names(), shows, strict=True):
        assert status == 0, toml
        (tmp_path / f"{name}.toml").write_text(toml)
    commands = [["explore", "--variant", name, "--depth", "1"] for name in names()]
    commands += [["explore", "--design", f"{name}.toml", "--depth", "1"] for name in names()]
    explored = _in_one_process(installed, tmp_path, commands)
    for name, (status, out), (_, shown) in zip(names(), explored, explored[len(names()) :], strict=False):
        assert status in (0, 1), out
        assert out.startswith(f"{name}  (job triage, tracker keyed, depth 1)")
        assert shown == out.replace(f"--variant {name}", f"--design {tmp_path / name}.toml")
    listed = _crashsweep(installed, tmp_path, "crashsweep variants").stdout
    assert [line.split()[0] for line in listed.splitlines()][: len(names())] == list(names())


def test_every_shipped_job_and_design_file_works_by_name_and_by_its_docs_path(installed: Path, tmp_path: Path) -> None:
    commands = []
    for path in sorted((ROOT / "examples").glob("*.toml")):
        kind = "--design" if "startup_save" in path.read_text() else "--job"
        chosen = [] if kind == "--design" else ["--variant", "save-after-reply"]
        commands += [
            ["explore", *chosen, kind, given, "--depth", "1"] for given in (path.stem, f"examples/{path.name}")
        ]
    for status, out in _in_one_process(installed, tmp_path, commands):
        assert status in (0, 1), out
        assert "  (job " in out.splitlines()[0]
    docs = [ROOT / "docs" / "my-design.toml", *sorted((ROOT / "docs" / "designs").glob("*.toml"))]
    given = [path.relative_to(ROOT).as_posix() for path in docs]
    done = _in_one_process(installed, tmp_path, [["explore", "--design", g, "--depth", "1"] for g in given])
    for path, (status, out) in zip(docs, done, strict=True):
        assert status in (0, 1), out
        assert out.startswith(f"{path.stem}  (job triage")


def test_the_readme_compare_of_design_files_runs_from_the_wheel(installed: Path, tmp_path: Path) -> None:
    done = _crashsweep(
        installed,
        tmp_path,
        "crashsweep compare --variants idempotency-keys,agent-loop --design docs/my-design.toml"
        " --design docs/designs/langgraph-sync.toml --design docs/designs/dbos.toml",
    )
    assert done.returncode == 1, done.stderr
    firsts = [line.split()[0] for line in done.stdout.splitlines() if line.strip()]
    for name in ("idempotency-keys", "agent-loop", "my-design", "langgraph-sync", "dbos"):
        assert name in firsts, done.stdout


def test_the_example_programs_are_in_the_wheel(wheel: zipfile.ZipFile) -> None:
    shipped = {name.removeprefix("crashsweep/shipped-files/") for name in wheel.namelist() if "/shipped-files/" in name}
    checkout = {p.relative_to(ROOT).as_posix() for p in (ROOT / "examples").glob("*.toml")}
    checkout |= {p.relative_to(ROOT).as_posix() for p in (ROOT / "docs" / "designs").glob("*.toml")}
    checkout |= {p.relative_to(ROOT).as_posix() for p in (ROOT / "docs" / "examples").glob("*.py")}
    checkout |= {p.relative_to(ROOT).as_posix() for p in (ROOT / "docs" / "examples").glob("*.toml")}
    assert shipped == checkout | {"docs/my-design.toml"}


def test_the_docs_sweep_of_my_loop_runs_from_the_copied_examples(installed: Path, tmp_path: Path) -> None:
    """`crashsweep examples DIR`, then the docs' sweep of docs/examples/my_loop.py from DIR/docs/examples."""
    done = _crashsweep(
        installed,
        tmp_path,
        "crashsweep examples cs >/dev/null && cd cs/docs/examples"
        " && crashsweep sweep --target my_loop:run --check my_loop_check:check --depth 1",
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith("my_loop:run  (real sweep; tracker keyed, depth 1)")
