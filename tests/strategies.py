"""Hypothesis strategies shared by the tests: jobs (and, below, whatever else tests generate)."""

from __future__ import annotations

from hypothesis import strategies as st

from spec.job import Call, Job


@st.composite
def jobs(draw: st.DrawFn, max_turns: int = 4, max_calls: int = 3) -> Job:
    """A job of 1..max_turns tool turns, 1..max_calls calls each, reads and writes mixed."""
    shape = draw(st.lists(st.integers(1, max_calls), min_size=1, max_size=max_turns))
    turns = []
    number = 0
    for size in shape:
        turn = []
        for _ in range(size):
            number += 1
            writes = draw(st.booleans())
            turn.append(Call(f"c{number}", "create_issue" if writes else "search_issues", writes))
        turns.append(tuple(turn))
    return Job("generated", tuple(turns))
