"""Counterexamples as ITF traces (Apalache/Quint's Informal Trace Format): its documented shape, and the path back."""

from __future__ import annotations

import json
import re
from typing import Any

import pytest

from crashsweep.cli.main import main
from crashsweep.reports import itf
from crashsweep.reports.counterexample import Counterexample

_BIGINT = re.compile(r"^-?\d+$")


def _itf_value(value: Any) -> None:
    """Assert `value` is an ITF value as ADR-015 documents them (no null, no float)."""
    if isinstance(value, bool | str):
        return
    assert not isinstance(value, float | int) or isinstance(value, bool), "integers are written as #bigint"
    if isinstance(value, list):
        for item in value:
            _itf_value(item)
        return
    assert isinstance(value, dict), f"not an ITF value: {value!r}"
    if "#bigint" in value:
        assert list(value) == ["#bigint"]
        assert _BIGINT.match(value["#bigint"])
    elif "#set" in value or "#tup" in value:
        (items,) = value.values()
        assert len(value) == 1
        assert isinstance(items, list)
        for item in items:
            _itf_value(item)
    elif "#map" in value:
        assert len(value) == 1
        for pair in value["#map"]:
            assert isinstance(pair, list)
            assert len(pair) == 2
            _itf_value(pair[0])
            _itf_value(pair[1])
    elif "tag" in value:
        assert set(value) == {"tag", "value"}
        assert isinstance(value["tag"], str)
        _itf_value(value["value"])
    else:
        for key, item in value.items():
            assert not key.startswith("#"), f"record field {key!r}"
            _itf_value(item)


def _valid(document: dict[str, Any]) -> None:
    """The documented shape: #meta, vars (names), states (each #meta {index} and a value per var)."""
    assert set(document) == {"#meta", "vars", "states"}
    meta = document["#meta"]
    assert meta["format"] == "ITF"
    assert meta["format-description"] == itf.FORMAT_DESCRIPTION
    assert isinstance(meta["description"], str)
    assert meta["description"]
    names = document["vars"]
    assert names
    assert all(isinstance(name, str) for name in names)
    assert len(set(names)) == len(names)
    for index, state in enumerate(document["states"]):
        assert state["#meta"] == {"index": index}
        assert set(state) == {"#meta", *names}
        for name in names:
            _itf_value(state[name])


@pytest.mark.parametrize("fixture", ["sar_cx", "small_cx", "pause_cx"])
def test_a_counterexample_is_an_itf_trace_of_the_documented_shape(fixture: str, request: pytest.FixtureRequest) -> None:
    """One state per world (the initial one first); JSON text that parses back to the same document."""
    cx: Counterexample = request.getfixturevalue(fixture)
    document = json.loads(itf.to_json(cx))
    _valid(document)
    assert document == itf.trace(cx)
    assert len(document["states"]) == len(cx.steps) + 1
    assert [state["mbt::actionTaken"] for state in document["states"]] == ["init", *(s.action for s in cx.steps)]
    assert document["#meta"]["crashsweep::path"] == cx.code


def test_values_follow_itf_encodings() -> None:
    """Integers as #bigint, absent values as Quint's None, present optional ones as Some."""
    assert itf.encode(3) == {"#bigint": "3"}
    assert itf.encode(None, ("process",)) == itf.NONE
    assert itf.encode("x", ("lock", "holder")) == {"tag": "Some", "value": "x"}
    assert itf.encode([True, "a"]) == [True, "a"]


def test_the_trace_replays_to_the_same_counterexample(
    sar_cx: Counterexample, capsys: pytest.CaptureFixture[str]
) -> None:
    """The choices give back the path code; `crashsweep replay --path` walks the same actions to the same end."""
    document = itf.trace(sar_cx)
    code = itf.path_code(document)
    assert code == sar_cx.code
    args = ["replay", "--variant", sar_cx.variant, "--depth", str(sar_cx.depth), "--path", code, "--format", "json"]
    assert main(args) == 1
    replayed = json.loads(capsys.readouterr().out)
    assert replayed["invariant"] == sar_cx.invariant
    assert replayed["violated"]
    states = document["states"][1:]
    assert [step["action"] for step in replayed["steps"]] == [state["mbt::actionTaken"] for state in states]
    assert [step["kind"] for step in replayed["steps"]] == [state["crashsweep::kind"] for state in states]
    last = replayed["steps"][-1]["state"]
    assert len(last["tracker"]["records"]) == len(states[-1]["tracker"]["records"])
