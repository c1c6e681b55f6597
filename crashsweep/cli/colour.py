"""--color auto|always|never: whether verdicts are coloured (crashsweep.reports.colour paints them).

auto (the default) colours when stdout is a terminal and NO_COLOR is unset or empty
(no-color.org); always and never decide alone, whatever NO_COLOR says, since a flag typed
on the command line is the newer wish. Only text for people is ever coloured: JSON,
Markdown and every file written stay plain.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Callable, Mapping

import click
from click.decorators import FC

from crashsweep.reports import colour

CHOICES = ("auto", "always", "never")


def _is_terminal() -> bool:
    """Whether stdout is a terminal (a function of its own, so tests can pretend)."""
    return sys.stdout.isatty()


def wanted(mode: str, environ: Mapping[str, str]) -> bool:
    """Whether to colour under `mode`: always, never, or (auto) a terminal without NO_COLOR."""
    if mode != "auto":
        return mode == "always"
    return not environ.get("NO_COLOR") and _is_terminal()


def _set(ctx: click.Context, param: click.Parameter, value: str) -> None:
    """--color callback: paint (or not) until the command line's context closes."""
    if ctx.resilient_parsing:  # shell completion: nothing runs
        return
    on = wanted(value, os.environ)
    ctx.color = on  # click.echo keeps the escapes even where stdout is not a terminal (always), or drops them
    ctx.with_resource(colour.painting(on))


def color_option() -> Callable[[FC], FC]:
    """The group's --color option."""
    return click.option(
        "--color",
        type=click.Choice(CHOICES),
        default="auto",
        show_default=True,
        expose_value=False,
        is_eager=True,
        callback=_set,
        help="colour verdicts: auto = when stdout is a terminal and NO_COLOR is unset",
    )
