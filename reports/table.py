"""A design's row, or the table of several, as text, Markdown or JSON.

The table's columns are the seed's, in the seed's order: once, twice (scenarios with one and
two crashes; deeper, 1 crash, 2 crashes, 3 crashes...), with_dups, dups, missing, asks, calls+.
The cost
of each design (spec/cost.py) is a table of its own beneath, so the seed's table stays as it
is: five columns for the uninterrupted run, five for what crashes add over all scenarios.
"""

from __future__ import annotations

import io
import json
import re
from collections.abc import Sequence

from rich import box
from rich.console import Console
from rich.table import Table
from rich.text import Text

from crashsweep.reports import colour
from crashsweep.reports.describe import plural
from crashsweep.reports.summary import Summary
from crashsweep.spec.cost import Cost

FIGURES = ("with_dups", "dups", "missing", "asks", "calls+")
COST_RUN = ("saves", "requests", "calls", "questions", "lookups")
COST_EXTRA = ("saves+", "requests+", "calls+", "questions+", "lookups+")
COST_TITLE = "cost: on the uninterrupted run, and what crashes add over all scenarios (+)"
_NAMES = {1: "once", 2: "twice"}


def crash_header(k: int, moves: bool = False, depth: int = 2) -> str:
    """The column of scenarios with k crashes, or with k moves when faults are on, in a table `depth` deep.

    The seed's "once" and "twice" up to depth 2; deeper, every column is counted alike ("1 crash",
    "2 crashes", "3 crashes"), as the moves are, rather than "3 crashes" beside "once" and "twice".
    """
    if moves:
        return plural(k, "move")
    return _NAMES[k] if depth <= 2 else plural(k, "crash")


def _labels(rows: Sequence[Summary]) -> list[str]:
    """Variant names, with the tracker added when the rows do not all share one."""
    if len({row.tracker for row in rows}) <= 1:
        return [row.variant for row in rows]
    return [f"{row.variant} ({row.tracker})" for row in rows]


def _figures(row: Summary) -> list[int]:
    return [row.with_dups, row.dups, row.missing, row.asks, row.calls_plus]


def verdict_words(row: Summary) -> str:
    """The row's verdict in words: "holds", or what is violated or never exercised."""
    words = []
    for v in row.invariants:
        if not v.decided:
            continue
        if not v.witnessed:
            words.append(f"{v.name} never exercised")
        elif not v.holds:
            words.append(f"{v.name} violated")
    return ", ".join(words) or "holds"


def _painted_verdict(row: Summary) -> Text:
    """The verdict cell, red when something is violated or never exercised, green when it holds (if painting)."""
    words = verdict_words(row)
    if not colour.on():
        return Text(words)
    return Text(words, style=colour.GOOD if row.holds else colour.BAD)


def render_table(table: Table, width: int = 200) -> str:
    """A rich table as text, at most `width` columns, trailing blanks and blank edge lines trimmed.

    Plain text, unless reports.colour is painting: then with the table's styles as ANSI escapes.
    """
    buffer = io.StringIO()
    painting = colour.on()
    Console(file=buffer, width=width, color_system="standard" if painting else None, force_terminal=painting).print(
        table
    )
    lines = [_trimmed(line) for line in buffer.getvalue().splitlines()]
    while lines and not _ESCAPE.sub("", lines[0]):
        lines.pop(0)
    while lines and not _ESCAPE.sub("", lines[-1]):
        lines.pop()
    return "\n".join(lines) + "\n"


_ESCAPE = re.compile(r"\x1b\[[0-9;]*m")


def _trimmed(line: str) -> str:
    """`line` without trailing blanks, also those among its closing colour escapes (the escapes kept)."""
    text = line.rstrip()
    while True:
        closing = re.search(r"(?:\x1b\[[0-9;]*m)+$", text)
        if closing is None or not text[: closing.start()].endswith((" ", "\t")):
            return text
        text = text[: closing.start()].rstrip() + closing.group()


