"""--engine and --address: the refusals before any work, and the local engine as the default."""

from __future__ import annotations

import click
import pytest

from crashsweep.cli.sweep_engines import opened, refuse


def test_the_local_engine_is_none_and_needs_nothing() -> None:
    """--engine local: the sweep's own threads (options.engine None)."""
    with opened("local", None, None) as engine:
        assert engine is None


@pytest.mark.parametrize(
    ("engine", "address", "others", "message"),
    [
        ("local", "127.0.0.1:6379", {}, "--address goes with --engine ray"),
        ("ray", None, {"--keep": True}, "--engine ray takes no --keep"),
        ("ray", None, {"--crash": ("x",), "--keep": True}, "--engine ray takes no --crash or --keep"),
    ],
)
def test_options_that_do_not_go_together_are_refused(
    engine: str, address: str | None, others: dict[str, object], message: str
) -> None:
    """A usage error (exit 2, one line), before anything starts."""
    with pytest.raises(click.UsageError, match=message):
        refuse(engine, address, **others)


def test_options_that_go_together_pass() -> None:
    """--engine ray with or without --address, and unset options beside it."""
    refuse("ray", None, **{"--keep": False, "--crash": ()})
    refuse("ray", "127.0.0.1:6379")
    refuse("local", None, **{"--keep": True})


def test_sweep_and_conform_take_the_same_process_options() -> None:
    """--workers, --spawn, --dedup, --kill, --engine, --address: one group, the same help in both commands."""
    from crashsweep.cli.conform import conform
    from crashsweep.cli.sweep import sweep

    flags = ["--workers", "--spawn", "--dedup", "--kill", "--engine", "--address"]
    shown = []
    for command in (sweep, conform):
        options = {param.opts[0]: param for param in command.params}
        shown.append([(flag, getattr(options[flag], "help", None)) for flag in flags])
    assert shown[0] == shown[1]
    assert all(help for _, help in shown[0])
