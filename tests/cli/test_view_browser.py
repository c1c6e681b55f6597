"""explore --out's page in real headless Chromium: both SVGs and the trace laid out, a screenshot taken.

In the slow tier (tests/conftest.py's SLOW): it starts a real browser twice; the page's other
tests (tests/cli/test_view.py) stay in the fast tier.
"""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

from crashsweep.cli.main import main
from tests.docs import chromium

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")


MEASURE = """
<script>
document.body.setAttribute("data-svgs", Array.from(document.querySelectorAll("svg")).map(function (s) {
  var r = s.getBoundingClientRect(); return Math.round(r.width) + "x" + Math.round(r.height);
}).join(" "));
document.body.setAttribute("data-trace", document.querySelector("pre.trace").getBoundingClientRect().height > 0);
document.body.setAttribute("data-commands-fit", Array.from(document.querySelectorAll("pre.command")).every(
  function (p) { return p.scrollWidth <= p.clientWidth; }
));
</script>
"""


@pytest.mark.requires_tool("chromium", "chromium-browser")
@pytest.mark.requires_tool("dot")
def test_page_renders_in_headless_chromium(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    """Real headless Chromium lays out both SVGs and the trace; a screenshot is kept in tmp_path."""
    out_dir = tmp_path / "out"
    assert main(["explore", "--variant", "save-after-reply", "--depth", "2", "--out", str(out_dir)]) == 1
    capsys.readouterr()
    page = out_dir / "index.html"
    measured = tmp_path / "measured.html"  # a copy with a script that measures what was laid out
    measured.write_text(page.read_text(encoding="utf-8").replace("</body>", MEASURE + "</body>"), encoding="utf-8")
    assert CHROMIUM is not None
    flags = [
        CHROMIUM,
        "--headless",
        "--no-sandbox",
        "--disable-gpu",
        "--disable-quic",
        "--no-first-run",
        "--disable-background-networking",
        "--disable-component-update",
        "--disable-sync",
        f"--user-data-dir={tmp_path / 'profile'}",
        "--window-size=1280,4000",
    ]
    dom = subprocess.run([*flags, "--dump-dom", measured.as_uri()], capture_output=True, text=True, timeout=180)
    assert dom.returncode == 0, dom.stderr[-2000:]
    assert dom.stdout.count("<svg") == 2
    assert 'class="node"' in dom.stdout
    assert "VIOLATED no-duplicate after step 10: create_a has 2 records: #1 and #2" in dom.stdout
    sizes = dom.stdout.split('data-svgs="', 1)[1].split('"', 1)[0].split()
    assert len(sizes) == 2
    for size in sizes:
        width, height = (int(n) for n in size.split("x"))
        assert width > 200, sizes
        assert height > 200, sizes
    assert 'data-trace="true"' in dom.stdout
    screenshot = tmp_path / "page.png"
    shot = subprocess.run(
        [*flags, f"--screenshot={screenshot}", page.as_uri()], capture_output=True, text=True, timeout=180
    )
    assert shot.returncode == 0, shot.stderr[-2000:]
    assert screenshot.read_bytes().startswith(b"\x89PNG")
    assert screenshot.stat().st_size > 50_000
    print(f"screenshot of the page: {screenshot}")


@pytest.mark.requires_tool("chromium", "chromium-browser")
@pytest.mark.requires_tool("dot")
def test_a_long_replay_command_wraps_in_its_box(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    """A replay line naming a job in a deep folder stays in its box at 800 px: it wraps, it does not overflow."""
    deep = tmp_path.joinpath(*(["a-folder-with-a-long-name"] * 6))
    deep.mkdir(parents=True)
    job = deep / "one-write-with-a-long-file-name.toml"
    job.write_text('name = "one"\nturns = [["a"]]\n[calls]\na = { tool = "create_issue", writes = true }\n')
    explore = ["explore", "--variant", "save-after-reply", "--job", str(job), "--depth", "1"]
    assert main([*explore, "--out", str(tmp_path / "out")]) == 1
    capsys.readouterr()
    page = tmp_path / "out" / "index.html"
    assert len(max(page.read_text(encoding="utf-8").split("\n"), key=len)) > 100  # the line is long
    assert CHROMIUM is not None
    measured = chromium.with_script(page, MEASURE, tmp_path / "measured.html")
    dom = chromium.dump_dom(CHROMIUM, measured, tmp_path / "profile", (800, 2000))
    assert 'data-commands-fit="true"' in dom
