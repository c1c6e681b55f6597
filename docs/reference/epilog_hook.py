"""An mkdocs hook: the reference of the command line shows the end of `crashsweep --help`.

mkdocs-click renders each command's usage, help and options but drops the group's epilog, and
the epilog is where the exit statuses and shell completion are (crashsweep.cli.helptext). The
page holds a marker where that text goes; this hook puts crashsweep.cli.helptext.EPILOG there,
so the site and `--help` read one source. A page without the marker fails the build.
"""

from __future__ import annotations

from typing import Any

from mkdocs.exceptions import PluginError
from mkdocs.structure.pages import Page

from crashsweep.cli import helptext

PAGE = "reference/cli.md"
"""The page, relative to docs/, that shows the epilog."""

MARKER = "<!-- crashsweep --help epilog -->"
"""What the page writes where the epilog goes (an HTML comment: invisible without this hook)."""


def epilog_markdown() -> str:
    """The epilog as a text block: click's no-rewrap marks (backspace lines) dropped, the rest as `--help` prints it."""
    lines = [line for line in helptext.EPILOG.splitlines() if line != "\b"]
    return "```text\n" + "\n".join(lines).strip("\n") + "\n```"


def on_page_markdown(markdown: str, page: Page, **_: Any) -> str:
    """Put the epilog in place of the page's marker; other pages go through unchanged."""
    if page.file.src_uri != PAGE:
        return markdown
    if MARKER not in markdown:
        raise PluginError(f"{PAGE} lacks {MARKER}: the exit statuses and shell completion would be missing")
    return markdown.replace(MARKER, epilog_markdown())
