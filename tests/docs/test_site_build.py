"""The docs site as built (issue 41, item 22): what its pages show once mkdocs has run.

The site is built once per module into a temporary directory, with `mkdocs build --strict` as
bin/check builds it. Two checks read the result:

- the command-line reference shows the end of `crashsweep --help` (every exit status and the
  shell completion lines): mkdocs-click drops the group's epilog, and docs/reference/epilog_hook.py
  puts crashsweep.cli.helptext.EPILOG back, one source for both;
- the home page's first block, compare's table, fits its width in real headless Chromium at
  1280x800 (the code block needs no horizontal scroll, so the verdict column is in view).

In the slow tier, as all of tests/docs (tests/conftest.py's SLOW).
"""

from __future__ import annotations

import html
import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from crashsweep.cli import helptext
from tests.conftest import require_tool
from tests.docs import chromium
from tests.paths import ROOT

STATUSES = ("0", "1", "2", "3", "130")
"""Every exit status crashsweep uses (crashsweep.cli.main.main chooses them)."""

SHELLS = ("bash", "zsh", "fish")
"""The shells whose completion the epilog says how to turn on."""

FIRST_BLOCK = """
<script>
var code = document.querySelector("article pre > code");
document.body.setAttribute("data-first-block", JSON.stringify({
  text: code.textContent, scroll: code.scrollWidth, client: code.clientWidth,
  right: code.getBoundingClientRect().right, window: window.innerWidth}));
</script>
"""
"""Measures the home page's first code block as laid out: its text, widths and right edge."""


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The site built from this checkout, as bin/check builds it, in a temporary directory."""
    out = tmp_path_factory.mktemp("site")
    env = {**os.environ, "NO_MKDOCS_2_WARNING": "1"}
    command = [sys.executable, "-m", "mkdocs", "build", "--strict", "--quiet", "--site-dir", str(out)]
    built = subprocess.run(command, cwd=ROOT, env=env, capture_output=True, text=True, timeout=300)
    assert built.returncode == 0, built.stderr[-3000:]
    return out


def text_of(fragment: str) -> str:
    """The text a reader sees of an HTML fragment: tags dropped, entities decoded."""
    return html.unescape(re.sub(r"<[^>]+>", "", fragment))


def exit_section(site: Path) -> str:
    """The text of the reference's section on exit statuses and completion, up to the next heading."""
    page = (site / "reference" / "cli" / "index.html").read_text(encoding="utf-8")
    start = page.index('id="exit-status-and-shell-completion"')
    end = page.index("<h2", start)
    return text_of(page[start:end])


def test_the_reference_shows_every_exit_status_and_the_completion(site: Path) -> None:
    """Exit statuses 0/1/2/3/130 and the completion line of each shell, as `--help` prints them."""
    section = exit_section(site)
    listed = re.findall(r"^ {2}(\d+) {2,}\S", section, re.MULTILINE)
    assert listed == list(STATUSES), section
    for shell in SHELLS:
        assert f"{helptext.COMPLETE_VAR}={shell}_source crashsweep" in section, section
    epilog = [line for line in helptext.EPILOG.splitlines() if line.strip() and line != "\b"]
    assert [line for line in epilog if line not in section.splitlines()] == []


def test_the_home_pages_first_table_fits_at_1280_px(site: Path, tmp_path: Path) -> None:
    """compare's table on the home page, verdict column included, needs no horizontal scroll at 1280x800."""
    browser = require_tool("chromium", "chromium-browser")
    measured = chromium.with_script(site / "index.html", FIRST_BLOCK, site / "measured-index.html")
    dom = chromium.dump_dom(browser, measured, tmp_path / "profile", (1280, 800))
    found = re.search(r'data-first-block="([^"]*)"', dom)
    assert found, dom[-2000:]
    block = json.loads(html.unescape(found.group(1)))
    assert "$ bin/crashsweep compare --depth 2" in block["text"]
    assert "verdict" in block["text"]
    assert "no-duplicate violated" in block["text"]
    assert block["scroll"] <= block["client"], block  # nothing to scroll: the verdict column is in view
    assert block["right"] <= block["window"], block
    png = chromium.screenshot(browser, site / "index.html", tmp_path / "index.png", tmp_path / "profile", (1280, 800))
    assert png.stat().st_size > 20_000
    print(f"screenshot of the home page at 1280x800: {png}")
