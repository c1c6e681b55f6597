"""The pictures of the guides, made as a reader would make them: docs/images/ holds the committed ones.

- page.png: `crashsweep view --variant save-after-reply --depth 1`'s page, as real headless
  Chromium shows its top at 1280x900 (shown in docs/guide/page.md);
- state-graph.svg: the state graph `crashsweep explore --out` writes for the same design and
  depth, rendered by graphviz `dot` (shown in docs/guide/explore.md and docs/guide/page.md).

tests/docs/test_images.py makes them in a temporary directory and checks them; to replace the
committed ones, run `.venv/bin/python -m tests.docs.images docs/images` (needs chromium and dot).
Pixels are never compared: fonts and graphviz versions differ from machine to machine.
"""

from __future__ import annotations

import contextlib
import io
import shutil
import sys
import tempfile
from pathlib import Path

from crashsweep.cli.main import main
from tests.docs import chromium

DESIGN = ("--variant", "save-after-reply", "--depth", "1")
"""The design and depth both pictures show: one crash, no-duplicate violated."""

PAGE = "page.png"
GRAPH = "state-graph.svg"
SHOT = (1280, 900)
"""The window the page is shot in: its header, the row, the verdicts and the top of the graph."""


def quietly(argv: list[str]) -> int:
    """crashsweep's exit status for `argv`, run in this process, its stdout dropped."""
    with contextlib.redirect_stdout(io.StringIO()):
        return main(argv)


def make_page(dest: Path, work: Path, browser: str) -> Path:
    """dest/page.png: view's page of the design, shot by headless Chromium."""
    assert quietly(["view", *DESIGN, "--no-open", "--out", str(work / "view")]) == 1
    return chromium.screenshot(browser, work / "view" / "index.html", dest / PAGE, work / "profile", SHOT)


def make_graph(dest: Path, work: Path) -> Path:
    """dest/state-graph.svg: the state graph explore --out renders with dot for the design's violation."""
    assert quietly(["explore", *DESIGN, "--out", str(work / "explore")]) == 1
    (svg,) = (work / "explore").glob("*.graph.svg")  # one violated invariant, one graph
    return Path(shutil.copyfile(svg, dest / GRAPH))


def make_images(dest: Path, browser: str) -> list[Path]:
    """Both pictures, written to `dest` (created if missing); `browser` is the Chromium to shoot with."""
    dest.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix="crashsweep-images-") as work:
        return [make_page(dest, Path(work), browser), make_graph(dest, Path(work))]


if __name__ == "__main__":
    found = shutil.which("chromium") or shutil.which("chromium-browser")
    if found is None or shutil.which("dot") is None:
        sys.exit("images: chromium and dot are needed (bin/bootstrap --system)")
    for made in make_images(Path(sys.argv[1] if len(sys.argv) > 1 else "docs/images"), found):
        print(f"wrote {made}")
