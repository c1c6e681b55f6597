"""bin/bootstrap and bin/crashsweep: a light first run, extras installed when a command needs them, apt kept quiet.

Each test runs the real scripts in a copy of bin/ beside a stand-in .venv whose python only logs
what it is asked (a pip install is a line in pip.log), and a PATH of stand-ins: nothing is
installed for real, and no test waits on PyPI or apt.
"""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest

from tests.paths import ROOT

LOGGER = '#!/bin/sh\necho "$*" >> "{log}"\n'
TOOLS = ("bash", "env", "dirname", "mktemp", "grep", "cat", "rm", "sleep", "id", "touch", "sed", "head")


@pytest.fixture
def tree(tmp_path: Path) -> Path:
    """A checkout's bin/ and pyproject.toml, a stand-in .venv, and a bin folder of the tools the scripts use."""
    (tmp_path / "bin").mkdir()
    for script in ("bootstrap", "crashsweep"):
        shutil.copy2(ROOT / "bin" / script, tmp_path / "bin" / script)
    (tmp_path / "pyproject.toml").write_text("[project]\n")
    venv = tmp_path / ".venv" / "bin"
    venv.mkdir(parents=True)
    _script(venv / "python", LOGGER.format(log=tmp_path / "pip.log"))
    _script(venv / "crashsweep", '#!/bin/sh\necho "ran $*"\n')
    tools = tmp_path / "tools"
    tools.mkdir()
    for tool in TOOLS:
        found = shutil.which(tool)
        assert found is not None, tool
        (tools / tool).symlink_to(found)
    return tmp_path


def _script(path: Path, text: str) -> None:
    path.write_text(text)
    path.chmod(0o755)


