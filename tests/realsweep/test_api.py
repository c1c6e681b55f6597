"""The real side's facade: every name it offers resolves, the CLI imports the real side through it only."""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

from crashsweep.realsweep import api
from tests.paths import ROOT

CLI = ROOT / "crashsweep" / "cli"


def _cli_modules() -> list[Path]:
    return sorted(CLI.glob("*.py"))


def test_every_name_in_all_resolves_once_and_nothing_public_is_left_out() -> None:
    """`__all__` is sorted, without repeats, and names exactly the public names of the module."""
    assert len(set(api.__all__)) == len(api.__all__)
    for name in api.__all__:
        assert getattr(api, name) is not None, name
    # Identifiers only: pytest rewrites the asserts of an installed plugin's whole distribution,
    # crashsweep's included, and its helpers ("@py_builtins") are module globals too.
    names = [name for name in vars(api) if name.isidentifier()]
    public = {name for name in names if not name.startswith("_") and name not in ("annotations", "TYPE_CHECKING")}
    assert public - {"Path"} == set(api.__all__)


def test_the_cli_imports_the_real_side_through_the_facade_only() -> None:
    """Every import of crashsweep.realsweep in crashsweep/cli/ (lazy ones too) is of the api module."""
    seen = []
    for path in _cli_modules():
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.ImportFrom) and (node.module or "").startswith("crashsweep.realsweep"):
                names = [alias.name for alias in node.names]
                assert node.module == "crashsweep.realsweep.api" or names == ["api"], (path.name, node.module, names)
                seen.append(path.name)
            elif isinstance(node, ast.Import):
                for alias in node.names:
                    assert not alias.name.startswith("crashsweep.realsweep"), (path.name, alias.name)
    assert "sweep.py" in seen


def test_every_name_the_cli_uses_of_the_facade_is_offered() -> None:
    """`api.X` in the CLI, and names imported from it, are all in __all__."""
    used: set[str] = set()
    for path in _cli_modules():
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.value.id == "api":
                used.add(node.attr)
            elif isinstance(node, ast.ImportFrom) and node.module == "crashsweep.realsweep.api":
                used.update(alias.name for alias in node.names)
    assert used
    assert used <= set(api.__all__), used - set(api.__all__)


def test_ray_waits_until_asked_for() -> None:
    """Importing the facade (and the CLI) does not import Ray, an optional extra slow to import."""
    code = (
        "import sys, crashsweep.cli.main, crashsweep.realsweep.api\nprint(sorted(m for m in sys.modules if m == 'ray'))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, cwd=ROOT)
    assert out.stdout.strip() == "[]"


def test_a_tracker_server_from_the_facade_binds_and_closes(tmp_path: Path) -> None:
    """tracker_server on port 0: a URL on the loopback, not serving until serve_tracker."""
    server = api.tracker_server(tmp_path, "keyed", "127.0.0.1", 0, quiet=True)
    try:
        assert server.url.startswith("http://127.0.0.1:")
        assert server.mode == "keyed"
    finally:
        server.server_close()
        server.spaces.close()


def test_a_missing_module_a_frameworks_extra_installs_is_named_with_the_extra() -> None:
    """An installed user's --target on LangGraph without the extra: Python's words, then which extra brings it."""
    said = "my_graph:check: cannot import 'my_graph': No module named 'langchain_core'"
    assert api.with_extra(said) == f"{said} (langchain_core comes with langgraph: pip install 'crashsweep[langgraph]')"
    assert api.with_extra("No module named 'agents.run'").endswith("pip install 'crashsweep[openai-agents]')")
    assert api.with_extra("No module named 'numpyish'") == "No module named 'numpyish'"
