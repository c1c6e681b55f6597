"""Every Python file a docstring or comment names exists: a moved or renamed module leaves no stale name.

The prose of this project points at files ("a real world as a value, world.py"; "see
process/snapshots.py"), and a reader follows the name. When realsweep/'s modules moved into
folders (the digest module became world.py, the legs process/units.py, the tracker's modules
tracker/), 48 mentions kept the old names. This test reads the comments and docstrings (every
string statement: a module's, class's or function's docstring, an attribute's) of the
project's Python files and fails, listing file:line and the name, for each `*.py` name that no
file of the checkout has. A bare name ("units.py") matches a file of that name in any folder;
a name with folders ("process/units.py") matches a path that ends with it. Absolute paths
and URLs are other machines' files and are not read; nor are globs ("test_*.py").
"""

from __future__ import annotations

import ast
import io
import os
import re
import tokenize
from collections.abc import Iterator
from pathlib import Path

from tests.paths import ROOT

SOURCES = (
    "crashsweep/cli",
    "crashsweep/importers",
    "spec",
    "explorer",
    "variants",
    "reports",
    "realsweep",
    "benchmarks",
    "tests",
)
"""The folders whose Python files are read, besides crashsweep/*.py (never .venv nor crashsweep/shipped-files)."""

NOT_THE_CHECKOUT = frozenset({".git", ".venv", "__pycache__", ".mypy_cache", ".ruff_cache", ".pytest_cache"})
"""Folders whose files a name may not match: the history, the installed packages, caches."""

PY_NAME = re.compile(r"(?<![\w./*-])((?:[\w.-]+/)*[\w-]+\.py)(?!\w)")
"""A Python file's name, with the folders before it if any; not one after a slash (an absolute
path or a URL) or a star (a glob), nor a dotted module name."""


def sources(root: Path) -> list[Path]:
    """The project's Python files under `root`: crashsweep/*.py and every file of SOURCES."""
    found = sorted((root / "crashsweep").glob("*.py"))
    for folder in SOURCES:
        found += sorted(p for p in (root / folder).rglob("*.py") if "__pycache__" not in p.parts)
    return found


def checkout_files(root: Path) -> list[str]:
    """Every file of the checkout, as a path from `root` with slashes; links followed once (crashsweep/<name>)."""
    files: list[str] = []
    seen: set[str] = set()
    for folder, folders, names in os.walk(root, followlinks=True):
        real = os.path.realpath(folder)
        if real in seen:  # a link back up the tree: walked already
            folders[:] = []
            continue
        seen.add(real)
        folders[:] = [name for name in folders if name not in NOT_THE_CHECKOUT]
        base = Path(folder).relative_to(root).as_posix()
        files += [name if base == "." else f"{base}/{name}" for name in names]
    return files


def prose(text: str) -> Iterator[tuple[int, str]]:
    """(line number, text) of each comment and each line of each string statement (docstrings) of a module."""
    for token in tokenize.generate_tokens(io.StringIO(text).readline):
        if token.type == tokenize.COMMENT:
            yield token.start[0], token.string
    lines = text.splitlines()
    for node in ast.walk(ast.parse(text)):
        if isinstance(node, ast.Expr) and isinstance(node.value, ast.Constant) and isinstance(node.value.value, str):
            assert node.end_lineno is not None
            for number in range(node.lineno, node.end_lineno + 1):
                yield number, lines[number - 1]


def named(text: str) -> Iterator[tuple[int, str]]:
    """(line number, name) of each Python file the comments and docstrings of a module name, in line order."""
    for number, line in sorted(prose(text)):
        for match in PY_NAME.finditer(line):
            yield number, match.group(1)


def exists(name: str, files: list[str], basenames: set[str]) -> bool:
    """Whether `name` names a file of the checkout: a bare name anywhere, a path by its ending."""
    path = re.sub(r"^(\.\.?/)+", "", name)
    if "/" not in path:
        return path in basenames
    return any(file == path or file.endswith("/" + path) for file in files)


def stale(root: Path) -> list[str]:
    """`file:line: name` for each name in the prose of the project's files that no file of `root` has."""
    files = checkout_files(root)
    basenames = {file.rsplit("/", 1)[-1] for file in files}
    found = []
    for source in sources(root):
        for number, name in named(source.read_text(encoding="utf-8")):
            if not exists(name, files, basenames):
                found.append(f"{source.relative_to(root)}:{number}: {name}")
    return found


def test_every_named_file_exists() -> None:
    missing = stale(ROOT)
    assert not missing, f"{len(missing)} mentions of files that do not exist:\n" + "\n".join(missing)


def test_a_stale_name_is_found(tmp_path: Path) -> None:
    """A small checkout: the names of its moved files are found, in comments and docstrings only."""
    (tmp_path / "realsweep" / "process").mkdir(parents=True)
    (tmp_path / "realsweep" / "process" / "units.py").write_text("")
    (tmp_path / "spec").mkdir()
    (tmp_path / "spec" / "world.py").write_text(
        '"""The world (see units.py, process/units.py, ../realsweep/process/units.py; once legs.py)."""\n'
        "\n"
        "NAME = 'engine.py'  # a string of the code, not prose; but this comment names digest.py\n"
        '"""An attribute\'s docstring: realsweep/legs.py, not https://example.com/legs.py nor test_*.py."""\n'
        "# /tmp/elsewhere.py is another machine's; crashsweep.spec.world.py is no file name\n"
    )
    assert stale(tmp_path) == [
        "spec/world.py:1: legs.py",
        "spec/world.py:3: digest.py",
        "spec/world.py:4: realsweep/legs.py",
    ]
