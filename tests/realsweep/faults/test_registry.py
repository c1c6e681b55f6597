"""The real faults' registry against the model's, and no fault kind told apart by name outside realsweep/faults/.

A fault is one module of realsweep/faults/ and its model value (spec/faults.py): the real
registry holds the model's names in the model's order, each carried out for real or listed
with the reason it is not; and no other module of the real side branches on a fault's name
(`fault.kind == "pause"`): what differs between kinds is the kind's to say.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from crashsweep.realsweep.faults import registry
from crashsweep.realsweep.faults.nemesis import Nemesis
from crashsweep.spec.faults import FAULTS
from tests.paths import ROOT

REALSWEEP = ROOT / "realsweep"
NAMES = set(FAULTS)


def test_every_model_kind_is_carried_out_for_real_or_says_why_not() -> None:
    """The same names in the same order; none twice; a kind left out has its reason."""
    real = [kind.name for kind in registry.KINDS]
    assert real == [name for name in FAULTS if name in registry.BY_NAME]
    assert set(real) | set(registry.MODEL_ONLY) == NAMES
    assert not set(real) & set(registry.MODEL_ONLY)
    assert all(reason.strip() for reason in registry.MODEL_ONLY.values())
    assert list(registry.BY_NAME) == real
    for name in real:
        Nemesis((name,)).check(1)  # raises NemesisError for a kind it cannot carry out


def test_today_the_real_sweep_carries_out_every_model_kind() -> None:
    """changed-args came last, with the reference loop's approval gate (spec/CONVERSATIONS.md 2)."""
    assert tuple(kind.name for kind in registry.KINDS) == tuple(FAULTS)
    assert dict(registry.MODEL_ONLY) == {}


def test_a_label_names_its_kind() -> None:
    assert registry.kind_of("lost-reply at tracker accepted create_a") == "lost-reply"
    assert registry.kind_of("pause at start, wake at p2 stopped") == "pause"


def _named_kind(node: ast.expr) -> bool:
    """`kind`, `fault.kind`, `kind.name`, `fault.kind.name`, `fault.name`: a fault's kind or its name."""
    if isinstance(node, ast.Name):
        return node.id == "kind"
    if isinstance(node, ast.Attribute):
        return node.attr == "kind" or (node.attr == "name" and (_named_kind(node.value) or _fault(node.value)))
    return False


def _fault(node: ast.expr) -> bool:
    """Something named as a fault: `fault`, `self.fault`, `last_fault`."""
    name = node.id if isinstance(node, ast.Name) else node.attr if isinstance(node, ast.Attribute) else ""
    return "fault" in name.lower()


def _fault_name(node: ast.expr) -> bool:
    """A string of a fault's name, a collection of them, or an upper-case constant (PAUSE, KINDS)."""
    if isinstance(node, ast.Constant):
        return isinstance(node.value, str)
    if isinstance(node, ast.Tuple | ast.List | ast.Set):
        return any(_fault_name(element) for element in node.elts)
    if isinstance(node, ast.Name):
        return node.id.isupper()
    return isinstance(node, ast.Attribute) and node.attr.isupper()


def offences(source: str) -> list[str]:
    """Each comparison in `source` that tells fault kinds apart by name: "line: the comparison"."""
    found = []
    for node in ast.walk(ast.parse(source)):
        if not isinstance(node, ast.Compare):
            continue
        operands = [node.left, *node.comparators]
        by_kind = any(_named_kind(x) for x in operands) and any(_fault_name(x) for x in operands)
        by_name = any(isinstance(x, ast.Constant) and x.value in NAMES for x in operands)
        if by_kind or by_name:
            found.append(f"{node.lineno}: {ast.unparse(node)}")
    return found


def _modules() -> list[Path]:
    faults = REALSWEEP / "faults"
    return sorted(p for p in REALSWEEP.rglob("*.py") if faults not in p.parents)


def test_no_module_outside_faults_tells_fault_kinds_apart_by_name() -> None:
    """A kind's behaviour is its module's: `fault.kind == PAUSE` elsewhere is a fault spread over the sweep."""
    assert len(_modules()) > 30
    found = {str(p.relative_to(ROOT)): offences(p.read_text(encoding="utf-8")) for p in _modules()}
    assert {path: lines for path, lines in found.items() if lines} == {}


@pytest.mark.parametrize(
    "source",
    [
        'if fault.kind == "lost-reply": pass',
        "if fault.kind != PAUSE: pass",
        'x = kind in ("lost-reply", POWER_LOSS)',
        'x = fault.kind.name == "pause"',
        'x = "key-expiry" in nemesis.faults',
        "x = fault.kind is faults.PAUSE",
        'x = fault.name == "pause"',
    ],
)
def test_the_walk_finds_a_test_of_a_fault_s_name(source: str) -> None:
    assert offences(source)


@pytest.mark.parametrize(
    "source", ["x = fault.kind.every_scenario", 'x = mode == "fresh"', "x = a.kind == b.kind", 'x = path.name == "a"']
)
def test_the_walk_leaves_other_comparisons_alone(source: str) -> None:
    assert not offences(source)
