"""`--points` as a value: parsed once, told to the swept process by its environment, named again by options."""

from __future__ import annotations

import pytest

from crashsweep.realsweep.probe.modes import Points


def test_the_default_is_the_marks_and_says_nothing() -> None:
    assert Points.parse("marked") == Points()
    assert Points().env() == {}
    assert Points().args() == []
    assert Points.from_env({}) == Points()


@pytest.mark.parametrize("text", ["auto", "marked,auto", "syscalls"])
def test_each_choice_goes_through_the_environment_and_the_command_line_unchanged(text: str) -> None:
    points = Points.parse(text, "fsync,*.json", "send")
    assert points.text == text
    assert Points.from_env(points.env()) == points
    assert points.args() == ["--points", text, "--points-include", "fsync,*.json", "--points-exclude", "send"]


def test_auto_then_marked_is_marked_then_auto() -> None:
    assert Points.parse("auto,marked").text == "marked,auto"


@pytest.mark.parametrize(
    ("text", "include", "message"),
    [
        ("everything", "", "expected one of marked, auto, marked,auto, syscalls"),
        ("", "", "expected one of"),
        ("syscalls,auto", "", "syscalls goes alone"),
        ("marked", "fsync", "filter found points"),
    ],
)
def test_bad_choices_are_refused_in_one_line(text: str, include: str, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        Points.parse(text, include)


def test_filters_match_a_kind_exactly_and_names_by_glob() -> None:
    points = Points(("auto",), include=("fsync", "state*"), exclude=("*.tmp",))
    assert points.keeps("fsync", "log.txt", "loop.py:3")
    assert points.keeps("write", "state.json", "loop.py:3")
    assert not points.keeps("write", "other.json", "loop.py:3")
    assert not points.keeps("fsync", "state.tmp", "loop.py:3")  # dropped after kept
    assert not points.keeps("fs", "x", "y")  # a kind is matched whole, not as a prefix
