"""Tests of crashsweep.options: the shared options' checks."""

from __future__ import annotations

import click
import pytest

from crashsweep.options import check_variant, choices_of


def test_unknown_variant_is_a_bad_parameter_listing_known_ones() -> None:
    """An unknown --variant fails with the list of known designs."""
    with pytest.raises(click.BadParameter, match=r"unknown variant 'x' \(known: save-once-per-turn"):
        check_variant(click.Context(click.Command("c")), click.Option(["--variant"]), "x")
    assert check_variant(click.Context(click.Command("c")), click.Option(["--variant"]), "agent-loop") == "agent-loop"


def test_choices_carry_the_tracker_kind() -> None:
    """choices_of turns names into values: the tracker's kind, the depth, the state limit."""
    choices = choices_of(3, None, "keyless-lookup", 99)
    assert (choices.tracker.name, choices.tracker.lookup, choices.depth, choices.max_states) == (
        "keyless-lookup",
        True,
        3,
        99,
    )
    assert choices.job.name == "triage"
