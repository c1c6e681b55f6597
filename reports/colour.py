"""Colour for the verdict words of text output: red for a violation, green for holds.

The reports stay pure text by default. The command line decides whether colour is wanted
(a terminal, NO_COLOR, --color: crashsweep.cli.colour) and sets it for the length of one
command with `painting`; the text renderers ask `paint` to colour a verdict word, and get the
word back unchanged when colour is off. A context variable rather than a parameter, so that
every renderer keeps its one-argument form (the CLI's format registry calls `renderer(result)`)
and formats for programs (JSON, Markdown) never see colour at all.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar

from rich.color import ColorSystem
from rich.style import Style

_ON: ContextVar[bool] = ContextVar("crashsweep.reports.colour", default=False)

BAD = Style(color="red", bold=True)
"""A violated invariant, one never exercised."""
GOOD = Style(color="green")
"""An invariant that holds."""


@contextmanager
def painting(on: bool) -> Iterator[None]:
    """Colour verdicts (or not) inside the block; the setting before it comes back after."""
    token = _ON.set(on)
    try:
        yield
    finally:
        _ON.reset(token)


def on() -> bool:
    """Whether verdicts are coloured now."""
    return _ON.get()


def paint(text: str, style: Style) -> str:
    """`text` in `style` as ANSI escapes (16 colours, which every terminal has) when painting; else as is."""
    if not _ON.get():
        return text
    return style.render(text, color_system=ColorSystem.STANDARD)
