"""Tests of crashsweep.reports.table: rows and tables as text, Markdown and JSON."""

from __future__ import annotations

import json

from crashsweep.cli.runs import costed
from crashsweep.explorer.search import explore
from crashsweep.reports.summary import Summary, summarize
from crashsweep.reports.table import (
    COST_EXTRA,
    COST_RUN,
    cost_markdown,
    cost_text,
    row_markdown,
    row_text,
    table_markdown,
    table_text,
    to_json,
)
from crashsweep.spec.job import TRIAGE
from crashsweep.spec.tracker import KEYED
from crashsweep.variants import model


def _row(variant: str, depth: int = 2) -> Summary:
    return summarize(explore(model(variant, TRIAGE, KEYED), depth), variant=variant, job="triage", tracker="keyed")


def test_text_table_has_seed_columns_in_order() -> None:
    """Columns: variant, once, twice, with_dups, dups, missing, asks, calls+, verdict."""
    text = table_text([_row("save-once-per-turn"), _row("keys-and-markers")])
    header = text.splitlines()[0].split()
    assert header == ["variant", "once", "twice", "with_dups", "dups", "missing", "asks", "calls+", "verdict"]
    assert "save-once-per-turn     18     225         164    294         0      0      338" in text


def test_markdown_table_rows() -> None:
    """One Markdown row per design, right-aligned number columns."""
    text = table_markdown([_row("idempotency-keys")])
    assert "| idempotency-keys | 34 | 654 | 0 | 0 | 0 | 0 | 234 | holds |" in text
    assert text.splitlines()[1].startswith("|---|---:|")


def test_row_text_states_verdicts() -> None:
    """The row text names each invariant's verdict and the counterexample's path code."""
    text = row_text(_row("save-after-reply"))
    assert "no-duplicate  VIOLATED" in text
    assert "no-loss       holds" in text
    assert "crash points  34" in text


def test_json_one_object_or_a_list() -> None:
    """One row renders as an object, several as a list."""
    one = json.loads(to_json(_row("keys-and-markers", 1)))
    assert one["variant"] == "keys-and-markers"
    many = json.loads(to_json([_row("keys-and-markers", 1), _row("attempt-markers", 1)]))
    assert [r["variant"] for r in many] == ["keys-and-markers", "attempt-markers"]


def test_headers_beyond_two_crashes() -> None:
    """Depth 3 adds a "3 crashes" column."""
    assert "3 crashes" in table_text([_row("keys-and-markers", 3)])


def _costed_row(variant: str, depth: int = 1) -> Summary:
    loop = costed(model(variant, TRIAGE, KEYED), TRIAGE)
    return summarize(explore(loop, depth), variant=variant, job="triage", tracker="keyed")


def test_cost_table_under_the_seed_table() -> None:
    """The cost table: a title, ten cost columns, one row per costed design (none: empty)."""
    text = cost_text([_costed_row("save-once-per-turn"), _costed_row("keys-and-markers")])
    lines = text.splitlines()
    assert lines[0].startswith("cost: on the uninterrupted run")
    assert lines[1].split() == ["variant", *COST_RUN, *COST_EXTRA]
    # Uninterrupted: 4 and 13 saves (SEMANTICS.md section 7), 4 requests, 3 model calls.
    assert lines[3].split()[:6] == ["save-once-per-turn", "4", "4", "3", "0", "0"]
    assert lines[4].split()[:6] == ["keys-and-markers", "13", "4", "3", "0", "0"]
    assert cost_text([_row("keys-and-markers", 1)]) == ""
    assert cost_markdown([_row("keys-and-markers", 1)]) == ""


def test_cost_in_markdown_and_in_the_row_text() -> None:
    """Markdown gets a second table; explore's text gets two cost lines."""
    row = _costed_row("save-once-per-turn")
    markdown = row_markdown(row)
    assert "| save-once-per-turn | 4 | 4 | 3 | 0 | 0 |" in markdown
    assert sum(line.startswith("|---|") for line in markdown.splitlines()) == 2
    text = row_text(row)
    assert "  cost (run)    saves 4   requests 4   calls 3   questions 0   lookups 0" in text
    assert "  crashes add   saves+ " in text


def test_scenario_headers_count_one_way_at_any_depth() -> None:
    """The seed's once, twice up to depth 2; deeper, 1 crash, 2 crashes, 3 crashes: never "3 crashes" beside "once"."""
    deep = _row("keys-and-markers", 3)
    header = table_text([deep]).splitlines()[0].split()
    assert header[:7] == ["variant", "1", "crash", "2", "crashes", "3", "crashes"]
    assert "| variant | 1 crash | 2 crashes | 3 crashes |" in table_markdown([deep])
    assert table_text([_row("keys-and-markers", 2)]).splitlines()[0].split()[:3] == ["variant", "once", "twice"]


def test_the_tally_of_moves_says_it_counts_moves() -> None:
    """With faults, each number of moves is followed by how many moves of each kind its scenarios hold, summed."""
    from crashsweep.reports.table import heading

    faults = ("lost-reply",)
    exploration = explore(model("save-after-reply", TRIAGE, KEYED, faults=faults), 2)
    row = summarize(exploration, variant="save-after-reply", job="triage", tracker="keyed", faults=faults)
    line = next(line for line in row_text(row).splitlines() if line.startswith("  scenarios"))
    two = row.scenarios[2]
    tally = row.moves[2]
    assert sum(tally.values()) == 2 * two
    kinds = ", ".join(f"{kind} {count}" for kind, count in tally.items())
    assert f"2 moves: {two} (their {2 * two} moves: {kinds})" in line
    assert heading("", [row]) == "Job triage, tracker keyed, depth 2; faults lost-reply"
    assert heading("Two", [row]) == "Two (job triage, tracker keyed, depth 2; faults lost-reply)"


def test_verdicts_are_coloured_only_when_asked() -> None:
    """reports.colour.painting(True) colours the verdict words; the plain text is the same either way."""
    import re

    from crashsweep.reports import colour

    rows = [_row("save-after-reply", 1), _row("idempotency-keys", 1)]
    plain = table_text(rows), row_text(rows[0])
    with colour.painting(True):
        painted = table_text(rows), row_text(rows[0])
    assert tuple(re.sub(r"\x1b\[[0-9;]*m", "", text) for text in painted) == plain
    assert "\x1b[" not in "".join(plain)
    assert "\x1b[1;31mno-duplicate violated\x1b[0m" in painted[0]
    assert "\x1b[32mholds\x1b[0m" in painted[0]
    assert "\x1b[1;31mVIOLATED\x1b[0m" in painted[1]
