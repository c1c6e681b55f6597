"""What a docs page shows a command printing: read by tests that pin the figures a page's block shows.

tests/docs/test_blocks.py runs every command block of the docs and checks that its output is
what the page shows; a test that pins a sweep's figures by hand can then read them off the
page instead of sweeping the same command a second time.
"""

from __future__ import annotations

from tests.paths import ROOT


def printed(page: str, command: str) -> str:
    """The output a page (relative to the checkout) shows under `$ command`; AssertionError if none."""
    lines = (ROOT / page).read_text(encoding="utf-8").splitlines()
    start = lines.index(f"$ {command}") + 1  # ValueError: the page shows no such command
    end = start
    while end < len(lines) and not lines[end].startswith(("$ ", "```")):
        end += 1
    assert end > start, f"{page}: `{command}` is shown without its output"
    return "\n".join(lines[start:end]) + "\n"
