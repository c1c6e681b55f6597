"""crashsweep/__init__.py: the public API, imported on first use, and the moved paths of the last release.

Every name the docs' examples and guides import is imported here by the path they write, and
the names of a user's program and check are imported from `crashsweep` there (the one path that
stays). `import crashsweep` loads nothing more, even under `python -S` as the reference loop's
processes run. The paths of the last release that moved still work, with a DeprecationWarning
that names the importing line (realsweep/crashpoint.py, checkpoint.py, tracker_client.py, engine.py).
"""

from __future__ import annotations

import ast
import importlib
import os
import re
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

import crashsweep
from tests.paths import ROOT

DOCS = sorted((ROOT / "docs" / "examples").glob("*.py")) + sorted((ROOT / "docs" / "guide").glob("*.md"))
FENCE = re.compile(r"^( *)```python\n(.*?)^\1```", re.DOTALL | re.MULTILINE)


def _sources(path: Path) -> list[str]:
    """The Python a docs file holds: the module itself, or a guide's python blocks."""
    text = path.read_text(encoding="utf-8")
    if path.suffix == ".py":
        return [text]
    return [textwrap.dedent(block) for _, block in FENCE.findall(text)]


def _imported(source: str) -> list[tuple[str, str]]:
    """Each (module, name) a source imports from crashsweep ("" for `import crashsweep.x`)."""
    try:
        nodes = list(ast.walk(ast.parse(source)))
    except SyntaxError:  # a fragment of a guide: its import lines alone
        lines = [line.strip() for line in source.splitlines() if re.match(r"\s*(from|import) crashsweep", line)]
        nodes = [node for line in lines for node in ast.walk(ast.parse(line))]
    found: list[tuple[str, str]] = []
    for node in nodes:
        if isinstance(node, ast.ImportFrom) and (node.module or "").split(".")[0] == "crashsweep":
            found += [(str(node.module), alias.name) for alias in node.names]
        elif isinstance(node, ast.Import):
            found += [(alias.name, "") for alias in node.names if alias.name.split(".")[0] == "crashsweep"]
    return found


DOCUMENTED = sorted({pair for path in DOCS for source in _sources(path) for pair in _imported(source)})


def test_the_docs_import_something_of_crashsweep() -> None:
    """A check that finds nothing checks nothing: the docs' examples import the public names."""
    assert ("crashsweep", "crashpoint") in DOCUMENTED
    assert ("crashsweep", "Outcome") in DOCUMENTED
    assert len(DOCUMENTED) > 20


@pytest.mark.parametrize(("module", "name"), DOCUMENTED, ids=lambda value: str(value))
def test_every_name_the_docs_import_is_there(module: str, name: str) -> None:
    """By the path the docs write, without a warning (pytest runs with warnings as errors)."""
    imported = importlib.import_module(module)
    if name:
        assert hasattr(imported, name) or importlib.import_module(f"{module}.{name}")


def test_the_docs_reach_the_real_side_through_crashsweep_and_the_adapters_only() -> None:
    """The real side's modules move (the last release's did): the docs import them by `crashsweep`, or an adapter."""
    inside = [
        (module, name)
        for module, name in DOCUMENTED
        if module.startswith("crashsweep.realsweep") and not module.startswith("crashsweep.realsweep.adapters")
    ]
    assert inside == []
    homes = {home for home, _ in crashsweep.PUBLIC.values()}
    assert {home for home in homes if home.startswith("crashsweep.realsweep.adapters")} == {
        "crashsweep.realsweep.adapters.script"
    }


@pytest.mark.parametrize("name", sorted(crashsweep.PUBLIC))
def test_each_public_name_is_its_homes_object(name: str) -> None:
    """`from crashsweep import NAME` gives the very object its module defines, and dir() lists it."""
    home, attribute = crashsweep.PUBLIC[name]
    defined = importlib.import_module(home)
    namespace: dict[str, object] = {}
    exec(f"from crashsweep import {name}", namespace)  # the statement a user writes
    assert namespace[name] is (getattr(defined, attribute) if attribute else defined)
    assert name in dir(crashsweep)
    assert name in crashsweep.__all__


def test_an_unknown_name_is_an_attribute_error_and_submodules_still_import() -> None:
    with pytest.raises(AttributeError, match="has no attribute 'crashpiont'"):
        crashsweep.crashpiont  # noqa: B018 - the attribute access is the test
    from crashsweep import testing

    assert testing.DEPTH == 2


def test_import_crashsweep_loads_nothing_more() -> None:
    """Under `python -S` (the reference loop's processes), the package alone: its names wait for their first use."""
    code = "import crashsweep, sys; print(sorted(m for m in sys.modules if m.startswith('crashsweep')))"
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    done = subprocess.run([sys.executable, "-S", "-c", code], capture_output=True, text=True, env=env, check=True)
    assert done.stdout == "['crashsweep']\n"


@pytest.mark.parametrize("old", sorted(crashsweep.MOVED))
def test_a_moved_path_of_the_last_release_works_with_a_deprecation_warning(
    old: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """`from OLD import *` as the last release allowed: a warning naming the import to write; the same objects."""
    new, names = crashsweep.MOVED[old]
    monkeypatch.delitem(sys.modules, old, raising=False)
    monkeypatch.delattr(sys.modules["crashsweep.realsweep"], old.rpartition(".")[2], raising=False)
    first = names.split(",")[0].strip()
    namespace: dict[str, object] = {}
    with pytest.warns(DeprecationWarning, match=rf"^{re.escape(old)} moved .* `from crashsweep import {names}`"):
        exec(f"from {old} import *", namespace)  # the import a user's program holds
    assert sys.modules[old] is importlib.import_module(new)
    if first in namespace:
        assert namespace[first] is getattr(crashsweep, first)


def test_the_warning_shows_by_default_at_the_line_that_imports_the_old_path(tmp_path: Path) -> None:
    """Python's default filters show a DeprecationWarning of __main__'s own code: the importer's line is named."""
    script = tmp_path / "agent.py"
    script.write_text("".join(f"import {old}\n" for old in sorted(crashsweep.MOVED)))
    done = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, check=True)
    shown = [line for line in done.stderr.splitlines() if "DeprecationWarning" in line]
    assert [line.split(": DeprecationWarning: ")[0] for line in shown] == [
        f"{script}:{number}" for number in range(1, len(crashsweep.MOVED) + 1)
    ]


def test_all_is_the_public_names_and_the_modules_own() -> None:
    assert set(crashsweep.__all__) == {*crashsweep.PUBLIC, "MOVED", "PUBLIC", "__version__", "moved"}
