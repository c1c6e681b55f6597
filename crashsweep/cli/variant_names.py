"""Variant names on the command line: a did-you-mean for a mistyped one, and shell completion.

click suggests a close option or command name when one is mistyped; a design's name is a
value, so crashsweep does the same for it here (difflib's close matches among the names
`crashsweep.variants.design` resolves). Completion offers those names after --variant, and
after the last comma of a --variants list (NAME@TRACKER: the trackers after the `@`).
"""

from __future__ import annotations

import difflib
from collections.abc import Iterable

import click
from click.shell_completion import CompletionItem

from crashsweep.spec.tracker import TRACKERS
from crashsweep.variants import UnknownVariantError, names


def did_you_mean(name: str, known: Iterable[str]) -> str:
    """The words "; did you mean 'x'?" for the closest of `known` to `name`, or "" when none is close."""
    close = difflib.get_close_matches(name, list(known), n=1, cutoff=0.6)
    return f"; did you mean {close[0]!r}?" if close else ""


def unknown(error: UnknownVariantError) -> str:
    """The unknown-variant message (it lists the known names), with a suggestion when one is close."""
    return f"{error}{did_you_mean(str(error.args[0]), names())}"


def complete_variant(ctx: click.Context, param: click.Parameter, incomplete: str) -> list[CompletionItem]:
    """--variant's completions: the names starting with what was typed."""
    return [CompletionItem(name) for name in names() if name.startswith(incomplete)]


def complete_variants(ctx: click.Context, param: click.Parameter, incomplete: str) -> list[CompletionItem]:
    """--variants' completions: the list typed so far, with its last NAME (or NAME@TRACKER) completed."""
    done, comma, last = incomplete.rpartition(",")
    head = done + comma
    name, at, tracker = last.partition("@")
    if at:
        return [CompletionItem(f"{head}{name}@{kind}") for kind in TRACKERS if kind.startswith(tracker)]
    return [CompletionItem(head + item) for item in names() if item.startswith(name)]