def heading(title: str, rows: Sequence[Summary]) -> str:
    """compare's heading of a table: `title`, then what the rows ran on (job, tracker when shared, depth, faults).

    A table whose rows share one tracker names it here, since its rows' labels then leave it out.
    """
    shared = [(what, {str(getattr(row, what)) for row in rows}) for what in ("job", "tracker", "depth")]
    context = ", ".join(f"{what} {values.pop()}" for what, values in shared if len(values) == 1)
    environment = rows[0].environment if rows else ""
    context = "; ".join(part for part in (context, environment) if part)
    if not context:
        return title
    return f"{title} ({context})" if title else context[0].upper() + context[1:]


def titled(title: str, rows: Sequence[Summary]) -> str:
    """A table's title, naming the faults and call IDs the rows were explored under (if any)."""
    environment = rows[0].environment if rows else ""
    if not environment:
        return title
    return f"{title} ({environment})" if title else environment[0].upper() + environment[1:]


def table_text(rows: Sequence[Summary]) -> str:
    """The rows as an aligned text table, one row per design."""
    depth = max(row.depth for row in rows)
    table = Table(box=box.SIMPLE_HEAD, pad_edge=False)
    table.add_column("variant")
    moves = any(row.moving for row in rows)
    for k in range(1, depth + 1):
        table.add_column(crash_header(k, moves, depth), justify="right")
    for name in FIGURES:
        table.add_column(name, justify="right")
    table.add_column("verdict")
    for label, row in zip(_labels(rows), rows, strict=True):
        scenarios = [str(row.scenarios.get(k, "")) for k in range(1, depth + 1)]
        table.add_row(label, *scenarios, *(str(n) for n in _figures(row)), _painted_verdict(row))
    return render_table(table)


def table_markdown(rows: Sequence[Summary]) -> str:
    """The rows as a Markdown table."""
    depth = max(row.depth for row in rows)
    moves = any(row.moving for row in rows)
    header = ["variant", *(crash_header(k, moves, depth) for k in range(1, depth + 1)), *FIGURES, "verdict"]
    lines = ["| " + " | ".join(header) + " |", "|" + "|".join(["---"] + ["---:"] * (len(header) - 2) + ["---"]) + "|"]
    for label, row in zip(_labels(rows), rows, strict=True):
        cells = [label, *(str(row.scenarios.get(k, "")) for k in range(1, depth + 1))]
        cells += [str(n) for n in _figures(row)] + [verdict_words(row)]
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines) + "\n"


def scenarios_words(row: Summary) -> str:
    """Scenarios per number of crashes, or, with faults, per number of moves with the moves of each kind."""
    if not row.moving:
        return "   ".join(f"{k} crash{'es' if k > 1 else ''}: {n}" for k, n in row.scenarios.items())
    parts = []
    for k, n in row.scenarios.items():
        tally = row.moves.get(k, {})
        kinds = ", ".join(f"{kind} {count}" for kind, count in tally.items())
        parts.append(f"{plural(k, 'move')}: {n} (their {sum(tally.values())} moves: {kinds})")
    return "   ".join(parts)


def _costs(row: Summary) -> list[str] | None:
    """The row's ten cost cells, or None when it was explored without its costs."""
    extra = row.extra_cost
    if row.run_cost is None or extra is None:
        return None
    return [str(n) for n in (*row.run_cost.as_tuple(), *extra.as_tuple())]


def cost_text(rows: Sequence[Summary]) -> str:
    """The cost table as aligned text, after a title line ("" when no row carries a cost)."""
    costed = [(label, cells) for label, row in zip(_labels(rows), rows, strict=True) if (cells := _costs(row))]
    if not costed:
        return ""
    table = Table(box=box.SIMPLE_HEAD, pad_edge=False)
    table.add_column("variant")
    for name in (*COST_RUN, *COST_EXTRA):
        table.add_column(name, justify="right")
    for label, cells in costed:
        table.add_row(label, *cells)
    return f"{COST_TITLE}\n" + render_table(table)


