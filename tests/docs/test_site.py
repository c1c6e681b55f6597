"""The docs site's sources: what the build alone would not catch (spec in issue 41, item 22).

A literal backslash in a command synopsis, a font fetched from a third-party host, a table cut
in two by a blank line, and a home page that names fewer invariants or guide pages than exist.
"""

from __future__ import annotations

import re

from crashsweep.spec import invariants
from tests.paths import ROOT

DOCS = ROOT / "docs"
PAGES = sorted(p for p in DOCS.rglob("*.md") if "examples" not in p.parts)


def test_no_code_span_shows_an_escaped_pipe() -> None:
    """Python-Markdown's tables keep the backslash of an escaped pipe in a code span: write <code> with &#124;."""
    found = [
        f"{page.relative_to(ROOT)}:{n}"
        for page in PAGES
        for n, line in enumerate(page.read_text(encoding="utf-8").splitlines(), 1)
        if re.search(r"`[^`]*\\\|[^`]*`", line)
    ]
    assert not found, found


def test_no_table_is_cut_by_a_blank_line() -> None:
    """A blank line between two table rows starts a second table without a header: its rows render as text."""
    found = []
    for page in PAGES:
        lines = page.read_text(encoding="utf-8").splitlines()
        for n in range(1, len(lines) - 1):
            if not lines[n].strip() and lines[n - 1].startswith("|") and lines[n + 1].startswith("|"):
                found.append(f"{page.relative_to(ROOT)}:{n + 1}")
    assert not found, found


def test_the_site_loads_no_font_from_another_host() -> None:
    """mkdocs-material fetches Google Fonts unless `font: false`: the site uses the system's."""
    config = (ROOT / "mkdocs.yml").read_text(encoding="utf-8")
    theme = config.split("\ntheme:\n", 1)[1].split("\n\n", 1)[0]  # the theme's block, up to a blank line
    assert re.search(r"^  font: false\b", theme, re.MULTILINE), theme


def test_the_home_page_names_every_invariant_and_links_every_guide_page() -> None:
    home = (DOCS / "index.md").read_text(encoding="utf-8")
    assert [name for name in (i.name for i in invariants.INVARIANTS) if f"**{name}**" not in home] == []
    guides = sorted(p.name for p in (DOCS / "guide").glob("*.md"))
    assert [name for name in guides if f"(guide/{name})" not in home] == []


REPOSITORY = "https://github.com/crashsweep/crashsweep"


def test_the_readmes_links_work_on_any_page_that_shows_it() -> None:
    """The README is the package's long description too: every link is absolute, into this repository's files."""
    links = re.findall(r"\]\(([^)\s]+)\)", (ROOT / "README.md").read_text(encoding="utf-8"))
    assert links
    relative = [link for link in links if not re.match(r"[a-z]+://", link)]
    assert relative == []
    ours = [link.split("/main/", 1)[1].partition("#")[0] for link in links if link.startswith(REPOSITORY)]
    assert [path for path in ours if not (ROOT / path).exists()] == []


def test_the_package_and_the_site_name_the_repository() -> None:
    """pyproject's Project-URLs and the site's repository link are one address."""
    project = (ROOT / "pyproject.toml").read_text(encoding="utf-8")
    assert f'Repository = "{REPOSITORY}"' in project
    assert f"repo_url: {REPOSITORY}\n" in (ROOT / "mkdocs.yml").read_text(encoding="utf-8")
