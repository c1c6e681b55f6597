"""The check `--check module:function` names, refused or made without importing its module where its source settles it.

A user's check usually lives in the agent's own module, beside its framework's import (the
OpenAI Agents SDK took one user 9-18 s). The sweep's zygote imports that module anyway, so the
CLI does not: it reads the module's source, refuses a spec that plainly names nothing, and
hands the sweep a ForkedCheck, which runs the check in a child of the zygote (or, with no
zygote, loads it in the sweep's process when first called). Refused here, before any work, in
the words `probe.entry.load` uses: a malformed spec; a module that cannot be found (finding it
imports its parent packages only); a module whose source binds the name nowhere at its top
level. Where the source does not settle it (no Python source found, a syntax error, `import *`,
a module `__getattr__`, the name in a string as `setattr` or `globals()` would use it, a
package's submodule of that name, a dunder), the module is imported here as before and its
errors are said as `load` says them.
"""

from __future__ import annotations

import ast
import importlib.machinery
import importlib.util
import re
from pathlib import Path

from crashsweep.realsweep import api


def user_check(spec: str) -> api.Check:
    """The check `spec` names: a ForkedCheck when its source binds the name; ValueError when plainly not."""
    module, attribute = api.parse_entry_point(spec)
    try:
        found = importlib.util.find_spec(module)
    except Exception:  # a parent package that fails to import, a module that is no package: as load says it
        found = None
        settled: bool | None = None
    else:
        if found is None:
            raise ValueError(f"{spec}: cannot import {module!r}: No module named {module!r}")
        settled = _binds(found, attribute.split(".")[0])
    if settled is False:
        raise ValueError(f"{spec}: {module!r} has no {attribute!r}")
    if settled is None:
        return api.load_entry_point(spec)  # type: ignore[return-value]
    return api.ForkedCheck(spec)


def source(module: str) -> tuple[ast.Module, str] | None:
    """The parsed source of `module` and the package its relative imports start from; None if not Python found.

    Finding a module imports its parent packages (not the module itself).
    """
    try:
        spec = importlib.util.find_spec(module)
    except (ImportError, ValueError):
        return None
    tree = None if spec is None else _parsed(spec)
    if spec is None or tree is None:
        return None
    package = module if spec.submodule_search_locations is not None else module.rpartition(".")[0]
    return tree, package


def _parsed(spec: importlib.machinery.ModuleSpec) -> ast.Module | None:
    """The module's parsed source, None when it has no Python source or it does not parse."""
    if spec.origin is None or not spec.origin.endswith(".py"):
        return None
    try:
        return ast.parse(Path(spec.origin).read_text(encoding="utf-8"))
    except (OSError, SyntaxError, ValueError):
        return None


def _binds(spec: importlib.machinery.ModuleSpec, name: str) -> bool | None:
    """Whether the module's top level binds `name`: True, False (plainly not), None (its source cannot say)."""
    tree = _parsed(spec)
    if tree is None or (name.startswith("__") and name.endswith("__")) or _submodule(spec, name):
        return None
    if any(_binding(node, name) for node in _module_scope(tree.body)):
        return True
    if any(isinstance(node, ast.Global | ast.Nonlocal) and name in node.names for node in ast.walk(tree)):
        return True  # a function binds it at the top level when it runs
    if any(_binding(node, "__getattr__") for node in _module_scope(tree.body)):
        return None  # a module __getattr__ may answer it
    return None if any(_hidden(node, name) for node in ast.walk(tree)) else False


def _module_scope(body: list[ast.stmt]) -> list[ast.AST]:
    """Every node run in the module's own scope: into blocks and expressions, not into definitions' bodies."""
    nodes: list[ast.AST] = []
    stack: list[ast.AST] = list(reversed(body))
    while stack:
        node = stack.pop()
        nodes.append(node)
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.Lambda):
            inner: list[ast.AST] = [*node.args.defaults, *(d for d in node.args.kw_defaults if d is not None)]
            inner += getattr(node, "decorator_list", [])
        elif isinstance(node, ast.ClassDef):
            inner = [*node.decorator_list, *node.bases, *node.keywords]
        else:
            inner = list(ast.iter_child_nodes(node))
        stack.extend(reversed(inner))
    return nodes


def _binding(node: ast.AST, name: str) -> bool:
    """Whether `node` binds `name` in the scope it runs in."""
    if isinstance(node, ast.Name):
        return node.id == name and not isinstance(node.ctx, ast.Load)
    if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef | ast.MatchAs | ast.MatchStar):
        return node.name == name
    if isinstance(node, ast.ExceptHandler):
        return node.name == name
    if isinstance(node, ast.MatchMapping):
        return node.rest == name
    if isinstance(node, ast.alias):
        return (node.asname or node.name.split(".")[0]) == name
    return False


DYNAMIC = frozenset({"globals", "vars", "setattr", "exec", "eval", "__import__", "__dict__", "modules"})
"""Names through which a module may bind a name no statement shows (globals()[...], setattr, sys.modules)."""


def _hidden(node: ast.AST, name: str) -> bool:
    """Whether `node` may bind `name` unseen: `import *`, dynamic binding, the name in a string."""
    if isinstance(node, ast.alias):
        return node.name == "*"
    if isinstance(node, ast.Name | ast.Attribute):
        return (node.id if isinstance(node, ast.Name) else node.attr) in DYNAMIC
    return isinstance(node, ast.Constant) and isinstance(node.value, str) and _word(name).search(node.value) is not None


def _word(name: str) -> re.Pattern[str]:
    return re.compile(rf"(?<![\w.]){re.escape(name)}(?!\w)")


def _submodule(spec: importlib.machinery.ModuleSpec, name: str) -> bool:
    """Whether a package has a submodule `name` (an attribute once anything imports it)."""
    suffixes = importlib.machinery.all_suffixes()
    for folder in spec.submodule_search_locations or ():
        if (Path(folder) / name).is_dir() or any((Path(folder) / (name + end)).exists() for end in suffixes):
            return True
    return False