def cost_markdown(rows: Sequence[Summary]) -> str:
    """The cost table as Markdown, after a title line ("" when no row carries a cost)."""
    costed = [(label, cells) for label, row in zip(_labels(rows), rows, strict=True) if (cells := _costs(row))]
    if not costed:
        return ""
    header = ["variant", *COST_RUN, *COST_EXTRA]
    lines = [f"{COST_TITLE}\n", "| " + " | ".join(header) + " |", "|---" + "|---:" * (len(header) - 1) + "|"]
    lines += ["| " + " | ".join([label, *cells]) + " |" for label, cells in costed]
    return "\n".join(lines) + "\n"


def _cost_line(title: str, names: Sequence[str], cost: Cost) -> str:
    return f"  {title:<13} " + "   ".join(f"{name} {n}" for name, n in zip(names, cost.as_tuple(), strict=True))


def row_text(row: Summary) -> str:
    """One design's figures and verdicts, for `explore`."""
    scenarios = scenarios_words(row)
    environment = f", {row.environment}" if row.environment else ""
    environment += f", retries {row.retries}" if row.retries else ""
    lines = [
        f"{row.variant}  (job {row.job}, tracker {row.tracker}, depth {row.depth}{environment})",
        f"  crash points  {row.crash_points}",
        f"  scenarios     {scenarios}   ({sum(row.scenarios.values())} in all{never_words(row)})",
        "  " + "   ".join(f"{name} {value}" for name, value in zip(FIGURES, _figures(row), strict=True)),
        f"  graph         {row.states} states, {row.edges} edges{', merged by state key' if row.projection else ''}",
    ]
    if row.retries:
        lines.append(retry_line(row))
        lines.extend(per_layer_lines(row))
    extra = row.extra_cost
    if row.run_cost is not None and extra is not None:
        lines.append(_cost_line("cost (run)", COST_RUN, row.run_cost))
        lines.append(_cost_line("crashes add", COST_EXTRA, extra))
    for v in row.invariants:
        if not v.decided:
            lines.append(f"  {v.name:<13} not decided ({v.why})")
        elif not v.witnessed:
            never = colour.paint("NEVER EXERCISED", colour.BAD)
            lines.append(f"  {v.name:<13} {never} (witness {v.witness!r} was never seen: the check proves nothing)")
        elif v.holds:
            lines.append(f"  {v.name:<13} {colour.paint('holds', colour.GOOD)}")
        else:
            size = plural(v.crashes or 0, "move" if row.moving else "crash")
            lines.append(
                f"  {v.name:<13} {colour.paint('VIOLATED', colour.BAD)}  shortest counterexample: {size}, "
                f"{plural(v.steps or 0, 'step')}, path {v.counterexample}"
            )
    return "\n".join(lines) + "\n"


def never_words(row: Summary) -> str:
    """How many scenarios end stuck and never finish, when some do (spec/CONVERSATIONS.md 4)."""
    return f", {row.never_finish} never finish" if row.never_finish else ""


def retry_line(row: Summary) -> str:
    """Retries per scope over the scenarios, and the worst single scenario (spec/RETRIES.md 1.5)."""
    done = "   ".join(f"{name} {n}" for name, n in row.retried.items())
    extra = row.worst_calls - row.run_calls
    return f"  retries       {done}   worst scenario: dups {row.worst_dups}, model calls {row.worst_calls} (+{extra})"


def per_layer_lines(row: Summary) -> list[str]:
    """Each layer's worst scenario without it, one line each (reports/layers.py); none when not asked for."""
    title = "  per layer     "
    return [(title if i == 0 else " " * len(title)) + layer.text() for i, layer in enumerate(row.per_layer)]


def row_markdown(row: Summary) -> str:
    """One design's row as a Markdown table, and its cost table beneath when it carries one."""
    cost = cost_markdown([row])
    return table_markdown([row]) + (f"\n{cost}" if cost else "")


def to_json(rows: Summary | Sequence[Summary]) -> str:
    """One row as a JSON object, or several as a JSON list (stable key order)."""
    if isinstance(rows, Summary):
        return json.dumps(rows.to_json(), indent=2) + "\n"
    return json.dumps([row.to_json() for row in rows], indent=2) + "\n"
