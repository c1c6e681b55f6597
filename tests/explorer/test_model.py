"""Tests of crashsweep.explorer.model: property definitions fail early with a message naming the fix."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import pytest

from crashsweep.explorer.model import ModelDefinitionError, Property, validate_model
from tests.explorer.toys import Points, Toy


@dataclass(frozen=True)
class _WithProperties(Points):
    props: tuple[Property[Toy], ...] = ()

    @property
    def properties(self) -> tuple[Property[Toy], ...]:
        return self.props


def _check(*props: Property[Any]) -> None:
    validate_model(_WithProperties(1, props=props))


def test_invariant_without_witness_is_refused() -> None:
    """An always property with no sometimes partner names the fix."""
    with pytest.raises(ModelDefinitionError, match="'inv' has no sometimes partner"):
        _check(Property("inv", "always", lambda s: True))


def test_witness_must_exist() -> None:
    """A witness name that is not a sometimes property is refused, listing the known ones."""
    with pytest.raises(ModelDefinitionError, match=r"names witness 'nope'.*known: seen"):
        _check(Property.always("inv", lambda s: True, witness="nope"), Property.sometimes("seen", lambda s: True))


def test_duplicate_names_are_refused() -> None:
    """Two properties with one name are refused."""
    with pytest.raises(ModelDefinitionError, match="defined twice"):
        _check(Property.sometimes("seen", lambda s: True), Property.sometimes("seen", lambda s: False))


def test_unknown_kind_is_refused() -> None:
    """A kind other than always, sometimes or at_end is refused."""
    with pytest.raises(ModelDefinitionError, match="kind 'never'"):
        _check(Property("odd", "never", lambda s: True))  # type: ignore[arg-type]


def test_well_formed_properties_pass() -> None:
    """always and at_end with an existing witness are accepted."""
    _check(
        Property.always("inv", lambda s: True, witness="seen"),
        Property.at_end("end", lambda s: True, witness="seen"),
        Property.sometimes("seen", lambda s: True),
    )
