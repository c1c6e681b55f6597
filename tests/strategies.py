"""Hypothesis strategies shared by the tests: jobs (and, below, whatever else tests generate)."""

from __future__ import annotations

from hypothesis import strategies as st

from crashsweep.spec.job import Call, Job


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


# Run and call IDs for Key(run, call): colons and digits often (they are what a careless
# encoding confuses with its separators and length prefixes), the empty string, and any
# Unicode a UTF-8 encoder accepts (no lone surrogates).
_TRICKY = ":0123456789ab"


def ids(*, ascii_only: bool = False, max_size: int = 12) -> st.SearchStrategy[str]:
    """An ID: tricky characters mixed with any character (ASCII only if asked); may be empty."""
    other = st.characters(codec="ascii" if ascii_only else "utf-8")
    return st.text(alphabet=st.sampled_from(_TRICKY) | other, max_size=max_size)


@st.composite
def same_concatenation(draw: st.DrawFn, separator: str = "") -> tuple[tuple[str, str], tuple[str, str]]:
    """Two distinct (run, call) pairs with the same `run + separator + call`: ("a:b", "c") and ("a", "b:c")."""
    part = ids(max_size=6)
    if not separator:  # non-empty parts, so that different cuts give different pairs
        part = part.filter(bool)
    parts = draw(st.lists(part, min_size=3, max_size=5))
    first, second = draw(st.lists(st.integers(1, len(parts) - 1), min_size=2, max_size=2, unique=True))

    def cut(at: int) -> tuple[str, str]:
        return separator.join(parts[:at]), separator.join(parts[at:])

    return cut(first), cut(second)
