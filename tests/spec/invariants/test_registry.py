"""The registry: every invariant in force, in order; one more is one module's value and one line.

The extra invariant below is such a module's value (a name, a kind, a witness, the facts it
needs, its check over a History) and `registry.extra` its one line: while it is registered,
explore's text, JSON and JUnit and a real sweep's row all judge by it, with no other change.
"""

from __future__ import annotations

import json
import xml.etree.ElementTree as ET

import pytest

from crashsweep.cli.main import main
from crashsweep.spec import invariants
from crashsweep.spec.history import History
from crashsweep.spec.invariants import no_duplicate, registry
from crashsweep.spec.invariants.value import Invariant, Violation

NAME = "first-write-once"


def _first_write_once(history: History) -> Violation | None:
    """The job's first write has at most one effect (a stricter no-duplicate, for the test)."""
    first = history.expected[:1]
    effects = [e for e in history.events if e.f == "effect" and e.call in first]
    return Violation(NAME, f"{first[0]} has {len(effects)} effects", tuple(effects)) if len(effects) > 1 else None


EXTRA = Invariant(
    NAME, "always", no_duplicate.WITNESS, ("effects",), "the first write is applied once", _first_write_once,
    no_duplicate.seen,
)  # fmt: skip


def test_the_built_in_invariants_each_have_their_module_and_a_witness() -> None:
    names = [i.name for i in registry.registered()]
    assert names == [
        invariants.NO_DUPLICATE, invariants.NO_LOSS, invariants.WELL_FORMED_TRANSCRIPT, invariants.APPROVED_EXACTLY,
        invariants.CAN_FINISH,
    ]  # fmt: skip
    assert registry.witnesses() == (
        invariants.SOME_WRITE_APPLIED, invariants.SOME_RUN_FINISHED, invariants.SOME_RESULT_SENT,
        invariants.SOME_APPROVED_WRITE,
    )  # fmt: skip
    assert all(i.model is not None for i in registry.INVARIANTS)


def test_an_extra_invariant_is_registered_for_a_while_and_a_name_only_once() -> None:
    with registry.extra(EXTRA):
        assert registry.by_name(NAME) is EXTRA
        with pytest.raises(ValueError, match="registered already"), registry.extra(EXTRA):
            pass
    with pytest.raises(KeyError):
        registry.by_name(NAME)


def _run(capsys: pytest.CaptureFixture[str], *args: str) -> str:
    status = main(list(args))
    out, _ = capsys.readouterr()
    assert status == 1  # save-after-reply duplicates create_a
    return out


def test_an_extra_invariant_shows_in_explores_text_json_and_junit(capsys: pytest.CaptureFixture[str]) -> None:
    explore = ("explore", "--variant", "save-after-reply", "--depth", "1")
    assert NAME not in _run(capsys, *explore)
    with registry.extra(EXTRA):
        text = _run(capsys, *explore)
        data = json.loads(_run(capsys, *explore, "--format", "json"))
        junit = ET.fromstring(_run(capsys, *explore, "--format", "junit"))
    assert f"  {NAME} VIOLATED  shortest counterexample: 1 crash" in text
    assert data["invariants"][NAME]["holds"] is False
    case = next(c for c in junit.iter("testcase") if c.get("name") == NAME)
    assert case.find("failure") is not None


def test_an_extra_invariant_shows_in_a_real_sweeps_row(capsys: pytest.CaptureFixture[str]) -> None:
    with registry.extra(EXTRA):
        text = _run(
            capsys, "sweep", "--variant", "save-after-reply", "--depth", "1", "--job", "examples/one-write.toml"
        )
    assert f"  {NAME} VIOLATED  first in scenario " in text
    assert text.rstrip().count("\n") > 5
    assert "create_a has 2 effects" in text