def _run(tree: Path, *args: str, cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    env = {"PATH": str(tree / "tools"), "HOME": str(tree)}
    return subprocess.run(args, cwd=cwd or tree, env=env, capture_output=True, text=True, timeout=60, check=False)


def _installs(tree: Path) -> list[str]:
    """The pip installs of crashsweep logged so far (the pip upgrade left out)."""
    log = tree / "pip.log"
    lines = log.read_text().splitlines() if log.exists() else []
    return [line.split(" -e ", 1)[1] for line in lines if " -e " in line]


def test_the_first_command_installs_the_core_only(tree: Path) -> None:
    done = _run(tree, "bin/crashsweep", "explore", "--variant", "save-after-reply", "--depth", "2")
    assert done.returncode == 0, done.stderr
    assert done.stdout == "ran explore --variant save-after-reply --depth 2\n"
    assert _installs(tree) == ["."]
    assert done.stderr.count("\n") == 1
    assert "installing crashsweep into .venv" in done.stderr
    (pip,) = (tree / "pip.log").read_text().splitlines()  # the venv's own pip: no upgrade fetched first
    assert "--no-compile" in pip  # what a command imports is compiled when first imported
    again = _run(tree, "bin/crashsweep", "compare")
    assert (again.stderr, _installs(tree)) == ("", ["."])


@pytest.mark.parametrize(
    ("args", "extra"),
    [
        (["sweep", "--framework", "langgraph", "--depth", "1"], "langgraph"),
        (["sweep", "--framework=dbos"], "dbos"),
        (["conform", "--engine", "ray"], "ray"),
        (["sweep", "--engine=ray", "--variant", "agent-loop"], "ray"),
    ],
)
def test_a_command_that_needs_an_extra_installs_it_first_saying_so(tree: Path, args: list[str], extra: str) -> None:
    _run(tree, "bin/crashsweep", "variants")
    done = _run(tree, "bin/crashsweep", *args)
    assert done.returncode == 0, done.stderr
    assert _installs(tree) == [".", f".[{extra}]"]
    assert done.stderr.count("\n") == 1
    assert f"crashsweep[{extra}]" in done.stderr
    assert done.stdout == f"ran {' '.join(args)}\n"
    assert _run(tree, "bin/crashsweep", *args).stderr == ""
    assert len(_installs(tree)) == 2


def test_a_target_in_this_folder_that_imports_langgraph_brings_the_extra(tree: Path) -> None:
    here = tree / "examples"
    here.mkdir()
    (here / "my_graph.py").write_text("from langgraph.graph import StateGraph\n")
    (here / "my_loop.py").write_text("import json\n")
    _run(tree, str(tree / "bin" / "crashsweep"), "sweep", "--target", "my_loop:run", cwd=here)
    assert _installs(tree) == ["."]
    done = _run(tree, str(tree / "bin" / "crashsweep"), "sweep", "--target", "my_graph:run", cwd=here)
    assert _installs(tree) == [".", ".[langgraph]"]
    assert "crashsweep[langgraph]" in done.stderr


def test_bootstrap_alone_installs_everything_bin_check_tests(tree: Path) -> None:
    _run(tree, "bin/crashsweep", "variants")
    done = _run(tree, "bin/bootstrap")
    assert done.returncode == 0, done.stderr
    assert _installs(tree) == [".", ".[dev,langgraph,dbos,ray,openai-agents,pydantic-ai,temporal,otel,storage-engines]"]
    assert _run(tree, "bin/bootstrap").stderr == ""
    assert _run(tree, "bin/crashsweep", "sweep", "--framework", "dbos").stderr == ""
    assert len(_installs(tree)) == 2


def test_a_changed_pyproject_installs_again(tree: Path) -> None:
    _run(tree, "bin/crashsweep", "variants")
    stamp = max(path.stat().st_mtime for path in (tree / ".venv").glob(".crashsweep-installed*"))
    os.utime(tree / "pyproject.toml", (stamp + 10, stamp + 10))
    _run(tree, "bin/crashsweep", "variants")
    assert _installs(tree) == [".", "."]


@pytest.mark.skipif(os.geteuid() != 0, reason="bin/bootstrap --system installs Debian packages as root only")
def test_system_tools_are_installed_in_one_line_with_apt_kept_quiet(tree: Path) -> None:
    """apt-get's and dpkg's chatter, on stdout and stderr, stays out of the log; one line says what is installed."""
    tools = tree / "tools"
    apt = (
        "#!/bin/sh\n"
        'echo "Reading package lists..."; echo "debconf: delaying package configuration" >&2\n'
        'if [ "$1" = install ] || [ "$3" = install ] || echo "$*" | grep -q install; then\n'
        "  for t in dot chromium chromedriver strace; do\n"
        f'    printf "#!/bin/sh\\n" > "{tools}/$t"; chmod +x "{tools}/$t"\n'
        "  done\n"
        '  echo "Setting up chromium ..."; echo "update-alternatives: using /usr/bin/chromium" >&2\n'
        "fi\n"
    )
    _script(tools / "apt-get", apt)
    done = _run(tree, "bin/bootstrap", "--system")
    assert done.returncode == 0, done.stderr
    assert done.stdout == ""
    lines = done.stderr.splitlines()
    assert lines[0] == (
        "bootstrap: installing graphviz chromium chromium-driver strace "
        "(Debian packages, apt-get -qq; its log only on failure)"
    )
    extras = "dev, langgraph, dbos, ray, openai-agents, pydantic-ai, temporal, otel, storage-engines"
    assert lines[1:] == [f"bootstrap: installing crashsweep into .venv (with the extras: {extras})"]


@pytest.mark.skipif(os.geteuid() != 0, reason="bin/bootstrap --system installs Debian packages as root only")
def test_a_failed_apt_install_shows_its_log(tree: Path) -> None:
    _script(tree / "tools" / "apt-get", '#!/bin/sh\necho "E: Unable to locate package chromium" >&2\nexit 100\n')
    done = _run(tree, "bin/bootstrap", "--system")
    assert "E: Unable to locate package chromium" in done.stderr
